"""Value tests of the Fig 3 / Thm 5.5 simulations of ntsim.theory.linear_teachers.

Oracles: NumPy recomputation of each limit from the same draw (pseudo-inverse projector,
least-squares c*, the L = 2 root of eq. (5) in closed form), the exact expectation
E R_Frozen = floor·(n − 1)/(n − 2) for Gaussian X (Monte Carlo), and the scalar
least-squares limit of GD with a frozen first layer.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from ntsim.theory import linear_teachers as lt

SETTING = lt.FreezingSetting(d=12, n_values=(5, 8, 11), task_noise=0.5, draws=8)


def _draw(key, setting):
    """The task of one draw, rebuilt from the documented key layout."""
    k_s, k_xi, k_xt, _ = jax.random.split(key, 4)
    d = setting.d
    ts = np.asarray(jax.random.normal(k_s, (d,)))
    ts = ts / np.linalg.norm(ts)
    tt = ts + setting.task_noise * np.asarray(jax.random.normal(k_xi, (d,))) / np.sqrt(d)
    x_all = np.asarray(jax.random.normal(k_xt, (max(setting.n_values), d)))
    return ts, tt, x_all


def _finetune_l2(x, ts, tt):
    """eq. (5) at L = 2: b² = (b/S)A² + B², so b = (A²/S + √(A⁴/S² + 4B²))/2."""
    p_par = x.T @ np.linalg.pinv(x @ x.T) @ x
    a, b_row, s = np.linalg.norm(ts - p_par @ ts), np.linalg.norm(p_par @ tt), np.linalg.norm(ts)
    b = (a**2 / s + np.sqrt(a**4 / s**2 + 4 * b_row**2)) / 2
    beta = np.sqrt(b / s) * (ts - p_par @ ts) + p_par @ tt
    return np.sum((tt - beta) ** 2), np.sum((tt - p_par @ tt) ** 2)


def test_freezing_limits_match_numpy(x64):
    key = jax.random.PRNGKey(5)
    run = jax.tree_util.tree_map(np.asarray, lt.simulate_freezing(key, SETTING))
    assert run.gd is None and run.frozen.shape == (SETTING.draws, len(SETTING.n_values))
    for i, k in enumerate(jax.random.split(key, SETTING.draws)):
        ts, tt, x_all = _draw(k, SETTING)
        floor = tt @ tt - (ts @ tt) ** 2 / (ts @ ts)
        assert run.floor[i] == pytest.approx(floor, rel=1e-10)
        assert run.target_norm_sq[i] == pytest.approx(tt @ tt, rel=1e-12)
        for j, n in enumerate(SETTING.n_values):
            x = x_all[:n]
            z = x @ ts
            c_star = z @ (x @ tt) / (z @ z)
            finetune, vanilla = _finetune_l2(x, ts, tt)
            assert run.frozen[i, j] == pytest.approx(np.sum((tt - c_star * ts) ** 2), rel=1e-9)
            assert run.vanilla[i, j] == pytest.approx(vanilla, rel=1e-9)
            assert run.finetune[i, j] == pytest.approx(finetune, rel=1e-9)


def test_frozen_risk_has_its_exact_expectation(x64):
    setting = lt.FreezingSetting(d=10, n_values=(6, 9), draws=4000)
    run = lt.simulate_freezing(jax.random.PRNGKey(1), setting)
    ratio = np.asarray(run.frozen / run.floor[:, None])
    ns = np.asarray(setting.n_values, float)
    se = ratio.std(0, ddof=1) / np.sqrt(ratio.shape[0])
    assert np.all(np.abs(ratio.mean(0) - (ns - 1) / (ns - 2)) < 4 * se)


def test_freezing_with_training_pretrains_and_fits(x64):
    setting = lt.FreezingSetting(
        d=6, n_values=(2, 4), draws=2,
        training=lt.FreezingTraining(init_scale=0.001, pretrain_steps=800, fine_tune_steps=800),
    )  # fmt: skip
    run = jax.tree_util.tree_map(np.asarray, lt.simulate_freezing(jax.random.PRNGKey(2), setting))
    gd = run.gd
    assert not gd["nonfinite"].any()
    assert np.all(gd["pretrain_error"] < 1e-3)  # β_S ≈ θ_S, so the limits use β_S ≈ θ_S
    assert np.all(gd["w1_off_rank_one"] < 1e-3)  # init 0.001: W_1 is rank one to ~1e-5
    # 800 steps do not reach the limits; the trained risks are of their size (the wiring:
    # frozen, vanilla and fine-tuned differ by far more than a factor 2 on this draw)
    for name in ("frozen", "finetune"):
        ratio = gd[f"{name}_risk"] / getattr(run, name)
        assert np.all((ratio > 0.5) & (ratio < 2)), (name, ratio)


def test_frozen_first_layer_gd_reaches_least_squares(x64):
    setting = lt.FrozenFirstLayerSetting(d=8, n_values=(6,), draws=4, steps=1500)
    run = jax.tree_util.tree_map(
        np.asarray, lt.simulate_frozen_first_layer(jax.random.PRNGKey(0), setting)
    )
    assert not run.nonfinite.any() and np.all(run.n == 6)
    assert np.all(run.off_parallel < 1e-12)
    pos = run.c_star > 0
    assert pos.any()
    np.testing.assert_allclose(run.c_gd[pos], run.c_star[pos], rtol=1e-8)
    assert np.all(run.risk >= run.floor * (1 - 1e-12))


def test_settings_are_validated():
    with pytest.raises(ValueError, match="n_values"):
        lt.FreezingSetting(d=5, n_values=(3, 5))
    with pytest.raises(ValueError, match="depth"):
        lt.FrozenFirstLayerSetting(depth=1)
