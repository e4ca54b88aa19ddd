"""Anchors of the linearization claims: equality cases and closed forms a looser bound misses.

Each test runs the claim at quick scale (seed 0), checks that it holds, and plants the bug the
anchor is there for (a bound made looser, a threshold made larger): both leave every
inequality true, so only the anchor can notice them, and the verdict must change.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import ntsim.theory.linearization as lz
from ntsim.claims import RunCache, get_claim, run_claims
from ntsim.claims.linearization import _gap
from ntsim.theory.linearization import _bounds
from ntsim.theory.linearization._lipschitz import Lemma1Pair

CACHE = RunCache(maxsize=4)


def _record(claim_id: str, *, cache=CACHE):
    (record,) = run_claims([get_claim(claim_id)], scale="quick", seeds=(0,), cache=cache)
    assert record.per_seed[0].error is None, record.per_seed[0].error
    return record


def test_thm7_step_bounds_must_be_attained_at_no_extra_kernel(monkeypatch):
    """At S = 0 with y* along K's eigenvector of λ_min, R^{1/2} = σ‖y*‖/(λ_min(K) + σ), the
    corrected upper bound. λ_min(K + σI) taken as σ (λ_min(K) dropped) inflates κ and both
    upper bounds: every inequality still holds, the equality case does not."""
    assert _record("linearization.thm7.step_printed").verdict == "holds"
    original = lz.thm7_step_bounds

    def without_lambda_min(kernel, extra, targets, ridge, *, printed):
        b = original(kernel, extra, targets, ridge, printed=printed)
        lam_min = jnp.maximum(jnp.linalg.eigvalsh(kernel)[0], 0) + ridge
        loosened = (lam_min / ridge) ** (2 if printed else 1)  # κ ↑, and the printed λ_min ↓
        return b._replace(upper=b.upper * loosened)

    monkeypatch.setattr(lz, "thm7_step_bounds", without_lambda_min)
    assert _record("linearization.thm7.step_printed", cache=None).verdict == "refuted"


def test_linear_containment_ratio_closed_form_matches_the_split_step_recursion():
    """The closed form against the top-mode recursion a_{k+1} = (1 − λη)(a_k(1 − 2ημ) +
    2η‖Φ‖r_0), run step by step (μ = ‖Φ‖² = 1: the ratio is free of Φ's scale)."""
    for r0 in (0.2, 0.7, 1.2):
        radius = r0**2 / _gap._LINEAR_C
        lam = 2 * r0 / radius  # λ_o with Lip(f) = ‖Φ‖ = 1
        eta = _gap._LINEAR_LAM_ETA / lam
        a = 0.0
        for _ in range(_gap._LINEAR_STEPS):
            a = (1 - lam * eta) * (a * (1 - 2 * eta) + 2 * eta * r0)
        np.testing.assert_allclose(a / radius, _gap.linear_containment_ratio(r0), rtol=1e-12)


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_thm4_containment_must_reach_its_closed_form_at_the_threshold(monkeypatch, factor):
    """On the linear worst case at exactly λ = λ_o the distance is a closed form just below r.
    λ_o ×2 keeps every run in the ball (a weaker statement that still holds); only the closed
    form notices it. λ_o ×½ is noticed too."""
    assert _record("linearization.thm4.containment").verdict == "holds"
    original = _bounds.thm4_lambda_o
    monkeypatch.setattr(_bounds, "thm4_lambda_o", lambda *a: factor * original(*a))
    assert _record("linearization.thm4.containment", cache=None).verdict == "refuted"


def _thm7_with(**change):
    """``thm7_bounds`` with its q read from ``q_scale``·(K + S) or K + ``extra_scale``·S, or
    its ratio from S alone."""
    original = lz.thm7_bounds

    def planted(kernel, extra, targets, ridge):
        b, eta = original(kernel, extra, targets, ridge)
        if "q_scale" in change:
            top = jnp.linalg.eigvalsh(kernel + extra)[-1]
            f = (change["q_scale"] * top + ridge) / (top + ridge)
            b = b._replace(lower=b.lower * f, upper=b.upper * f)
        if "extra_scale" in change:
            top = jnp.linalg.eigvalsh(kernel + extra)[-1]
            scaled = jnp.linalg.eigvalsh(kernel + change["extra_scale"] * extra)[-1]
            f = (scaled + ridge) / (top + ridge)
            b = b._replace(lower=b.lower * f, upper=b.upper * f)
        if change.get("ratio_from_extra"):
            risk = lz.krr_train_risk
            ratio = jnp.sqrt(risk(extra, targets, ridge) / risk(kernel, targets, ridge))
            b = b._replace(value=ratio)
        return b, eta

    return planted


@pytest.mark.parametrize(
    "change", [{"q_scale": 0.75}, {"extra_scale": 1.5}, {"ratio_from_extra": True}]
)
def test_thm7_ratio_bound_anchors_catch_a_wrong_q_or_ratio(monkeypatch, change):
    """Thm 7's bounds are loose by a = κ/(1 − η)² on each side, so q read from 0.75(K + S) or
    K + 1.5S (a q too small or too large) or a ratio computed from S instead of K + S keep
    both inequalities; the anchors (q against numpy's eigenvalues, the ratio against a numpy
    solve) must not."""
    assert _record("linearization.thm7.ratio_bound").verdict == "holds"
    monkeypatch.setattr(lz, "thm7_bounds", _thm7_with(**change))
    assert _record("linearization.thm7.ratio_bound", cache=None).verdict == "refuted"


def test_thm7_step_lower_bound_without_its_one_plus_eta_is_caught(monkeypatch):
    """At S = cK with y* along λ_max the lower bound is below R^{1/2} by a closed factor; the
    lower bound without its 1 + η exceeds R^{1/2} there (at S = 0 the two agree)."""
    original = lz.thm7_step_bounds

    def planted(kernel, extra, targets, ridge, *, printed):
        b = original(kernel, extra, targets, ridge, printed=printed)
        return b._replace(lower=b.lower * (1 + lz.perturbation_size(kernel, extra)))

    monkeypatch.setattr(lz, "thm7_step_bounds", planted)
    assert _record("linearization.thm7.step_printed", cache=None).verdict == "refuted"


def test_a_doubled_thm2_bound_is_caught_where_it_is_attained(monkeypatch):
    """2Lip(f)r_0∫e^{−(Λt−Λs)}ds doubled still holds on every run; the linear runs attain the
    right one at their first step."""
    assert _record("linearization.thm2.bound_corrected").verdict == "holds"
    original = lz.thm2_bound
    monkeypatch.setattr(lz, "thm2_bound", lambda *a: 2.0 * original(*a))
    assert _record("linearization.thm2.bound_corrected", cache=None).verdict == "refuted"


def test_lemma1_with_a_wrong_jacobian_gap_is_caught_by_its_equality_case(monkeypatch):
    """‖J_a/2 − J_b‖ for ‖J_a − J_b‖ inflates the bound on network pairs (ratios ≤ 0.35 stay
    below 1); on rank-one pairs αM, βM the ratio must be 1."""
    assert _record("linearization.lemma1.kernel_lipschitz").verdict == "holds"

    def planted(jac_a, jac_b, param_gap=jnp.nan):
        jac_a, jac_b = jnp.asarray(jac_a), jnp.asarray(jac_b)
        gap = lz.spectral_norm(0.5 * jac_a - jac_b)
        kernel_gap = lz.spectral_norm(jac_a @ jac_a.T - jac_b @ jac_b.T)
        bound = (lz.spectral_norm(jac_a) + lz.spectral_norm(jac_b)) * gap
        return Lemma1Pair(kernel_gap, bound, gap, jnp.asarray(param_gap))

    monkeypatch.setattr(lz, "lemma1_pair", planted)
    assert _record("linearization.lemma1.kernel_lipschitz", cache=None).verdict == "refuted"


def test_lemma1_in_the_frobenius_norm_is_caught_by_its_equality_case(monkeypatch):
    """Lemma 1's bound holds in any submultiplicative norm, so the network pairs stay below 1
    in the Frobenius norm too; on full-rank pairs αM, βM only the operator norm gives 1."""
    from ntsim.theory.linearization import _lipschitz

    monkeypatch.setattr(_lipschitz, "spectral_norm", lambda m: jnp.linalg.norm(m))
    assert _record("linearization.lemma1.kernel_lipschitz", cache=None).verdict == "refuted"


def test_lemma1_pairs_that_do_not_differ_leave_it_undecided(monkeypatch):
    """A simulation whose pairs coincide (J_a = J_b: 0/0, read as ratio 0) decides nothing."""
    from ntsim.theory.linearization import _ball_simulations

    original = _ball_simulations.lemma1_pair
    monkeypatch.setattr(_ball_simulations, "lemma1_pair", lambda a, b, *r: original(a, a, *r))
    assert _record("linearization.lemma1.kernel_lipschitz", cache=None).verdict == "inconclusive"


def test_thm7_ratio_bound_pins_a_to_the_printed_c_over_one_minus_eta_squared(monkeypatch):
    """a = c/(1 − η/2)² in place of c/(1 − η)²: a smaller a keeps both bounds (they are loose
    by a = κ/(1 − η)² on each side) and q = √(lower·upper) unchanged; only a = √(upper/lower)
    against c/(1 − η)² from numpy's eigenvalues and a Cholesky route to η notices it."""
    assert _record("linearization.thm7.ratio_bound").verdict == "holds"
    original = lz.thm7_bounds

    def planted(kernel, extra, targets, ridge):
        b, eta = original(kernel, extra, targets, ridge)
        shrink = ((1 - eta) / (1 - 0.5 * eta)) ** 2  # a·shrink = c/(1 − η/2)²
        return b._replace(lower=b.lower / shrink, upper=b.upper * shrink), eta

    monkeypatch.setattr(lz, "thm7_bounds", planted)
    assert _record("linearization.thm7.ratio_bound", cache=None).verdict == "refuted"


@pytest.mark.parametrize("printed", [True, False])
def test_thm7_step_upper_bound_without_its_one_minus_eta_is_caught(monkeypatch, printed):
    """σ‖y*‖κ/λ(K + σI) without the 1/(1 − η) still bounds R(θ∪θ̂)^{1/2} (S ⪰ 0 only raises
    λ_min), and at S = 0, where the equality cases sit, η = 0: only the printed formula
    evaluated a second way (numpy) notices the missing factor."""
    original = lz.thm7_step_bounds

    def planted(kernel, extra, targets, ridge, *, printed):
        b = original(kernel, extra, targets, ridge, printed=printed)
        if printed is not planted.which:
            return b
        return b._replace(upper=b.upper * (1 - lz.perturbation_size(kernel, extra)))

    planted.which = printed
    monkeypatch.setattr(lz, "thm7_step_bounds", planted)
    assert _record("linearization.thm7.step_printed", cache=None).verdict == "refuted"


def test_a_plateau_lipschitz_estimate_below_the_path_leaves_it_undecided():
    """Thm 2's Lip(f) bounds ‖J_θs‖ along the path; the path minimum of ‖J‖_op in place of its
    maximum gives a tighter bound that still holds on the plateau, but it is below ‖J_θs‖ at
    some step of every run (‖J‖ moves along each run), so the premise fails."""
    import jax

    from ntsim.claims.linearization import _distance

    with jax.enable_x64(True):
        run = lz.simulate_plateau(jax.random.key(0), lz.NetworkSetting(instances=16))
    assert _distance.check_thm2_plateau(run).outcome == "holds"
    low = np.min(np.asarray(run.jac_norm), axis=-1)
    planted = run._replace(lip=low, scaled=np.asarray(run.scaled) * np.asarray(run.lip) / low)
    assert _distance.check_thm2_plateau(planted).outcome == "inconclusive"


def test_a_split_step_beyond_half_a_proximal_step_leaves_thm3_undecided(monkeypatch):
    """η = 0.1/λ_max(K) without its cap 0.5/λ (λ up to 10λ_max: λη up to 1, where the split
    step puts θ back at θ0 and Δ ≡ 0 satisfies any bound): the design check λη ≤ 1/2 fails."""
    import jax

    from ntsim.theory.linearization import _ball_simulations, _simulations

    assert _record("linearization.thm3.bound").verdict == "holds"

    def uncapped(key, s, *, selective, zero_fraction=0.0):
        inst = _simulations.random_instance(key, n=s.n, d=s.d, width=s.width)
        k_lam, k_zero = jax.random.split(jax.random.fold_in(key, 11))
        lam = 10 ** jax.random.uniform(k_lam, minval=-1.0, maxval=1.0) * inst.mu_max
        lam = jnp.where(jax.random.uniform(k_zero) < zero_fraction, 0.0, lam)
        eta = 0.1 / inst.mu_max
        run = lz.finetune(_simulations.instance_model(s.width).apply, inst.params0, inst.x,
                          inst.y, proximal=lam, learning_rate=eta, num_steps=s.steps,
                          selective=selective)  # fmt: skip
        return inst, run, lam, eta

    monkeypatch.setattr(_ball_simulations, "_constant_run", uncapped)
    assert _record("linearization.thm3.bound", cache=None).verdict == "inconclusive"
