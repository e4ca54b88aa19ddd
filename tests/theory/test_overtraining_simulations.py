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
