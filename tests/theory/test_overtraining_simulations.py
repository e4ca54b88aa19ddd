"""The simulations the overtraining claims read, against closed forms and independent oracles.

Each ``simulate_*`` of :mod:`ntsim.theory.overtraining` is held against something it does
not compute itself: the spectral closed forms of Sec 4 (the simulations build checkpoint
matrices from Haar ``U, V``), Monte Carlo, or hand-written numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from ntsim.theory import overtraining as ot

# ------------------------------------------------------------------------------ perturbation


def test_monte_carlo_simulation_agrees_with_the_closed_form(x64, key):
    setting = ot.PerturbedLossMonteCarloSetting(d=3, instances=20, samples=4000)
    run = ot.simulate_perturbed_loss_monte_carlo(key, setting)
    assert run.exact.shape == run.mc_mean.shape == run.mc_se.shape == (20,)
    z = np.asarray((run.mc_mean - run.exact) / run.mc_se)
    # |z| < 4.5 for 20 instances: family-wise false alarm ≈ 1.4e-4 (CLT, 4000 samples)
    assert np.all(np.abs(z) < 4.5) and np.all(np.asarray(run.mc_se) > 0)


def test_ideal_perturbation_matrix_route_matches_the_spectral_closed_form(x64, key):
    setting = ot.IdealPerturbationSetting(d=5, instances=8, gammas=4)
    run = ot.simulate_ideal_perturbation(key, setting)
    assert run.losses.shape == (8, 4, 6)
    spectrum, gammas = np.asarray(run.spectrum), np.asarray(run.gammas)
    for i in range(8):
        assert np.all(np.diff(spectrum[i]) <= 0) and np.all(np.diff(gammas[i]) >= 0)
        level = 2 * 5 * gammas[i] ** 2
        assert np.all(level >= spectrum[i, -1] / 3 - 1e-12) and np.all(level <= 3 * spectrum[i, 0])
        for j, g in enumerate(gammas[i]):
            # L̃(n) = Σ_(i>n) σ_i² + 2dγ² Σ_(i≤n) σ_i + d³γ⁴, written out here in numpy
            s = spectrum[i]
            closed = [np.sum(s[n:] ** 2) + 10 * g**2 * np.sum(s[:n]) + 125 * g**4 for n in range(6)]
            np.testing.assert_allclose(run.losses[i, j], closed, rtol=1e-12)


def test_hessian_simulation_matches_the_trace_closed_forms(x64, key):
    run = ot.simulate_hessian_traces(key, ot.HessianTraceSetting(d=3, instances=6))
    w1, w2 = np.asarray(run.w1), np.asarray(run.w2)
    by_hand = 2 * 3 * (np.sum(w1**2, axis=(1, 2)) + np.sum(w2**2, axis=(1, 2)))
    np.testing.assert_allclose(run.trace_random, by_hand, rtol=1e-12)
    spectrum, n = np.asarray(run.spectrum), np.asarray(run.n)
    ideal = [4 * 3 * np.sum(s[:k]) for s, k in zip(spectrum, n, strict=True)]
    np.testing.assert_allclose(run.trace_ideal, ideal, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ot.PerturbedLossMonteCarloSetting(samples=1),
        lambda: ot.IdealPerturbationSetting(gammas=0),
        lambda: ot.IdealPerturbationSetting(low=2.0, high=1.0),
        lambda: ot.HessianTraceSetting(d=0),
    ],
)
def test_perturbation_settings_validate(make):
    with pytest.raises(ValueError):
        make()


# ------------------------------------------------------------------------------- pretraining


def test_aligned_flow_simulation_follows_the_logistic_closed_form(x64, key):
    setting = ot.AlignedFlowSetting(d=3, instances=4, tau=(3.0, 6.0))
    run = ot.simulate_aligned_flow(key, setting)
    assert run.modes.shape == (4, 10, 3, 3)
    times = np.asarray(run.times)
    assert np.all(np.diff(times, axis=1) > 0) and np.all(times[:, 0] == 0)
    for s, tau, t, modes in zip(run.spectrum, run.tau, run.times, run.modes, strict=True):
        s, tau, t = np.asarray(s), float(tau), np.asarray(t)
        # a_i(t) = σ_i / (1 + (σ_i e^(2τ) − 1) e^(−4σ_i t)), written out here
        closed = s / (1 + (s * np.exp(2 * tau) - 1) * np.exp(-4 * s * t[:, None]))
        np.testing.assert_allclose(np.diagonal(modes, axis1=1, axis2=2), closed, atol=1e-8)
        off = modes - np.einsum("ti,ij->tij", closed, np.eye(3))
        assert np.abs(off).max() < 1e-8


def test_real_checkpoints_pass_near_the_truncated_svd(x64, key):
    setting = ot.RealCheckpointSetting(d=3, instances=2, tau=(12.0, 13.0), points=120)
    run = ot.simulate_real_checkpoints(key, setting)
    assert run.w1.shape == (2, 4, 3, 3) and run.index.shape == (2, 4)
    for i in range(2):
        s, u, v = (np.asarray(x[i]) for x in (run.spectrum, run.u, run.v))
        for n in range(4):
            ideal = u[:, :n] @ np.diag(s[:n]) @ v[:, :n].T  # the truncated SVD
            product = np.asarray(run.w1[i, n] @ run.w2[i, n])
            assert np.linalg.norm(product - ideal) < 0.02 * s[0]
    assert np.all(np.diff(np.asarray(run.index), axis=1) > 0)
    assert np.all(np.asarray(run.max_loss_increase) <= 1e-7 * np.asarray(run.spectrum[:, 0]) ** 2)


def test_real_vs_ideal_gap_shrinks_with_tau_and_obeys_the_proof_chain(x64, key):
    setting = ot.RealVsIdealGapSetting(d=3, instances=2, taus=(8.0, 14.0), gammas=(0.05,),
                                       points=120)  # fmt: skip
    run = ot.simulate_real_vs_ideal_gap(key, setting)
    gaps, eps = np.asarray(run.gaps), np.asarray(run.distance)
    assert gaps.shape == (2, 2, 1, 4) and eps.shape == (2, 2, 4)
    worst = gaps[..., 1:].max(axis=(2, 3))
    assert np.all(worst[:, 1] < worst[:, 0])  # a smaller init lands closer to the ideal
    s1 = np.asarray(run.spectrum[:, 0])
    # |ΔL̃| ≤ |Δ‖θ − A‖²| + dγ²(|Δ‖W1‖²| + |Δ‖W2‖²|) ≤ 8dσ_1(2σ_1 + γ²)·ε (Lemma A.6's proof)
    chain = 8 * 3 * s1[:, None] * (2 * s1[:, None] + 0.05**2) * eps[..., 1:].max(axis=-1)
    assert np.all(worst <= chain)


@pytest.mark.parametrize(
    "make",
    [
        lambda: ot.AlignedFlowSetting(tau=(5.0, 3.0)),
        lambda: ot.RealCheckpointSetting(points=1),
        lambda: ot.RealCheckpointSetting(ratios=(0.5, 1.2)),
        lambda: ot.RealVsIdealGapSetting(taus=(12.0, 8.0)),
        lambda: ot.RealVsIdealGapSetting(gammas=()),
    ],
)
def test_pretraining_settings_validate(make):
    with pytest.raises(ValueError):
        make()


# -------------------------------------------------------------------------------- fine-tuning


def test_recursion_simulation_starts_at_the_ideal_checkpoints(x64, key):
    run = ot.simulate_recursion(key, ot.RecursionSetting(d=3, instances=3, steps=20,
                                                         record_every=10))  # fmt: skip
    assert run.modes.shape == (3, 4, 3, 3, 3) and run.steps.tolist() == [0, 10, 20]
    for i in range(3):
        pre = np.asarray(run.pre[i])
        for n in range(4):  # at k = 0: UᵀW̄1W̄2V = diag(σ^pre_1..σ^pre_n, 0, ...)
            ideal = np.diag(np.where(np.arange(3) < n, pre, 0))
            np.testing.assert_allclose(run.modes[i, n, 0], ideal, atol=1e-12)
        np.testing.assert_array_equal(run.modes[i, 0], 0.0)  # nothing learned: θ stays 0
    eta = 0.8 / (4 * (np.asarray(run.reg) + 2) * np.asarray(run.gamma))
    np.testing.assert_allclose(run.learning_rate, eta)


def test_fixed_point_simulation_converges_to_the_stationary_point(x64, key):
    run = ot.simulate_fixed_point(key, ot.FixedPointSetting(d=3, instances=4, steps=3000))
    pre, ft, reg = (np.asarray(v) for v in (run.pre, run.ft, run.reg))
    # stationary point of (x − σ^ft)² + λ(x − σ^pre)², written out here
    np.testing.assert_allclose(run.modes, (ft + reg[:, None] * pre) / (1 + reg[:, None]),
                               atol=1e-9)  # fmt: skip


def test_dead_units_and_minibatch_gradient_simulations(x64, key):
    dead = ot.simulate_dead_units(key, ot.DeadUnitsSetting(d=3, instances=4, steps=20, batch=5))
    np.testing.assert_array_equal(dead.dead_max, 0.0)
    assert np.any(np.asarray(dead.leak) > 0)  # finite m: UᵀθV leaves the top-n block (n ≥ 1)
    grad = ot.simulate_minibatch_gradient(key, ot.MinibatchGradientSetting(d=3, instances=4,
                                                                           batch=4))  # fmt: skip
    assert np.all(np.asarray(grad.gradient) < 1e-10) and np.all(np.asarray(grad.printed) > 1e-3)
    np.testing.assert_allclose(grad.printed, grad.commutator, rtol=1e-9)


def test_contraction_simulation_starts_at_the_root_of_sigma_pre(x64, key):
    run = ot.simulate_contraction(key, ot.ContractionSetting(instances=50, steps=4000))
    np.testing.assert_allclose(run.x[0], np.sqrt(np.asarray(run.pre)))
    pre, ft, reg = (np.asarray(v) for v in (run.pre, run.ft, run.reg))
    np.testing.assert_allclose(np.asarray(run.x[-1]) ** 2, (ft + reg * pre) / (1 + reg), rtol=1e-6)


# ----------------------------------------------------------------------- finite-batch dynamics


def test_finite_batch_simulation(x64, key):
    setting = ot.FiniteBatchSetting(d=2, instances=3, tau=(10.0, 11.0), points=100, batch=500,
                                    steps=4)  # fmt: skip
    run = ot.simulate_finite_batch(key, setting)
    assert run.one_step.shape == (3, 4) and run.gap0.shape == (3,)
    # Bai–Yin: ‖XᵀX/m − I‖_op ≈ 2√(d/m) for Gaussian X (m ≫ d)
    scale = 2 * np.sqrt(2 / 500)
    assert 0.2 * scale < float(np.mean(run.batch_error)) < 3 * scale
    np.testing.assert_allclose(run.eta * run.gamma, 1 / 320)
    # W̄ and Ŵ start equal: their gap after one step is the one-step gap of Lemma A.15
    np.testing.assert_allclose(run.finite_vs_infinite[:, 0], run.one_step[:, 0], rtol=1e-10)
    assert np.all(np.asarray(run.max_norm) <= 2 * np.sqrt(np.asarray(run.gamma))[:, None])


# --------------------------------------------------------------------------- post fine-tuning


def test_progressive_sensitivity_simulation_converges_to_the_closed_form(x64, key):
    run = ot.simulate_progressive_sensitivity(key, ot.SensitivitySetting(d=3, instances=3,
                                                                          steps=4000))  # fmt: skip
    pre, ft, reg = (np.asarray(v) for v in (run.pre, run.ft, run.reg))
    # converged: learned mode i sits at (σ^ft + λσ^pre)/(1+λ), so Δ_pre(n) = Σ_(i≤n)
    # ((σ^ft_i − σ^pre_i)/(1+λ))², written out here
    closed = np.concatenate(
        [np.zeros((3, 1)), np.cumsum(((ft - pre) / (1 + reg[:, None])) ** 2, axis=1)], axis=1
    )
    np.testing.assert_allclose(run.delta, closed, rtol=1e-6, atol=1e-9)  # fmt: skip


def test_threshold_simulation_converges_to_the_lemma_a26_increment(x64, key):
    setting = ot.ThresholdSetting(d=3, instances=3, steps=6000, ratio_gap=(1.7, 2.3))
    run = ot.simulate_misalignment_threshold(key, setting)
    assert run.ratio_gap == (1.7, 2.3)  # the check leaves out the band its run excluded
    pre, ft = np.asarray(run.pre), np.asarray(run.ft)
    gamma2 = np.maximum(pre[:, :1], ft[:, :1]) ** 2
    # λ = 0: learned mode n moves from σ^pre_n to σ^ft_n: ΔL_pre = (σ^ft − σ^pre)² − (σ^pre)²
    np.testing.assert_allclose(run.increments, ((ft - pre) ** 2 - pre**2) / gamma2, atol=1e-6)


def test_threshold_spectra_decrease_strictly_and_ratios_stay_in_the_drawn_range(x64, key):
    """The module's premise (a tie in σ^ft makes a learned unit a saddle): every σ^ft_n is at
    most 0.999σ^ft_{n−1}, and capping only lowers the ratios drawn in ratio_range."""
    setting = ot.ThresholdSetting(d=6, instances=64, steps=2)
    run = ot.simulate_misalignment_threshold(key, setting)
    pre, ft = np.asarray(run.pre), np.asarray(run.ft)
    assert np.all(ft[:, 1:] <= 0.999 * ft[:, :-1] * (1 + 1e-12))
    assert np.all(pre[:, 1:] <= pre[:, :-1])
    assert np.all(ft / pre <= setting.ratio_range[1] * (1 + 1e-12))
    assert run.ratio_range == setting.ratio_range


def test_regularisation_and_converged_model_simulations_start_from_nothing_learned(x64, key):
    run = ot.simulate_regularisation(key, ot.RegularisationSetting(d=3, instances=2, steps=50))
    pre = np.asarray(run.pre)
    # checkpoint 0 is θ = 0, which GD keeps at 0: L_pre(0) = Σ σ_pre² for every λ
    np.testing.assert_allclose(run.pre_loss[:, :, 0], np.sum(pre**2, axis=1)[:, None] * np.ones(5))
    # one η for every λ: Assumption A.8 at the largest λ (4) with 20% margin, Γ of eq. (12)
    gamma = np.maximum(pre[:, 0], np.asarray(run.ft).max(axis=1))
    np.testing.assert_allclose(run.learning_rate, 0.8 / (4 * (4.0 + 2) * gamma), rtol=1e-12)
    conv = ot.simulate_converged_model(key, ot.ConvergedModelSetting(d=2, instances=2, points=60))
    np.testing.assert_array_equal(conv.ideal[:, 0], 0.0)
    assert conv.steps > 0 and conv.ideal.shape == (2, 3)


def _recursion_oracle(pre, ft, learning_rate, steps):
    """λ = 0 per-mode map x ← x + 2ηx(σ^ft − x²) from √σ^pre, written out in numpy."""
    x = np.sqrt(pre)
    for _ in range(steps):
        x = x + 2 * learning_rate * x * (ft - x**2)
    return x**2


def test_long_finetuning_simulation_against_the_mode_oracle_and_closed_forms(x64, key):
    setting = ot.LongFinetuningSetting(d=6, instances=2, tau=14.0, points=60, short=40,
                                       long=3000, batch=50)  # fmt: skip
    run = ot.simulate_long_finetuning(key, setting)
    d, eta = setting.d, setting.learning_rate
    pre, ft = 4.0 * 0.6 ** np.arange(d), 0.95 ** np.arange(d)  # config R
    learned = np.arange(d)[None, :] < np.arange(d + 1)[:, None]  # (n, i)
    for steps, got in ((setting.short, run.ideal_short), (setting.long, run.ideal_long)):
        # ideal checkpoint n, m = ∞: learned modes follow the map, the rest stay 0
        modes = np.where(learned, _recursion_oracle(pre, ft, eta, steps), 0.0)
        expected = np.sum((modes - pre) ** 2, axis=1)
        np.testing.assert_allclose(got, np.broadcast_to(expected, got.shape), rtol=1e-9)
    # the same U, V for both tasks: ‖A^ft − A^pre‖² = Σ(σ^ft − σ^pre)²
    np.testing.assert_allclose(run.distance, np.sum((ft - pre) ** 2), rtol=1e-10)
    # ηK = 30 from real checkpoints n ≥ 1 learns every mode (they reach σ^ft): L_pre tends to
    # ‖A^ft − A^pre‖²; n = 0 starts at the e^{−2τ} init and is still rising (not checked)
    np.testing.assert_allclose(run.real_long[:, 1:], np.sum((ft - pre) ** 2), rtol=1e-4)
    assert run.real_short.shape == run.real_short_batch.shape == (2, d + 1)
