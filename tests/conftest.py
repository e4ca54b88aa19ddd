"""Test-session settings shared by every test file.

Library code never touches ``jax_enable_x64``; tests that check identities to 1e-8 use the
scoped ``x64`` fixture (``jax.enable_x64`` context), so a failing test cannot leak the flag.
"""

from __future__ import annotations

import gc
import pathlib

import jax
import numpy as np
import pytest

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
DEFERRED = pathlib.Path(__file__).parent / "deferred_to_test_full.txt"


def deferred_test_ids() -> set[str]:
    """Node ids `make test` leaves to `make test-full` (``tests/deferred_to_test_full.txt``)."""
    lines = (line.split("#", 1)[0].strip() for line in DEFERRED.read_text().splitlines())
    return {line for line in lines if line}


#: Every node id collected (before ``-m``/``-k`` deselect any): tests/test_ci_budget.py checks
#: that each deferred id of a collected test function names one of them exactly.
COLLECTED = pytest.StashKey[frozenset]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the tests of ``deferred_to_test_full.txt`` slow: CI's 15-minute budget."""
    deferred = deferred_test_ids()
    config.stash[COLLECTED] = frozenset(item.nodeid for item in items)
    for item in items:
        if item.nodeid in deferred:
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def x64():
    """Run the test body with float64 enabled, restored afterwards even on failure."""
    with jax.enable_x64(True):
        yield


@pytest.fixture
def key():
    """A fixed PRNG key (tests are deterministic)."""
    return jax.random.PRNGKey(20211206)


def load_fixture(name: str) -> dict[str, np.ndarray]:
    """Load ``tests/fixtures/<name>.npz`` written by ``make nt-fixtures`` (committed)."""
    path = FIXTURES / f"{name}.npz"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: run `make nt-fixtures` and commit it.")
    with np.load(path) as data:
        return dict(data)


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's in-memory compiled programs after each test module.

    A pytest-xdist worker lives for the whole suite. XLA's CPU backend maps every compiled
    kernel into its own memory regions, and after several hundred test modules a worker
    neared Linux's default limit of 65,530 mappings per process (59,555 measured) — the
    next compilation then segfaulted. Clearing the caches releases about half of the
    mappings of the programs compiled so far; recompiling a program another module needs
    again is a hit in the persistent compilation cache.
    """
    yield
    jax.clear_caches()
    gc.collect()
