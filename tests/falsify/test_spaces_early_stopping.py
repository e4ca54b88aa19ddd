"""The early-stopping search spaces against theory and independent (numpy) oracles.

Small searches (8 restarts × 200–300 steps, float64). Oracles: the equality cases of eq.
(10) (ϱ² ≤ λ̂_min, ϱ² ≥ λ̂_max) and of the sandwich's upper side (αλ̂ = 1, τ = 1), the
eigen-decomposition of eq. (35)'s bias evaluated in numpy, the closed-form counterexamples
of the printed sandwich (λ̂ = α = 1, τ = 10: ratio 5.5) and of the printed negation
(discrepancy |(104)/2 + ‖J_testτ‖²/N_test|).
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

from ntsim.falsify import falsify, get_space
from ntsim.falsify.spaces import early_stopping as fs

_ES = "early_stopping."


def _search(name: str, steps: int = 200, restarts: int = 8):
    return falsify(get_space(_ES + name), jax.random.PRNGKey(0), restarts=restarts, steps=steps)


def test_eq10_bounds_are_attained_where_theory_says_and_never_exceeded():
    """R̂_K(ϱ) ≤ ϱ is attained once ϱ² ≤ λ̂_min and R̂_K² ≤ tr K/N once ϱ² ≥ λ̂_max: the
    search reaches ratio 1 (from starts inside the spectrum) at such an instance, no further."""
    for part, attained in (
        ("radius", lambda lam, rho: rho**2 <= lam.min() * (1 + 1e-6)),
        ("trace", lambda lam, rho: rho**2 >= lam.max() * (1 - 1e-6)),
    ):
        result = _search("eq10.rademacher_monotone:" + part)
        assert 1 - 1e-9 < result.worst_ratio <= 1 + fs.EQ10_ROUND_OFF, part
        assert result.start_worst_ratio < 0.99, part
        lam, rho = result.worst_instance["eigenvalues"], float(result.worst_instance["radius"])
        assert np.all(np.diff(lam) < 0) and lam.min() > 0
        assert attained(lam, rho), part


def test_eq35_bias_bound_holds_and_the_search_closes_on_it():
    """B²_τ ≤ ‖Δ*‖²_H/(2eη_τ): sup 1 only as τ → ∞; the search beats its starts, stays below
    1 + round-off, and the worst instance replays in numpy (eigen-decomposition of K)."""
    result = _search("eq35.bias_variance_bounds:bias")
    assert result.start_worst_ratio < result.worst_ratio <= 1 + fs.EQ35_ROUND_OFF
    assert result.worst_ratio > 0.99
    inst = result.worst_instance
    gram, coef = np.asarray(inst["gram"]), np.asarray(inst["coef"])
    alpha, tau = float(inst["step_size"]), float(inst["steps"])
    assert tau == round(tau) and 1 <= tau <= fs.MAX_STEPS
    lam, q = np.linalg.eigh(gram / len(coef))
    assert alpha * lam.max() <= 1
    bias = np.mean((q @ ((1 - alpha * lam) ** tau * (q.T @ (gram @ coef)))) ** 2)
    bound = coef @ gram @ coef / (2 * math.e * alpha * tau)
    assert bias / bound == pytest.approx(result.worst_ratio, rel=1e-8)


def test_corrected_sandwich_reaches_its_equality_case_and_holds():
    """s_GD ≤ 2 s_KRR(1/η_τ) is attained at αλ̂ = 1, τ = 1 (s_GD = 1, s_KRR = 1/2); the lower
    side s_KRR ≤ s_GD has sup 1 (η_τλ̂ → 0). Neither may exceed 1 + round-off."""
    upper = _search("sec6_2.ridge_sandwich_corrected:upper", steps=300)
    assert 0.99 < upper.worst_ratio <= 1 + fs.SANDWICH_ROUND_OFF
    inst = upper.worst_instance
    assert float(inst["steps"][0]) == 1.0
    assert float(inst["step_size"] * inst["eigenvalues"][0]) > 0.98
    lower = _search("sec6_2.ridge_sandwich_corrected:lower")
    assert 0.999 < lower.worst_ratio <= 1 + fs.SANDWICH_ROUND_OFF


def test_printed_sandwich_exceeds_its_closed_form_counterexample():
    """λ = η_τ (printed): at λ̂ = α = 1, τ = 10, s_GD = 1 and s_KRR = 1/11, so s_GD/(2s_KRR)
    = 5.5; the search must find more."""
    from ntsim.theory.early_stopping import shrinkage_sandwich

    with jax.enable_x64(True):
        pair = shrinkage_sandwich(np.array([1.0]), 1.0, np.array([10]), printed=True)
        counterexample = float(pair.gd[0, 0] / (2 * pair.krr[0, 0]))
    assert counterexample == pytest.approx(5.5)
    result = _search("sec6_2.ridge_sandwich_printed")
    assert result.worst_ratio > 100 * counterexample


def test_printed_negation_exceeds_its_closed_form_counterexample():
    """θ_neg = θ_FT − τ = θ_PT gives MSE(θ_PT) − MSE(θ_FT) = (104)/2 − ‖J_testτ‖²/N_test: it
    misses (104) by |(104)/2 + ‖J_testτ‖²/N_test|. At J_testτ = Y − f_PT = e_1 (N_test = 4)
    that is 3/4 against a tolerance 1e-9 + 1e-13: ratio ≈ 7.5e8; the search must find more,
    and its worst instance must miss by exactly the closed form."""
    counterexample = 0.75 / (fs.COR1_RTOL * 1.0 + fs.COR1_ATOL)
    result = _search("cor1.negation_gap_printed")
    assert result.worst_ratio > counterexample
    inst = result.worst_instance
    jt, tau = np.asarray(inst["jacobian_test"]), np.asarray(inst["tau"])
    residual = np.asarray(inst["y_test"]) - np.asarray(inst["f_pt_test"])
    formula = 4 * residual @ jt @ tau / len(residual)
    miss = abs(formula / 2 + np.sum((jt @ tau) ** 2) / len(residual))
    assert miss / (fs.COR1_RTOL * abs(formula) + fs.COR1_ATOL) == pytest.approx(
        result.worst_ratio, rel=1e-6
    )


def test_cor2_kernel_cosine_survives_the_search():
    """Cor 2's cosine from the kernel blocks is exact in the linearised model: the search may
    push round-off (≈ 1e-15 against the claim's 1e-10), never past the tolerance."""
    result = _search("cor2.cross_kernel_cosine:cosine", steps=100, restarts=4)
    assert result.worst_ratio < 1e-2
