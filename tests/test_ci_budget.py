"""The list of tests CI leaves to `make test-full` names only tests that exist.

A renamed or deleted test would otherwise stay listed and silently stop being deferred (its
successor runs in CI and the budget drifts) — or a listed claim id would hide nothing.
"""

from __future__ import annotations

import pathlib
import re

import pytest
from conftest import COLLECTED, deferred_test_ids

ROOT = pathlib.Path(__file__).parent.parent


def test_every_deferred_id_names_an_existing_test():
    from ntsim.claims import REGISTRY

    claims = {claim.id for claim in REGISTRY}
    ids = deferred_test_ids()
    assert ids, "the deferred list is empty: drop the file and the conftest hook"
    for node in ids:
        path, _, name = node.partition("::")
        source = ROOT / path
        assert source.is_file(), f"{node}: no file {path}"
        function, _, param = name.partition("[")
        assert re.search(rf"^def {re.escape(function)}\(", source.read_text(), re.M), node
        if function == "test_claim_quick":
            assert param.rstrip("]") in claims, f"{node}: no such claim"


def test_deferred_tests_are_marked_slow(request):
    """The conftest hook marks exactly the listed ids (checked on what this session collected)."""
    ids = deferred_test_ids()
    for item in request.session.items:
        assert (item.get_closest_marker("slow") is not None) or item.nodeid not in ids


def test_every_deferred_id_of_a_collected_function_is_collected_exactly(request):
    """An id cut short (a parameter with a space, copied from a log line) names its function
    but no test, so it defers nothing: every listed id whose function this session collected
    must be one of the collected node ids, character for character."""
    if any("::" in arg for arg in request.config.args):
        pytest.skip("a session that names single tests collects only those")
    collected = request.config.stash[COLLECTED]
    functions = {node.partition("[")[0] for node in collected}
    unmatched = [
        node for node in deferred_test_ids()
        if node.partition("[")[0] in functions and node not in collected
    ]  # fmt: skip
    assert not unmatched, unmatched
