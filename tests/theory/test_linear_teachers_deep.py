"""Value tests of Sec 5 (deep linear networks) of ntsim.theory.linear_teachers._deep.

Oracles are independent of the bisection: scipy's brentq on h(b) in NumPy, the L = 2
closed form, Thm 4.1's γ, a direct NumPy layer-wise GD loop at a small step, and exact
invariances. Float64 through the ``x64`` fixture.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq

from ntsim.theory import linear_teachers as lt
from ntsim.theory.linear_teachers import _deep as deep

TIGHT = 1e-10


def _problem(key, n, d, alpha=1.7):
    ks = jax.random.split(key, 3)
    x = np.asarray(jax.random.normal(ks[0], (n, d)))
    ts = np.array(jax.random.normal(ks[1], (d,)))
    ts /= np.linalg.norm(ts)
    tt = alpha * ts + 0.5 * np.asarray(jax.random.normal(ks[2], (d,))) / np.sqrt(d)
    return x, ts, tt


def _np_norms(x, ts, tt):
    p_par = x.T @ np.linalg.solve(x @ x.T, x)
    a = np.linalg.norm(ts - p_par @ ts)
    return a, np.linalg.norm(p_par @ ts), np.linalg.norm(p_par @ tt), p_par


@pytest.mark.parametrize("depth", [1.5, 2.0, 3.0, 7.0, 50.0])
@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0])
def test_root_matches_brentq(x64, key, depth, alpha):
    x, ts, tt = _problem(key, 5, 20, alpha)
    a, c, b_row, _ = _np_norms(x, ts, tt)
    s, c_inf = np.hypot(a, c), b_row / c
    p = 2 * (depth - 1) / depth
    h = lambda b: b**2 - (b / s) ** p * a**2 - b_row**2  # noqa: E731
    oracle = brentq(h, s * min(1, c_inf), s * max(1, c_inf), xtol=1e-15, rtol=1e-15)
    sol = deep.deep_limit_scale(a, c, b_row, depth)
    assert float(sol.norm) == pytest.approx(oracle, rel=1e-12)
    assert float(sol.coefficient) == pytest.approx((oracle / s) ** (1 - 1 / depth), rel=1e-12)
    lo, hi = sorted((1.0, c_inf))
    assert lo < float(sol.coefficient) < hi


def test_depth_two_closed_form_and_depth_one_is_gamma(x64, key):
    x, ts, tt = _problem(key, 6, 18)
    a, c, b_row, _ = _np_norms(x, ts, tt)
    s = np.hypot(a, c)
    closed = (a**2 / s + np.sqrt(a**4 / s**2 + 4 * b_row**2)) / 2
    assert float(deep.deep_limit_scale(a, c, b_row, 2.0).norm) == pytest.approx(closed, rel=1e-13)
    gamma = lt.fine_tuned_linear(x, ts, tt)
    np.testing.assert_allclose(deep.deep_fine_tuned_limit(x, ts, tt, 1.0), gamma, atol=TIGHT)


def test_infinite_depth_is_eq6_and_large_depth_approaches_it(x64, key):
    x, ts, tt = _problem(key, 4, 15)
    a, c, b_row, p_par = _np_norms(x, ts, tt)
    eq6 = (b_row / c) * (ts - p_par @ ts) + p_par @ tt
    np.testing.assert_allclose(deep.deep_fine_tuned_limit(x, ts, tt, jnp.inf), eq6, atol=TIGHT)
    far = deep.deep_fine_tuned_limit(x, ts, tt, 1e6)
    np.testing.assert_allclose(far, eq6, atol=1e-4)
    # vmappable over a traced depth, inf included
    coeffs = jax.vmap(lambda L: deep.deep_limit_scale(a, c, b_row, L).coefficient)(
        jnp.array([1.0, 2.0, 5.0, jnp.inf])
    )
    assert np.all(np.diff(np.asarray(coeffs)) * np.sign(b_row / c - 1) > 0)


def test_deep_limit_interpolates_and_risk_formula(x64, key):
    x, ts, tt = _problem(key, 5, 20)
    sigma = np.diag(np.linspace(0.5, 2.0, 20))
    beta = np.asarray(deep.deep_fine_tuned_limit(x, ts, tt, 3.0))
    np.testing.assert_allclose(x @ beta, x @ tt, atol=TIGHT)  # zero train loss
    risk = (tt - beta) @ sigma @ (tt - beta)
    assert float(deep.deep_risk(x, ts, tt, sigma, 3.0)) == pytest.approx(risk, rel=1e-10)


def test_gd_numpy_loop_approaches_eq5(x64, key):
    """Plain NumPy layer-wise GD (L = 2, widths d) at a small step: error ≈ O(η)."""
    d, n = 8, 3
    x, ts, tt = _problem(key, n, d)
    v = np.array(jax.random.normal(jax.random.fold_in(key, 9), (d,)))
    v /= np.linalg.norm(v)
    s = np.sqrt(np.linalg.norm(ts))
    w1, w2 = s * np.outer(ts / np.linalg.norm(ts), v), s * v[:, None]
    y, eta = x @ tt, 5e-3
    for _ in range(30000):  # flow time 150: train loss at round-off
        r = (2 / n) * (x @ w1 @ w2 - y[:, None])  # dL/d(prediction)
        g1, g2 = x.T @ r @ w2.T, (x @ w1).T @ r
        w1, w2 = w1 - eta * g1, w2 - eta * g2
    beta = (w1 @ w2)[:, 0]
    ref = np.asarray(deep.deep_fine_tuned_limit(x, ts, tt, 2.0))
    assert np.linalg.norm(beta - ref) / np.linalg.norm(ref) < 1e-2
    assert np.linalg.norm(beta - ref) / np.linalg.norm(ref) > 1e-6  # GD ≠ flow: O(η) gap
    np.testing.assert_allclose(x @ beta, y, atol=1e-8)


def test_thm5_3_aligned_and_eq8(x64, key):
    x, ts, _ = _problem(key, 6, 25)
    sigma = np.diag(np.linspace(0.2, 2.0, 25))
    alpha = 2.5
    tt = alpha * ts
    assert float(deep.deep_risk(x, ts, tt, sigma, jnp.inf)) < 1e-28
    r1 = float(deep.deep_risk(x, ts, tt, sigma, 1.0))
    assert float(deep.aligned_risk_depth1(alpha, x, tt, sigma)) == pytest.approx(r1, rel=1e-12)
    assert r1 == pytest.approx(float(lt.risk_thm4_1(x, ts, tt, sigma)), rel=1e-12)


def test_thm5_4_invariances_and_bounds(x64, key):
    x, ts, tt = _problem(key, 10, 60)
    eye = np.eye(60)
    base = float(deep.deep_risk(x, ts, tt, eye, jnp.inf))
    for s in (0.1, 10.0):
        assert float(deep.deep_risk(x, s * ts, tt, eye, jnp.inf)) == pytest.approx(base, rel=1e-12)
        scaled = float(deep.deep_risk(x, ts, s * tt, eye, jnp.inf))
        assert scaled == pytest.approx(s**2 * base, rel=1e-12)
    b = deep.random_projection_bounds(x, ts, tt)
    p_perp = np.asarray(lt.null_space_projector(x))
    u = tt - ts
    # ε definition: the P_⊥ concentration holds exactly at the measured ε for u
    assert np.sum((p_perp @ u) ** 2) <= (50 / 60) * (1 + float(b.epsilon)) ** 2 * (u @ u) + 1e-12
    assert float(deep.deep_risk(x, ts, tt, eye, 1.0)) <= float(b.eq10) + 1e-12
    assert base <= float(b.eq9_corrected)


def test_projection_epsilon_is_tight(x64, key):
    x, ts, _ = _problem(key, 10, 40)
    eps = float(deep.projection_epsilon(x, ts[None]))
    p_par = x.T @ np.linalg.solve(x @ x.T, x)
    row = np.linalg.norm(p_par @ ts) / (np.sqrt(10 / 40) * np.linalg.norm(ts))
    null = np.linalg.norm(ts - p_par @ ts) / (np.sqrt(30 / 40) * np.linalg.norm(ts))
    assert eps == pytest.approx(max(abs(row - 1), abs(null - 1)), rel=1e-12)


def test_thm5_5_frozen(x64, key):
    x, ts, tt = _problem(key, 7, 20)
    sigma = np.diag(np.linspace(0.5, 1.5, 20))
    y = x @ tt
    c_star = float(deep.frozen_first_layer_coefficient(x, y, ts))
    c_grid = np.linspace(c_star - 1, c_star + 1, 2001)
    loss = [np.sum((c * x @ ts - y) ** 2) for c in c_grid]
    assert abs(c_grid[int(np.argmin(loss))] - c_star) <= 1e-3
    floor = float(deep.frozen_risk_floor(ts, tt, sigma))
    risks = [(tt - c * ts) @ sigma @ (tt - c * ts) for c in c_grid * 3]
    assert min(risks) >= floor - 1e-12
    c_opt = (ts @ sigma @ tt) / (ts @ sigma @ ts)
    assert (tt - c_opt * ts) @ sigma @ (tt - c_opt * ts) == pytest.approx(floor, rel=1e-12)


def test_bad_inputs():
    x = jnp.array([[1.0, 0.0, 0.0]])
    ts, tt = jnp.array([1.0, 1.0, 0.0]), jnp.array([2.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="depth must be >= 1"):
        deep.deep_fine_tuned_limit(x, ts, tt, 0.5)
    with pytest.raises(ValueError, match="depth must be a scalar"):
        deep.deep_limit_scale(1.0, 1.0, 1.0, jnp.ones(2))
    with pytest.raises(ValueError, match="P_∥θ_S"):
        deep.deep_fine_tuned_limit(x, jnp.array([0.0, 1.0, 0.0]), tt, jnp.inf)
    with pytest.raises(ValueError, match="source_row_norm"):
        deep.deep_limit_scale(1.0, 0.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="theta_source must have shape"):
        deep.deep_fine_tuned_limit(x, jnp.ones(2), tt, 2.0)
    with pytest.raises(ValueError, match="n < d"):
        deep.deep_risk(jnp.eye(3), ts, tt, jnp.eye(3), 2.0)
    with pytest.raises(ValueError, match="alpha must be positive"):
        deep.aligned_risk_depth1(-1.0, x, tt, jnp.eye(3))
    with pytest.raises(ValueError, match="Xθ_S"):
        deep.frozen_first_layer_coefficient(x, jnp.ones(1), jnp.array([0.0, 1.0, 0.0]))
    with pytest.raises(ValueError, match="vectors must have shape"):
        deep.projection_epsilon(x, jnp.ones((2, 2)))
