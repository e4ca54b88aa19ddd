"""Value tests of ntsim.theory.linear_teachers against independent NumPy oracles.

Every test runs in float64 through the ``x64`` fixture (conftest.py) unless it checks the
float32 path; tolerances are stated next to each assertion.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import covariance, gaussian_inputs, random_orthogonal, two_level_spectrum
from ntsim.theory import linear_teachers as lt
from ntsim.theory.linear_teachers._alignment import _kappa

# Round-off scale for float64 identities on d ≤ 50 with cond(X) ≲ 1e3: eps·cond ≈ 2e-13.
TIGHT = 1e-10


def _problem(key, n, d):
    """Random Σ (Haar basis, spectrum in [0.2, 2]), X ~ N(0, Σ)^n, θ_S, θ_T ~ N(0, I)."""
    ks = jax.random.split(key, 5)
    spectrum = jnp.sort(jax.random.uniform(ks[0], (d,), minval=0.2, maxval=2.0))[::-1]
    basis = random_orthogonal(ks[1], d)
    x = gaussian_inputs(ks[2], n, spectrum, basis)
    theta_s, theta_t = jax.random.normal(ks[3], (d,)), jax.random.normal(ks[4], (d,))
    return x, theta_s, theta_t, covariance(spectrum, basis), spectrum, basis


# ------------------------------------------------------------------- Sec 3 and Thm 4.1


@pytest.mark.parametrize("n", [1, 7, 19])
def test_projectors_match_the_normal_equation_formula(x64, key, n):
    x, *_ = _problem(key, n, 20)
    xn = np.asarray(x)
    oracle = xn.T @ np.linalg.solve(xn @ xn.T, xn)  # Xᵀ(XXᵀ)⁻¹X literally
    p_par, p_perp = lt.row_space_projector(x), lt.null_space_projector(x)
    np.testing.assert_allclose(p_par, oracle, atol=TIGHT)
    np.testing.assert_allclose(p_perp, np.eye(20) - oracle, atol=TIGHT)
    np.testing.assert_allclose(p_par @ p_par, p_par, atol=TIGHT)  # idempotent
    np.testing.assert_allclose(x @ p_perp, 0.0, atol=TIGHT)  # annihilates the rows
    assert np.trace(p_par) == pytest.approx(n, abs=TIGHT)


@pytest.mark.parametrize("n", [1, 10, 29])
def test_fine_tuned_linear_is_the_interpolant_closest_to_theta_source(x64, key, n):
    x, theta_s, theta_t, *_ = _problem(key, n, 30)
    xn, ts, tt = map(np.asarray, (x, theta_s, theta_t))
    y = xn @ tt
    # numpy lstsq on the under-determined system returns the min-norm correction.
    oracle = ts + np.linalg.lstsq(xn, y - xn @ ts, rcond=None)[0]
    gamma = lt.fine_tuned_linear(x, theta_s, theta_t)
    np.testing.assert_allclose(gamma, oracle, rtol=TIGHT, atol=TIGHT)
    np.testing.assert_allclose(lt.fine_tuned_linear_pinv(x, y, theta_s), oracle, atol=TIGHT)
    np.testing.assert_allclose(xn @ np.asarray(gamma), y, atol=TIGHT)  # zero training loss


def test_risks_match_direct_formulas(x64, key):
    x, theta_s, theta_t, sigma, spectrum, basis = _problem(key, 12, 25)
    xn, ts, tt, sn = map(np.asarray, (x, theta_s, theta_t, sigma))
    gamma = ts + np.linalg.pinv(xn) @ (xn @ tt - xn @ ts)
    e = tt - gamma
    assert float(lt.population_risk(gamma, tt, sn)) == pytest.approx(e @ sn @ e, rel=TIGHT)
    # eq. (2) with an explicit symmetric square root Σ^{1/2} = V diag(√λ) Vᵀ.
    root = np.asarray(basis) @ np.diag(np.sqrt(np.asarray(spectrum))) @ np.asarray(basis).T
    p_perp = np.eye(25) - np.linalg.pinv(xn) @ xn
    oracle = np.sum((root @ p_perp @ (tt - ts)) ** 2)
    assert float(lt.risk_thm4_1(x, theta_s, theta_t, sigma)) == pytest.approx(oracle, rel=TIGHT)
    assert oracle == pytest.approx(e @ sn @ e, rel=TIGHT)  # Thm 4.1: (2) is R(γ) of (1)


def test_gd_closed_form_matches_an_explicit_gd_loop(x64, key):
    x, theta_s, theta_t, *_ = _problem(key, 6, 15)
    xn, ts = np.asarray(x), np.asarray(theta_s)
    y = xn @ np.asarray(theta_t)
    n = xn.shape[0]
    eta = 0.9 * n / np.linalg.eigvalsh(xn.T @ xn)[-1]
    w, trajectory = ts.copy(), [ts.copy()]
    for _ in range(40):
        w = w - eta * (2.0 / n) * xn.T @ (xn @ w - y)  # ∇(1/n)‖Xw − y‖²
        trajectory.append(w.copy())
    steps = jnp.arange(41)
    closed = lt.gd_iterate_closed_form(x, y, theta_s, learning_rate=eta, steps=steps)
    np.testing.assert_allclose(closed, np.stack(trajectory), atol=TIGHT)
    single = lt.gd_iterate_closed_form(x, y, theta_s, learning_rate=eta, steps=jnp.array(40))
    np.testing.assert_allclose(single, trajectory[-1], atol=TIGHT)
    # Large t: the iterate is γ of eq. (1) (contraction ≤ 1 − 1.8 λ_min⁺/λ_max per step).
    far = lt.gd_iterate_closed_form(x, y, theta_s, learning_rate=eta, steps=jnp.array(100_000))
    np.testing.assert_allclose(far, lt.fine_tuned_linear(x, theta_s, theta_t), atol=TIGHT)


def test_monte_carlo_risk_is_unbiased_with_honest_standard_error(x64, key):
    x, theta_s, theta_t, sigma, spectrum, basis = _problem(key, 5, 10)
    w = lt.fine_tuned_linear(x, theta_s, theta_t)
    exact = float(lt.population_risk(w, theta_t, sigma))
    root = basis * jnp.sqrt(spectrum)[None, :]
    keys = jax.random.split(jax.random.PRNGKey(1), 100)
    estimates, errors = jax.vmap(
        lambda k: lt.monte_carlo_risk(k, w, theta_t, root, num_samples=4000, batch_size=500)
    )(keys)
    z = (np.asarray(estimates) - exact) / np.asarray(errors)
    # (xᵀe)² = exact·χ²₁: std = √2·exact, so s.e. ≈ √2·exact/√N; the estimated s.e. has relative
    # error √(14/(4N)) ≈ 3% (kurtosis of χ²₁ is 15), so 15% is 5 of its standard deviations.
    np.testing.assert_allclose(errors, np.sqrt(2.0 / 4000) * exact, rtol=0.15)
    # 100 independent z-scores: mean has s.e. 0.1 (4 s.e. = 0.4); their std ≈ 1 ± 0.07.
    assert abs(z.mean()) < 0.4
    assert 0.75 < z.std() < 1.25


def test_monte_carlo_risk_merges_batches_into_the_plain_mean(x64, key):
    """The batched (Chan et al.) merge against the plain mean and sample variance of the same
    draws, regenerated batch by batch: a mis-weighted merge is still unbiased over keys (the
    test above), but not this draw's mean."""
    x, theta_s, theta_t, sigma, spectrum, basis = _problem(key, 5, 10)
    w = lt.fine_tuned_linear(x, theta_s, theta_t)
    root = basis * jnp.sqrt(spectrum)[None, :]
    draw = jax.random.PRNGKey(3)
    estimate, error = lt.monte_carlo_risk(draw, w, theta_t, root, num_samples=1200, batch_size=300)
    squares = np.concatenate([
        np.asarray(((jax.random.normal(k, (300, 10)) @ root.T) @ (theta_t - w)) ** 2)
        for k in jax.random.split(draw, 4)
    ])  # fmt: skip
    np.testing.assert_allclose(estimate, squares.mean(), rtol=1e-12)
    np.testing.assert_allclose(error, squares.std(ddof=1) / np.sqrt(squares.size), rtol=1e-10)


# ------------------------------------------------------------------------------ Figure 1


def test_alignment_directions_live_in_the_right_subspaces(x64, key):
    spectrum = two_level_spectrum(12, 4, 1.5, 0.3)
    basis = random_orthogonal(jax.random.PRNGKey(3), 12)
    plain = lt.alignment_directions(key, spectrum, 4, norm=2.0)
    np.testing.assert_allclose(plain.top_align[:4], 0.0)  # P_{≤m} v = 0
    np.testing.assert_allclose(plain.bottom_align[4:], 0.0)  # P_{>m} v = 0
    rotated = lt.alignment_directions(key, spectrum, 4, norm=2.0, basis=basis)
    for v, v_plain in zip(rotated, plain, strict=True):
        assert float(jnp.linalg.norm(v)) == pytest.approx(2.0, rel=TIGHT)
        np.testing.assert_allclose(basis.T @ v, v_plain, atol=TIGHT)  # same coordinates in V


def test_nested_prefix_risks_equal_the_direct_formula_for_every_n(x64, key):
    d = 18
    x, theta_s, theta_t, sigma, *_ = _problem(key, d, d)
    vs = jnp.stack([theta_t - theta_s, jax.random.normal(jax.random.PRNGKey(5), (d,))])
    nested = np.asarray(lt.nested_prefix_risks(x, sigma, vs))
    assert nested.shape == (2, d)
    sn = np.asarray(sigma)
    for n in range(1, d + 1):  # direct: P_⊥ of the first n rows via the pseudo-inverse
        xn = np.asarray(x[:n])
        p_perp = np.eye(d) - np.linalg.pinv(xn) @ xn
        for k, v in enumerate(np.asarray(vs)):
            u = p_perp @ v
            assert nested[k, n - 1] == pytest.approx(u @ sn @ u, abs=TIGHT)
    np.testing.assert_allclose(nested[:, -1], 0.0, atol=TIGHT)  # n = d: P_⊥ = 0
    np.testing.assert_allclose(lt.nested_prefix_risks(x, sigma, vs[0]), nested[0])


def test_isotropic_expected_risk_is_the_null_space_fraction(x64, key):
    # Σ = I: P_⊥ is a uniform random rank-(d−n) projection, so R(n)/‖v‖² ~ Beta((d−n)/2, n/2)
    # with mean (d−n)/d and variance 2(d−n)n/(d²(d+2)). Average K draws; allow 4 s.e.
    d, draws, norm = 24, 400, 1.7
    v = jax.random.normal(jax.random.PRNGKey(7), (d,))
    v = norm * v / jnp.linalg.norm(v)
    risks = jax.vmap(lambda k: lt.risk_curve_nested(k, jnp.ones(d), v, d))(
        jax.random.split(key, draws)
    )
    n = np.arange(1, d + 1)
    expected = (d - n) / d * norm**2
    se = norm**2 * np.sqrt(2.0 * (d - n) * n / (d**2 * (d + 2)) / draws)
    assert np.all(np.abs(np.asarray(risks).mean(0) - expected) <= 4 * se + TIGHT)


def test_deterministic_equivalent_isotropic_closed_form_and_kappa(x64):
    d = 50
    v2 = jnp.linspace(0.0, 1.0, d) ** 2
    n = jnp.arange(1, 60)
    values = lt.deterministic_equivalent_risk(jnp.ones(d), v2, n)
    expected = np.where(n < d, (d - np.asarray(n)) / d, 0.0) * float(v2.sum())
    np.testing.assert_allclose(values, expected, rtol=1e-12, atol=1e-14)
    # κ solves Σ λ/(λ+κ) = n for a non-trivial spectrum (bisection to round-off).
    spectrum = jnp.sort(jax.random.uniform(jax.random.PRNGKey(0), (d,), minval=0.1))[::-1]
    kappa = _kappa(spectrum, jnp.array(17.0))
    assert float(jnp.sum(spectrum / (spectrum + kappa))) == pytest.approx(17.0, rel=1e-12)
    # vmappable and jittable over n and the spectrum alike
    batched = jax.jit(jax.vmap(lt.deterministic_equivalent_risk, in_axes=(None, None, 0)))
    np.testing.assert_allclose(batched(jnp.ones(d), v2, n), values, rtol=1e-12)


def test_deterministic_equivalent_crossing_equalises_the_two_curves(x64):
    d, top = 300, 15
    spectrum = two_level_spectrum(d, top, 1.5, 0.3)
    in_top = jnp.arange(d) < top
    v2_top_align = jnp.where(in_top, 0.0, 1.0 / (d - top))
    v2_bottom_align = jnp.where(in_top, 1.0 / top, 0.0)
    n_cross = lt.deterministic_equivalent_crossing(1.5, 0.3, d, top)
    at = lambda v2, n: float(lt.deterministic_equivalent_risk(spectrum, v2, n))
    assert at(v2_top_align, n_cross) == pytest.approx(at(v2_bottom_align, n_cross), rel=1e-10)
    assert at(v2_top_align, n_cross / 2) < at(v2_bottom_align, n_cross / 2)
    assert at(v2_top_align, 2 * n_cross) > at(v2_bottom_align, 2 * n_cross)


def test_deterministic_equivalent_tracks_the_simulated_mean(x64, key):
    # Fig. 1 structure at d = 400 (top 20), 40 draws. The deterministic equivalent is exact
    # only as d → ∞; allow 4 s.e. of the mean plus 0.01·vᵀΣv for the O(1/d) finite-size bias
    # (not resolved at this size: the largest |mean − theory|/s.e. over n is 2.8).
    d, top, draws = 400, 20, 40
    spectrum = two_level_spectrum(d, top, 1.5, 0.3)
    dirs = lt.alignment_directions(jax.random.PRNGKey(2), spectrum, top)
    vs = jnp.stack(dirs)
    risks = jax.jit(jax.vmap(lambda k: lt.risk_curve_nested(k, spectrum, vs, d - 1)))(
        jax.random.split(key, draws)
    )
    risks = np.asarray(risks)
    n = jnp.arange(1, d)
    for k, v in enumerate(vs):
        theory = np.asarray(lt.deterministic_equivalent_risk(spectrum, v**2, n))
        mean, se = risks[:, k].mean(0), risks[:, k].std(0, ddof=1) / np.sqrt(draws)
        allowance = 0.01 * float(v @ (spectrum * v))
        assert np.all(np.abs(mean - theory) <= 4 * se + allowance)


# --------------------------------------------------------------------- transforms, errors


def test_jit_and_vmap_agree_with_single_calls(x64, key):
    problems = [_problem(k, 5, 12) for k in jax.random.split(key, 3)]
    xs, tss, tts = (jnp.stack([p[i] for p in problems]) for i in range(3))
    batched = jax.vmap(lt.fine_tuned_linear)(xs, tss, tts)
    for i in range(3):
        single = lt.fine_tuned_linear(xs[i], tss[i], tts[i])
        np.testing.assert_allclose(batched[i], single, atol=TIGHT)
        np.testing.assert_allclose(jax.jit(lt.fine_tuned_linear)(xs[i], tss[i], tts[i]), single)


def test_float32_inputs_keep_float32():
    x = jnp.array([[1.0, 0.0, 1.0]], jnp.float32)
    assert lt.fine_tuned_linear(x, jnp.ones(3), jnp.zeros(3)).dtype == jnp.float32
    assert lt.risk_thm4_1(x, jnp.ones(3), jnp.zeros(3), jnp.eye(3)).dtype == jnp.float32


def test_bad_inputs_raise_clear_errors():
    x = jnp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])  # rank 1: XXᵀ singular
    with pytest.raises(ValueError, match="Assumption 3.1"):
        lt.row_space_projector(x)
    with pytest.raises(ValueError, match="n < d"):
        lt.null_space_projector(jnp.ones((3, 3)))
    with pytest.raises(ValueError, match="ndim"):
        lt.fine_tuned_linear(jnp.ones(3), jnp.ones(3), jnp.ones(3))
    good = jnp.array([[1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="theta_target must have shape"):
        lt.fine_tuned_linear(good, jnp.ones(3), jnp.ones(2))
    with pytest.raises(ValueError, match="steps must be integers"):
        lt.gd_iterate_closed_form(good, jnp.ones(1), jnp.ones(3), learning_rate=0.1, steps=1.5)
    with pytest.raises(ValueError, match="learning_rate"):
        lt.gd_iterate_closed_form(good, jnp.ones(1), jnp.ones(3), learning_rate=-1.0, steps=1)
    with pytest.raises(ValueError, match="multiple of batch_size"):
        lt.monte_carlo_risk(
            jax.random.PRNGKey(0), jnp.ones(3), jnp.ones(3), jnp.eye(3), num_samples=10,
            batch_size=3,
        )  # fmt: skip
    with pytest.raises(ValueError, match="non-increasing"):
        lt.alignment_directions(jax.random.PRNGKey(0), jnp.array([0.3, 1.5]), 1)
    with pytest.raises(ValueError, match="1 <= top < d"):
        lt.alignment_directions(jax.random.PRNGKey(0), jnp.ones(4), 4)
    with pytest.raises(ValueError, match="n_max must be <= d"):
        lt.risk_curve_nested(jax.random.PRNGKey(0), jnp.ones(4), jnp.ones(4), 5)
    with pytest.raises(ValueError, match="spectrum must be positive"):
        lt.deterministic_equivalent_risk(jnp.array([1.0, 0.0]), jnp.ones(2), 1)
    with pytest.raises(ValueError, match="n must be positive"):
        lt.deterministic_equivalent_risk(jnp.ones(2), jnp.ones(2), 0)
