"""Value tests of :func:`ntsim.theory.linear_teachers.simulate_random_projection` (Thm 5.4).

Oracles: eq. (6) and the bounds recomputed in NumPy from the draw (pseudo-inverse
projector, the lemma's deviation by hand), the constructed instance in closed form, exact
alignments, and E R(γ) = ((d−n)/d)‖θ_T − θ_S‖² for Gaussian X (Monte Carlo, 5 s.e.).
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

from ntsim.theory import linear_teachers as lt

SETTING = lt.RandomProjectionSetting(d=30, n=6, distances=(0.3, 1.2), target_norms=(1.0, 4.0),
                                     draws=40, rescalings=(0.5, 3.0))  # fmt: skip


@pytest.fixture(scope="module")
def run():
    with jax.enable_x64(True):
        out = lt.simulate_random_projection(jax.random.PRNGKey(3), SETTING)
        return jax.tree_util.tree_map(np.asarray, out)


def _oracle(x, ts, tt):
    n, d = x.shape
    p_par = x.T @ np.linalg.pinv(x @ x.T) @ x
    p_perp = np.eye(d) - p_par
    c_inf = np.linalg.norm(p_par @ tt) / np.linalg.norm(p_par @ ts)
    beta = p_par @ tt + c_inf * p_perp @ ts
    risk_deep = np.sum((tt - beta) ** 2)
    risk_linear = np.sum((p_perp @ (tt - ts)) ** 2)
    us, ut = ts / np.linalg.norm(ts), tt / np.linalg.norm(tt)
    eps = 0.0
    for u in (tt - ts, ut - us, us, ut):
        nu = np.linalg.norm(u)
        eps = max(eps, abs(np.linalg.norm(p_perp @ u) / (np.sqrt((d - n) / d) * nu) - 1),
                  abs(np.linalg.norm(p_par @ u) / (np.sqrt(n / d) * nu) - 1))  # fmt: skip
    frac, nt2, delta2 = (d - n) / d, tt @ tt, np.sum((ut - us) ** 2)
    eq9 = frac * (1 + eps) ** 2 * nt2 * delta2 + frac * (eps * np.sqrt(nt2)) ** 2
    eq9c = frac * 4 * (1 + eps) ** 2 / (1 - eps) ** 2 * nt2 * delta2
    eq10 = frac * (1 + eps) ** 2 * np.sum((tt - ts) ** 2)
    return risk_deep, risk_linear, eps, eq9, eq9c, eq10


def test_constructed_instance_in_closed_form(run):
    c = run.constructed
    eps = 1 - 1 / math.sqrt(2)
    np.testing.assert_allclose(c["risk_deep"], [1.0], rtol=1e-12)
    np.testing.assert_allclose(c["epsilon"], [eps], rtol=1e-12)
    np.testing.assert_allclose(c["eq9"], [0.5 * ((1 + eps) ** 2 * (2 - math.sqrt(3)) + eps**2)],
                               rtol=1e-12)  # fmt: skip
    # R(γ) = ‖P_⊥(θ_T − θ_S)‖² = (sin 30° − sin 60°)²
    np.testing.assert_allclose(c["risk_linear"], [(0.5 - math.sqrt(3) / 2) ** 2], rtol=1e-12)
    assert c["risk_deep"][0] > c["eq9"][0] and c["risk_deep"][0] < c["eq9_corrected"][0]


def test_draws_match_a_numpy_oracle(run):
    """Rebuild the draws from the same keys and recompute every field in NumPy."""
    grid = [(a, t) for a in SETTING.distances for t in SETTING.target_norms]
    keys = jax.random.split(jax.random.PRNGKey(3), len(grid) * SETTING.draws)
    for i in range(0, len(keys), 17):
        distance, norm_t = grid[i // SETTING.draws]
        with jax.enable_x64(True):
            k_x, k_s, k_p = jax.random.split(keys[i], 3)
            us, ut = lt.unit_pair_at_distance(k_s, k_p, SETTING.d, distance)
            x = np.asarray(jax.random.normal(k_x, (SETTING.n, SETTING.d)))
        ts, tt = np.asarray(us), norm_t * np.asarray(ut)
        assert np.linalg.norm(ut - us) == pytest.approx(distance, rel=1e-12)
        want = _oracle(x, ts, tt)
        got = [run.risk_deep[i], run.risk_linear[i], run.epsilon[i], run.eq9[i],
               run.eq9_corrected[i], run.eq10[i]]  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=1e-9)
        assert run.distance[i] == distance and run.target_norm[i] == norm_t
        for j, s in enumerate(SETTING.rescalings):
            assert run.risk_source_rescaled[i, j] == pytest.approx(_oracle(x, s * ts, tt)[0],
                                                                   rel=1e-9)  # fmt: skip
            assert run.risk_target_rescaled[i, j] == pytest.approx(_oracle(x, ts, s * tt)[0],
                                                                   rel=1e-9)  # fmt: skip


def test_linear_risk_has_its_expectation(run):
    """Gaussian X: P_⊥ is a uniform (d − n)-dim projection, E‖P_⊥v‖² = ((d−n)/d)‖v‖²."""
    d, n = SETTING.d, SETTING.n
    gap2 = run.target_norm**2 - 2 * run.target_norm * (1 - run.distance**2 / 2) + 1
    ratio = run.risk_linear / ((d - n) / d * gap2)
    assert abs(ratio.mean() - 1) < 5 * ratio.std(ddof=1) / np.sqrt(ratio.size)


def test_setting_is_validated():
    with pytest.raises(ValueError, match="n < d"):
        lt.RandomProjectionSetting(d=5, n=5)
    with pytest.raises(ValueError, match="distances"):
        lt.RandomProjectionSetting(distances=(2.5,))
