"""Fu et al. 2023, Sec 2.2 (full fine-tuning): the quadratic model, Thm 2.2 bounds, lemmas.

Oracles: a plain numpy loop of GD that sums per-sample gradients (independent of the scanned,
mean-Hessian implementation), matrix powers (closed-form GD on a quadratic), the analytic
μ = β counterexample ``R/n``, hand-computed bound values, finite differences and numpy
eigenvalues. All in float64 (``x64`` fixture); tolerances are float64 round-off.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.theory import stability as ff

TOL = 1e-12  # float64 round-off of a few hundred d×d products, d ≤ 6
# jitted once per shape (op-by-op dispatch of the generator is slow on a loaded CPU)
_instance = jax.jit(ff.quadratic_instance, static_argnums=(1, 2))
_simulate = jax.jit(ff.simulate_loo_stability, static_argnums=(1, 2), static_argnames="num_steps")


def _numpy_loo_gd(hessians, w_star, w0, i, eta, steps):
    """GD on S and S^i with per-sample gradients summed in a Python loop (1/n convention)."""
    hessians, w_star, w = (np.asarray(a, dtype=float) for a in (hessians, w_star, w0))
    n = hessians.shape[0]
    w_loo, cert = w.copy(), 0.0
    dist, certs = [0.0], [0.0]
    for _ in range(steps):
        grads = [h @ (w - w_star) for h in hessians]
        grads_loo = [h @ (w_loo - w_star) for j, h in enumerate(hessians) if j != i]
        cert += eta / n * np.linalg.norm(grads[i])
        w = w - eta / n * np.sum(grads, axis=0)
        w_loo = w_loo - eta / n * np.sum(grads_loo, axis=0)
        dist.append(np.linalg.norm(w - w_loo))
        certs.append(cert)
    return np.array(dist), np.array(certs), w, w_loo


@pytest.fixture
def instance(x64, key):
    return _instance(key, 7, 4, mu=0.3, beta=2.0, radius=1.5)


def test_instance_spectrum_and_radius(instance):
    eig = np.linalg.eigvalsh(np.asarray(instance.hessians))
    np.testing.assert_allclose(eig[:, 0], 0.3, atol=TOL)  # λ_min = μ exactly (pinned)
    np.testing.assert_allclose(eig[:, -1], 2.0, atol=TOL)  # λ_max = β exactly
    assert np.all((eig >= 0.3 - TOL) & (eig <= 2.0 + TOL))
    h = np.asarray(instance.hessians)
    np.testing.assert_array_equal(h, np.swapaxes(h, 1, 2))
    assert np.linalg.norm(instance.w0 - instance.w_star) == pytest.approx(1.5, abs=TOL)
    # the bases differ between samples (not one shared rotation)
    assert np.abs(h[0] - h[1]).max() > 0.1


def test_instance_vmaps_over_keys_and_mu(x64, key):
    keys = jax.random.split(key, 3)
    mus = jnp.array([0.1, 0.5, 1.0])
    batched = jax.vmap(lambda k, m: _instance(k, 4, 3, mu=m, beta=1.0, radius=1.0))(keys, mus)
    for j in range(3):
        single = _instance(keys[j], 4, 3, mu=mus[j], beta=1.0, radius=1.0)
        np.testing.assert_allclose(batched.hessians[j], single.hessians, atol=TOL)
        np.testing.assert_allclose(batched.w0[j], single.w0, atol=TOL)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 3, "d": 1, "mu": 0.5, "beta": 1.0, "radius": 1.0}, "d must be >= 2"),
        ({"n": 3, "d": 2, "mu": 2.0, "beta": 1.0, "radius": 1.0}, "mu must satisfy"),
        ({"n": 3, "d": 2, "mu": 0.0, "beta": 1.0, "radius": 1.0}, "mu must be positive"),
        ({"n": 3, "d": 2, "mu": 0.5, "beta": 1.0, "radius": -1.0}, "radius must be positive"),
        ({"n": 0, "d": 2, "mu": 0.5, "beta": 1.0, "radius": 1.0}, "n must be a positive"),
    ],
)
def test_instance_rejects_bad_arguments(key, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ff.quadratic_instance(key, **kwargs)


def test_quadratic_loss_gradient_finite_differences(x64, instance):
    h, w_star = instance.hessians[2], instance.w_star
    w = instance.w0
    grad = jax.grad(ff.quadratic_loss)(w, h, w_star)
    np.testing.assert_allclose(grad, h @ (w - w_star), atol=TOL)
    eps = 1e-6
    fd = [
        (ff.quadratic_loss(w + eps * e, h, w_star) - ff.quadratic_loss(w - eps * e, h, w_star))
        / (2 * eps)
        for e in np.eye(4)
    ]
    np.testing.assert_allclose(fd, grad, atol=1e-8)  # central differences: O(eps²) + eps/eps


@pytest.mark.parametrize("i", [0, 3, 6])
def test_loo_trajectory_matches_numpy_loop(instance, i):
    eta, steps = 1 / 2.0, 25
    traj = ff.loo_trajectory(instance, i, learning_rate=eta, num_steps=steps)
    dist, cert, w, w_loo = _numpy_loo_gd(*instance, i, eta, steps)
    np.testing.assert_allclose(traj.distance, dist, atol=TOL)
    np.testing.assert_allclose(traj.certificate, cert, atol=TOL)
    assert traj.error[-1] == pytest.approx(np.linalg.norm(w - instance.w_star), abs=TOL)
    assert traj.error_loo[-1] == pytest.approx(np.linalg.norm(w_loo - instance.w_star), abs=TOL)
    assert np.all(traj.distance <= traj.certificate + TOL)  # steps P1–P2, pathwise


def test_loo_trajectory_closed_form_gd(instance):
    """w_t − w_* = (I − ηH̄)^t (w_0 − w_*) and w^i_t − w_* = (I − η(H̄ − H_i/n))^t (w_0 − w_*)."""
    h = np.asarray(instance.hessians)
    e0 = np.asarray(instance.w0 - instance.w_star)
    eta, steps, i = 0.4, 30, 2
    traj = ff.loo_trajectory(instance, i, learning_rate=eta, num_steps=steps)
    a = np.eye(4) - eta * h.mean(0)
    a_loo = a + eta * h[i] / h.shape[0]
    for t in (0, 1, 5, 30):
        e = np.linalg.matrix_power(a, t) @ e0
        e_loo = np.linalg.matrix_power(a_loo, t) @ e0
        assert traj.error[t] == pytest.approx(np.linalg.norm(e), abs=TOL)
        assert traj.distance[t] == pytest.approx(np.linalg.norm(e - e_loo), abs=TOL)


def test_loo_trajectory_prefix_and_vmap_over_index(instance):
    prefix = ff.QuadraticInstance(instance.hessians[:5], instance.w_star, instance.w0)
    full = jax.vmap(
        lambda i: ff.loo_trajectory(instance, i, learning_rate=0.5, num_steps=10, num_samples=5)
    )(jnp.arange(5))
    for i in range(5):
        ref = ff.loo_trajectory(prefix, i, learning_rate=0.5, num_steps=10)
        np.testing.assert_allclose(full.distance[i], ref.distance, atol=TOL)
        np.testing.assert_allclose(full.certificate[i], ref.certificate, atol=TOL)


@pytest.mark.parametrize("n, radius, beta", [(10, 1.0, 1.0), (25, 3.0, 4.0)])
def test_counterexample_mu_equals_beta(x64, key, n, radius, beta):
    """μ = β: w_1 = w_*, ‖w_t − w^i_t‖ = R/n^t; sup = R/n while eq. (3) and the proof give 0."""
    out = _simulate(key, n, 3, mu_over_beta=1.0, beta=beta, radius=radius, num_steps=10)
    assert out["sup_distance"] == pytest.approx(radius / n, rel=1e-12)
    assert out["bound_printed"] == 0.0 and out["bound_proof"] == 0.0
    lipschitz = beta * radius  # λ_max(H_j) = β exactly
    assert out["lipschitz"] == pytest.approx(lipschitz, rel=1e-12)
    assert out["bound_corrected"] == pytest.approx(np.sqrt(2) * radius / n, rel=1e-12)
    # with L = βR/2 (all that step P3 needs) the corrected bound is attained
    tight = ff.thm2_2_bound_corrected(n, beta, beta, beta * radius / 2, radius)
    assert tight == pytest.approx(radius / n, rel=1e-12)


def test_isotropic_closed_form(x64):
    n, radius, c = 6, 2.0, 0.3
    t = np.arange(8)
    expected = radius * np.abs((1 - c + c / n) ** t - (1 - c) ** t)
    np.testing.assert_allclose(ff.loo_distance_isotropic(n, radius, c, t), expected, rtol=1e-14)
    inst = ff.QuadraticInstance(jnp.stack([0.6 * jnp.eye(3)] * n), jnp.zeros(3), jnp.ones(3))
    inst = inst._replace(w0=inst.w0 * radius / np.sqrt(3))
    traj = ff.loo_trajectory(inst, 1, learning_rate=c / 0.6, num_steps=7)
    np.testing.assert_allclose(traj.distance, expected, atol=TOL)


def test_bound_values_by_hand(x64):
    # μ/β = 15/16 ⇒ q^{1/4} = 1/2; n = 10, L = 2, R = 1, β = 1
    args = (10, 15 / 16, 1.0, 2.0, 1.0)
    assert ff.thm2_2_bound_proof(*args) == pytest.approx(2 * 0.5 / (10 * 0.5), rel=1e-14)
    assert ff.thm2_2_bound_corrected(*args) == pytest.approx(2 / (10 * 0.5), rel=1e-14)
    # β = 4, R = 9: main text √(2L)R/β vs proof √(2LR/β): ratio √(R/β) = 3/2
    n, mu, beta, lip, r = 7, 1.0, 4.0, 5.0, 9.0
    q4 = (1 - mu / beta) ** 0.25
    printed = np.sqrt(2 * lip) * r / beta / (n * (1 / q4 - 1))  # eq. (3) literally
    proof = np.sqrt(2 * lip * r / beta) / (n * (1 / q4 - 1))
    assert ff.thm2_2_bound_printed(n, mu, beta, lip, r) == pytest.approx(printed, rel=1e-13)
    assert ff.thm2_2_bound_proof(n, mu, beta, lip, r) == pytest.approx(proof, rel=1e-13)
    assert printed / proof == pytest.approx(1.5, rel=1e-13)
    corrected = ff.thm2_2_bound_corrected(n, mu, beta, lip, r)
    assert corrected == pytest.approx(proof / q4, rel=1e-13)  # off-by-one: factor q^{-1/4}


@pytest.mark.parametrize(
    "fn", [ff.thm2_2_bound_printed, ff.thm2_2_bound_proof, ff.thm2_2_bound_corrected]
)
def test_bounds_reject_bad_arguments(fn):
    with pytest.raises(ValueError, match="mu must satisfy"):
        fn(10, 2.0, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="lipschitz must be positive"):
        fn(10, 0.5, 1.0, 0.0, 1.0)


def test_corrected_bound_holds_and_certificate_below_it(x64, key):
    keys = jax.random.split(key, 40)
    ratios = jnp.linspace(0.05, 1.0, 40)
    out = jax.jit(
        jax.vmap(
            lambda k, r: ff.simulate_loo_stability(k, 8, 4, mu_over_beta=r, num_steps=300, index=3)
        )
    )(keys, ratios)
    assert np.all(out["max_certificate_gap"] <= TOL)
    assert np.all(out["sup_distance"] <= out["certificate"] + TOL)
    assert np.all(out["certificate"] <= out["bound_corrected"] * (1 + TOL))


def test_path_lipschitz_constant_is_a_lipschitz_constant(x64, instance, key):
    h = np.asarray(instance.hessians)
    radius = 1.5
    lip = ff.path_lipschitz_constant(instance.hessians, radius)
    assert lip == pytest.approx(max(np.linalg.norm(m, 2) for m in h) * radius, rel=1e-12)
    # |f(u) − f(v)| ≤ L‖u − v‖ for u, v in B(w_*, R), every sample
    ku, kv = jax.random.split(key)
    dirs = jax.random.normal(ku, (2, 500, 4))
    scale = radius * jax.random.uniform(kv, (2, 500, 1))
    pts = instance.w_star + scale * dirs / jnp.linalg.norm(dirs, axis=-1, keepdims=True)
    f = jax.vmap(jax.vmap(ff.quadratic_loss, (0, None, None)), (None, 0, None))
    gap = jnp.abs(
        f(pts[0], instance.hessians, instance.w_star)
        - f(pts[1], instance.hessians, instance.w_star)
    )
    assert np.all(gap <= lip * jnp.linalg.norm(pts[0] - pts[1], axis=-1) + TOL)
    # and it is attained: the gradient norm at w_* + R·(top eigenvector of H_j) is L
    j = int(np.argmax([np.linalg.norm(m, 2) for m in h]))
    top = np.linalg.eigh(h[j])[1][:, -1]
    grad = jax.grad(ff.quadratic_loss)(instance.w_star + radius * top, h[j], instance.w_star)
    assert np.linalg.norm(grad) == pytest.approx(float(lip), rel=1e-12)


def test_lemma_a1_1_rate(x64, instance):
    eig = np.linalg.eigvalsh(np.asarray(instance.hessians).mean(0))
    eta = 1 / eig[-1]
    traj = ff.loo_trajectory(instance, 0, learning_rate=eta, num_steps=50)
    bound = ff.lemma_a1_1_rate(jnp.arange(51), eta, eig[0], 1.5)
    np.testing.assert_allclose(bound, (1 - eta * eig[0]) ** (np.arange(51) / 2) * 1.5, rtol=1e-14)
    assert np.all(traj.error <= bound * (1 + TOL))


def _top_direction_quadratic(beta=2.0):
    h = jnp.diag(jnp.array([beta, 0.5, 0.1]))
    return (lambda w: ff.quadratic_loss(w, h, jnp.zeros(3))), jnp.array([1.0, 0.0, 0.0])


def test_lemma_a1_2_tight_at_two_over_beta_and_fails_above(x64):
    loss, e = _top_direction_quadratic()
    at = ff.lemma_a1_2_sides(loss, 3 * e, e, 2 / 2.0)  # |1 − ηβ| = 1: equality
    assert at.lhs == pytest.approx(float(at.rhs), rel=1e-14)
    above = ff.lemma_a1_2_sides(loss, 3 * e, e, 2.2 / 2.0)  # |1 − ηβ| = 1.2
    assert above.lhs == pytest.approx(1.2 * float(above.rhs), rel=1e-14)


def test_lemma_a1_3_equality_on_top_eigenvector_and_logistic(x64, key):
    loss, e = _top_direction_quadratic()
    sides = ff.lemma_a1_3_sides(loss, 2 * e, 2.0)
    assert sides.lhs == pytest.approx(16.0, rel=1e-14)  # ‖βw‖² = (2·2)²
    assert sides.rhs == pytest.approx(16.0, rel=1e-14)  # 2β·(β/2)‖w‖²
    x, y = jnp.array([0.5, -2.0, 1.0]), -1.0
    w = jax.random.normal(key, (3,))
    u = -y * float(x @ w)
    assert ff.logistic_sample_loss(w, x, y) == pytest.approx(np.log1p(np.exp(u)), rel=1e-13)
    sides = ff.lemma_a1_3_sides(
        lambda v: ff.logistic_sample_loss(v, x, y), w, ff.logistic_smoothness(x)
    )
    sigma = 1 / (1 + np.exp(-u))  # |dℓ/du| at margin −u
    assert sides.lhs == pytest.approx(float(x @ x) * sigma**2, rel=1e-12)
    assert sides.lhs <= sides.rhs


def test_lemma_a5_1_exact_on_quadratic_and_fails_for_large_step(x64):
    loss, e = _top_direction_quadratic()
    w = 3 * e + jnp.array([0.0, 1.0, -2.0])
    eta = 0.5  # = 1/β
    sides = ff.lemma_a5_1_sides(loss, w, eta)
    h = np.diag([2.0, 0.5, 0.1])
    w_next = (np.eye(3) - eta * h) @ np.asarray(w)
    assert sides.lhs == pytest.approx(0.5 * w_next @ h @ w_next, rel=1e-14)
    g = h @ np.asarray(w)
    assert sides.rhs == pytest.approx(0.5 * np.asarray(w) @ h @ np.asarray(w) - eta / 2 * g @ g)
    assert sides.lhs <= sides.rhs
    bad = ff.lemma_a5_1_sides(loss, 3 * e, 1.5 / 2.0)  # η = 1.5/β: no (η/2)-descent
    assert bad.lhs > bad.rhs


def test_logistic_smoothness_is_max_hessian_eigenvalue(x64, key):
    x = jax.random.normal(key, (6, 3))
    y = jnp.ones(6)
    mean_loss = lambda w: jnp.mean(jax.vmap(ff.logistic_sample_loss, (None, 0, 0))(w, x, y))
    hess = np.asarray(jax.hessian(mean_loss)(jnp.zeros(3)))  # σ(1−σ) = 1/4 at w = 0
    assert ff.logistic_smoothness(x) == pytest.approx(np.linalg.eigvalsh(hess)[-1], rel=1e-12)


def test_loo_trajectory_rejects_bad_arguments(instance):
    with pytest.raises(ValueError, match="num_steps must be a positive"):
        ff.loo_trajectory(instance, 0, learning_rate=0.5, num_steps=0)
    with pytest.raises(ValueError, match="learning_rate must be positive"):
        ff.loo_trajectory(instance, 0, learning_rate=-0.5, num_steps=3)
