"""ntsim.mutation: each operator makes the bug it names (checked by running the mutant
against hand-computed values), every site on the claims' paths compiles, a mutant reaches
every reference to its function, and the kill matrix counts what it says it counts."""

from __future__ import annotations

import importlib
import inspect
import json
import random
import subprocess
import sys

import numpy as np
import pytest

from ntsim.mutation import (
    OPERATORS,
    SurvivorReason,
    _baseline,
    apply_mutant,
    claim_path,
    classify,
    function_sites,
    mutate_module,
    plan_topic,
    topic_functions,
    write_matrix,
)
from ntsim.mutation._record import MATRIX_RULE, summarise_topic

SOURCE = '''
def affine(a, b):
    """Docstrings are never mutated."""
    return a + b


def mean(x, n):
    return x / n


def unbiased(x, n):
    return x / (n - 1)


def product(a, b):
    return a @ b


def biggest(a, b):
    return max(a, b)


def below(a, b):
    return a < b


def power(a, b):
    return pow(a, b)
'''


def _mutants(function: str) -> dict[str, list]:
    """operator → the mutated functions (callables) of ``function`` in SOURCE."""
    found: dict[str, list] = {}
    for site in function_sites(SOURCE, function):
        namespace: dict = {}
        exec(compile(mutate_module(SOURCE, site), "<mutant>", "exec"), namespace)
        found.setdefault(site.operator, []).append(namespace[function])
    return found


def test_additive_operators_scale_flip_and_drop_terms():
    mutants = _mutants("affine")
    assert sorted(f(3.0, 1.0) for f in mutants["scale_x2"]) == [5.0, 7.0]  # 3 + 2, 6 + 1
    assert sorted(f(3.0, 1.0) for f in mutants["scale_x0.5"]) == [2.5, 3.5]
    assert [f(3.0, 1.0) for f in mutants["flip_sign"]] == [2.0]
    assert sorted(f(3.0, 1.0) for f in mutants["drop_term"]) == [1.0, 3.0]


def test_normaliser_off_by_one_both_ways():
    assert [f(6.0, 4) for f in _mutants("mean")["n_minus_one"]] == [2.0]  # 6 / 3
    assert [f(6.0, 4) for f in _mutants("unbiased")["n_minus_one"]] == [1.5]  # 6 / 4


def test_transpose_only_where_the_shape_is_kept():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    results = [f(a, b) for f in _mutants("product")["transpose"]]
    np.testing.assert_allclose(results[0], a.T @ b)
    np.testing.assert_allclose(results[1], a @ b.T)
    rectangular, vector = rng.normal(size=(2, 3)), rng.normal(size=3)
    for f in _mutants("product")["transpose"]:  # unchanged: an equivalent mutant, not an error
        np.testing.assert_allclose(f(rectangular, vector), rectangular @ vector)


def test_min_max_compare_and_swap():
    assert [f(1.0, 2.0) for f in _mutants("biggest")["min_max"]] == [1.0]
    assert [f(2.0, 2.0) for f in _mutants("below")["compare"]] == [True]
    (swapped,) = _mutants("power")["swap_args"]
    assert swapped(2.0, 3.0) == 9.0  # same kind: swapped
    assert swapped(np.ones(2), 3.0).tolist() == [1.0, 1.0]  # different shapes: left alone


def test_mutate_module_refuses_a_site_from_other_source():
    site = function_sites(SOURCE, "affine")[0]
    with pytest.raises(ValueError, match="does not match"):
        mutate_module(SOURCE.replace("a + b", "a * b + a"), site)


def test_every_operator_is_exercised_and_sites_on_claim_paths_compile():
    """A seeded sample of the sites of every topic's claim paths: each mutant compiles and
    changes the function's source."""
    from ntsim.claims import REGISTRY

    users = topic_functions(REGISTRY)
    sources = {m: inspect.getsource(importlib.import_module(m)) for m, _ in users}
    sites = [(m, s) for (m, f) in users for s in function_sites(sources[m], f)]
    assert {s.operator for _, s in sites} == set(OPERATORS)
    for module, site in random.Random(0).sample(sites, 40):
        mutated = mutate_module(sources[module], site)
        compile(mutated, module, "exec")
        assert mutated != sources[module]


def test_claim_path_reaches_the_check_side_formula_and_not_the_twins():
    from ntsim.claims import REGISTRY

    by_id = {c.id: c for c in REGISTRY}
    printed = by_id["overtraining.lemma_a28.contraction_printed"]
    path = claim_path([printed.check, printed.uses.fn])
    module = "ntsim.theory.overtraining._finetuning"
    assert (module, "fixed_point_printed") in path  # read by the check
    assert ("ntsim.theory.overtraining._finetuning_runs", "simulate_contraction") in path
    assert (module, "fixed_point") not in path  # only the corrected twin reads it


def test_a_swapped_in_mutant_reaches_references_taken_before_it():
    """The mutant replaces the function's code: an alias imported earlier runs it too."""
    source = inspect.getsource(importlib.import_module("ntsim.core._statistics"))
    (site,) = [s for s in function_sites(source, "loglog_slope") if s.before == "ok.sum() < 2"]
    spec = {"module": "ntsim.core._statistics", "function": "loglog_slope",
            "index": site.index, "operator": site.operator, "before": site.before}  # fmt: skip
    code = (
        "import json, sys\n"
        "from ntsim.core._statistics import loglog_slope as alias\n"
        "before = alias([1.0, 10.0], [1.0, 10.0])\n"
        "from ntsim.mutation import apply_mutant\n"
        f"apply_mutant(json.loads({json.dumps(json.dumps(spec))}))\n"
        "print(before, alias([1.0, 10.0], [1.0, 10.0]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = done.stdout.split()
    assert float(before) == pytest.approx(1.0)  # two positive points: slope 1
    assert after == "nan"  # `ok.sum() <= 2` returns NaN for two points


def _toy_entry() -> dict:
    base = {
        "a": {"verdict": "holds", "matched": None, "error": None, "numbers": [1.0, 2.0]},
        "b": {"verdict": "refuted", "matched": True, "error": None, "numbers": [3.0]},
    }
    assert classify(base, {"b": dict(base["b"], matched=False)}) == (["b"], [], [])
    assert classify(base, {"a": dict(base["a"], error="boom")}) == (["a"], [], ["a"])
    assert classify(base, {"a": dict(base["a"], numbers=[1.0])}) == ([], ["a"], [])

    def outcome(status, killed=(), changed=(), tests=None):
        return {"module": "m", "function": "f", "operator": "flip_sign", "line": 1,
                "before": "a + b", "after": "a - b", "index": 0, "status": status,
                "claims_run": ["a", "b"], "claims_killed": list(killed),
                "claims_changed": list(changed), "claims_errored": [], "tests_run": [],
                "tests_killed": tests, "error": None, "seconds": 1.0}  # fmt: skip

    outcomes = [
        outcome("killed", killed=["a"], tests=True),
        outcome("killed", killed=["a"], changed=["b"]),
        outcome("survived", changed=["b"], tests=True),
        outcome("equivalent"),
        dict(outcome("killed", killed=["b"]), claims_errored=["b"]),  # b only raised
        # the function's outputs moved, no claim's numbers did
        dict(outcome("survived"), outputs={"agreed": 2, "differed": 1, "unobservable": 0}),
    ]
    entry = summarise_topic("toy", outcomes, {"a": "bound", "b": "identity"}, scale="quick",
                            claim_seed=0, sample_seed=0, source_hash="0" * 16, seconds=1.0,
                            functions_on_paths=3)  # fmt: skip
    assert entry["claim_kill_rate"] == pytest.approx(3 / 5)
    assert entry["claim_kill_rate_by_verdicts"] == pytest.approx(2 / 5)
    assert entry["survivors_killed_by_tests"] == 2
    assert (entry["killed"], entry["survived"], entry["equivalent"]) == (3, 2, 1)
    assert (entry["killed_by_errors_only"], entry["survived_on_outputs_only"]) == (1, 1)
    assert entry["survived_uncompared"] == 0
    assert entry["claims"]["a"] == {
        "kind": "bound", "killed": 2, "killed_by_verdict": 2, "moved_numbers": 2
    }  # fmt: skip
    assert (entry["claims"]["b"]["killed"], entry["claims"]["b"]["killed_by_verdict"]) == (1, 0)
    assert entry["rule"] == MATRIX_RULE
    return entry


def test_classify_and_the_matrix_counts():
    _toy_entry()


def test_write_matrix_merges_topics_and_lists_silent_claims(tmp_path):
    entry = _toy_entry()
    write_matrix(tmp_path, [entry])
    write_matrix(tmp_path, [dict(entry, topic="other")])
    data = json.loads((tmp_path / "MUTATION.json").read_text())
    assert sorted(data["topics"]) == ["other", "toy"]
    text = (tmp_path / "MUTATION.md").read_text()
    # b killed one mutant, by raising only: it is listed as killing none by a verdict
    assert "- `b` (identity; 1 kills by raising; 3 mutants moved its numbers)" in text
    assert "none (outputs only; ran: a, b)" in text
    assert (
        "| toy | 6 | 3 (1; 0) | 2 (1; 0; 2) | 1 | 0 | 0 | 0.600 [0.23, 0.88] (0.400) | 2 |" in text
    )
    assert "**blind spot** (no reason given)" in text


def test_a_survivor_reason_covers_only_its_mutants(monkeypatch, tmp_path):
    from ntsim.mutation import _survivors, blind_spots

    entry = _toy_entry()
    entry = dict(entry, outcomes=[o for o in entry["outcomes"] if o["claims_changed"]
                                  or o["status"] != "survived"])  # fmt: skip
    (survivor,) = [o for o in entry["outcomes"] if o["status"] == "survived"]
    assert blind_spots(entry) == [survivor]
    wrong_operator = SurvivorReason("f", "outside the claims", "looser", operator="scale_x2")
    wrong_text = SurvivorReason("f", "outside the claims", "looser", before="a * b")
    right = SurvivorReason("f", "equivalent in effect", "another draw", before="a + b")
    monkeypatch.setattr(_survivors, "REASONS", (wrong_operator, wrong_text))
    assert blind_spots(entry) == [survivor]
    monkeypatch.setattr(_survivors, "REASONS", (wrong_operator, right))
    assert blind_spots(entry) == []
    write_matrix(tmp_path, [entry])
    text = (tmp_path / "MUTATION.md").read_text()
    assert "| 2 (1; 0; 0) |" in text and "*equivalent in effect*: another draw" in text
    with pytest.raises(ValueError, match="unknown category"):
        SurvivorReason("f", "harmless", "x")
    with pytest.raises(ValueError, match="give the reason"):
        SurvivorReason("f", "outside the claims", " ")


def test_plan_topic_rejects_unknown_topics_and_functions():
    with pytest.raises(ValueError, match="No claims in topic"):
        plan_topic("nonsense")
    with pytest.raises(ValueError, match="No function"):
        plan_topic("overtraining", functions=["no_such_function"])
    plan = plan_topic("overtraining", functions=["fixed_point_printed"], sample=100)
    source = inspect.getsource(importlib.import_module("ntsim.theory.overtraining._finetuning"))
    assert len(plan.mutants) == len(function_sites(source, "fixed_point_printed"))
    # random_signs is on the Sec 6 claims' paths but is one call: no site, so no silent
    # "0 mutants of 0 functions" but an error naming it
    source = inspect.getsource(importlib.import_module("ntsim.core._models"))
    assert function_sites(source, "random_signs") == []
    with pytest.raises(ValueError, match=r"_models\.random_signs: on the linear_teachers"):
        plan_topic("linear_teachers", functions=["random_signs"])


@pytest.mark.slow
def test_a_commutative_swap_is_equivalent_and_a_sign_flip_is_seen():
    """End to end on the two Lemma A.28 claims (one child process serving every run, quick
    scale): the server restores the code between mutants, so the baseline asked again at
    the end gives the same numbers."""
    from ntsim.mutation import ClaimServer, run_mutant
    from ntsim.mutation._matrix import run_baseline

    plan = plan_topic("overtraining", functions=["contraction_rate"], sample=100)
    ids = plan.users[("ntsim.theory.overtraining._finetuning", "contraction_rate")]
    by_operator = {site.operator: (module, site) for module, site in plan.mutants}
    options = dict(scale="quick", seed=0, timeout=600)
    with ClaimServer() as server:
        baseline = run_baseline(ids, **options, server=server)
        module, site = by_operator["swap_args"]  # min(σ_ft, σ_pre) → min(σ_pre, σ_ft)
        outcome = run_mutant(module, site, ids, baseline, **options, tests="none",
                             server=server)  # fmt: skip
        assert outcome.status == "equivalent"
        module, site = by_operator["flip_sign"]  # ρ = 1 − 2η min → 1 + 2η min: numbers move
        outcome = run_mutant(module, site, ids, baseline, **options, tests="none",
                             server=server)  # fmt: skip
        assert outcome.status in ("killed", "survived")
        assert set(outcome.claims_killed) | set(outcome.claims_changed)
        again = run_baseline(ids, **options, server=server)
    assert classify(baseline, again) == ([], [], [])


def test_the_line_tracer_records_the_lines_that_ran_and_only_those():
    """The baseline's coverage: the lines of ``log_log_slope`` before its error branch run,
    the ``raise`` does not, and nothing outside the mutated packages is recorded."""
    from ntsim.core import _spectra, log_log_slope
    from ntsim.mutation._worker import _LineTracer

    source, first = inspect.getsourcelines(_spectra.log_log_slope)
    line_of = {text.strip(): first + i for i, text in enumerate(source)}
    with _LineTracer() as tracer:
        log_log_slope(np.array([1.0, 2.0, 4.0]), np.array([3.0, 0.75, 0.1875]))
    lines = tracer.by_module()
    assert set(lines) <= {m for m in sys.modules if m.startswith(("ntsim.core", "ntsim.theory"))}
    ran = set(lines["ntsim.core._spectra"])
    assert line_of['where = "log_log_slope"'] in ran
    assert line_of["return _weighted_slope(log_x, log_y, jnp.ones_like(log_x))"] in ran
    assert line_of["raise ValueError("] not in ran
    assert sys.gettrace() is None  # the tracer is removed on exit


def test_the_guard_probes_read_whether_each_guard_can_fire():
    """``log_log_slope``'s swaps of a label and an array (``check_ndim(where, "x", x_arr,
    1)``) never pass the guard; the swaps of two same-shaped arrays do. A swap read
    ``"never"`` is the original function on that input (checked by running the mutant),
    and one the probe reads ``"may"`` changes the slope."""
    from ntsim.core import _spectra
    from ntsim.mutation._matrix import guard_probe, probe_key
    from ntsim.mutation._worker import _LineTracer, apply_mutant

    module = "ntsim.core._spectra"
    swaps = [s for s in function_sites(inspect.getsource(_spectra), "log_log_slope")
             if s.operator == "swap_args"]  # fmt: skip
    x, y = np.array([1.0, 2.0, 4.0]), np.array([3.0, 1.0, 0.2])
    with _LineTracer([guard_probe(module, s) for s in swaps]) as tracer:
        slope = float(_spectra.log_log_slope(x, y)[0])
    never = set(tracer.never_fired())
    by_names = {s.names: probe_key(module, s) in never for s in swaps}
    assert by_names == {("where", "x_arr"): True, ("where", "y_arr"): True,
                        ("x_arr", "y_arr"): False, ("log_x", "log_y"): False}  # fmt: skip
    mutated = {}
    for site in swaps:
        spec = {"module": module, "function": site.function, "index": site.index,
                "operator": site.operator, "before": site.before}  # fmt: skip
        restore = apply_mutant(spec)
        try:
            mutated[site.names] = float(_spectra.log_log_slope(x, y)[0])
        finally:
            restore()
    assert all(mutated[names] == slope for names, skip in by_names.items() if skip)
    assert mutated[("log_x", "log_y")] != pytest.approx(slope)  # the slope of x on y


def test_a_transpose_probe_reads_whether_its_operand_is_square():
    """``_hinf``'s ``x1 @ x2.T`` transposes ``x1`` only when it is square: on 5 × 3 inputs the
    probe reads ``"never"`` and the mutant is the original function there; on 3 × 3 inputs
    it reads ``"may"`` and the mutant changes H^∞ (x1ᵀx2ᵀ is not x1x2ᵀ)."""
    from ntsim.core import _analytic, two_layer_relu_hinf
    from ntsim.mutation._matrix import guard_probe, probe_key
    from ntsim.mutation._worker import _clear_caches, _LineTracer, apply_mutant

    module = "ntsim.core._analytic"
    (site,) = [s for s in function_sites(inspect.getsource(_analytic), "_hinf")
               if s.operator == "transpose" and s.names]  # fmt: skip
    assert site.names == ("x1",)
    spec = {"module": module, "function": site.function, "index": site.index,
            "operator": site.operator, "before": site.before}  # fmt: skip
    rng = np.random.default_rng(0)
    for shape, fires in (((5, 3), False), ((3, 3), True)):
        x = rng.normal(size=shape)
        with _LineTracer([guard_probe(module, site)]) as tracer:
            original = np.asarray(two_layer_relu_hinf(x))
        assert (probe_key(module, site) in tracer.never_fired()) is not fires
        restore = apply_mutant(spec)
        _clear_caches()  # the original's jitted trace
        try:
            mutated = np.asarray(two_layer_relu_hinf(x))
        finally:
            restore()
            _clear_caches()
        assert np.array_equal(mutated, original) is not fires


def test_a_swap_inside_a_lambda_is_read_in_the_lambda_s_own_frame():
    """``record_predictions`` returns ``lambda params, step: vmap(apply)(params, x)``: the
    line runs first in the enclosing function, where ``params`` is no name (that reading is
    left out), then in the lambda, where params is a dict and x an array (the guard cannot
    fire). A swap of two arrays on such a line is read ``"may"``; a probe never completed
    (its function not called) is not listed as ``"never"``."""
    import jax.numpy as jnp

    from ntsim.core import _train
    from ntsim.mutation._matrix import guard_probe, probe_key
    from ntsim.mutation._worker import _LineTracer

    module = "ntsim.core._train"
    (swap,) = [s for s in function_sites(inspect.getsource(_train), "record_predictions")
               if s.operator == "swap_args"]  # fmt: skip
    assert swap.names == ("params", "x")

    def apply(params, row):
        return params["w"] @ row

    def apply_array(params, row):
        return jnp.sum(params) * row

    key = probe_key(module, swap)
    x = jnp.ones((3, 2))
    cases = ((apply, {"w": jnp.ones(2)}, True), (apply_array, jnp.ones((3, 2)), False))
    for model, params, never in cases:
        with _LineTracer([guard_probe(module, swap)]) as tracer:
            _train.record_predictions(model, x)(params, 0)
        assert (key in tracer.never_fired()) is never
    with _LineTracer([guard_probe(module, swap)]) as tracer:
        _train.record_predictions(apply, x)  # the lambda is made, never called
    assert key not in tracer.never_fired()


_GENERATOR_CASES = """
import numpy as np

b = "label"  # a module global named like a generator's loop variable


def f(p, q):
    return np.shape(q) == (3,)


def first_true(a, bs):
    return any(f(a, c) for c in bs)


def first(a, bs):
    return next(f(a, b) for b in bs)


def every(a, bs):
    return [f(a, c) for c in bs]
"""


def test_a_swap_in_a_generator_closed_early_may_fire(tmp_path, monkeypatch):
    """A generator's line events read its loop variable one item late, and one closed
    early (``any``, ``next``) never reads the value its last call used: there the first,
    incomplete reading says "may" (referee 60's counterexamples, where the guard does fire
    on the last item). A list comprehension runs to its end, and its readings decide."""
    import os

    from ntsim.mutation._worker import _LineTracer

    (tmp_path / "probe_cases.py").write_text(_GENERATOR_CASES)
    monkeypatch.syspath_prepend(str(tmp_path))
    import probe_cases

    lines = _GENERATOR_CASES.splitlines()

    def never(text: str, names: tuple[str, str], call) -> bool:
        line = next(i + 1 for i, source in enumerate(lines) if text in source)
        tracer = _LineTracer()
        tracer._roots = (str(tmp_path) + os.sep,)
        tracer._probes = {(probe_cases.__file__, line): [("case", names)]}
        with tracer:
            call()
        return "case" in tracer.never_fired()

    a, other, same = np.ones(3), np.ones(4), np.ones(3)
    assert not never("any(f(a, c)", ("a", "c"), lambda: probe_cases.first_true(a, [other, same]))
    assert not never("next(f(a, b)", ("a", "b"), lambda: probe_cases.first(a, [same]))
    assert never("[f(a, c)", ("a", "c"), lambda: probe_cases.every(a, [other, np.ones(5)]))
    assert not never("[f(a, c)", ("a", "c"), lambda: probe_cases.every(a, [other, same]))


def test_a_probe_that_cannot_find_a_name_says_the_guard_may_fire():
    from ntsim.mutation._worker import _resolve

    def frame_with_unbound_local():
        import sys as _sys

        frame = _sys._getframe()
        found = _resolve(frame, "later")
        later = 1
        return found, later

    assert frame_with_unbound_local()[0] == (False, None)
    assert _resolve(sys._getframe(), "np") == (True, np)  # a global
    assert _resolve(sys._getframe(), "len") == (True, len)  # a builtin


def test_a_mutant_runs_only_on_the_claims_that_execute_its_node():
    from ntsim.mutation import executing_claims

    plan = plan_topic("overtraining", functions=["contraction_rate"], sample=100)
    module, site = plan.mutants[0]
    runs = {"a": {module: frozenset(site.lines)}, "b": {module: frozenset()}, "c": {}}
    assert executing_claims(module, site, ["a", "b", "c", "d"], runs) == ["a", "d"]
    assert executing_claims(module, site, ["a", "b"], None) == ["a", "b"]


@pytest.mark.slow
def test_covered_baseline_skips_exactly_the_mutants_no_claim_executes():
    """Soundness of the line coverage, end to end: every claim that executes the mutated
    node is run (its numbers move under a sign flip), and a mutant of a function on the
    claims' static path that none executes is equivalent without a run."""
    from ntsim.mutation import ClaimServer, run_covered_baseline, run_mutant

    plan = plan_topic("overtraining", functions=["contraction_rate"], sample=100)
    ref = ("ntsim.theory.overtraining._finetuning", "contraction_rate")
    ids = plan.users[ref]
    options = dict(scale="quick", seed=0, timeout=600)
    with ClaimServer() as server:
        baseline, coverage = run_covered_baseline(ids, **options, server=server)
        assert set(baseline) == set(ids)
        flip = next((m, s) for m, s in plan.mutants
                    if s.function == "contraction_rate" and s.operator == "flip_sign")  # fmt: skip
        outcome = run_mutant(*flip, ids, baseline, **options, tests="none", server=server,
                             coverage=coverage)  # fmt: skip
        assert outcome.claims_run and set(outcome.claims_run) <= set(ids)
        assert set(outcome.claims_killed) | set(outcome.claims_changed)
    unexecuted = {"a": {ref[0]: frozenset({1})}}
    outcome = run_mutant(*flip, ["a"], {}, **options, tests="none", coverage=unexecuted)
    assert outcome.status == "equivalent" and outcome.claims_run == []


def test_a_mutant_outside_the_simulation_reuses_the_baselines_run(tmp_path):
    """The traced baseline saves a run whose checks answer the same on the pickled copy; a
    mutant of a check-side function (Lemma A.28's contraction rate, which the simulation
    never calls) then runs the checks on that run and is judged exactly as when it
    simulates afresh; a mutant on a line the simulation ran gets no saved run; and the run
    is really read: a saved run whose losses are doubled changes what the claims see."""
    import dataclasses
    import pickle

    import jax

    from ntsim.mutation import ClaimServer, run_covered_baseline, run_mutant
    from ntsim.mutation._reuse import SIMULATION_LINES, _DeviceLeaf, reusable_runs

    plan = plan_topic("overtraining", functions=["contraction_rate"], sample=100)
    ref = ("ntsim.theory.overtraining._finetuning", "contraction_rate")
    ids = plan.users[ref]
    options = dict(scale="quick", seed=0, timeout=600)
    flip = next((m, s) for m, s in plan.mutants
                if s.function == "contraction_rate" and s.operator == "flip_sign")  # fmt: skip
    with ClaimServer() as server:
        baseline, coverage = run_covered_baseline(ids, **options, server=server, run_dir=tmp_path)
        saved = sorted(tmp_path.glob("*.pkl"))
        assert [p.name.split("-")[0] for p in saved] == ["overtraining.finetuning.contraction"]
        assert sorted(p.stem for p in tmp_path.glob("*.run")) == sorted(ids)  # each confirmed
        simulated = coverage[ids[0]].get(SIMULATION_LINES + flip[0], frozenset())
        assert simulated and not set(flip[1].lines) & simulated  # check-side only
        assert reusable_runs(*flip, ids, baseline, coverage, tmp_path)
        inside = dataclasses.replace(flip[1], line=min(simulated), end_line=0)
        assert reusable_runs(flip[0], inside, ids, baseline, coverage, tmp_path) == {}

        def judged(run_dir):
            outcome = run_mutant(*flip, ids, baseline, **options, tests="none", server=server,
                                 coverage=coverage, run_dir=run_dir)  # fmt: skip
            return (outcome.status, outcome.claims_killed, outcome.claims_changed,
                    outcome.outputs)  # fmt: skip

        fresh, reused = judged(None), judged(tmp_path)
        assert fresh == reused and fresh[0] == "killed"
        # plant: the saved run doubled must move what the unmutated-by-it claims measure
        run = pickle.loads(saved[0].read_bytes())
        doubled = jax.tree.map(
            lambda v: _DeviceLeaf(2 * v.value) if isinstance(v, _DeviceLeaf) else v,
            run,
            is_leaf=lambda v: isinstance(v, _DeviceLeaf),
        )
        saved[0].write_bytes(pickle.dumps(doubled))
        assert judged(tmp_path) != fresh


def test_the_traced_baseline_charges_each_simulation_its_time(monkeypatch):
    """The traced baseline simulates before the checks run (to tell the simulation's lines
    from the checks'), so the claims' records time only their checks: the simulation's
    seconds must still reach its first claim's summary, since the mutants' time limits are
    6× them. A simulation slowed by 0.5 s must show ≥ 0.5 s over its claims (the first
    version charged ~0 and stopped two early-stopping mutants at 120 s as hung)."""
    import time as time_module

    from ntsim.claims import _runner
    from ntsim.mutation._worker import run_claims_summary

    compute = _runner._compute

    def slow(*args, **kwargs):
        time_module.sleep(0.5)
        return compute(*args, **kwargs)

    monkeypatch.setattr(_runner, "_compute", slow)
    ids = plan_topic("overtraining", functions=["contraction_rate"], sample=100).users[
        ("ntsim.theory.overtraining._finetuning", "contraction_rate")
    ]
    answer = run_claims_summary({"claims": list(ids), "scale": "quick", "seed": 0,
                                 "coverage": True})  # fmt: skip
    assert sum(answer["claims"][c]["seconds"] for c in ids) >= 0.5


def test_stale_matrix_compares_the_topic_source_hash(tmp_path):
    from ntsim.claims import REGISTRY
    from ntsim.mutation import stale_matrix, topic_claims_and_users, topic_claims_hash

    assert stale_matrix(tmp_path) == []  # no matrix made: nothing to be stale
    own = [c for c in REGISTRY if c.topic == "overtraining"]
    claims = topic_claims_and_users("overtraining")[0]
    # the shared intervals claims watch the topic's interval functions: they are in its hash
    assert {c.topic for c in claims} == {"overtraining", "intervals"}
    assert topic_claims_hash(own) != topic_claims_hash(claims)
    current = topic_claims_hash(claims)
    entry = dict(_toy_entry(), topic="overtraining", source_hash=current)
    write_matrix(tmp_path, [entry])
    assert stale_matrix(tmp_path, topic="overtraining") == []
    missing = {row["id"] for row in stale_matrix(tmp_path)}
    assert missing == {f"mutation:{t}" for t in {c.topic for c in REGISTRY}} - {
        "mutation:overtraining"
    }
    write_matrix(tmp_path, [dict(entry, source_hash="0" * 16)])
    (row,) = stale_matrix(tmp_path, topic="overtraining")
    assert row["why"].startswith("source changed")
    write_matrix(tmp_path, [dict(entry, rule=MATRIX_RULE - 1)])  # an older rule: remake it
    (row,) = stale_matrix(tmp_path, topic="overtraining")
    assert row["why"].startswith("made under classification rule")


def _matrix_with(outcomes: list[dict], kinds: dict[str, str]) -> dict:
    return {"topics": {"overtraining": {"claims": {c: {"kind": k} for c, k in kinds.items()},
                                        "outcomes": outcomes}}}  # fmt: skip


def _printed_fixed_point_outcome(claims_run: list[str], killed: list[str]) -> dict:
    source = inspect.getsource(importlib.import_module("ntsim.theory.overtraining._finetuning"))
    site = function_sites(source, "fixed_point_printed")[0]  # the whole limit ×2
    return {"module": "ntsim.theory.overtraining._finetuning", "function": site.function,
            "operator": site.operator, "index": site.index, "before": site.before,
            "after": site.after, "line": site.line, "status": "killed",
            "claims_run": claims_run, "claims_killed": killed, "claims_changed": [],
            "claims_errored": [], "tests_run": [], "tests_killed": None, "error": None,
            "seconds": 1.0}  # fmt: skip


def test_controls_pick_the_kill_nearest_the_claim(tmp_path):
    from ntsim.mutation import controls_from_matrix

    near = _printed_fixed_point_outcome(["a"], ["a"])
    far = dict(near, index=1, claims_run=["a", "b", "c"], claims_killed=["a", "b"])
    crash = dict(near, index=2, claims_run=["c"], claims_killed=["c"], claims_errored=["c"])
    path = tmp_path / "MUTATION.json"
    kinds = {"a": "identity", "b": "trend", "c": "bound"}
    path.write_text(json.dumps(_matrix_with([far, near, crash], kinds)))
    controls = controls_from_matrix(path)
    assert list(controls) == ["a"]  # b is a trend; c was only killed by a crash
    assert controls["a"].index == 0


def test_a_recorded_control_is_replayed_and_noticed():
    from ntsim.mutation import ClaimServer, NegativeControl, run_control

    claim = "overtraining.lemma_a11.fixed_point_printed"
    outcome = _printed_fixed_point_outcome([claim], [claim])
    control = NegativeControl.from_outcome(claim, outcome)
    with ClaimServer() as server:
        noticed, why = run_control(control, server)
    assert noticed, why


def test_resume_keeps_recorded_mutants_and_runs_none_twice():
    """Every planned mutant already recorded with its claims unchanged: nothing runs (no
    child process), the entry is made of the recorded outcomes and carries the claims' code
    hashes; with one of those claims changed, none of the outcomes is reusable."""
    from ntsim.claims import claim_code_hash, get_claim
    from ntsim.mutation import mutate_topic, reusable_outcomes

    plan = plan_topic("overtraining", functions=["fixed_point_printed"], sample=3)
    claim = ["overtraining.lemma_a11.fixed_point_printed"]
    users = plan.users[("ntsim.theory.overtraining._finetuning", "fixed_point_printed")]
    hashes = {cid: claim_code_hash(get_claim(cid)) for cid in users}
    previous = {
        "source_hash": "an older topic hash", "claim_seed": 0, "scale": "quick",
        "claims": {cid: {"kind": "identity", "code_hash": h} for cid, h in hashes.items()},
        "outcomes": [dict(_printed_fixed_point_outcome(claim, claim), index=site.index,
                          operator=site.operator, before=site.before, after=site.after)
                     for _, site in plan.mutants],
    }  # fmt: skip
    calls = []
    entry = mutate_topic("overtraining", functions=["fixed_point_printed"], sample=3,
                         previous=previous, checkpoint=calls.append)  # fmt: skip
    assert (entry["mutants"], entry["killed"], calls) == (3, 3, [])
    assert "partial" not in entry
    assert {cid: entry["claims"][cid]["code_hash"] for cid in users} == hashes
    changed = dict(hashes, **{users[0]: "edited"})
    assert reusable_outcomes(previous, plan.users, changed, "now") == []


def test_the_default_plan_gives_every_claim_mutants_in_its_own_functions():
    """One mutant per function, then at least two per claim among the functions on its
    path shared by the fewest claims (or every site they have)."""
    plan = plan_topic("overtraining")
    functions = {(m, s.function) for m, s in plan.mutants}
    assert functions == {ref for ref in plan.users if function_sites(
        inspect.getsource(importlib.import_module(ref[0])), ref[1])}  # fmt: skip
    for claim in {c.id for c in plan.claims} & {i for ids in plan.users.values() for i in ids}:
        mine = sorted((len(ids), ref) for ref, ids in plan.users.items() if claim in ids)
        own = {ref for size, ref in mine if size <= max(3, mine[0][0])}
        chosen = sum((m, s.function) in own for m, s in plan.mutants)
        available = sum(
            len(function_sites(inspect.getsource(importlib.import_module(m)), f)) for m, f in own
        )
        assert chosen >= min(2, available), claim


def test_a_partial_run_may_not_replace_the_committed_matrix(monkeypatch, capsys):
    """``--function``/``--sample`` into the default ``figures/`` would overwrite the topic's
    whole committed entry with a few mutants: a usage error naming the way out."""
    import pathlib

    from ntsim.cli import main

    monkeypatch.chdir(pathlib.Path(__file__).resolve().parents[2])
    code = main(["mutate", "--topic", "overtraining", "--function", "fixed_point_printed"])
    err = capsys.readouterr().err
    assert code == 2 and "ntsim: error:" in err and "--out DIR" in err


def test_dry_run_with_resume_marks_the_mutants_resume_would_keep(monkeypatch, capsys, tmp_path):
    """``--dry-run --resume`` marks a planned mutant as kept exactly when the recorded entry
    holds it and its claims have the code hashes recorded; without ``--resume`` none. The
    committed overtraining entry is copied with its claims' hashes set to the current ones,
    so the test does not depend on whether the committed matrix is current."""
    import json
    import pathlib

    from ntsim.claims import claim_code_hash
    from ntsim.cli import main
    from ntsim.mutation import site_key

    root = pathlib.Path(__file__).resolve().parents[2]
    matrix = json.loads((root / "figures" / "MUTATION.json").read_text(encoding="utf-8"))
    entry = matrix["topics"]["overtraining"]
    plan = plan_topic("overtraining")
    current = {c.id: claim_code_hash(c) for c in plan.claims}
    for cid, row in entry["claims"].items():
        row["code_hash"] = current.get(cid, row.get("code_hash"))
    (tmp_path / "MUTATION.json").write_text(json.dumps(matrix), encoding="utf-8")
    recorded = {(o["module"], o["function"], o["index"], o["operator"], o["before"])
                for o in entry["outcomes"]}  # fmt: skip

    monkeypatch.chdir(root)
    out = ["--out", str(tmp_path)]
    assert main(["mutate", "--topic", "overtraining", "--dry-run", "--resume", *out]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(plan.mutants)
    # kept: recorded, and every claim on its function's path was in the recorded entry (a
    # claim added since, e.g. overtraining.lemma_a12.*, has not seen the mutant)
    expected = [
        site_key(module, site) in recorded
        and all(cid in entry["claims"] for cid in plan.users.get((module, site.function), ()))
        for module, site in plan.mutants
    ]
    assert [line.endswith("(kept by --resume)") for line in lines] == expected
    assert any(expected)  # some planned mutants were recorded: the marking is exercised
    assert main(["mutate", "--topic", "overtraining", "--dry-run", *out]) == 0
    assert not any("kept by" in line for line in capsys.readouterr().out.splitlines())
    # an entry made under an older classification rule keeps nothing
    entry["rule"] = entry.get("rule", 1) - 1
    (tmp_path / "MUTATION.json").write_text(json.dumps(matrix), encoding="utf-8")
    assert main(["mutate", "--topic", "overtraining", "--dry-run", "--resume", *out]) == 0
    assert not any("kept by" in line for line in capsys.readouterr().out.splitlines())


def test_after_a_kill_only_claims_that_killed_before_are_skipped(monkeypatch):
    """``_one_at_a_time``: claims that have killed nothing run first; after a kill the run
    stops once every claim left may be skipped, and never before; each claim is announced
    as it starts; without ``stop`` every claim runs."""
    import types

    import ntsim.claims
    from ntsim.mutation import _worker

    def claim(cid, sim):
        return types.SimpleNamespace(id=cid, uses=types.SimpleNamespace(name=sim))

    ran, announced = [], []

    def fake_run_claims(claims, **kw):
        ran.append(claims[0].id)
        return [claims[0]]

    verdicts = {"a": "holds", "b": "refuted", "c": "holds", "d": "holds"}  # b is the killer
    monkeypatch.setattr(ntsim.claims, "run_claims", fake_run_claims)
    monkeypatch.setattr(_worker, "claim_summary", lambda c, lines=None: {
        "verdict": verdicts[c.id], "matched": None, "error": None, "numbers": []})  # fmt: skip
    base = {c: {"verdict": "holds", "matched": None, "error": None} for c in "abcd"}
    claims = [claim("a", "s2"), claim("b", "s1"), claim("c", "s1"), claim("d", "s3")]

    def run(may_skip=None):
        ran.clear()
        stop = None if may_skip is None else {"baseline": base, "may_skip": may_skip}
        return _worker._one_at_a_time(claims, "quick", (0,), stop, None, announced.append)

    out = run(["a", "c", "d"])
    assert ran == ["b"] and set(out) == {"b"}  # b first (never killed), then all skippable
    run(["c"])
    assert ran == ["b", "a", "d"]  # b kills, but a and d have killed nothing yet: they run
    run([])
    assert ran == ["b", "c", "a", "d"]  # nothing may be skipped: all run, one simulation at a time
    announced.clear()
    assert set(run()) == set("abcd") and ran == ["b", "c", "a", "d"] == announced
    # the skippable claims run cheapest simulation first: a kill by a cheap one skips the rest
    base["a"]["seconds"], base["c"]["seconds"], base["d"]["seconds"] = 50.0, 90.0, 1.0
    verdicts.update(b="holds", d="refuted")
    run(["a", "c", "d"])
    assert ran == ["b", "d"]  # d (1 s) ran before a (50 s) and c (90 s), and killed


def test_a_claim_that_hangs_is_stopped_at_its_own_limit(monkeypatch):
    """The server reads the child's claim announcements: a claim past its own limit stops
    the answer long before the mutant's total limit, and the marker names it and those
    started before it; a claim without a limit of its own waits for the total."""
    import subprocess
    import sys
    import time

    from ntsim.mutation import _server
    from ntsim.mutation._worker import CLAIM_PREFIX

    child = (
        "import sys, time\n"
        "sys.stdin.readline()\n"
        f"print({CLAIM_PREFIX!r} + 'quick', flush=True)\n"
        f"print({CLAIM_PREFIX!r} + 'slow', flush=True)\n"
        "time.sleep(60)\n"
    )

    def start(self):
        import tempfile

        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self._stderr)  # fmt: skip
        self._buffer = b""

    monkeypatch.setattr(_server.ClaimServer, "_start", start)
    with _server.ClaimServer() as server:
        began = time.monotonic()
        answer = server.ask({}, 30.0, {"quick": 0.5, "slow": 1.0})
        took = time.monotonic() - began
    assert answer["timeout"] and answer["claim"] == "slow"
    assert answer["started"] == ["quick", "slow"]
    assert 0.9 < took < 10.0  # the slow claim's 1 s, not the total's 30 s
    with _server.ClaimServer() as server:
        began = time.monotonic()
        answer = server.ask({}, 2.0, {"quick": 0.5})
        took = time.monotonic() - began
    assert answer["timeout"] and answer["claim"] == "slow" and 1.9 < took < 10.0


class _FakeServer:
    """A stand-in for ``ClaimServer`` in the baseline-split tests: a context manager with a
    name of its own (each server's claims can be told apart)."""

    _count = 0

    def __init__(self):
        _FakeServer._count += 1
        self.name = f"server {_FakeServer._count}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def test_the_baseline_split_over_jobs_keeps_simulations_together_and_charges_their_time(
    monkeypatch,
):
    """--jobs 2 splits the baseline by simulation; each claim is then charged its whole
    simulation's seconds (the first claim of a simulation ran it), so a mutant run on a
    sibling alone gets the simulation's time limit, not the sibling's 0 s."""
    import types

    import ntsim.mutation as mutation

    claims = [types.SimpleNamespace(id=cid, uses=types.SimpleNamespace(name=sim),
                                    slow_at_quick=False)
              for cid, sim in [("a1", "A"), ("a2", "A"), ("b1", "B"), ("c1", "C")]]  # fmt: skip
    seconds = {"a1": 30.0, "a2": 0.0, "b1": 5.0, "c1": 2.0}
    chunks = []

    def fake_baseline(chunk, **_):
        chunks.append(sorted(chunk))
        return ({c: {"verdict": "holds", "seconds": seconds[c]} for c in chunk},
                {c: {"m": frozenset({1})} for c in chunk})  # fmt: skip

    monkeypatch.setattr(_baseline, "run_covered_baseline", fake_baseline)
    monkeypatch.setattr(_baseline, "ClaimServer", _FakeServer)
    summaries, coverage = _baseline._split_baseline(
        ["a1", "a2", "b1", "c1"], claims, 2, scale="quick", seed=0, timeout=600,
        trace_lines=True,
    )  # fmt: skip
    assert sorted(chunks) == [["a1", "a2"], ["b1"], ["c1"]]  # one call per simulation
    assert {c: s["seconds"] for c, s in summaries.items()} == {
        "a1": 30.0, "a2": 30.0, "b1": 5.0, "c1": 2.0}  # fmt: skip
    assert set(coverage) == {"a1", "a2", "b1", "c1"}
    # a2 alone: 120 s to compile + 6 × its simulation's 30 s; with a1, that run counts once
    assert mutation.mutant_time_limit(600.0, summaries, ["a2"]) == 300.0
    assert mutation.mutant_time_limit(600.0, summaries, ["a1", "a2"]) == 300.0
    assert mutation.mutant_time_limit(600.0, summaries, ["a1", "b1"]) == 330.0


def test_the_baseline_queue_gives_the_free_server_the_next_simulation(monkeypatch):
    """The slow simulation goes first, to one server; the other server runs every other
    simulation meanwhile (fixed chunks balanced by claim count would have given the slow
    server half of the rest too, and left the other core idle)."""
    import threading
    import time as clock
    import types

    claims = [types.SimpleNamespace(id=cid, uses=types.SimpleNamespace(name=cid.upper()),
                                    slow_at_quick=cid == "s")
              for cid in ("b", "c", "d", "e", "s")]  # fmt: skip
    ran: dict[str, list[str]] = {}
    started = threading.Event()

    def fake_baseline(group, *, server, **_):
        ran.setdefault(server.name, []).extend(group)
        if group == ["s"]:
            started.set()
            clock.sleep(0.5)
        else:
            assert started.wait(5.0)  # the slow one started first
        return {c: {"verdict": "holds", "seconds": 1.0} for c in group}

    monkeypatch.setattr(_baseline, "run_baseline", fake_baseline)
    monkeypatch.setattr(_baseline, "ClaimServer", _FakeServer)
    summaries, coverage = _baseline._split_baseline(
        ["b", "c", "d", "e", "s"], claims, 2, scale="quick", seed=0, timeout=600,
        trace_lines=False,
    )  # fmt: skip
    assert coverage is None and set(summaries) == {"b", "c", "d", "e", "s"}
    assert sorted(ran.values()) == [["b", "c", "d", "e"], ["s"]]


def test_a_functions_draw_does_not_depend_on_the_other_functions():
    """Seeded per function: dropping one function from the list leaves every other
    function's drawn site as it was (a shared generator would shift them all), and a different
    seed draws differently somewhere."""
    from ntsim.mutation import select_mutants

    functions = [
        ref
        for ref in plan_topic("overtraining").users
        if function_sites(inspect.getsource(importlib.import_module(ref[0])), ref[1])
    ]
    assert len(functions) > 10

    def drawn(refs, seed=0):
        return {(m, s.function, s.index) for m, s in select_mutants(refs, sample=len(refs),
                                                                       seed=seed)}  # fmt: skip

    everything = drawn(functions)
    assert len(everything) == len(functions)  # one site per function
    for dropped in (functions[0], functions[len(functions) // 2], functions[-1]):
        rest = [ref for ref in functions if ref != dropped]
        assert drawn(rest) == {k for k in everything if k[:2] != dropped}, dropped
    assert drawn(functions, seed=1) != everything
    plan = plan_topic("overtraining")
    assert everything <= {(m, s.function, s.index) for m, s in plan.mutants}


def test_round_two_draws_more_mutants_of_a_silent_claims_own_functions():
    from ntsim.mutation import own_functions, silent_claim_mutants

    plan = plan_topic("intervals")
    claim = "intervals.spearman_ci.estimate_mean"
    taken = {(m, s.function, s.index) for m, s in plan.mutants}
    extra = silent_claim_mutants(plan.users, [claim], taken, per_claim=5, seed=0)
    own = set(own_functions(plan.users)[claim])
    assert len(extra) == 5
    assert all((m, s.function) in own for m, s in extra)
    assert not {(m, s.function, s.index) for m, s in extra} & taken
    assert len({(m, s.function) for m, s in extra}) >= 3  # one function at a time
    assert extra == silent_claim_mutants(plan.users, [claim], taken, per_claim=5, seed=0)
    assert silent_claim_mutants(plan.users, [claim], taken, per_claim=0) == []


def test_mutate_topic_gives_the_claims_that_killed_nothing_a_second_round(monkeypatch):
    """Round 1: every mutant is killed by some claim but ``estimate_mean``; round 2 draws
    up to ``silent_extra`` mutants of its own functions, runs them (recorded with
    ``round`` 2), and counts them in the rates."""
    import ntsim.mutation as mutation
    from ntsim.mutation import MutantOutcome

    silent = "intervals.spearman_ci.estimate_mean"
    seen_rounds = []

    def fake_baseline(claim_ids, claims, jobs, **_):
        return {c: {"verdict": "holds", "seconds": 1.0} for c in claim_ids}, None

    def fake_run(module, site, claim_ids, baseline, **_):
        killers = [c for c in claim_ids if c != silent]
        seen_rounds.append(silent in claim_ids)
        outcome = MutantOutcome(module, site.function, site.operator, site.line,
                                site.before, site.after, site.index)  # fmt: skip
        outcome.claims_run = list(claim_ids)
        # in round 2 the silent claim kills (its own functions' mutants)
        outcome.claims_killed = [silent] if len(seen_rounds) > first_round else killers[:1]
        outcome.status = "killed" if outcome.claims_killed else "equivalent"
        return outcome

    first_round = len(plan_topic("intervals").mutants)
    monkeypatch.setattr(mutation, "_split_baseline", fake_baseline)
    monkeypatch.setattr(mutation, "run_mutant", fake_run)
    lines = []
    entry = mutation.mutate_topic("intervals", silent_extra=3, progress=lines.append)
    rounds = [o.get("round", 1) for o in entry["outcomes"]]
    assert rounds.count(1) == first_round and rounds.count(2) == 3
    assert entry["claims"][silent]["killed"] == 3
    assert any("round 2: 3 more mutants" in line for line in lines)
    seen_rounds.clear()  # the same round 1 again: the claim is silent, and nothing follows
    quiet = mutation.mutate_topic("intervals", silent_extra=0)
    assert len(quiet["outcomes"]) == first_round


def _never_killed_by(monkeypatch, silent: str):
    """Stand in for the baseline and the mutant runs of ``mutate_topic``: every mutant is
    killed by its first claim other than ``silent``, which never kills."""
    import ntsim.mutation as mutation
    from ntsim.mutation import MutantOutcome

    def fake_baseline(claim_ids, claims, jobs, **_):
        return {c: {"verdict": "holds", "seconds": 1.0} for c in claim_ids}, None

    def fake_run(module, site, claim_ids, baseline, **_):
        outcome = MutantOutcome(module, site.function, site.operator, site.line,
                                site.before, site.after, site.index)  # fmt: skip
        outcome.claims_run = list(claim_ids)
        outcome.claims_killed = [c for c in claim_ids if c != silent][:1]  # never the silent one
        outcome.status = "killed" if outcome.claims_killed else "equivalent"
        return outcome

    monkeypatch.setattr(mutation, "_split_baseline", fake_baseline)
    monkeypatch.setattr(mutation, "run_mutant", fake_run)


def test_a_claim_still_silent_gets_further_rounds_until_max_rounds(monkeypatch):
    """A claim that kills nothing in round 2 either gets round 3, drawn from its own functions'
    sites not yet drawn, and so on up to ``max_rounds``; no site is drawn twice."""
    import ntsim.mutation as mutation

    _never_killed_by(monkeypatch, "intervals.spearman_ci.estimate_mean")
    lines = []
    entry = mutation.mutate_topic("intervals", silent_extra=2, max_rounds=3,
                                  progress=lines.append)  # fmt: skip
    rounds = [o.get("round", 1) for o in entry["outcomes"]]
    assert rounds.count(2) == 2 and rounds.count(3) == 2 and max(rounds) == 3
    sites = [(o["module"], o["function"], o["index"]) for o in entry["outcomes"]]
    assert len(sites) == len(set(sites))
    assert any("round 3: 2 more mutants" in line for line in lines)
    two = mutation.mutate_topic("intervals", silent_extra=2, max_rounds=2)
    assert max(o.get("round", 1) for o in two["outcomes"]) == 2


def test_a_slow_claim_still_silent_stops_at_slow_max_rounds(monkeypatch):
    """A silent claim marked ``slow_at_quick`` (MiniLM: minutes a run) gets rounds only up to
    ``slow_max_rounds``; the same claim unmarked goes on to ``max_rounds``."""
    import dataclasses

    import ntsim.claims as claims_module
    import ntsim.mutation as mutation

    silent = "intervals.spearman_ci.estimate_mean"
    _never_killed_by(monkeypatch, silent)

    def last_round(**options):
        entry = mutation.mutate_topic("intervals", silent_extra=2, max_rounds=3, **options)
        return max(o.get("round", 1) for o in entry["outcomes"])

    assert last_round(slow_max_rounds=2) == 3  # not marked: max_rounds
    registry = tuple(dataclasses.replace(c, slow_at_quick=True) if c.id == silent else c
                     for c in claims_module.REGISTRY)  # fmt: skip
    monkeypatch.setattr(claims_module, "REGISTRY", registry)
    assert last_round(slow_max_rounds=2) == 2
    assert last_round(slow_max_rounds=3) == 3


def test_a_swap_gets_no_probe_where_its_line_event_could_miss_a_rebinding():
    """Referee 53's counterexamples: a statement before the call on its line, a one-line
    loop or ``except ... as`` body, ``:=``, and an in-place resize each rebind (or reshape)
    a name after the line event; such swaps carry no probe names, so they always run."""
    source = (
        "def f(a, b, items):\n"
        "    x = pair(a, b)\n"  # 2: probed
        "    b = a + 1; r = pair(a, b)\n"  # 3
        "    for b in items: return pair(a, b)\n"  # 4
        "    y = pair(\n        a,\n        b)\n"  # 5: probed (one statement)
        "    try:\n        pass\n    except ValueError as b: r = pair(a, b)\n"  # 10
        "    return x\n"
        "def g(a, b):\n    if (b := a):\n        pass\n    return pair(a, b)\n"
        "def h(a, b):\n    a.resize(3)\n    return pair(a, b)\n"
    )
    probed = {
        (fn, s.line): bool(s.names)
        for fn in "fgh"
        for s in function_sites(source, fn)
        if s.operator == "swap_args"
    }
    assert probed == {("f", 2): True, ("f", 3): False, ("f", 4): False, ("f", 5): True,
                      ("f", 10): False, ("g", 15): False, ("h", 18): False}  # fmt: skip


_TOY = """
import jax
import jax.numpy as jnp


def affine(x, shift=1.0):
    return 2.0 * x + shift


def larger(a, b):
    return jnp.maximum(a, b) + 0.0 * a


def depth(n):
    return 0.0 if n == 0 else 1.0 + depth(n - 1)


def threshold_reader(x):
    return float(jnp.all(affine(x) > -100.0))


def suffixed(a, b):
    return a + b


def timed(x):
    import time

    start = time.perf_counter()
    value = 2.0 * x + 0.0 * x
    return value, time.perf_counter() - start
"""


def _toy_spec(module: str, function: str, operator: str, before: str) -> dict:
    source = inspect.getsource(importlib.import_module(module))
    site = next(s for s in function_sites(source, function)
                if s.operator == operator and s.before == before)  # fmt: skip
    return {"module": module, "function": function, "index": site.index,
            "operator": operator, "before": before}  # fmt: skip


def test_paired_mutants_count_whether_the_functions_own_outputs_moved(tmp_path, monkeypatch):
    """The original runs beside the mutant on each outermost call (eagerly, under jit, under
    vmap in a scan): a mutant a caller reads only through a threshold is seen to differ; a
    commutative swap agrees; recursion and default arguments still work; restore puts the
    function back."""
    import jax
    import jax.numpy as jnp

    from ntsim.mutation import _outputs

    (tmp_path / "ntsim_toy_paired.py").write_text(_TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    toy = importlib.import_module("ntsim_toy_paired")
    x = jnp.arange(3.0)

    spec = _toy_spec("ntsim_toy_paired", "affine", "scale_x2", "2.0 * x + shift")
    _outputs.reset_counts()
    restore = apply_mutant(spec, compare_outputs=True)
    try:
        assert toy.threshold_reader(x) == 1.0  # the caller cannot tell
        assert not np.allclose(jax.jit(toy.affine)(x), 2.0 * x + 1.0)
        scanned = jax.jit(
            lambda xs: jax.lax.scan(
                lambda c, r: (c + jax.vmap(toy.affine)(r).sum(), None), 0.0, xs
            )[0]
        )
        float(scanned(jnp.ones((4, 5))))
        jax.effects_barrier()
        assert _outputs.COUNTS.differed >= 3 and _outputs.COUNTS.agreed == 0
    finally:
        restore()
    np.testing.assert_allclose(toy.affine(x), 2.0 * x + 1.0)
    assert not hasattr(toy, "__ntsim_mutation_pairs__")

    spec = _toy_spec("ntsim_toy_paired", "larger", "swap_args", "jnp.maximum(a, b)")
    _outputs.reset_counts()
    restore = apply_mutant(spec, compare_outputs=True)
    try:
        toy.larger(x, 2.0 - x)
        jax.jit(toy.larger)(x, 2.0 - x)
        jax.effects_barrier()
        assert (_outputs.COUNTS.agreed, _outputs.COUNTS.differed) == (2, 0)
    finally:
        restore()

    spec = _toy_spec("ntsim_toy_paired", "depth", "scale_x2", "1.0 + depth(n - 1)")
    _outputs.reset_counts()
    restore = apply_mutant(spec, compare_outputs=True)
    try:
        assert toy.depth(3) > 3.0  # the mutant alone, at every level of the recursion
        assert (_outputs.COUNTS.agreed, _outputs.COUNTS.differed) == (0, 1)  # one outer call
    finally:
        restore()
    assert toy.depth(3) == 3.0

    # a wall-clock leaf differs between any two runs: a second run of the original leaves
    # it out, so a mutant of the value is still seen and one that keeps it is not
    for operator, before, expected in [
        ("scale_x2", "2.0 * x + 0.0 * x", (0, 1)),
        ("flip_sign", "2.0 * x + 0.0 * x", (1, 0)),
        ("flip_sign", "time.perf_counter() - start", (1, 0)),
    ]:
        spec = _toy_spec("ntsim_toy_paired", "timed", operator, before)
        _outputs.reset_counts()
        restore = apply_mutant(spec, compare_outputs=True)
        try:
            toy.timed(x)
            assert (_outputs.COUNTS.agreed, _outputs.COUNTS.differed) == expected, operator
        finally:
            restore()
    # a clock-stamped string is left out alone: the array beside it is still compared, and
    # so are the entries of an array leaf that do not move between the original's runs
    stamp = iter(["10:00", "10:01"])
    _outputs.reset_counts()
    _outputs.compare_outputs((x, "09:59"), (x, "10:02"), again=lambda: (x, next(stamp)))
    _outputs.compare_outputs((x, "09:59"), (2 * x, "10:02"), again=lambda: (x, next(stamp)))
    clock = iter([0.3, 0.4])
    value_and_time = lambda value, t: np.array([value, t])  # noqa: E731
    _outputs.compare_outputs(value_and_time(1.0, 0.1), value_and_time(2.0, 0.2),
                             again=lambda: value_and_time(1.0, next(clock)))  # fmt: skip
    assert (_outputs.COUNTS.agreed, _outputs.COUNTS.differed) == (1, 2)

    # a mutant drawing from the global random state is compared on the same draws, and the
    # program goes on from the state the mutant left
    def noisy(v):
        return v + np.random.standard_normal(v.shape)  # noqa: NPY002

    _outputs.reset_counts()
    np.random.seed(0)  # noqa: NPY002
    paired_noisy = _outputs.paired(lambda v: 2 * v + np.random.standard_normal(v.shape), noisy)  # noqa: NPY002
    first = paired_noisy(np.ones(3))
    after = np.random.standard_normal()  # noqa: NPY002
    np.random.seed(0)  # noqa: NPY002
    np.testing.assert_allclose(first, 2 + np.random.standard_normal(3))  # noqa: NPY002
    assert after == np.random.standard_normal()  # noqa: NPY002
    same = _outputs.paired(lambda v: v + np.random.standard_normal(v.shape) + 0.0, noisy)  # noqa: NPY002
    same(np.ones(3))
    assert (_outputs.COUNTS.agreed, _outputs.COUNTS.differed) == (1, 1)

    # 2.0 * "x" raises at the mutated line itself: the claims' error text says so
    from ntsim.claims._runner import _format_error
    from ntsim.mutation._worker import ill_typed

    spec = _toy_spec("ntsim_toy_paired", "suffixed", "scale_x2", "a + b")
    source = inspect.getsource(toy)
    site = next(s for s in function_sites(source, "suffixed") if s.index == spec["index"])
    for compare in (False, True):
        restore = apply_mutant(spec, compare_outputs=compare)
        try:
            with pytest.raises(TypeError) as raised:
                toy.suffixed("x", "y")
        finally:
            restore()
        text = _format_error(raised.value)
        assert ill_typed(text, toy.__file__, site.lines), text
        assert not ill_typed(text, toy.__file__, [site.line + 1])


@pytest.mark.parametrize(("killed", "counted"), [(63, 73), (9, 9), (0, 5), (50, 57)])
def test_the_kill_rates_interval_is_scipys_wilson_interval(killed, counted):
    from scipy.stats import binomtest

    from ntsim.mutation._record import wilson_interval

    expected = binomtest(killed, counted).proportion_ci(method="wilson")
    np.testing.assert_allclose(wilson_interval(killed, counted), [expected.low, expected.high],
                               atol=1e-7)  # fmt: skip


def test_the_statuses_of_rule_two():
    """A verdict kills; moved numbers or moved own outputs survive; only smoke claims moved:
    not judged; only an error at the mutated expression: invalid; nothing moved: equivalent."""
    from ntsim.mutation._matrix import MutantOutcome, _classify_outcome

    def summary(smoke=False, **change):
        return {"verdict": "holds", "matched": None, "error": None, "ill_typed": False,
                "smoke": smoke, "numbers": [1.0], **change}  # fmt: skip

    base = {"a": summary(), "s": summary(smoke=True)}

    def status(claims, outputs=None, **extra):
        outcome = MutantOutcome("m", "f", "flip_sign", 1, "a + b", "a - b", 0)
        _classify_outcome(outcome, {"claims": claims, "outputs": outputs, **extra}, base, 60.0)
        return outcome.status

    same = {"agreed": 3, "differed": 0, "unobservable": 0}
    moved = {"agreed": 2, "differed": 1, "unobservable": 0}
    assert status({"a": summary(verdict="refuted")}) == "killed"
    assert status({"a": summary(numbers=[1.5])}) == "survived"
    assert status({"a": summary()}, moved) == "survived"  # outputs only
    assert status({"a": summary()}, same) == "equivalent"
    # an equivalence not shown is not assumed: no call compared, or some unobservable
    assert status({"a": summary()}) == "survived"
    assert status({"a": summary()}, {"agreed": 0, "differed": 0, "unobservable": 0}) == "survived"
    assert status({"a": summary()}, {"agreed": 3, "differed": 0, "unobservable": 1}) == "survived"
    assert status({"s": summary(smoke=True)}) == "not judged"
    assert status({}) == "equivalent"  # no claim executes the mutated line
    assert status({"s": summary(smoke=True, verdict="refuted")}) == "not judged"
    assert status({"s": summary(smoke=True)}, moved) == "not judged"
    assert status({"s": summary(smoke=True), "a": summary()}, moved) == "survived"
    assert status({"s": summary(smoke=True, error="boom")}) == "killed"  # smoke kills by raising
    ill = summary(error="TypeError: x", ill_typed=True, verdict="error")
    assert status({"a": ill}) == "invalid"
    assert status({"a": ill, "s": summary(smoke=True, error="boom")}) == "killed"
    assert status({}, timeout=True) == "killed"
    # a timeout is the kill of the claim that was running, when the server knows it
    outcome = MutantOutcome("m", "f", "flip_sign", 1, "a + b", "a - b", 0, claims_run=["a", "s"])
    timed_out = {"timeout": True, "claims": {}, "claim": "a", "started": ["s", "a"]}
    _classify_outcome(outcome, timed_out, base, 60.0)
    assert outcome.status == "killed" and outcome.claims_killed == ["a"] == outcome.claims_errored
    assert outcome.claims_run == ["s", "a"] and outcome.error == "timeout (60 s) in a"
    outcome = MutantOutcome("m", "f", "flip_sign", 1, "a + b", "a - b", 0, claims_run=["a", "s"])
    _classify_outcome(outcome, {"timeout": True, "claims": {}}, base, 60.0)
    assert outcome.claims_killed == ["a", "s"] and outcome.error == "timeout (60 s)"


def test_compare_outputs_reads_keys_nans_dataclasses_and_shapes():
    import dataclasses

    import jax
    import jax.numpy as jnp

    from ntsim.mutation import _outputs

    @dataclasses.dataclass
    class Plain:  # not a pytree: compared field by field
        value: np.ndarray
        label: str

    def counts(original, mutant):
        _outputs.reset_counts()
        _outputs.compare_outputs(original, mutant)
        return _outputs.COUNTS.agreed, _outputs.COUNTS.differed, _outputs.COUNTS.unobservable

    key = jax.random.key(0)
    assert counts(key, key) == (1, 0, 0)
    assert counts(key, jax.random.key(1)) == (0, 1, 0)
    assert counts(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])) == (1, 0, 0)
    assert counts(np.array([np.nan, 1.0]), np.array([0.0, 1.0])) == (0, 1, 0)
    assert counts(np.array([np.inf, 1.0]), np.array([np.inf, 1.0])) == (1, 0, 0)
    assert counts(np.ones(3), np.ones(4)) == (0, 1, 0)
    assert counts(np.ones((2, 3)), np.ones((3, 2))) == (0, 1, 0)
    # round-off relative to the array's scale, not entry by entry
    assert counts(np.array([1e6, 1e-9]), np.array([1e6, 2e-9])) == (1, 0, 0)
    assert counts(np.array([1.0, 1e-9]), np.array([1.0 + 1e-5, 1e-9])) == (0, 1, 0)
    assert counts(Plain(np.ones(2), "a"), Plain(np.ones(2), "a")) == (1, 0, 0)
    assert counts(Plain(np.ones(2), "a"), Plain(np.ones(2), "b")) == (0, 1, 0)
    assert counts((1, 2), (1, 2, 3)) == (0, 1, 0)
    assert counts(("a", np.ones(2)), (np.ones(2), np.ones(2))) == (0, 1, 0)
    assert counts(np.arange(3), np.arange(3) + 1) == (0, 1, 0)
    assert counts(lambda: 0, lambda: 0) == (0, 0, 1)
    # the same test inside a program
    _outputs.reset_counts()
    jax.jit(lambda a: _outputs.compare_outputs(a, a.at[0].add(1e-3 * a[0])) or a)(jnp.ones(3))
    jax.jit(lambda a: _outputs.compare_outputs(a, a * (1 + 1e-9)) or a)(jnp.ones(3))
    jax.jit(lambda a: _outputs.compare_outputs(a, a + 0.0) or a)(jnp.array([jnp.inf, jnp.nan]))
    jax.effects_barrier()
    assert (_outputs.COUNTS.agreed, _outputs.COUNTS.differed) == (2, 1)


def test_a_kept_outcome_that_skipped_a_now_silent_claim_runs_again():
    """Session 38's overtraining entry: thm_a24.bound_composes was skipped (it had killed in
    the entry before the re-draw) on every mutant of its path that another claim killed, so
    it came out silent without having been asked. Such kept outcomes are dropped; those whose
    skipped claims still kill elsewhere in the plan, and survivors (every claim ran), stay."""
    from ntsim.mutation import exact_outcomes

    users = {("m", "f"): ("a", "silent"), ("m", "g"): ("a", "b")}
    legacy = {"module": "m", "function": "f", "status": "killed", "claims_run": ["a"],
              "claims_killed": ["a"], "claims_errored": []}  # fmt: skip
    skipped_killer = {"module": "m", "function": "g", "status": "killed",
                      "claims_run": ["a"], "claims_killed": ["a"], "claims_skipped": ["b"],
                      "claims_errored": []}  # fmt: skip
    b_kills = {"module": "m", "function": "g", "status": "killed", "claims_run": ["b"],
               "claims_killed": ["b"], "claims_skipped": [], "claims_errored": []}  # fmt: skip
    survivor = {"module": "m", "function": "f", "status": "survived",
                "claims_run": ["a", "silent"], "claims_killed": []}  # fmt: skip
    kept = {1: legacy, 2: skipped_killer, 3: b_kills, 4: survivor}
    checked = {"a", "b", "silent"}
    assert sorted(exact_outcomes(kept, {1, 2, 3, 4}, users, checked)) == [2, 3, 4]
    # b's only kill is not in the plan any more: the outcome that skipped b goes too
    assert sorted(exact_outcomes(kept, {1, 2, 4}, users, checked)) == [3, 4]
    # a claim of an unchecked kind (sanity) may stay silent: nothing is dropped for it
    assert sorted(exact_outcomes(kept, {1, 2, 3, 4}, users, {"a", "b"})) == [1, 2, 3, 4]


def test_claims_skipped_names_the_claims_that_did_not_run_but_smoke_claims():
    """After a kill the run may skip claims; the outcome names them, so a later --resume can
    tell an exact silence from an unasked one. A smoke claim (its quick verdict decides
    nothing) may be skipped without being named: its verdict could not have killed."""
    from ntsim.mutation._matrix import MutantOutcome, _classify_outcome

    summary = {"verdict": "holds", "matched": None, "error": None, "ill_typed": False,
               "smoke": False, "numbers": [1.0]}  # fmt: skip
    base = {"a": summary, "b": summary, "s": dict(summary, smoke=True)}
    outcome = MutantOutcome("m", "f", "flip_sign", 1, "a + b", "a - b", 0,
                            claims_run=["a", "b", "s"])  # fmt: skip
    _classify_outcome(outcome, {"claims": {"a": dict(summary, verdict="refuted")}}, base, 60.0)
    assert outcome.status == "killed" and outcome.claims_skipped == ["b"]
    outcome = MutantOutcome("m", "f", "flip_sign", 1, "a + b", "a - b", 0,
                            claims_run=["a", "b", "s"])  # fmt: skip
    _classify_outcome(outcome, {"timeout": True, "claims": {}, "claim": "a", "started": ["a"]},
                      base, 60.0)  # fmt: skip
    assert outcome.claims_skipped == ["b"]
