"""PEFT configurations, kernels at θ_0, κ, Spearman, KL (``theory.linearization._peft``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import scipy.stats
from jax.flatten_util import ravel_pytree

from ntsim.core import condition_number, empirical_ntk_fn, kernel_gd_predictions, linearize, mlp
from ntsim.theory import linearization as lz


def _setup(key):
    model = mlp((6, 5), activation="tanh", parameterization="ntk", b_std=0.2)
    x = jax.random.normal(key, (7, 3))
    return model, x, model.init(jax.random.fold_in(key, 1), x[0])


def test_layer_configs_are_blocks_of_the_full_ntk_and_add_up(x64, key):
    model, x, p0 = _setup(key)
    blocks = lz.block_kernels(model.apply, p0, x)
    full = empirical_ntk_fn(model.apply)(x, None, p0)
    np.testing.assert_allclose(sum(jax.tree.leaves(blocks)), full, rtol=1e-12)
    total = 0
    for i, name in enumerate(["layer0", "layer1", "head"]):
        cfg = lz.peft_model(model.apply, p0, name)
        ntk, sign = lz.peft_kernels(cfg, x)
        layer = blocks["layers"][i]
        np.testing.assert_allclose(ntk, layer["w"] + layer["b"], rtol=1e-12)
        total = total + ntk
        # The sign kernel's diagonal is the ℓ1 norm of the block gradient: ‖g‖_1 ≥ ‖g‖_2.
        assert np.all(np.diag(sign) >= np.sqrt(np.diag(ntk)) * (1 - 1e-12))
    np.testing.assert_allclose(total, full, rtol=1e-12)  # K_{θ∪θ̂} = K + S
    with pytest.raises(ValueError, match="names no layer"):
        lz.peft_model(model.apply, p0, "layer5")
    with pytest.raises(ValueError, match="name must be"):
        lz.peft_model(model.apply, p0, "adapters")


def test_lora_config_kernel_is_b_block(x64, key):
    model, x, p0 = _setup(key)
    cfg = lz.peft_model(model.apply, p0, "lora2", key=key, lora_targets=[("layers", 1, "w")])
    ntk, _ = lz.peft_kernels(cfg, x)
    blocks = empirical_ntk_fn(cfg.apply, per_block=True)(x, None, cfg.params0)
    np.testing.assert_array_equal(blocks[0]["a"], 0.0)
    np.testing.assert_allclose(ntk, blocks[0]["b"], rtol=1e-12)
    with pytest.raises(ValueError, match="lora_targets"):
        lz.peft_model(model.apply, p0, "lora2")


def test_condition_number_spearman_kl(x64):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 8))
    k = a @ a.T
    assert float(lz.kernel_condition_number(k, 0.3)) == pytest.approx(
        float(condition_number(k, 0.3)), rel=1e-10
    )
    for _ in range(5):
        u, v = rng.standard_normal(12), rng.standard_normal(12)
        v[:3] = v[3]  # ties
        assert lz.spearman(u, v) == pytest.approx(scipy.stats.spearmanr(u, v).statistic, rel=1e-12)
    p, q = rng.standard_normal(10), rng.standard_normal(10)
    sp, sq = 1 / (1 + np.exp(-p)), 1 / (1 + np.exp(-q))
    expected = np.mean(sp * np.log(sp / sq) + (1 - sp) * np.log((1 - sp) / (1 - sq)))
    assert float(lz.bernoulli_kl(p, q)) == pytest.approx(expected, rel=1e-12)
    assert float(lz.bernoulli_kl(p, p)) == 0.0
    with pytest.raises(ValueError, match="same length"):
        lz.spearman([1.0, 2.0], [1.0])


def test_synthetic_tasks_and_pretraining(x64, key):
    tasks = lz.synthetic_tasks(
        key, dim=4, num_pretrain=64, num_train=32, num_test=100, angles=(0.0, 1.2)
    )
    assert set(np.unique(tasks.y_train)) <= {-1.0, 1.0}
    assert tasks.y_train.shape == (2, 32) and tasks.y_test.shape == (2, 100)
    apply, theta0 = lz.pretrained_mlp(key, tasks, hidden=(16,), steps=300, learning_rate=0.5)
    preds = jax.vmap(apply, (None, 0))(theta0, tasks.x_pre)[:, 0]
    # Pretraining fits tanh(x·w_0) far better than the zero predictor.
    assert float(jnp.mean((preds - tasks.y_pre) ** 2)) < 0.2 * float(jnp.mean(tasks.y_pre**2))
    # The related task (angle 0) is solved better by the pretrained model's sign than task 2.
    test_preds = jax.vmap(apply, (None, 0))(theta0, tasks.x_test)[:, 0]
    acc = np.mean(np.sign(np.asarray(test_preds))[None] == np.asarray(tasks.y_test), axis=1)
    assert acc[0] > acc[1]
    with pytest.raises(ValueError, match="dim"):
        lz.synthetic_tasks(key, dim=1, num_pretrain=4, num_train=4, num_test=4, angles=(0.0,))


@pytest.mark.slow  # > 20 s at quick sizes (compilation); runs in make test-full
def test_linearity_vs_lambda_rows_match_direct_runs(x64, key):
    model, x, p0 = _setup(key)
    x_test = jax.random.normal(jax.random.fold_in(key, 5), (9, 3))
    y = jnp.sign(jax.random.normal(jax.random.fold_in(key, 6), (7,)))
    y_test = jnp.sign(jax.random.normal(jax.random.fold_in(key, 7), (9,)))
    apply = lambda p, xi: model.apply(p, xi)  # noqa: E731
    lambdas, eta, steps = jnp.array([5.0, 0.5, 0.0]), 0.01, 60
    table = lz.linearity_vs_lambda(
        apply,
        p0,
        x,
        y,
        x_test,
        y_test,
        lambdas=lambdas,
        learning_rate=eta,
        num_steps=steps,
        record_every=20,
    )
    for i, lam in ((0, 5.0), (2, 0.0)):  # two rows against direct runs (each compiles anew)
        net = lz.finetune(
            apply, p0, x, y, proximal=lam, learning_rate=eta, num_steps=steps, record_every=steps
        )
        lin = lz.finetune(
            apply,
            p0,
            x,
            y,
            proximal=lam,
            learning_rate=eta,
            num_steps=steps,
            record_every=steps,
            linearised=True,
        )
        f = np.asarray(lz.outputs(apply, net.params, x_test))
        f_lin = np.asarray(lz.outputs(linearize(apply, p0), lin.params, x_test))
        np.testing.assert_allclose(table.distance[i], net.distance[-1], rtol=1e-10)
        np.testing.assert_allclose(
            table.gap_train[i], np.linalg.norm(net.train[-1] - lin.train[-1]), rtol=1e-10
        )
        np.testing.assert_allclose(table.accuracy[i], np.mean(np.sign(f) == np.asarray(y_test)))
        np.testing.assert_allclose(table.kl_test[i], lz.bernoulli_kl(f, f_lin), rtol=1e-10)
    # ‖θ_T − θ0‖ decreases strictly in λ (the slides' table trend; KRR: decreasing in σ).
    assert np.all(np.diff(np.asarray(table.distance)) > 0)
    assert np.all(np.asarray(table.distance) <= np.asarray(table.thm2_bound) * (1 + 1e-12))


def test_fit_config_loss_curve(x64, key):
    model, x, p0 = _setup(key)
    y = jnp.sign(jax.random.normal(jax.random.fold_in(key, 6), (7,)))
    cfg = lz.peft_model(model.apply, p0, "head")
    fit = lz.fit_config(
        cfg.apply,
        cfg.params0,
        x,
        y,
        x,
        y,
        proximal=0.0,
        learning_rate=0.02,
        num_steps=50,
        record_every=10,
    )
    # The head of an NTK-parameterised MLP enters linearly: GD is kernel GD on its NTK.
    ntk, _ = lz.peft_kernels(cfg, x)
    f0 = np.asarray(lz.outputs(cfg.apply, cfg.params0, x))
    closed = kernel_gd_predictions(
        ntk, y, f0, learning_rate=0.02, loss_scale=1.0, steps=np.arange(0, 51, 10)
    )
    np.testing.assert_allclose(
        fit.loss_curve, np.mean((np.asarray(closed.train) - np.asarray(y)) ** 2, axis=1), rtol=1e-9
    )
    np.testing.assert_allclose(fit.train_loss, fit.loss_curve[-1])


def test_pretrained_attention_and_its_peft_configs(x64, key):
    tasks = lz.synthetic_tasks(
        key, dim=6, num_pretrain=64, num_train=8, num_test=8, angles=(0.0, 1.0)
    )
    apply, theta0 = lz.pretrained_attention(
        key, tasks, width=8, seq_len=3, steps=100, learning_rate=0.3
    )
    preds = jax.vmap(apply, (None, 0))(theta0, tasks.x_pre)[:, 0]
    assert float(jnp.mean((preds - tasks.y_pre) ** 2)) < 0.8 * float(jnp.mean(tasks.y_pre**2))
    head = lz.peft_model(apply, theta0, "head")
    ntk, _ = lz.peft_kernels(head, tasks.x_train)
    blocks = lz.block_kernels(apply, theta0, tasks.x_train)
    np.testing.assert_allclose(ntk, blocks["head"]["w"], rtol=1e-12)
    cfg = lz.peft_model(
        apply,
        theta0,
        "lora2",
        key=key,
        lora_targets=[("attention", "query"), ("attention", "value")],
    )
    np.testing.assert_allclose(
        lz.outputs(cfg.apply, cfg.params0, tasks.x_train),
        lz.outputs(apply, theta0, tasks.x_train),
        rtol=1e-12,
    )
    with pytest.raises(ValueError, match="seq_len must divide"):
        lz.pretrained_attention(key, tasks, width=8, seq_len=4, steps=1, learning_rate=0.1)


def test_pretrained_setup_reads_the_config(x64, key):
    """The experiments' shared setup equals the explicit calls, for both model kinds."""
    from types import SimpleNamespace

    k_data, k_model = jax.random.split(key)
    sizes = dict(dim=6, num_pretrain=32, num_train=8, num_test=8, angles=(0.0, 1.0))
    tasks = lz.synthetic_tasks(k_data, **sizes)
    mlp_config = SimpleNamespace(**sizes, hidden=(8,), pretrain_steps=20, pretrain_lr=0.3)
    attention_config = SimpleNamespace(**vars(mlp_config), model="attention", seq_len=3)
    explicit = {
        "mlp": lz.pretrained_mlp(k_model, tasks, hidden=(8,), steps=20, learning_rate=0.3),
        "attention": lz.pretrained_attention(
            k_model, tasks, width=8, seq_len=3, steps=20, learning_rate=0.3
        ),
    }
    for name, config in (("mlp", mlp_config), ("attention", attention_config)):
        got_tasks, apply, theta0 = lz.pretrained_setup(k_data, k_model, config)
        np.testing.assert_array_equal(got_tasks.y_train, tasks.y_train)
        want_apply, want_theta0 = explicit[name]
        np.testing.assert_array_equal(ravel_pytree(theta0)[0], ravel_pytree(want_theta0)[0])
        np.testing.assert_array_equal(
            lz.outputs(apply, theta0, tasks.x_test), lz.outputs(want_apply, theta0, tasks.x_test)
        )
    with pytest.raises(ValueError, match="model must be"):
        lz.pretrained_setup(k_data, k_model, SimpleNamespace(**vars(mlp_config), model="cnn"))


@pytest.mark.slow  # > 20 s at quick sizes (compilation); runs in make test-full
def test_linearity_vs_lambda_optax_path(x64, key):
    """optax SGD on the joint objective = the split-step GD at λ = 0, and O(η)-close for λ > 0."""
    model, x, p0 = _setup(key)
    y = jnp.sign(jax.random.normal(jax.random.fold_in(key, 6), (7,)))
    kw = dict(learning_rate=0.002, num_steps=200, record_every=50)
    theory = lz.linearity_vs_lambda(
        model.apply, p0, x, y, x, y, lambdas=jnp.array([0.0, 3.0]), **kw
    )
    sgd = lz.linearity_vs_lambda(
        model.apply, p0, x, y, x, y, lambdas=jnp.array([0.0, 3.0]), optimizer=optax.sgd(0.002), **kw
    )
    np.testing.assert_allclose(sgd.distance[0], theory.distance[0], rtol=1e-10)
    np.testing.assert_allclose(sgd.gap_train[0], theory.gap_train[0], rtol=1e-8)
    # Joint vs split step differ by η²λ∇R̃ per step: relative gap O(ηλ) = 6e-3 here.
    assert abs(float(sgd.distance[1] / theory.distance[1]) - 1) < 2e-2
    adam = lz.linearity_vs_lambda(
        model.apply,
        p0,
        x,
        y,
        x,
        y,
        lambdas=jnp.array([0.0]),
        loss="logistic",
        optimizer=optax.adam(0.01),
        **kw,
    )
    # Oracle: a plain optax loop on mean log(1 + e^{−y f}) (λ = 0).
    opt = optax.adam(0.01)
    loss = jax.jit(
        jax.grad(
            lambda p: jnp.mean(jax.nn.softplus(-y * jax.vmap(model.apply, (None, 0))(p, x)[:, 0]))
        )
    )
    params, state = p0, opt.init(p0)
    for _ in range(200):
        updates, state = opt.update(loss(params), state, params)
        params = optax.apply_updates(params, updates)
    dist = np.linalg.norm(ravel_pytree(params)[0] - ravel_pytree(p0)[0])
    np.testing.assert_allclose(adam.distance[0], dist, rtol=1e-8)
    with pytest.raises(ValueError, match="optax optimizer"):
        lz.linearity_vs_lambda(
            model.apply, p0, x, y, x, y, lambdas=jnp.array([0.0]), loss="logistic", **kw
        )


def test_per_layer_spectral_experiment_obeys_weyl_and_thm6():
    """The per-layer experiment at quick scale: S_l ⪰ 0, so every eigenvalue of K + S_l is at
    least the matching one of K (Weyl) and inside Thm 6's band; Thm 7 is reported as
    inapplicable exactly when η ≥ 1; the ratios are square roots of positive risk ratios."""
    import jax
    import numpy as np

    from ntsim.experiment import load_experiment

    module = load_experiment("linearization/per_layer_spectral")
    results = module.run(module.SCALES["quick"], jax.random.PRNGKey(0))
    for ratios, inside in zip(results["thm6_ratio"], results["thm6_inside"], strict=True):
        assert min(ratios) >= 1 - 1e-5
        assert inside == 1.0
    eta = np.asarray(results["eta"])
    assert np.all(eta > 0)
    lower, upper = np.asarray(results["thm7_lower"]), np.asarray(results["thm7_upper"])
    krr = np.asarray(results["krr_ratio"])
    valid = eta < 1
    assert np.all((lower[valid] <= krr[valid]) & (krr[valid] <= upper[valid]))
    assert np.all(np.asarray(results["trained_ratio"]) > 0) and np.all(krr > 0)
