"""Head-tuning theory (Fu et al. 2023, Sec 2.3, App. A.2–A.4) against independent oracles."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special

from ntsim.core import hard_margin_svm, separable_dataset
from ntsim.theory import stability as ht

# float64 arithmetic on O(1) quantities: 1e-12 leaves ~1000x over round-off.
TOL = 1e-12


def _numpy_gd(x, y, w0, eta, steps, weights):
    """Oracle: plain numpy GD on Σ_i c_i log(1 + exp(−y_i wᵀx̃_i)), one head at a time."""
    z = y[:, None] * np.hstack([x, -np.ones((len(y), 1))])
    out = []
    for w, c in zip(w0, weights, strict=True):
        w = w.copy()
        rec = []
        for t in range(max(steps) + 1):
            if t in steps:
                rec.append(w.copy())
            w = w + eta * (c * scipy.special.expit(-(z @ w))) @ z
        out.append(rec)
    return np.transpose(np.asarray(out), (1, 0, 2))  # (R, k, p)


def test_head_tuning_gd_matches_numpy_loop(x64, key):
    data = separable_dataset(key, 30, 3, margin=0.1, radius=1.0, offset=0.4)
    x, y = np.asarray(data.x), np.asarray(data.y)
    n = len(y)
    w0 = np.random.default_rng(0).normal(size=(3, 4))
    weights = np.stack([np.full(n, 1 / n), np.asarray(ht.loo_weights(n, 5)), np.full(n, 0.02)])
    eta = float(ht.head_tuning_step_size(x))
    steps = (0, 1, 7, 50, 200)
    run = ht.head_tuning_gd(x, y, w0, learning_rate=eta, record_steps=steps, sample_weights=weights)
    expected = _numpy_gd(x, y, w0, eta, steps, weights)
    np.testing.assert_allclose(run.weights, expected, rtol=1e-10, atol=1e-12)
    loss = np.sum(weights[None] * np.logaddexp(0, -np.einsum("rkp,np->rkn", expected,
                  y[:, None] * np.hstack([x, -np.ones((n, 1))]))), axis=-1)  # fmt: skip
    np.testing.assert_allclose(run.loss, loss, rtol=1e-10)
    assert run.steps.tolist() == list(steps)


def test_loo_run_with_mean_normaliser_equals_training_without_the_point(x64, key):
    data = separable_dataset(key, 25, 3, margin=0.1, radius=1.0, offset=0.4)
    x, y = np.asarray(data.x), np.asarray(data.y)
    eta = float(ht.head_tuning_step_size(x))
    run = ht.loo_head_tuning(x, y, 7, record_steps=(3, 60), normalizer="n-1")
    deleted = ht.head_tuning_gd(np.delete(x, 7, 0), np.delete(y, 7), jnp.zeros((1, 4)),
                                learning_rate=eta, record_steps=(3, 60))  # fmt: skip
    np.testing.assert_allclose(run.weights[:, 1], deleted.weights[:, 0], rtol=1e-12, atol=TOL)
    full = ht.head_tuning_gd(x, y, jnp.zeros((1, 4)), learning_rate=eta, record_steps=(3, 60))
    np.testing.assert_allclose(run.weights[:, 0], full.weights[:, 0], rtol=1e-12, atol=TOL)
    # The 1/n convention of eq. (12) is the same run with a step smaller by (n − 1)/n.
    run_n = ht.loo_head_tuning(x, y, 7, record_steps=(3, 60), normalizer="n")
    slower = ht.head_tuning_gd(np.delete(x, 7, 0), np.delete(y, 7), jnp.zeros((1, 4)),
                               learning_rate=eta * 24 / 25, record_steps=(3, 60))  # fmt: skip
    np.testing.assert_allclose(run_n.weights[:, 1], slower.weights[:, 0], rtol=1e-12, atol=TOL)


def test_step_size_is_inverse_smoothness_and_loss_decreases(x64, key):
    data = separable_dataset(key, 50, 4, margin=0.1, radius=2.0, offset=1.0)
    x = np.asarray(data.x)
    z = np.hstack([x, -np.ones((50, 1))])
    # At w = 0 every ℓ'' = 1/4, so the Hessian is X̃ᵀX̃/(4n) and its top eigenvalue is β_F.
    beta = np.linalg.eigvalsh(z.T @ z / (4 * 50)).max()
    np.testing.assert_allclose(ht.head_tuning_step_size(x), 1 / beta, rtol=1e-12)
    # Descent lemma (A.5.1): with η = 1/β_F the loss decreases at every recorded step.
    run = ht.head_tuning_gd(x, data.y, jnp.zeros((1, 5)), learning_rate=1 / beta,
                            record_steps=tuple(range(0, 300, 3)))  # fmt: skip
    assert np.all(np.diff(np.asarray(run.loss[:, 0])) < 0)


def test_vmap_over_datasets_equals_single_runs(x64, key):
    keys = jax.random.split(key, 3)
    data = jax.vmap(lambda k: separable_dataset(k, 20, 3, margin=0.1, radius=1.0))(keys)

    def run(x, y):
        return ht.head_tuning_gd(x, y, jnp.zeros((1, 4)), learning_rate=1.0, record_steps=(5, 40))

    batched = jax.jit(jax.vmap(run))(data.x, data.y)
    for j in range(3):
        np.testing.assert_allclose(batched.weights[j], run(data.x[j], data.y[j]).weights, atol=TOL)


def test_gd_direction_converges_to_the_augmented_svm_not_the_papers():
    # Two points far from the origin: the SVM with b unpenalised is v = (1, 0), b = 2 (margin
    # 1), the augmented SVM (b penalised) is the min-norm w with w·y_i x̃_i = 1. Soudry et al.
    # (2018): GD on wᵀx̃ converges in direction to the latter, at rate 1/log t.
    with jax.enable_x64(True):
        x = jnp.array([[3.0, 1.0], [1.0, 1.0]])
        y = jnp.array([1.0, -1.0])
        paper = hard_margin_svm(x, y, penalize_bias=False)
        np.testing.assert_allclose(ht.svm_head(paper.weights, paper.bias), [1, 0, 2], atol=1e-8)
        z = np.asarray(y)[:, None] * np.asarray(ht.augment_features(x))
        augmented = z.T @ np.linalg.solve(z @ z.T, np.ones(2))  # min-norm solution
        steps = (10, 1_000, 100_000)
        run = ht.head_tuning_gd(x, y, jnp.zeros((1, 3)), learning_rate=1.0, record_steps=steps)
        e_aug = np.asarray(ht.direction_error(run.weights[:, 0], augmented))
        e_paper = np.asarray(ht.direction_error(run.weights[:, 0], jnp.array([1.0, 0.0, 2.0])))
    assert np.all(np.diff(e_aug) < 0) and e_aug[-1] < 0.02
    gap = float(ht.direction_error(augmented, jnp.array([1.0, 0.0, 2.0])))
    assert gap > 0.3 and e_paper[-1] > gap - e_aug[-1] > 0.3


def test_direction_error_and_telescoping(x64, key):
    a, b, c, d = (jax.random.normal(k, (500, 5)) for k in jax.random.split(key, 4))
    np.testing.assert_allclose(
        ht.direction_error(a, b),
        np.linalg.norm(a / np.linalg.norm(a, axis=1, keepdims=True)
                       - b / np.linalg.norm(b, axis=1, keepdims=True), axis=1),
        rtol=TOL,
    )  # fmt: skip
    np.testing.assert_allclose(ht.direction_error(a, 3.0 * a), 0.0, atol=1e-7)
    sides = ht.telescoping_sides(a, b, c, d)
    assert np.all(np.asarray(sides.lhs) <= np.asarray(sides.rhs) + TOL)
    # Equality when the GD heads sit on their SVM directions.
    eq = ht.telescoping_sides(c, d, 2 * c, 5 * d)
    np.testing.assert_allclose(eq.lhs, eq.rhs, atol=1e-7)


def test_lemma_a2_1_and_a2_2_against_brute_force(x64, key):
    ks = jax.random.split(key, 6)
    a, b = jax.random.normal(ks[0], (1000, 3)), jax.random.normal(ks[1], (1000, 3))
    s1 = ht.lemma_a2_1_sides(a, b)
    r = np.maximum(np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(s1.rhs, 2 / r * np.linalg.norm(a - b, axis=1), rtol=TOL)
    assert np.all(np.asarray(s1.lhs) <= np.asarray(s1.rhs) + TOL)
    v1, v2, x = (np.asarray(jax.random.normal(k, (1000, 3))) for k in ks[2:5])
    b1, b2 = np.asarray(jax.random.normal(ks[5], (2, 1000)))
    y = np.where(np.arange(1000) % 2 == 0, 1.0, -1.0)
    s2 = ht.lemma_a2_2_sides(v1, b1, v2, b2, x, y)
    h1 = np.maximum(0, 1 - y * (np.sum(v1 * x, 1) - b1))
    h2 = np.maximum(0, 1 - y * (np.sum(v2 * x, 1) - b2))
    np.testing.assert_allclose(s2.lhs, np.abs(h1 - h2), atol=TOL)
    assert np.all(np.asarray(s2.lhs) <= np.asarray(s2.rhs) + TOL)


def test_lemma_a2_5_terms_hand_computed():
    # n = 10, λ = 0.1, B = 1, γ = 0.5: a = 3, nλ = 1 → √(2·3/1) = √6 and (1 + √(1 + 24))/2 = 3.
    first, second = ht.lemma_a2_5_terms(10, 0.1, 1.0, 0.5)
    np.testing.assert_allclose([first, second], [np.sqrt(6), 3.0], rtol=1e-6)
    np.testing.assert_allclose(ht.lemma_a2_5_bound(10, 0.1, 1.0, 0.5), 3.0, rtol=1e-6)
    np.testing.assert_allclose(ht.lemma_a2_5_bound_simplified(10, 0.1, 1.0, 0.5), 3.0, rtol=1e-6)
    # Thm 2.4 composes the Soudry term and ν times the A.2.5 term.
    t = jnp.e**jnp.e
    np.testing.assert_allclose(
        ht.thm2_4_bound(t, constant=2.0, regularization=0.1, nu=0.5, radius=1.0, margin=0.5, n=10),
        2.0 / np.e + 0.5 * 3.0,
        rtol=1e-6,
    )


def test_cor2_5_bounds_and_lipschitz():
    np.testing.assert_allclose(ht.hinge_lipschitz(np.sqrt(3.0)), 2.0, rtol=1e-7)
    np.testing.assert_allclose(ht.cor2_5_gap_printed(2.0, 0.1, 10), 2.0, rtol=1e-7)
    np.testing.assert_allclose(ht.cor2_5_gap_corrected(2.0, 0.1, 10), 1.0, rtol=1e-7)


def test_soudry_rate_and_constant():
    np.testing.assert_allclose(ht.soudry_rate(100.0), np.log(np.log(100)) / np.log(100), rtol=1e-7)
    with pytest.raises(ValueError, match="t must be >= 3"):
        ht.soudry_rate(2.0)
    steps = np.array([1, 3, 10, 100])
    errors = 0.7 * np.asarray(ht.soudry_rate(np.array([3.0, 3.0, 10.0, 100.0])))
    errors[0] = 50.0  # t = 1 is excluded from the fit
    np.testing.assert_allclose(ht.fit_soudry_constant(errors, steps), 0.7, rtol=1e-6)


def test_multi_head_quantities(x64, key):
    ref = jnp.array([0.0, 0.0, 2.0])
    # Projections onto ŵ of lengths 1, 1, 4 → ξ = 3·4/6 = 2.
    heads = jnp.array([[1.0, 0.0, 1.0], [0.0, 3.0, 1.0], [5.0, -1.0, 4.0]])
    np.testing.assert_allclose(ht.head_xi(heads, ref), 2.0, rtol=TOL)
    np.testing.assert_allclose(ht.head_xi(jnp.tile(heads[:1], (4, 1)), ref), 1.0, rtol=TOL)
    many = jax.random.normal(key, (7, 50, 3))
    conv = ht.a4_1_convexity_sides(many, ref)
    assert np.all(np.asarray(conv.lhs) <= np.asarray(conv.rhs) + TOL)
    same = ht.a4_1_convexity_sides(jnp.tile(heads[:1], (5, 1)), ref)
    np.testing.assert_allclose(same.lhs, same.rhs, rtol=TOL)
    # H > 2 + 8 ln(1/δ) ⇔ δ > exp(−(H − 2)/8); at the boundary the factor is √(H/H) = 1.
    h = 30
    delta = float(ht.cor3_1_min_delta(h))
    np.testing.assert_allclose(2 + 8 * np.log(1 / delta), h, rtol=1e-12)
    np.testing.assert_allclose(ht.cor3_1_factor(h, delta), 1.0, rtol=1e-12)
    kw = dict(num_heads=50, delta=0.1, constant=1.5, xi=1.2, nu=0.3, regularization=0.01,
              radius=1.0, margin=0.2, n=100)  # fmt: skip
    svm = 0.3 * float(ht.lemma_a2_5_bound(100, 0.01, 1.0, 0.2))
    first = float(ht.cor3_1_factor(50, 0.1)) * 1.5 * 1.2 * float(ht.soudry_rate(1000.0))
    np.testing.assert_allclose(ht.cor3_1_bound_corrected(1000.0, **kw), first + svm, rtol=1e-7)
    printed = np.sqrt(float(ht.cor3_1_factor(50, 0.1)) * first) + svm
    np.testing.assert_allclose(ht.cor3_1_bound_printed(1000.0, **kw), printed, rtol=1e-7)


def test_small_helpers():
    assert ht.log_spaced_steps(1000, 4) == (1, 10, 100, 1000)
    np.testing.assert_allclose(ht.loo_weights(5, 2, "n").sum(), 4 / 5, rtol=1e-7)
    np.testing.assert_allclose(ht.loo_weights(5, 2, "n-1").sum(), 1.0, rtol=1e-7)
    assert float(ht.loo_weights(5, 2)[2]) == 0.0
    assert ht.augment_features(jnp.ones((2, 3))).shape == (2, 4)
    assert ht.multi_head_init(jax.random.key(0), 4, 2, 0.5).shape == (4, 3)
    with pytest.raises(ValueError, match="normalizer"):
        ht.loo_weights(5, 2, "mean")
    with pytest.raises(ValueError, match="record_steps"):
        ht.head_tuning_gd(jnp.ones((2, 1)), jnp.array([1.0, -1.0]), jnp.zeros((1, 2)),
                          learning_rate=1.0, record_steps=(5, 3))  # fmt: skip
    with pytest.raises(ValueError, match="init"):
        ht.head_tuning_gd(jnp.ones((2, 1)), jnp.array([1.0, -1.0]), jnp.zeros((1, 3)),
                          learning_rate=1.0, record_steps=(1,))  # fmt: skip
