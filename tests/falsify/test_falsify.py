"""ntsim.falsify: the search finds known worst cases, respects constraints, and saves
instances that replay to the ratio it reported.

Oracles: closed-form maxima (|v₁v₂| ≤ 1/2 on the circle, Cauchy–Schwarz), the constructed
counterexample of Thm 5.4's printed (9) (ratio 1/0.267 ≈ 3.75, computed in closed form by
the claim), and bound (10), which holds by the definition of the measured ε.
"""

from __future__ import annotations

import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.falsify import SearchSpace, falsify, get_space, random_search
from ntsim.falsify._record import entry_for, load_instance, save_search, write_table


def _product_space():
    """|v₁v₂| ≤ 0.4 on the unit circle: violated, worst ratio 1/2 / 0.4 = 1.25."""
    return SearchSpace(
        "product", {"v": (2,)}, lambda p: {"v": p["v"] / jnp.linalg.norm(p["v"])},
        lambda i: (jnp.abs(i["v"][0] * i["v"][1]), jnp.asarray(0.4)), "toy",
    )  # fmt: skip


def test_adam_reaches_the_closed_form_maximum_and_beats_its_random_starts():
    """max |v₁v₂| on S¹ is 1/2: against rhs 0.4 the worst ratio is 1.25."""
    space = _product_space()
    result = falsify(space, jax.random.PRNGKey(1), restarts=8, steps=300)
    assert result.worst_ratio == pytest.approx(1.25, rel=1e-6)
    assert np.all(result.best_ratio >= result.start_ratio - 1e-12)
    assert result.history.shape == (12, 8)


def test_cauchy_schwarz_is_approached_but_never_exceeded():
    """⟨a, b⟩ ≤ ‖a‖‖b‖: a true bound the ascent pushes to its equality case, ratio → 1."""
    space = SearchSpace(
        "cauchy-schwarz", {"a": (5,), "b": (5,)}, lambda p: p,
        lambda i: (jnp.abs(i["a"] @ i["b"]), jnp.linalg.norm(i["a"]) * jnp.linalg.norm(i["b"])),
        "toy",
    )  # fmt: skip
    result = falsify(space, jax.random.PRNGKey(2), restarts=8, steps=400)
    assert 0.999 < result.worst_ratio <= 1.0 + 1e-12


def test_infeasible_steps_are_rejected_not_traded_off():
    """Maximise x subject to x < 0.5 (a constraint only a measurement tells): the search may
    approach 0.5 but no accepted iterate crosses it, however much the objective would gain."""
    space = SearchSpace("constrained", {"x": (1,)}, lambda p: {"x": p["x"][0]},
                        lambda i: (jnp.exp(i["x"]), jnp.asarray(1.0)), "toy",
                        feasible=lambda i: i["x"] < 0.5)  # fmt: skip
    result = falsify(space, jax.random.PRNGKey(3), restarts=16, steps=300, learning_rate=0.1)
    assert float(result.worst_instance["x"]) < 0.5
    assert result.worst_ratio <= np.exp(0.5)
    assert result.worst_ratio > np.exp(0.4)


def test_a_bound_whose_right_side_breaks_is_violated_not_infeasible():
    """lhs = 1/2 against an rhs that is 1 on most of the circle but −1 (or NaN) on the arc
    v₀ < −0.9: a bound that fails to bound there. Before, those instances were rejected as
    infeasible (ratio ≤ 1/2 everywhere else); now they are violations of ratio +inf."""
    for broken in (-1.0, jnp.nan):
        space = SearchSpace(
            "broken_rhs", {"v": (2,)}, lambda p: {"v": p["v"] / jnp.linalg.norm(p["v"])},
            lambda i, b=broken: (jnp.asarray(0.5), jnp.where(i["v"][0] < -0.9, b, 1.0)), "toy",
        )  # fmt: skip
        result = random_search(space, jax.random.PRNGKey(0), samples=512)
        assert result.worst_ratio == np.inf
        assert float(result.worst_instance["v"][0]) < -0.9
        fine = random_search(space, jax.random.PRNGKey(0), samples=512)._replace(
            best_ratio=np.where(np.isinf(result.best_ratio), np.nan, result.best_ratio)
        )
        assert fine.worst_ratio == pytest.approx(0.5)  # elsewhere the ratio is 1/2
        adam = falsify(space, jax.random.PRNGKey(1), restarts=32, steps=25)
        assert adam.worst_ratio == np.inf and np.isfinite(adam.worst_params["v"]).all()


def test_random_search_is_the_gradient_free_fallback():
    space = _product_space()
    result = random_search(space, jax.random.PRNGKey(0), samples=1000, batch=300)
    assert result.method == "random" and result.start_ratio.shape == (1000,)
    assert 1.2 < result.worst_ratio <= 1.25 + 1e-12


def test_spaces_and_searches_reject_bad_input():
    with pytest.raises(ValueError, match="at least one parameter"):
        SearchSpace("x", {}, lambda p: p, lambda i: (1.0, 1.0), "toy")
    with pytest.raises(ValueError, match="positive ints"):
        SearchSpace("x", {"a": (0,)}, lambda p: p, lambda i: (1.0, 1.0), "toy")
    space = get_space("linear_teachers.thm5_4.bounds")
    with pytest.raises(ValueError, match="restarts"):
        falsify(space, jax.random.PRNGKey(0), restarts=0)
    with pytest.raises(ValueError, match="learning_rate"):
        falsify(space, jax.random.PRNGKey(0), learning_rate=-1.0)
    with pytest.raises(ValueError, match="no search space.*declared: "):
        get_space("linear_teachers.no_such_claim")
    never = SearchSpace("never", {"x": (1,)}, lambda p: p, lambda i: (1.0, 1.0), "toy",
                        feasible=lambda i: False)  # fmt: skip
    with pytest.raises(ValueError, match="no feasible instance"):
        falsify(never, jax.random.PRNGKey(0), restarts=2, steps=25)


@pytest.fixture(scope="module")
def thm5_4():
    """The three Thm 5.4 spaces searched once (8 restarts × 300 steps, float64)."""
    ids = ("bounds", "bound9_printed", "bound10_measured")
    return {
        name: falsify(get_space(f"linear_teachers.thm5_4.{name}"), jax.random.PRNGKey(0),
                      restarts=8, steps=300)
        for name in ids
    }  # fmt: skip


def test_thm5_4_printed_bound_is_violated_beyond_the_constructed_counterexample(thm5_4):
    """The claim's constructed instance violates printed (9) by the ratio 1/0.267 ≈ 3.75
    (closed form); the search must find at least that."""
    from ntsim.claims.linear_teachers._random_projection import CONSTRUCTED_RELATIVE_VIOLATION

    assert thm5_4["bound9_printed"].worst_ratio > 1.0 + CONSTRUCTED_RELATIVE_VIOLATION


def test_thm5_4_corrected_bound_and_the_control_survive_the_search(thm5_4):
    """Corrected (9) is derived to hold for ε < 1 and (10) holds by the definition of ε:
    a ratio above 1 would be a finding (or a bug) — neither may appear."""
    assert thm5_4["bounds"].worst_ratio <= 1.0
    assert thm5_4["bounds"].worst_ratio > thm5_4["bounds"].start_worst_ratio
    assert thm5_4["bound10_measured"].worst_ratio <= 1.0 + 1e-9
    assert float(thm5_4["bounds"].worst_instance["theta_s"] @ thm5_4["bounds"]
                 .worst_instance["theta_s"]) == pytest.approx(1.0)  # fmt: skip


def test_a_saved_instance_replays_to_the_reported_ratio(thm5_4, tmp_path):
    from ntsim.theory import linear_teachers as lt

    space = get_space("linear_teachers.thm5_4.bound9_printed")
    result = thm5_4["bound9_printed"]
    entry = entry_for(result, space, seed=0, restarts=8, learning_rate=0.05)
    save_search(entry, result, tmp_path)
    instance = load_instance(tmp_path, space.claim_id)
    with jax.enable_x64(True):
        x, ts, tt = (jnp.asarray(instance[k]) for k in ("x", "theta_s", "theta_t"))
        risk = lt.deep_risk(x, ts, tt, jnp.eye(x.shape[1]), jnp.inf)
        bounds = lt.random_projection_bounds(x, ts, tt)
    assert float(risk / bounds.eq9) == pytest.approx(result.worst_ratio, rel=1e-9)
    assert float(bounds.epsilon) < 0.9
    table = json.loads(write_table([entry], tmp_path).read_text())
    assert table["claims"][space.claim_id]["violated"] is True
    assert "(violated)" in (tmp_path / "FALSIFICATION.md").read_text()


def test_command_line_lists_spaces_and_refuses_bad_arguments(tmp_path):
    run = [sys.executable, "-m", "ntsim.cli", "falsify"]
    listed = subprocess.run([*run, "--list"], capture_output=True, text=True, check=True)
    assert "linear_teachers.thm5_4.bounds:" in listed.stdout + listed.stderr
    bad = subprocess.run([*run, "linear_teachers.nope", "--out", str(tmp_path)],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and "no search space is declared" in bad.stderr
    zero = subprocess.run([*run, "--all", "--restarts", "0", "--out", str(tmp_path)],
                          capture_output=True, text=True)  # fmt: skip
    assert zero.returncode == 2 and "--restarts must be in [1, 65536], got 0" in zero.stderr


def test_thm4_2_steps_survive_and_the_null_space_step_reaches_its_equality_case():
    """R(γ) = uᵀ(Σ − Σ̃)u ≤ ĝ‖u‖² for u = P_⊥v ∈ null(X) (Σ̃u = 0), with equality when u is a
    top eigenvector of Σ − Σ̃: the search must get there (ratio → 1) and not beyond the
    claim's round-off; eq. (3), which adds the Davis–Kahan step, must stay below 1."""
    null = falsify(get_space("linear_teachers.thm4_2.deterministic:null_space"),
                   jax.random.PRNGKey(0), restarts=8, steps=300)  # fmt: skip
    assert 0.999 < null.worst_ratio <= 1.0 + 1e-10
    eq3 = falsify(get_space("linear_teachers.thm4_2.deterministic:eq3"), jax.random.PRNGKey(0),
                  restarts=8, steps=200)  # fmt: skip
    assert eq3.worst_ratio < 1.0


def test_cor6_2_searches_find_the_derived_constants():
    """H^∞ − XXᵀ/4 = [ρ_ij arcsin(ρ_ij)/(2π)] is PSD (Schur product of PSD kernels) and can be
    nearly singular, so the ratio of quadratic forms approaches 1 from below; the derived
    bound 2‖P_∥v‖ follows from it and is approached too; the printed 3‖v‖ is then loose by
    exactly 3/2 at worst (v in the row space): the search must find 2/3 and not more."""
    names = ("hinf_dominates_gram", "derived_bound", "bound")
    worst = {
        name: falsify(get_space(f"linear_teachers.cor6_2.{name}"), jax.random.PRNGKey(0),
                      restarts=8, steps=400).worst_ratio
        for name in names
    }  # fmt: skip
    assert 0.99 < worst["hinf_dominates_gram"] <= 1.0 + 1e-10
    assert 0.99 < worst["derived_bound"] <= 1.0 + 1e-10
    assert 0.66 < worst["bound"] <= 2.0 / 3.0 + 1e-9
