"""The simulations behind the Sec 4.2 (Fig 1), Sec 5 (Thms 5.2, 5.3) and Sec 6 (H^∞) claims
of Shachaf et al. 2021, against closed forms and independent routes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import gaussian_inputs, two_level_spectrum
from ntsim.theory import linear_teachers as lt

KEY = jax.random.PRNGKey(3)


def test_root_equation_is_solved_to_round_off():
    setting = lt.RootEquationSetting(d=8, n_values=(2, 5), draws_per_n=6, grid=300)
    with jax.enable_x64(True):
        run = lt.simulate_root_equation(KEY, setting)
    assert run.residual.shape == (12,)
    assert float(run.residual.max()) < 1e-12
    assert float(run.bracket.max()) <= 1e-12
    assert np.all(np.asarray(run.sign_changes) == 1)
    assert float(run.between.min()) > 0
    assert float(run.l1_error.max()) < 1e-12 and float(run.l2_error.max()) < 1e-12
    # c_1000 is within 2× its first-order distance from c_∞ (module doc of _deep_simulations)
    assert np.all(np.asarray(run.large_depth_gap) <= 2 * np.asarray(run.first_order))


def test_deep_gd_error_is_first_order_in_the_step_size():
    setting = lt.DeepGDSetting(d=8, n=3, draws=3, depths=(2,), etas=(0.02, 0.01), flow_time=20.0)
    with jax.enable_x64(True):
        run = lt.simulate_deep_gd(KEY, setting)
    error = np.asarray(run.error)[0]  # (draws, etas)
    assert float(np.max(run.loss_ratio)) < 1e-20
    np.testing.assert_allclose(error[:, 0] / error[:, 1], 2.0, rtol=0.2)  # halving η halves it


def test_end_to_end_tracks_layer_wise_gd_to_first_order():
    setting = lt.DeepGDSetting(d=8, n=3, draws=3, depths=(3,), etas=(0.02, 0.01), flow_time=10.0)
    with jax.enable_x64(True):
        run = lt.simulate_end_to_end(KEY, setting, records=10)
    gap = np.asarray(run.gap)
    np.testing.assert_allclose(np.median(gap[:, 0] / gap[:, 1]), 2.0, rtol=0.25)
    assert np.all(np.asarray(run.error) <= np.asarray(run.etas))


def test_null_space_part_of_the_first_layer_does_not_move():
    setting = lt.NullSpaceSetting(d=8, n=3, draws=2, depths=(2,), etas=(0.05,), steps=50)
    with jax.enable_x64(True):
        run = lt.simulate_null_space_drift(KEY, setting)
    assert run.drift.shape == (1, 2, 1)
    assert float(run.drift.max()) < 1e-13


def test_approximately_balanced_error_falls_with_the_init_scale():
    setting = lt.ApproxBalancedSetting(d=6, n=2, draws=4, sigmas=(0.1, 0.01),
                                       pretrain_steps=1500, fine_tune_steps=1500)  # fmt: skip
    with jax.enable_x64(True):
        run = lt.simulate_approximately_balanced(KEY, setting)
    error = np.asarray(run.error)
    assert error.shape == (2, 4)
    assert float(np.max(np.asarray(run.loss))) < 1e-10
    assert error[1].mean() < error[0].mean()


def test_aligned_risks_match_thm4_1_and_the_depth_formula():
    """L = 1 is Thm 4.1's eq. (2) with θ_T = αθ_S, i.e. eq. (8); (α − c_L)² route agrees."""
    with jax.enable_x64(True):
        run = lt.simulate_aligned(KEY, lt.AlignedSetting(d=12, n=4, draws=5))
    np.testing.assert_allclose(run.risks[:, 0], run.risk_eq8, rtol=1e-10)
    np.testing.assert_allclose(run.risks, run.formula, rtol=1e-10)
    assert float(run.risk_inf_relative.max()) < 1e-24
    assert np.all(np.diff(np.asarray(run.risks), axis=1) < 0)


def test_covariance_alignment_risks_against_an_independent_projector():
    setting = lt.CovarianceAlignmentSetting(d=30, top=4, repeats=2, chunk_size=2, bound_points=5)
    with jax.enable_x64(True):
        run = lt.simulate_covariance_alignment(KEY, setting)
        spectrum = two_level_spectrum(30, 4, 1.5, 0.3)
        k_v, k_x = jax.random.split(jax.random.split(KEY, 2)[0])  # repeat 0 (sweep_keys)
        v = jnp.stack(lt.alignment_directions(k_v, spectrum, 4, norm=1.0))
        x = gaussian_inputs(k_x, 30, spectrum)
        for n in (1, 7, 29):
            p_perp = lt.null_space_projector(x[:n])
            expected = jnp.einsum("kd,d,kd->k", v @ p_perp, spectrum, v @ p_perp)
            np.testing.assert_allclose(run.risks[0, :, n - 1], expected, rtol=1e-9, atol=1e-14)
    assert run.bound.shape == (2, 2, len(setting.bound_sizes))
    np.testing.assert_allclose(run.risks[:, :, -1], 0.0, atol=1e-10)  # n = d: P_⊥ = 0
    np.testing.assert_allclose(np.asarray(run.v_squared).sum(-1), 1.0, rtol=1e-12)


def test_hinf_gram_error_has_its_exact_monte_carlo_variance():
    setting = lt.HinfGramSetting(n=6, d=5, widths=(64, 256), draws=200)
    with jax.enable_x64(True):
        run = lt.simulate_hinf_gram(KEY, setting)
    error, expected = np.asarray(run.error_sq), np.asarray(run.expected_sq)
    np.testing.assert_allclose(expected[0] * 64, expected[1] * 256, rtol=1e-12)  # ∝ 1/m exactly
    diff = error - expected
    z = diff.mean(1) / (diff.std(1, ddof=1) / np.sqrt(diff.shape[1]))
    assert np.all(np.abs(z) < 4), z


def test_hinf_fixture_matches_neural_tangents():
    with jax.enable_x64(True):  # the fixture ships with the source: missing is a failure
        run = lt.simulate_hinf_fixture(KEY, lt.HinfFixtureSetting())
    scale = np.abs(np.asarray(run.reference)).max()
    np.testing.assert_allclose(run.measured, run.reference, atol=1e-12 * scale)
