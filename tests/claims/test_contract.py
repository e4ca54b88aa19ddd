"""Contract v2: decisions with three outcomes, two-sided refutations, the runner (seeds, keys,
float64, shared runs, errors that lose nothing), the tables and provenance."""

from __future__ import annotations

import json
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import ntsim.claims as nc
from ntsim.claims import (
    AtLeast,
    AtMost,
    Claim,
    EstimateIn,
    Interval,
    NonFiniteError,
    Simulation,
    Tolerance,
    ViolationFraction,
    all_of,
    build_registry,
    compare,
    derived,
    estimate_in,
    parse_seeds,
    printed,
    refresh_searches,
    run_claims,
    stale_records,
    write_verification,
)
from ntsim.claims._report import _flags as _report_flags


class _Sizes(NamedTuple):
    n: int


CALLS: list = []


def _draws(key, sizes: _Sizes):
    CALLS.append(sizes.n)
    return jax.random.normal(key, (sizes.n,))


SIM = Simulation("demo.normal", _draws, {"quick": _Sizes(50), "full": _Sizes(400)})


def _claim(check, *, id="demo.thm1.bound", **kw):
    kw.setdefault("kind", "bound")
    kw.setdefault("reading", printed("“x ≤ 10”"))
    return Claim(id, "Demo 2020, Thm 1", "x ≤ 10", uses=kw.pop("uses", SIM), check=check, **kw)


# --- decisions ----------------------------------------------------------------------------


def test_compare_margins_relative_margins_and_errors():
    r = compare([1.0, 2.0], [1.0, 2.5], relation="upper_bound")
    assert r.outcome == "holds" and r.worst_margin == 0.0
    np.testing.assert_allclose(r.relative_margins, [0.0, 0.5 / 2.5])
    r = compare([1.0, 3.0], [1.0, 2.0], relation="upper_bound")
    assert r.outcome == "refuted" and r.worst_margin == pytest.approx(-1.0)
    assert r.violation_fraction == 0.5
    tol = Tolerance("round-off", 1e-9, "float64")
    r = compare([1.0 + 1e-12], [1.0], relation="equal", atol=1e-9, tolerance=tol)
    assert r.holds and r.headroom == pytest.approx(1 - 1e-3, rel=1e-3)
    for bad in ([np.nan], [np.inf]):  # non-finite on either side: an error, never a verdict
        with pytest.raises(NonFiniteError):
            compare(bad, [1.0], relation="lower_bound")
        with pytest.raises(NonFiniteError):
            compare([1.0], bad, relation="lower_bound")
    with pytest.raises(ValueError, match="tolerance"):
        compare([1.0], [1.0], relation="equal", atol=1e-3)  # a slack must say where it is from


def test_estimate_in_three_outcomes_and_never_refutes_by_non_significance():
    region = AtMost(-0.5 + 0.1)  # an O(n^-1/2) rate with a chosen effect size
    assert estimate_in(-0.8, (-0.9, -0.7), region, num_instances=5).outcome == "holds"
    # a wide interval around a value that leans against the statement is not a refutation
    assert estimate_in(-0.2, (-0.9, 0.5), region, num_instances=5).outcome == "inconclusive"
    refuted = estimate_in(0.1, (0.0, 0.2), region, num_instances=5)
    assert refuted.outcome == "refuted"
    assert refuted.worst_margin == pytest.approx(-0.4) and refuted.headroom == pytest.approx(-4.0)
    r = estimate_in(-0.8, (-0.9, -0.7), Interval(-1.0, -0.6), num_instances=5)
    assert r.worst_margin == pytest.approx(0.1) and r.headroom == pytest.approx(1.0)
    with pytest.raises(NonFiniteError):
        estimate_in(0.0, (math.nan, 1.0), AtLeast(0.0), num_instances=5)
    with pytest.raises(ValueError, match="outside its interval"):
        estimate_in(2.0, (0.0, 1.0), AtLeast(0.0), num_instances=5)


def test_all_of_is_refuted_by_any_part_and_holds_only_when_all_do():
    holds = compare([0.0], [1.0], relation="upper_bound")
    refuted = compare([2.0], [1.0], relation="upper_bound")
    unsure = estimate_in(0.0, (-1.0, 1.0), AtLeast(0.5), num_instances=3)
    assert all_of(holds, holds).outcome == "holds"
    assert all_of(holds, unsure).outcome == "inconclusive"
    assert all_of(unsure, refuted).outcome == "refuted"


def test_an_estimate_counterexample_matches_the_part_it_names_in_a_joined_result():
    bound = compare([0.0], [1.0], relation="upper_bound")
    steep = estimate_in(-1.0, (-1.1, -0.9), AtLeast(-0.5), num_instances=5)
    flat = estimate_in(0.0, (-0.1, 0.1), AtLeast(-0.5), num_instances=5)
    assert EstimateIn(Interval(-1.2, -0.8)).matches(all_of(bound, steep))[0]
    assert not EstimateIn(Interval(-1.2, -0.8)).matches(all_of(bound, flat))[0]
    both = all_of(flat, steep)
    ok, why = EstimateIn(Interval(-1.2, -0.8)).matches(both)
    assert not ok and "single" in why  # two estimates: the counterexample must name one
    assert EstimateIn(Interval(-1.2, -0.8), part=1).matches(both)[0]
    assert not EstimateIn(Interval(-1.2, -0.8), part=0).matches(both)[0]
    assert not EstimateIn(Interval(-1.2, -0.8), part=5).matches(both)[0]


def test_a_mechanism_counterexample_needs_its_other_parts_to_hold():
    from ntsim.claims._mechanism import MechanismViolation

    violated = compare([2.0, 0.0, 3.0, 0.0], [1.0] * 4, relation="upper_bound")  # 2 of 4, by 2
    mechanism = compare([1.0], [1.0], relation="equal")
    wrong_mechanism = compare([1.5], [1.0], relation="equal")
    counterexample = MechanismViolation(between=(0.4, 0.6), min_violation=1.0, part=0)
    assert counterexample.matches(all_of(violated, mechanism))[0]
    ok, why = counterexample.matches(all_of(violated, wrong_mechanism))
    assert not ok and "mechanism" in why
    # a plain ViolationFraction on the joined margins would have matched the wrong mechanism
    assert ViolationFraction(between=(0.4, 0.6), min_violation=1.0).matches(
        all_of(violated, wrong_mechanism)
    )[0]
    assert not MechanismViolation(between=(0.4, 0.6), min_violation=1.0, part=3).matches(
        all_of(violated, mechanism)
    )[0]


def test_chosen_tolerances_must_record_what_was_observed():
    with pytest.raises(ValueError, match="observed"):
        Tolerance("chosen", 0.1, "picked")
    assert Tolerance("chosen", 0.1, "picked", observed="0.03 at seeds 0-2").to_dict()["observed"]


# --- the record -----------------------------------------------------------------------------


def test_claim_record_validates_what_it_declares():
    check = lambda run: compare(run, 10.0, relation="upper_bound")  # noqa: E731
    with pytest.raises(ValueError, match="<topic>.<result>.<aspect>"):
        _claim(check, id="nodots")
    with pytest.raises(ValueError, match="kind"):
        _claim(check, kind="theorem")
    with pytest.raises(ValueError, match="counterexample"):
        _claim(check, expect="refuted", twin="demo.thm1.other")
    with pytest.raises(ValueError, match="twin"):
        _claim(check, expect="refuted", counterexample=ViolationFraction((0.1, 1), 0.0))
    with pytest.raises(ValueError, match="quote"):
        printed("  ")
    with pytest.raises(ValueError, match="scales"):
        Simulation("demo.bad", _draws, {"quick": _Sizes(1)})
    with pytest.raises(TypeError, match="hashable"):
        Simulation("demo.bad", _draws, {"quick": [1], "full": [2]})


def test_registry_rejects_duplicate_ids_and_twins_that_do_not_share_the_run():
    check = lambda run: compare(run, 10.0, relation="upper_bound")  # noqa: E731
    a = _claim(check)
    with pytest.raises(ValueError, match="Duplicate claim id"):
        build_registry(a, a)
    other_sim = Simulation("demo.other", _draws, {"quick": _Sizes(5), "full": _Sizes(5)})
    twin = _claim(check, id="demo.thm1.corrected", uses=other_sim)
    printed_side = _claim(
        check, id="demo.thm1.printed", expect="refuted", twin="demo.thm1.corrected",
        counterexample=ViolationFraction((0.1, 1.0), 0.0),
    )  # fmt: skip
    with pytest.raises(ValueError, match="reads 'demo.other'"):
        build_registry(printed_side, twin)
    with pytest.raises(ValueError, match="not a registered v2 claim"):
        build_registry(printed_side)
    build_registry(printed_side, _claim(check, id="demo.thm1.corrected"))


def test_selection_errors_are_usage_errors():
    with pytest.raises(ValueError, match="Topics with claims"):
        nc.select_claims("no_such_topic")
    other_topic_id = next(c.id for c in nc.REGISTRY if c.topic != "stability")
    with pytest.raises(ValueError, match="No claim selected"):
        nc.select_claims("stability", (other_topic_id,))


# --- two-sided refutations -------------------------------------------------------------------


def _printed_bound(scale_of_bound: float):
    """ "|x| ≤ c" with a printed constant; at c = 2 about 4.6% of N(0, 1) draws violate."""

    def check(run):
        return compare(jnp.abs(run), scale_of_bound, relation="upper_bound")

    return _claim(
        check, id="demo.thm2.printed", expect="refuted", twin="demo.thm2.corrected",
        counterexample=ViolationFraction(between=(0.01, 0.12), min_violation=0.05),
    )  # fmt: skip


def test_a_refutation_is_as_expected_only_when_its_counterexample_matches():
    (record,) = run_claims([_printed_bound(2.0)], scale="full", seeds=(0, 1))
    assert record.verdict == "refuted" and record.as_expected
    # a printed-side error that makes the bound smaller: still "refuted", but no longer the
    # declared counterexample (too many violations), so not as expected
    (smaller,) = run_claims([_printed_bound(0.5)], scale="full", seeds=(0,))
    assert smaller.verdict == "refuted" and not smaller.as_expected
    # ... and one that makes it larger: the statement holds, not as expected either
    (larger,) = run_claims([_printed_bound(8.0)], scale="full", seeds=(0,))
    assert larger.verdict == "holds" and not larger.as_expected


def test_estimate_counterexample_matches_a_specific_rate():
    ce = EstimateIn(Interval(-1.2, -0.8), "decays like n^-1")
    assert ce.matches(estimate_in(-1.0, (-1.1, -0.9), AtMost(-0.6), num_instances=4))[0]
    assert not ce.matches(estimate_in(-0.7, (-0.75, -0.65), AtMost(-0.6), num_instances=4))[0]
    assert not ce.matches(compare([1.0], [0.0], relation="upper_bound"))[0]


# --- the runner -----------------------------------------------------------------------------


def test_runner_shares_one_run_per_simulation_and_seed_and_derives_keys_from_its_name():
    CALLS.clear()
    seen = []

    def first(run):
        seen.append(np.asarray(run))
        return compare(jnp.abs(run), 10.0, relation="upper_bound")

    claims = [_claim(first, id="demo.a.one"), _claim(first, id="demo.a.two")]
    records = run_claims(claims, scale="quick", seeds=(0, 3))
    assert CALLS == [50, 50]  # one run per seed, shared by both claims
    assert [r.verdict for r in records] == ["holds", "holds"]
    np.testing.assert_array_equal(seen[0], seen[2])  # same seed → same run for both claims
    assert not np.array_equal(seen[0], seen[1])  # another seed, another key
    expected = jax.random.normal(nc.claim_key(3, "demo.normal"), (50,))
    np.testing.assert_array_equal(seen[1], np.asarray(expected))


def test_runner_enters_float64_when_the_simulation_asks():
    sim = Simulation("demo.x64", lambda key, s: jnp.ones(3), SIM.scales, x64=True)
    dtypes = []

    def check(run):
        dtypes.append(run.dtype)
        return compare(run, 1.0, relation="equal")

    run_claims([_claim(check, uses=sim, kind="identity")], scale="quick")
    assert dtypes == [jnp.float64]
    assert jnp.ones(3).dtype == jnp.float32  # only inside the run


def test_seeds_must_agree_for_a_verdict():
    def check(run):  # holds at some seeds, not at others: inconclusive
        return compare([float(run[0])], [0.0], relation="upper_bound")

    (record,) = run_claims([_claim(check)], scale="quick", seeds=range(6))
    assert record.verdict == "inconclusive" and record.flips
    assert sorted(set(s.verdict for s in record.per_seed)) == ["holds", "refuted"]


def test_errors_are_rows_with_the_message_and_the_failing_frame():
    def raises(run):
        raise RuntimeError("boom in the check")

    def wrong_type(run):
        return 1.0

    def non_finite(run):
        return compare([np.nan], [1.0], relation="upper_bound")

    def too_few(run):
        return compare([0.0], [1.0], relation="upper_bound")

    lines = []
    records = run_claims(
        [_claim(raises, id="demo.e.raise"), _claim(wrong_type, id="demo.e.type"),
         _claim(non_finite, id="demo.e.nan"), _claim(too_few, id="demo.e.few", min_instances=5)],
        scale="quick", progress=lines.append,
    )  # fmt: skip
    assert [r.verdict for r in records] == ["error"] * 4
    assert not any(r.as_expected for r in records)
    errors = [r.per_seed[0].error for r in records]
    assert "RuntimeError: boom in the check" in errors[0] and "in raises" in errors[0]
    assert "expected ntsim.claims.ClaimResult" in errors[1]
    assert "NonFiniteError" in errors[2]
    assert "at least 5" in errors[3]
    console = "\n".join(lines)
    assert "boom in the check" in console and "in raises" in console


def test_parse_seeds():
    assert parse_seeds("0:3") == (0, 1, 2) and parse_seeds("0,3,7") == (0, 3, 7)
    for bad in ("3:1", "a", "1,1", "-1"):
        with pytest.raises(ValueError, match="--seeds"):
            parse_seeds(bad)


# --- tables and provenance ------------------------------------------------------------------


def test_tables_record_every_field_merge_rows_and_count_classes(tmp_path):
    ok = _claim(lambda run: compare(jnp.abs(run), 10.0, relation="upper_bound"), id="demo.a.ok")
    stronger = _claim(
        lambda run: estimate_in(float(run.mean()), (-0.3, 0.3), AtLeast(1.0), num_instances=50),
        id="demo.b.stronger", kind="rate", reading=derived("a rate the paper does not print"),
    )  # fmt: skip
    refuted = _printed_bound(2.0)
    records = run_claims([ok, stronger, refuted], scale="full", seeds=(0, 1))
    md, js = write_verification(records, out_dir=tmp_path, scale="full")
    entries = json.loads((tmp_path / "demo" / "VERIFICATION.json").read_text())["claims"]
    for entry in entries:
        for field in ("verdict", "kind", "reading", "seeds", "per_seed_verdicts", "worst_margin",
                      "headroom", "tolerance_source", "source_hash", "code_hash"):  # fmt: skip
            assert field in entry, field
        assert entry["seeds"] == [0, 1]
    assert [e["verdict"] for e in entries] == ["holds", "refuted", "refuted"]
    index = json.loads(js.read_text())
    assert index["classes"]["printed_holds"] == 1 and index["classes"]["other_refuted"] == 1
    assert index["classes"]["printed_refuted"] == 1
    table = (tmp_path / "demo" / "VERIFICATION.md").read_text()
    assert "## Refutations" in table and "declared counterexample" in table
    # a later run replaces only its rows
    write_verification(run_claims([ok], scale="full", seeds=(5,)), out_dir=tmp_path, scale="full")
    entries = json.loads((tmp_path / "demo" / "VERIFICATION.json").read_text())["claims"]
    rows = [(e["id"], e["seeds"]) for e in entries][:2]
    assert rows == [("demo.a.ok", [5]), ("demo.b.stronger", [0, 1])]


def test_estimate_rows_near_the_region_edge_are_flagged(tmp_path):
    def estimate(lo, hi):  # CI (lo, hi) against "at least 0": headroom in half-widths
        return lambda run: estimate_in((lo + hi) / 2, (lo, hi), AtLeast(0.0), num_instances=9)

    claims = [
        _claim(estimate(3.0, 5.0), id="demo.f.far", kind="rate"),  # 3 half-widths inside
        _claim(estimate(0.5, 2.5), id="demo.f.near", kind="rate"),  # 0.5 inside
        _claim(estimate(0.05, 2.05), id="demo.f.thin", kind="rate"),  # 0.05 inside
    ]
    write_verification(run_claims(claims, scale="full"), out_dir=tmp_path, scale="full")
    entries = json.loads((tmp_path / "demo" / "VERIFICATION.json").read_text())["claims"]
    flags = {e["id"]: _report_flags(e) for e in entries}
    assert flags["demo.f.far"] == []
    assert flags["demo.f.near"] == ["near edge (< 1 CI half-width)"]
    assert flags["demo.f.thin"] == ["headroom < 10%"]


def test_a_corrupt_table_is_named(tmp_path):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "VERIFICATION_quick.json").write_text("{not json")
    records = run_claims([_claim(lambda run: compare([0.0], [1.0], relation="upper_bound"))])
    with pytest.raises(ValueError, match="VERIFICATION_quick.json"):
        write_verification(records, out_dir=tmp_path, scale="quick")


def test_stale_rows_are_listed(tmp_path, monkeypatch):
    claim = _claim(lambda run: compare([0.0], [1.0], relation="upper_bound"), id="demo.s.one")
    monkeypatch.setattr(nc, "REGISTRY", (claim,))
    write_verification(run_claims([claim], scale="full"), out_dir=tmp_path, scale="full")
    assert stale_records(tmp_path, "full") == []
    monkeypatch.setattr("ntsim.claims._report.claim_source_hash", lambda c: "0" * 16)
    assert stale_records(tmp_path, "full") == []  # only a docstring or comment changed
    monkeypatch.setattr("ntsim.claims._report.claim_code_hash", lambda c, scale=None: "0" * 16)
    (row,) = stale_records(tmp_path, "full")
    assert (
        row["id"] == "demo.s.one" and "code changed" in row["why"] and "at its scale" in row["why"]
    )
    table = tmp_path / "demo" / "VERIFICATION.json"  # a row made before the scale's hash
    data = json.loads(table.read_text())
    del data["claims"][0]["scale_code_hash"]
    table.write_text(json.dumps(data))
    (row,) = stale_records(tmp_path, "full")
    assert "code changed" in row["why"] and "at its scale" not in row["why"]
    data = json.loads(table.read_text())  # a row made before the code hash
    del data["claims"][0]["code_hash"]
    table.write_text(json.dumps(data))
    (row,) = stale_records(tmp_path, "full")
    assert "source changed" in row["why"]
    monkeypatch.setattr(nc, "REGISTRY", ())
    assert stale_records(tmp_path, "full")[0]["why"] == "claim no longer registered"
    # a registered claim without a row (or no table at all) is not clean either
    monkeypatch.setattr(nc, "REGISTRY", (claim,))
    (row,) = stale_records(tmp_path / "empty", "full")
    assert row["id"] == "demo.s.one" and row["why"] == "not recorded"


def test_source_modules_follow_names_to_their_defining_modules():
    from ntsim.claims._provenance import source_modules

    modules = source_modules(["ntsim.theory.early_stopping._width_scaling"])
    assert "ntsim.theory.early_stopping._width_scaling" in modules
    assert "ntsim.claims._decisions" in modules  # decision rules always count
    assert not any(m.startswith("ntsim.transformers") for m in modules)
    # a name imported from a package resolves to the module that defines it
    assert "ntsim.core._spectra" in source_modules(["ntsim.claims.early_stopping._width_scaling"])


def test_a_package_read_by_attribute_contributes_only_the_modules_it_reads():
    """``from ntsim.theory import overtraining as ot`` then ``ot.simulate_x``: the module
    depends on simulate_x's defining module, not on every module the package re-exports
    (an edit elsewhere in the topic leaves its records current); a package used any other
    way (passed around, read by getattr) still counts whole."""
    import ast

    from ntsim.claims._provenance import _package_uses, source_modules

    by_attribute = ast.parse(
        "from ntsim.theory import overtraining as ot\n"
        "def f(s):\n    return ot.simulate_misalignment_threshold(s)\n"
    )
    uses = _package_uses(by_attribute, "ot", "ntsim.theory.overtraining")
    assert uses == {"ntsim.theory.overtraining._post_finetuning_runs"}
    for other in ("def g():\n    return getattr(ot, 'x')\n", "h = ot\n"):
        tree = ast.parse(ast.unparse(by_attribute) + "\n" + other)
        assert _package_uses(tree, "ot", "ntsim.theory.overtraining") == {
            "ntsim.theory.overtraining"
        }
    # a plain module stays itself; the real claims module of the threshold claim leaves out
    # the budget sweep's decoder, which its claims never read
    assert _package_uses(by_attribute, "ot", "ntsim.core._spectra") == {"ntsim.core._spectra"}
    modules = source_modules(["ntsim.claims.overtraining._post_finetuning"])
    assert "ntsim.theory.overtraining._post_finetuning_runs" in modules
    assert "ntsim.theory.overtraining._budget" not in modules


def test_code_hash_ignores_docstrings_and_comments_but_not_code():
    """Three versions of one function: a docstring or comment edit leaves the code the
    provenance hashes unchanged, `+ 1 → + 2` does not."""
    import ast
    import hashlib

    from ntsim.claims._provenance import _without_docstrings

    versions = {
        "ntsim_prov_a": 'def f(x):\n    """Doc."""\n    return x + 1\n',
        "ntsim_prov_b": 'def f(x):\n    """Another doc."""\n    # a comment\n    return x + 1\n',
        "ntsim_prov_c": 'def f(x):\n    """Doc."""\n    return x + 2\n',
    }

    def code(name):
        tree = _without_docstrings(ast.parse(versions[name]))
        return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()

    assert code("ntsim_prov_a") == code("ntsim_prov_b") != code("ntsim_prov_c")


def _scale_digest(source: str, scale: str | None) -> str:
    import ast
    import hashlib

    from ntsim.claims._provenance import _without_docstrings
    from ntsim.claims._scale_provenance import _blank_other_scales

    tree = _without_docstrings(ast.parse(source))
    tree = tree if scale is None else _blank_other_scales(tree, scale)
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


def test_a_records_hash_at_its_scale_leaves_out_the_other_scales_settings():
    """Shrinking a quick setting leaves the full-scale hash (and so full records) alone,
    changes the quick one; a change of the full setting changes the full hash; a module
    that reads another scale's entry by name is noticed, so nothing is left out there."""
    import ast

    from ntsim.claims._scale_provenance import _blank_other_scales, _names_other_scale

    base = 'S = {"quick": A(n=4), "full": A(n=100)}\ndef f(s):\n    return s.n\n'
    smaller_quick = base.replace("n=4", "n=2")
    larger_full = base.replace("n=100", "n=50")
    assert _scale_digest(base, "full") == _scale_digest(smaller_quick, "full")
    assert _scale_digest(base, "quick") != _scale_digest(smaller_quick, "quick")
    assert _scale_digest(base, None) != _scale_digest(smaller_quick, None)
    assert _scale_digest(base, "full") != _scale_digest(larger_full, "full")
    assert _scale_digest(base, "quick") == _scale_digest(larger_full, "quick")
    for reads_quick in ('Q = S["quick"]\n', 'def g(scale):\n    return scale == "quick"\n'):
        tree = _blank_other_scales(ast.parse(base + reads_quick), "full")
        assert _names_other_scale(tree, "full")
    assert not _names_other_scale(_blank_other_scales(ast.parse(base), "full"), "full")
    # a read of a quick entry *inside* the quick entry is blanked with it
    nested = 'T = {"quick": 3, "full": 9}\nS = {"quick": A(n=T["quick"]), "full": A(n=T["full"])}\n'
    assert not _names_other_scale(_blank_other_scales(ast.parse(nested), "full"), "full")


def test_an_enumeration_of_every_scale_names_none_of_them():
    """``for s in ("quick", "full")`` builds a table entry by entry and reads no other scale:
    it is not a refusal; a tuple of some scales, or a constant subscript, still is."""
    import ast

    from ntsim.claims._scale_provenance import _blank_other_scales, _names_other_scale

    table = 'T = {"quick": 3, "full": 9}\n'
    built = table + 'S = {s: A(n=T[s]) for s in ("quick", "full")}\n'
    assert not _names_other_scale(_blank_other_scales(ast.parse(built), "full"), "full")
    assert _scale_digest(built, "full") == _scale_digest(built.replace("3", "2"), "full")
    assert _scale_digest(built, "quick") != _scale_digest(built.replace("3", "2"), "quick")
    partial = ('S = [T[s] for s in ("quick",)]\n', 'S = ("full", "quick", "quick")\n')
    for reads_quick in (*partial, 'S = T["quick"]\n'):
        tree = _blank_other_scales(ast.parse(table + reads_quick), "full")
        assert _names_other_scale(tree, "full"), reads_quick


def test_the_projects_scale_enumerations_are_iterated_or_listed_never_indexed():
    """What the enumeration exception assumes, checked on every module a claim runs: an
    enumeration of the scales is iterated (a comprehension or a loop) or bound to a name that
    no code there indexes by position."""
    import ast
    import importlib
    import pathlib

    from ntsim.claims._provenance import source_modules
    from ntsim.claims._runner import claim_roots
    from ntsim.claims._scale_provenance import _is_scale_enumeration

    modules = set()
    for claim in nc.REGISTRY:
        modules |= set(source_modules(claim_roots(claim)))
    seen = 0
    for name in sorted(modules):
        path = importlib.import_module(name).__file__
        tree = ast.parse(pathlib.Path(path).read_text(encoding="utf-8"))
        parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        indexed = {
            n.value.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
            and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, int)
        }  # fmt: skip
        for node in ast.walk(tree):
            if not _is_scale_enumeration(node):
                continue
            seen += 1
            parent = parents[id(node)]
            if isinstance(parent, ast.comprehension | ast.For) and parent.iter is node:
                continue
            assert isinstance(parent, ast.Assign | ast.AnnAssign), f"{name}:{node.lineno}"
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            bound = {t.id for t in targets if isinstance(t, ast.Name)}
            assert bound and not bound & indexed, f"{name}:{node.lineno}: indexed by position"
    assert seen >= 2  # the early-stopping learning curves' and the stability settings'


def test_rows_made_where_the_scale_hasher_refused_stay_current_and_gain_a_scale_hash(
    monkeypatch,
):
    """A row whose scale hash is its code hash (made while the hasher refused its path) is
    current exactly while the code hash matches, and ``ntsim report`` gives it the scale
    hash of the current code then, never when the code changed. (The two hashes are stood
    in for: a claim outside ``ntsim`` has no module of its own on its path.)"""
    from ntsim.claims import _report

    claim = _claim(lambda run: compare([0.0], [1.0], relation="upper_bound"), id="demo.u.two")
    monkeypatch.setattr(nc, "REGISTRY", (claim,))
    hashes = lambda claim, scale=None: "code" if scale is None else "scale"  # noqa: E731
    monkeypatch.setattr(_report, "claim_code_hash", hashes)
    refused = {"id": claim.id, "scale": "full", "code_hash": "code", "scale_code_hash": "code"}
    assert _report._current(refused, claim)
    (upgraded,) = _report.with_scale_code_hashes([refused])
    assert upgraded["scale_code_hash"] == "scale" and _report._current(upgraded, claim)
    changed = {**refused, "code_hash": "old", "scale_code_hash": "old"}
    assert not _report._current(changed, claim)
    assert _report.with_scale_code_hashes([changed]) == [changed]
    other = {**refused, "scale_code_hash": "another scale hash"}  # not made under refusal
    assert not _report._current(other, claim)
    assert _report.with_scale_code_hashes([other]) == [other]


def test_the_scale_hasher_is_on_no_claims_path():
    """Changing how scale hashes are made must not change any claim's own code hash."""
    from ntsim.claims._provenance import source_modules
    from ntsim.claims._runner import claim_roots

    for claim in nc.REGISTRY:
        assert "ntsim.claims._scale_provenance" not in source_modules(claim_roots(claim))


def test_rows_gain_their_scales_hash_only_while_current(tmp_path, monkeypatch):
    """Rows made before the scale hash get it from the current code only while their code
    hash still matches (then the code they were made at is the current code)."""
    from ntsim.claims._report import with_scale_code_hashes

    claim = _claim(lambda run: compare([0.0], [1.0], relation="upper_bound"), id="demo.u.one")
    monkeypatch.setattr(nc, "REGISTRY", (claim,))
    write_verification(run_claims([claim], scale="full"), out_dir=tmp_path, scale="full")
    row = json.loads((tmp_path / "demo" / "VERIFICATION.json").read_text())["claims"][0]
    assert row["scale_code_hash"]
    old = {k: v for k, v in row.items() if k != "scale_code_hash"}
    (upgraded,) = with_scale_code_hashes([old])
    assert upgraded["scale_code_hash"] == row["scale_code_hash"]
    (stale,) = with_scale_code_hashes([{**old, "code_hash": "f" * 16}])
    assert "scale_code_hash" not in stale


def _falsification_table(path, claim_id: str, searched: float, start: float = 0.5) -> None:
    entry = {
        "claim": claim_id, "start_worst_ratio": start, "searched_worst_ratio": searched,
        "tolerance": 0.0, "violated": searched > 1.0, "made": "now", "source_hash": "x",
    }  # fmt: skip
    path.write_text(json.dumps({"claims": {claim_id: entry}}))


def test_rows_carry_the_search_and_a_search_violation_of_a_holding_claim_is_unexpected(tmp_path):
    ok = _claim(lambda run: compare(jnp.abs(run), 10.0, relation="upper_bound"), id="demo.a.ok")
    _falsification_table(tmp_path / "FALSIFICATION.json", "demo.a.ok", searched=0.8)
    write_verification(run_claims([ok], scale="full"), out_dir=tmp_path, scale="full")
    (row,) = json.loads((tmp_path / "demo" / "VERIFICATION.json").read_text())["claims"]
    assert row["verdict"] == "holds"
    assert [(s["space"], s["searched_worst_ratio"]) for s in row["search"]] == [("demo.a.ok", 0.8)]
    table = (tmp_path / "demo" / "VERIFICATION.md").read_text()
    assert "| 0.8 (0.5) |" in table and "✓" in table and "UNEXPECTED" not in table
    # a later search that violates the statement shows in the row once the tables refresh
    _falsification_table(tmp_path / "FALSIFICATION.json", "demo.a.ok", searched=3.0)
    refresh_searches(tmp_path)
    (row,) = json.loads((tmp_path / "demo" / "VERIFICATION.json").read_text())["claims"]
    assert row["search"][0]["violated"] and _report_flags(row)[-1].startswith("VIOLATED")
    table = (tmp_path / "demo" / "VERIFICATION.md").read_text()
    assert "3 (0.5) ✗" in table and "✗ UNEXPECTED" in table
    assert row["verdict_by_search"] == "refuted"
    assert "**refuted by search** (recorded holds)" in table
    index = json.loads((tmp_path / "VERIFICATION.json").read_text())
    assert index["classes"]["printed_refuted"] == 1 and index["classes"]["printed_holds"] == 0
    # and goes when the search table no longer holds the claim
    (tmp_path / "FALSIFICATION.json").write_text(json.dumps({"claims": {}}))
    refresh_searches(tmp_path)
    (row,) = json.loads((tmp_path / "demo" / "VERIFICATION.json").read_text())["claims"]
    assert "search" not in row and "verdict_by_search" not in row


def test_a_smoke_claim_is_held_to_its_expectation_at_full_scale_only(monkeypatch):
    """QUICK_SMOKE_CLAIMS: an inconclusive quick record is as expected, an error is not, and
    the same verdict at full scale is unexpected."""
    assert "linearization.minilm_kappa.ntk_gd" in nc.QUICK_SMOKE_CLAIMS
    monkeypatch.setattr(nc, "QUICK_SMOKE_CLAIMS", frozenset({"demo.thm1.bound"}))

    def undecided(run):
        return estimate_in(0.0, (-1.0, 1.0), nc.AtLeast(0.0), num_instances=4)

    def broken(run):
        raise RuntimeError("boom")

    (quick,) = run_claims([_claim(undecided)], scale="quick", seeds=(0,))
    assert quick.verdict == "inconclusive" and quick.smoke and quick.as_expected
    (full,) = run_claims([_claim(undecided)], scale="full", seeds=(0,))
    assert not full.smoke and not full.as_expected
    (error,) = run_claims([_claim(broken)], scale="quick", seeds=(0,))
    assert error.verdict == "error" and not error.as_expected
    # a claim not listed is held to its expectation at quick scale too
    (other,) = run_claims([_claim(undecided, id="demo.thm2.bound")], scale="quick", seeds=(0,))
    assert not other.smoke and not other.as_expected
