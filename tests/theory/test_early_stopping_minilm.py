"""The measured-kernel pieces of ``ntsim.theory.early_stopping.minilm`` against oracles.

* β recovered from a kernel with a known power-law spectrum (random eigenbasis);
* the plug-in stopping time against a hand computation on a 2 × 2 kernel (the critical
  radius as the root of a quadratic);
* the held-out curve, the plug-in ``Ĉ_H`` and Cor 2's predicted cosines against explicit
  parameter-space GD on a linear model, where the linearisation is exact;
* :func:`gd_finetune` (full-batch GD of a model through ``ntsim.core.gradient_descent``,
  padding rows with weight 0) against the kernel closed form on a linear model.

The MiniLM simulations themselves run in ``tests/claims`` and the quick experiments.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import eigen_decay_exponent
from ntsim.theory.early_stopping import minilm


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def _linear_problem(key, n_train=(6, 5, 4), n_test=7, p=20):
    """Inputs of several tasks for f(θ, x) = ⟨θ, x⟩ + ⟨θ_0, x⟩-offsets: J = X exactly."""
    keys = jax.random.split(key, 4)
    total = sum(n_train)
    x = jax.random.normal(keys[0], (total + n_test, p))
    theta0 = jax.random.normal(keys[1], (p,)) / math.sqrt(p)
    y = jnp.sign(jax.random.normal(keys[2], (total + n_test,)))
    return x, theta0, y


def test_beta_recovered_from_a_kernel_with_known_decay():
    beta, n = 0.7, 60
    q, _ = jnp.linalg.qr(jax.random.normal(jax.random.PRNGKey(0), (n, n)))
    lam = 5.0 * jnp.arange(1.0, n + 1) ** (-2 * beta)
    kernel = (q * lam) @ q.T
    spectrum = jnp.linalg.eigvalsh((kernel + kernel.T) / 2)[::-1] / n
    assert float(eigen_decay_exponent(spectrum)) == pytest.approx(beta, abs=1e-8)
    assert float(eigen_decay_exponent(spectrum, fit_intercept=True)) == pytest.approx(
        beta, abs=1e-8
    )


def test_plug_in_stopping_time_matches_a_hand_computation():
    # 𝕂 = diag(4, 1), N = 2: K = diag(2, 1/2); α = 1/2; f_PT = 0, Y = (1, 1).
    # One validation point with 𝕂(x_v, X) = (2, 0): f_v(τ) = 2·(1/4)·[1 − (1 − 1)^τ] = 1/2 for
    # τ ≥ 1; y_v = 0.6, so the validation MSE is 0.36 at τ = 0 and 0.01 after: s* = 1, σ̂ = 0.1.
    k = jnp.diag(jnp.array([4.0, 1.0]))
    rule = minilm.plug_in_stopping_time(
        k, jnp.array([[2.0, 0.0]]), jnp.ones(2), jnp.array([0.6]), jnp.zeros(2), jnp.zeros(1),
        step_size=0.5, steps=jnp.arange(4), horizon=1000,
    )  # fmt: skip
    assert int(rule.validation_step) == 1
    assert float(rule.noise_std) == pytest.approx(0.1, rel=1e-10)
    # c after one step: c_i = −(1 − (1 − αg_i/N))/g_i · r_i with r = −1: c = (1/4, 1/4)
    c = np.array([0.25, 0.25])
    c_h = math.sqrt(c @ np.diag([4.0, 1.0]) @ c)
    assert float(rule.rkhs_distance) == pytest.approx(c_h, rel=1e-10)
    # ϱ̂: R̂(ϱ) = √((ϱ² + 1/2)/2) on 1/2 ≤ ϱ² ≤ 2 equals a ϱ², a = Ĉ_H/(2eσ̂): a²u² − u/2 − 1/4 = 0
    a = c_h / (2 * math.e * 0.1)
    u = (0.5 + math.sqrt(0.25 + a**2)) / (2 * a**2)
    assert 0.5 <= u <= 2
    assert float(rule.critical_radius) ** 2 == pytest.approx(u, rel=1e-6)
    assert int(rule.stopping_time) == math.floor(1 / (0.5 * u)) == 2


def _explicit_gd(x, theta0, y, step, steps):
    """Parameter-space GD on (1/2N)‖Xθ − y‖² from θ_0; the parameters after each step."""

    def step_fn(theta, _):
        grad = x.T @ (x @ theta - y) / x.shape[0]
        new = theta - step * grad
        return new, new

    _, path = jax.lax.scan(step_fn, theta0, None, length=steps)
    return jnp.concatenate([theta0[None], path])


def test_heldout_curve_and_plug_in_distance_equal_explicit_gd_on_a_linear_model():
    x, theta0, y = _linear_problem(jax.random.PRNGKey(1))
    tr, te = slice(0, 10), slice(15, 22)
    gram = x @ x.T
    alpha = 0.5 / float(jnp.linalg.eigvalsh(gram[tr, tr] / 10)[-1])
    f0 = x @ theta0
    steps = jnp.arange(0, 41, 5)
    curve = minilm.heldout_mse_curve(gram[tr, tr], gram[te, tr], y[tr], y[te], f0[tr], f0[te],
                                     step_size=alpha, steps=steps)  # fmt: skip
    path = _explicit_gd(x[tr], theta0, y[tr], alpha, 40)
    explicit = jnp.mean((path[steps] @ x[te].T - y[te]) ** 2, axis=1)
    np.testing.assert_allclose(curve, explicit, rtol=1e-10)
    # Ĉ_H is ‖θ_{s*} − θ_0‖ (the increment's RKHS norm is the parameter distance), with the
    # test split playing validation here
    rule = minilm.plug_in_stopping_time(
        gram[tr, tr], gram[te, tr], y[tr], y[te], f0[tr], f0[te], step_size=alpha, steps=steps,
        horizon=10,
    )  # fmt: skip
    best = int(rule.validation_step)
    assert best == int(steps[jnp.argmin(explicit)])
    distance = float(jnp.linalg.norm(path[best] - theta0))
    assert float(rule.rkhs_distance) == pytest.approx(distance, rel=1e-8)
    # the second route (the spectral sum) to the same distance, at s* and at other steps
    for s in (best, 1, 40):
        spectral = minilm.increment_rkhs_norm(gram[tr, tr], f0[tr] - y[tr], step_size=alpha,
                                              steps=s)  # fmt: skip
        assert spectral == pytest.approx(float(jnp.linalg.norm(path[s] - theta0)), rel=1e-8)


def test_predicted_cosines_equal_measured_ones_on_a_linear_model():
    sizes = (6, 5, 4)
    x, theta0, y = _linear_problem(jax.random.PRNGKey(2), n_train=sizes)
    bounds = np.cumsum((0, *sizes))
    gram = x[: bounds[-1]] @ x[: bounds[-1]].T
    residuals = x[: bounds[-1]] @ theta0 - y[: bounds[-1]]
    alpha, steps = 0.05, 30
    predicted = minilm.kernel_predicted_cosines(gram, sizes, residuals, step_size=alpha,
                                                steps=steps)  # fmt: skip
    vectors = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        path = _explicit_gd(x[a:b], theta0, y[a:b], alpha, steps)
        vectors.append(path[-1] - theta0)
    measured = minilm.vector_cosines(np.stack(vectors))
    np.testing.assert_allclose(predicted, measured, atol=1e-10)
    assert np.abs(measured[np.triu_indices(3, 1)]).max() > 0.05  # not trivially orthogonal


def test_gd_finetune_on_a_linear_model_equals_the_kernel_closed_form():
    x, theta0, y = _linear_problem(jax.random.PRNGKey(3), n_train=(12,), n_test=7)
    score = lambda params, batch: batch["x"] @ params["w"]  # noqa: E731
    model = minilm.MiniLMScalarModel({"w": theta0}, score, None, theta0.size)
    size = 8  # the last 4 training rows are padding (weight 0)
    train = {"x": x[:12], "y": y[:12]}
    test = {"x": x[12:], "y": y[12:]}
    gram = x @ x.T
    alpha = 0.5 / float(jnp.linalg.eigvalsh(gram[:size, :size] / size)[-1])
    weights = (np.arange(12) < size).astype(float)
    _, curve = minilm.gd_finetune(model, train, weights, test, step_size=alpha, num_steps=30,
                                  eval_every=5)  # fmt: skip
    closed = minilm.heldout_mse_curve(
        gram[:size, :size], gram[12:, :size], y[:size], y[12:], x[:size] @ theta0,
        x[12:] @ theta0, step_size=alpha, steps=jnp.arange(0, 31, 5),
    )  # fmt: skip
    # gd_finetune runs in float32 (α is cast), the closed form in float64
    np.testing.assert_allclose(curve, closed, rtol=1e-4)


def _two_leaf_model(rng):
    """f(θ, x) = tanh(x·w)·v (a hand-made score over "input_ids" rows): ∇_w = (1 − t²)v·x,
    ∇_v = t, written out by hand in the tests (the oracle)."""
    x = rng.normal(size=(5, 6)).astype(np.float32)
    w = rng.normal(size=6).astype(np.float32) / 3
    v = np.float32(1.7)

    def score(params, batch):
        hidden = jnp.tanh(batch["input_ids"] @ params["w"])
        return hidden * params["v"] * batch["attention_mask"][:, 0]

    model = minilm.MiniLMScalarModel({"w": jnp.asarray(w), "v": jnp.asarray(v)}, score, None, 7)
    batch = {"input_ids": jnp.asarray(x), "attention_mask": jnp.ones((5, 1), jnp.float32)}
    t = np.tanh(x.astype(float) @ w.astype(float))
    jacobian = np.concatenate([((1 - t**2) * float(v))[:, None] * x, t[:, None]], axis=1)
    return model, batch, jacobian


def test_squared_gradient_norms_of_a_two_leaf_model_are_the_ntk_diagonal():
    model, batch, jacobian = _two_leaf_model(np.random.default_rng(0))
    expected = (jacobian**2).sum(axis=1)  # (1 − t²)²v²‖x‖² + t²
    np.testing.assert_allclose(minilm.squared_gradient_norms(model, batch), expected, rtol=1e-5)


@pytest.mark.parametrize("chunk", [1, 2, 5])
def test_power_iteration_finds_the_top_eigenvalue_of_the_hand_written_ntk(chunk):
    """λ_1(JJᵀ) with J written by hand; chunks that do not divide n (2 of 5) included."""
    model, batch, jacobian = _two_leaf_model(np.random.default_rng(1))
    expected = np.linalg.eigvalsh(jacobian @ jacobian.T)[-1]
    top = minilm.top_ntk_eigenvalue(model, batch, key=jax.random.PRNGKey(chunk), chunk=chunk,
                                    relative_residual=1e-6)  # fmt: skip
    assert top.residual <= 1e-6 and top.iterations < 200
    np.testing.assert_allclose(top.eigenvalue, expected, rtol=1e-5)


def test_power_iteration_rejects_bad_arguments():
    model, batch, _ = _two_leaf_model(np.random.default_rng(2))
    with pytest.raises(ValueError, match="chunk"):
        minilm.top_ntk_eigenvalue(model, batch, key=jax.random.PRNGKey(0), chunk=0)


def test_power_iteration_finds_a_top_eigenvector_orthogonal_to_the_constant():
    """f(θ, x) = θ·x on inputs whose Gram matrix XXᵀ has its top eigenvector ⟂ 1 (a referee's
    case: a start u ∝ 1 converged to the second eigenvalue)."""
    x = np.array([[3.0, 0.0], [-3.0, 0.0], [0.0, 1.0], [0.0, 1.0]], np.float32)
    model = minilm.MiniLMScalarModel({"w": jnp.zeros(2)},
                                     lambda p, b: b["input_ids"] @ p["w"], None, 2)  # fmt: skip
    batch = {"input_ids": jnp.asarray(x), "attention_mask": jnp.ones((4, 1), jnp.float32)}
    gram = x.astype(float) @ x.T.astype(float)
    expected = np.linalg.eigvalsh(gram)[-1]  # 18, along (1, −1, 0, 0)
    top = minilm.top_ntk_eigenvalue(model, batch, key=jax.random.PRNGKey(0), chunk=3)
    np.testing.assert_allclose(top.eigenvalue, expected, rtol=1e-5)


def test_settings_reject_bad_values():
    with pytest.raises(ValueError, match="checkpoint"):
        minilm.MiniLMDecaySetting(checkpoint="bert-base")
    with pytest.raises(ValueError, match="step_fraction"):
        minilm.MiniLMStoppingSetting(step_fraction=1.5)
    with pytest.raises(ValueError, match="eval_every"):
        minilm.MiniLMStoppingSetting(max_steps=25, eval_every=10)
    with pytest.raises(ValueError, match="tasks"):
        minilm.MiniLMTaskVectorSetting(tasks=("tweets",))


def test_long_sentence_labels_split_the_corpus_at_the_median_word_count():
    pytest.importorskip("flax")
    try:
        texts, labels = minilm.task_corpus("long_sentence")
    except FileNotFoundError:
        pytest.skip("text data not cached (make data)")
    words = np.array([len(t.split()) for t in texts])
    assert np.all((labels > 0) == (words > np.median(words)))
    assert 0.4 < np.mean(labels > 0) < 0.6


def test_blocked_squared_norm_is_within_its_float32_bound_of_float64():
    """The gradient routes' ``Σ‖leaf‖²`` from float32 partial sums of 64 squares, summed in
    float64 on the host, against numpy's float64 sum: within 64·ε₃₂ ≈ 4e-6 (a sum of 64
    positive terms; a one-pass float32 sum of the 590k-entry leaf may drift ~1%). Leaf sizes
    that 64 does not divide are padded with zeros."""
    from ntsim.theory.early_stopping import _minilm_model

    rng = np.random.default_rng(0)
    tree = {"big": rng.normal(size=(1536, 384)).astype(np.float32) + 3.0,
            "odd": rng.normal(size=(7, 5)).astype(np.float32)}  # fmt: skip
    with jax.enable_x64(False):
        partials = jax.jit(_minilm_model._squared_norm_partials)(tree)
        assert partials.dtype == jnp.float32
    expected = sum(float(np.sum(np.asarray(v, np.float64) ** 2)) for v in tree.values())
    block = _minilm_model.SQUARED_NORM_BLOCK
    assert block == 64  # the bound below is derived for this block
    assert partials.shape == (1536 * 384 // block + 1,)
    got = _minilm_model._sum64(partials)
    np.testing.assert_allclose(got, expected, rtol=block * np.finfo(np.float32).eps)
