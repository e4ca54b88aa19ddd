"""The quadratic-model instances of Thm 3 (:mod:`ntsim.theory.linearization.quadratic_gap`)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from ntsim.theory.linearization import quadratic_gap as qg


@pytest.mark.parametrize(
    "fields",
    [{"instances": 0}, {"min_time": 0.0}, {"min_time": 2.0, "max_time": 1.0}, {"tol": 1.0}],
)
def test_setting_rejects_bad_sizes(fields):
    with pytest.raises(ValueError, match="QuadraticGapSetting"):
        qg.QuadraticGapSetting(**fields)


def test_simulation_matches_the_closed_forms(x64, key):
    run = qg.simulate_quadratic_gap(key, qg.QuadraticGapSetting(instances=6, times=6))
    r = {name: np.asarray(value) for name, value in run._asdict().items()}
    assert r["gap"].shape == r["times"].shape == (6, 7)
    np.testing.assert_allclose(r["gap"][:, 0], 0.0, atol=1e-14)
    np.testing.assert_allclose(r["r0"], np.abs(r["residual0"]), rtol=1e-12)
    np.testing.assert_allclose(r["lip_grad"], np.abs(r["curvature"]), rtol=1e-9)
    # even instances are the tight case cρ > 0, odd ones cρ < 0
    sign = np.sign(r["curvature"] * r["residual0"])
    np.testing.assert_array_equal(sign, np.where(np.arange(6) % 2 == 0, 1.0, -1.0))
    closed = qg.quadratic_linear_residual(
        r["slope"][:, None], r["residual0"][:, None], r["lam"][:, None], r["times"]
    )
    np.testing.assert_allclose(r["linear_residual"], closed, atol=1e-9)
    # the onset Δ ≈ 4a²|c|ρ²t²(1 − βt) at A·t = 1e-3, where (βt)² ≲ 1e-5
    alpha, beta = qg.quadratic_gap_onset(r["slope"], r["curvature"], r["residual0"], r["lam"])
    t1 = r["times"][:, 1]
    onset = np.abs(np.asarray(alpha)) * t1**2 * (1 - np.asarray(beta) * t1)
    np.testing.assert_allclose(r["gap"][:, 1], onset, rtol=1e-4)


def test_simulation_validates_its_arguments(key):
    with pytest.raises(TypeError):
        qg.simulate_quadratic_gap(key, object())
    with pytest.raises((TypeError, ValueError)):
        qg.simulate_quadratic_gap(jax.numpy.zeros(3), qg.QuadraticGapSetting(instances=2))
