"""The Thm 2.2 simulations claims read (Fu et al. 2023, Sec 2.2), against closed forms."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from ntsim.theory import stability as st


def test_printed_bound_safe_ratio_is_eq3_against_r_over_n_mu():
    """Its sign is that of eq. (3) − R/(n μ/β) (R = β = 1, L = βR), root at μ/β ≈ 0.968."""
    for r in (0.05, 0.3, 0.6, 0.9, 0.96, 0.97, 0.99):
        printed = float(st.thm2_2_bound_printed(10, r, 1.0, 1.0, 1.0))
        assert (printed >= 1 / (10 * r)) == (st.printed_bound_safe_ratio(r) >= 0), r
    root = brentq(st.printed_bound_safe_ratio, 0.5, 0.99)
    assert math.isclose(root, 0.96827, abs_tol=1e-4)


def test_loo_grid_closed_form_at_mu_equal_beta_and_derived_bound(x64, key):
    """μ = β: every H_j = βI and sup‖Δ‖ = R/n; every cell obeys sup ≤ R/(n μ/β)."""
    run = st.simulate_loo_grid(key, st.LooGridSetting(mu_over_beta=(0.3, 0.9, 1.0), d=3,
                                                      num_steps=200, instances=8))  # fmt: skip
    np.testing.assert_allclose(run.sup_distance[-1], 1 / 10, rtol=1e-10)
    assert np.all(run.sup_distance <= 1 / (10 * run.mu_over_beta[:, None]) + 1e-12)
    np.testing.assert_allclose(run.bound_printed[-1], 0.0, atol=1e-12)  # eq. (3) at μ = β


def test_radius_scaling_is_linear(x64, key):
    run = st.simulate_radius_scaling(key, st.RadiusScalingSetting(instances=4, d=3,
                                                                  radii=(0.1, 1.0, 10.0),
                                                                  num_steps=50))  # fmt: skip
    per_unit = np.asarray(run.sup_distance) / run.radii
    np.testing.assert_allclose(per_unit, np.repeat(per_unit[:, 1:2], 3, axis=1), rtol=1e-10)


def test_quadratic_divergence_rate(x64, key):
    """At η = 2.2/β_F the error grows at most like 1.2^T (|1 − ηλ| ≤ 1.2 on [μ, β_F]) and
    at that rate once the top eigendirection dominates; at η = 1/β_F it shrinks."""
    steps = 100
    run = st.simulate_quadratic_divergence(key, st.DivergenceSetting(instances=16, d=3,
                                                                      num_steps=steps))  # fmt: skip
    growth = np.asarray(run.log_growth)
    assert np.all(growth <= steps * np.log(1.2) + 1e-9)
    assert np.all(growth >= steps * np.log(1.2) - 20)
    shrink = st.simulate_quadratic_divergence(
        key, st.DivergenceSetting(instances=16, d=3, factor=1.0, num_steps=steps)
    )
    assert np.all(np.asarray(shrink.log_growth) < 0)


def test_lipschitz_scaling_retuned_path_is_invariant(x64, key):
    """η = 1/(cβ) on c·H_j is the same GD path as η = 1/β on H_j (exactly)."""
    run = st.simulate_lipschitz_scaling(key, st.LipschitzScalingSetting(instances=3, d=3,
                                                                        scales=(0.5, 1.0),
                                                                        num_steps=40))  # fmt: skip
    retuned, fixed = np.asarray(run.retuned), np.asarray(run.fixed)
    np.testing.assert_allclose(retuned[:, 0], retuned[:, 1], rtol=1e-10)
    np.testing.assert_allclose(fixed[:, 1], retuned[:, 1], rtol=1e-12)  # c = 1: same run
    assert fixed[:, 0].mean() < fixed[:, 1].mean()  # smaller L at η = 1/β: smaller on average


def test_contraction_and_pointwise_lemmas_hold(x64, key):
    run = st.simulate_contraction(key, st.ContractionSetting(instances=8, d=3, num_steps=30))
    assert np.all(np.asarray(run.gap) <= 1e-12)
    for lemma in st.POINTWISE_LEMMAS:
        for family in st.LOSS_FAMILIES:
            sides = st.simulate_pointwise_lemma(key, st.PointwiseLemmaSetting(lemma, family, 16))
            gap = (np.asarray(sides.lhs) - np.asarray(sides.rhs)) / np.asarray(sides.scale)
            assert np.all(gap <= 1e-12), (lemma, family)
