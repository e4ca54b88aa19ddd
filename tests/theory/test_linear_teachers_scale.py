"""Value tests of :func:`ntsim.theory.linear_teachers.simulate_scale_target_vs_source` (Fig 2b).

Oracles: at α = 1 both settings are the same task pair; at L = 1 the risk is
‖P_⊥(θ_T − θ_S)‖² (NumPy, pseudo-inverse projector) and both settings have the same
expectation ((d−n)/d)‖αθ̂_T − θ̂_S‖²; at L = ∞ the target/source ratio is exactly α² draw by
draw (eq. (6): R is invariant in ‖θ_S‖ and 2-homogeneous in ‖θ_T‖).
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

from ntsim.theory import linear_teachers as lt


def _run(**kw):
    setting = lt.ScaleSetting(**{"d": 30, "sample_ratios": (0.2, 0.5), "draws": 16, **kw})
    return setting, jax.tree_util.tree_map(
        np.asarray, lt.simulate_scale_target_vs_source(jax.random.PRNGKey(4), setting)
    )


def test_infinite_depth_ratio_is_alpha_squared(x64):
    _, run = _run(depth=math.inf, alphas=(1.0, 3.0, 10.0))
    ratio = run.scale_target / run.scale_source
    np.testing.assert_allclose(ratio, np.broadcast_to([1.0, 9.0, 100.0], ratio.shape), rtol=1e-9)


def test_depth_one_matches_numpy_and_is_symmetric_in_expectation(x64):
    setting, run = _run(depth=1.0, alphas=(4.0,), draws=400)
    key = jax.random.split(jax.random.PRNGKey(4), setting.draws)[0]
    k_x, k_s, k_p = jax.random.split(key, 3)
    us, ut = (np.asarray(v) for v in lt.unit_pair_at_distance(k_s, k_p, setting.d, 0.1))
    x_all = np.asarray(jax.random.normal(k_x, (max(setting.sample_sizes), setting.d)))
    for j, n in enumerate(setting.sample_sizes):
        x = x_all[:n]
        p_perp = np.eye(setting.d) - x.T @ np.linalg.pinv(x @ x.T) @ x
        want_t = np.sum((p_perp @ (4 * ut - us)) ** 2)
        want_s = np.sum((p_perp @ (ut - 4 * us)) ** 2)
        assert run.scale_target[0, j, 0] == pytest.approx(want_t, rel=1e-9)
        assert run.scale_source[0, j, 0] == pytest.approx(want_s, rel=1e-9)
    diff = run.scale_target - run.scale_source  # same expectation for Gaussian X
    se = diff.std(0, ddof=1) / np.sqrt(setting.draws)
    assert np.all(np.abs(diff.mean(0)) < 4 * se)


def test_alpha_one_is_the_same_task_pair(x64):
    _, run = _run(alphas=(1.0,))
    np.testing.assert_allclose(run.scale_target, run.scale_source, rtol=1e-12)


def test_setting_is_validated():
    with pytest.raises(ValueError, match="sample_ratios"):
        lt.ScaleSetting(sample_ratios=(1.2,))


def test_depth_one_risk_matches_numpy(x64):
    setting = lt.DepthSetting(d=30, depths=(1.0, math.inf), alphas=(1.0, 3.0), draws=3)
    run = lt.simulate_depth_and_alpha(jax.random.PRNGKey(7), setting)
    key = jax.random.split(jax.random.PRNGKey(7), 3)[0]
    k_x, k_s, k_e = jax.random.split(key, 3)
    x = np.asarray(jax.random.normal(k_x, (3, 30)))
    ts = 2.0 * np.asarray(jax.random.normal(k_s, (30,)))
    eps = np.asarray(jax.random.normal(k_e, (30,)))
    p_perp = np.eye(30) - x.T @ np.linalg.pinv(x @ x.T) @ x
    for j, a in enumerate(setting.alphas):
        want = np.sum((p_perp @ ((a - 1) * ts + eps)) ** 2) / (ts @ ts)
        assert float(run.risk[0, 0, j]) == pytest.approx(want, rel=1e-9)
    assert run.risk.shape == (3, 2, 2) and run.n == 3
