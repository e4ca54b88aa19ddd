"""The MiniLM study's pieces: the linearisation gap, stacked fine-tuning, the κ correlation.

Oracles: hand computations on linear and bilinear models; separate ``finetune`` runs for the
stacked one; ``scipy``-free Spearman on constructed points.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.theory.linearization import minilm as lz
from ntsim.transformers import (
    AdapterLayout,
    BertConfig,
    BertEncoder,
    adamw,
    adapter_model,
    finetune,
    learning_rate_schedule,
)

TINY = BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=16, max_position_embeddings=16)  # fmt: skip


def test_linearization_gap_of_a_linear_model_is_zero():
    f = lambda p, x: x @ p["w"] + p["b"]  # noqa: E731
    p0 = {"w": jnp.array([1.0, -2.0]), "b": jnp.array(0.5)}
    p = {"w": jnp.array([3.0, 0.25]), "b": jnp.array(-1.0)}
    x = jnp.array([[1.0, 2.0], [-0.5, 4.0]])
    f_t, f_lin = lz.linearization_gap(f, p0, p, x)
    np.testing.assert_array_equal(f_t, f_lin)


def test_linearization_gap_of_lora_is_the_bilinear_term_by_hand():
    """f = uᵀ(W₀ + A B)v, B₀ = 0: f̄ = uᵀ(W₀ + A₀B)v, so f − f̄ = uᵀ(A − A₀)B v exactly."""
    key = jax.random.split(jax.random.PRNGKey(0), 5)
    u, v = jax.random.normal(key[0], (4,)), jax.random.normal(key[1], (3,))
    w0 = jax.random.normal(key[2], (4, 3))
    a0 = jax.random.normal(key[3], (4, 2))
    p0 = {"a": a0, "b": jnp.zeros((2, 3))}
    b = jnp.array([[1.0, -2, 0.5], [0.0, 3, -1]])
    p = {"a": a0 + 0.3 * jax.random.normal(key[4], (4, 2)), "b": b}
    f = lambda q, _: u @ (w0 + q["a"] @ q["b"]) @ v  # noqa: E731
    f_t, f_lin = lz.linearization_gap(f, p0, p, None)
    by_hand = u @ (p["a"] - a0) @ p["b"] @ v
    np.testing.assert_allclose(f_t - f_lin, by_hand, rtol=1e-5)  # float32 round-off of O(10)
    f_t0, f_lin0 = lz.linearization_gap(f, p0, p0, None)  # zero steps: no gap at all
    assert float(f_t0) == float(f_lin0)


@pytest.fixture(scope="module")
def tiny_model():
    ids = jax.random.randint(jax.random.PRNGKey(0), (6, 5), 1, TINY.vocab_size)
    mask = jnp.ones((6, 5), jnp.int32)
    encoder = BertEncoder(TINY).init(jax.random.PRNGKey(1), ids[:1], mask[:1])["params"]
    model = adapter_model(TINY, encoder, AdapterLayout(qv_rank=2, ffn_rank=1, alpha=4.0))
    data = {"input_ids": ids, "attention_mask": mask,
            "label": jnp.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])}  # fmt: skip
    return model, data


@pytest.mark.slow  # two tiny-BERT AdamW compilations: ~60 s on 2 loaded cores
def test_stacked_adamw_run_equals_separate_finetune_runs_with_their_proximal_terms(tiny_model):
    """Two configurations with λ = 0 and λ = 3 stacked == two finetune(proximal=λ) calls."""
    model, data = tiny_model
    setup = lz.TrainingSetup(checkpoint="minilm-l3", datasets=("tweets",), train_size=6,
                             batch_size=3, epochs=2, learning_rate=1e-2)  # fmt: skip
    names, lambdas = ("lora_qv2", "head"), (0.0, 3.0)
    inits = [model.init(jax.random.PRNGKey(7), n) for n in names]
    adapters0, selection = lz.stack(inits)
    key = jax.random.PRNGKey(8)
    stacked = lz.fit_stacked(model, adapters0, selection, data, key, regime="adamw_ce",
                             setup=setup, proximal=jnp.asarray(lambdas))  # fmt: skip
    steps = setup.adamw_steps
    shape = learning_rate_schedule(1.0, total_steps=steps, warmup_steps=max(steps // 10, 1),
                                   decay="linear")  # fmt: skip
    for c, ((a0, sel), lam) in enumerate(zip(inits, lambdas, strict=True)):

        def loss_fn(a, b, k, sel=sel):
            z = model.scores(a, sel, b, key=k)
            return jnp.mean(jax.nn.softplus(-(2 * b["label"] - 1) * z)), {}

        alone = finetune(loss_fn, a0, data, optimizer=adamw(shape, peak=1e-2, max_grad_norm=None),
                         num_steps=steps, batch_size=3, keys=key, proximal=lam)  # fmt: skip
        for got, want in zip(jax.tree.leaves(jax.tree.map(lambda x, c=c: x[c], stacked.params)),
                             jax.tree.leaves(alone.params), strict=True):  # fmt: skip
            # float32 Adam steps of the same sums in another order (vmap): ~1e-6 relative
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.slow  # a tiny-BERT GD compilation: ~35 s on 2 loaded cores
def test_stacked_gd_weights_are_step_sizes(tiny_model):
    """GD with step 1 on w·L is GD with step w: one step moves θ by −w∇L."""
    model, data = tiny_model
    a0, sel = model.init(jax.random.PRNGKey(3), "lora_qv1")
    adapters0, selection = lz.stack([(a0, sel), (a0, sel)])
    setup = lz.TrainingSetup(checkpoint="minilm-l3", train_size=6, batch_size=6)
    fit = lz.fit_stacked(model, adapters0, selection, data, jax.random.PRNGKey(0),
                         regime="gd_mse", setup=setup, weights=jnp.array([0.1, 0.3]),
                         gd_steps=1)  # fmt: skip

    def mse(a):
        z = model.scores(a, sel, data)
        return jnp.mean((z - (2 * data["label"] - 1)) ** 2)

    grad = jax.grad(mse)(a0)
    for c, eta in enumerate((0.1, 0.3)):
        moved = jax.tree.map(lambda p, p0, c=c: p[c] - p0, fit.params, a0)
        for got, g in zip(jax.tree.leaves(moved), jax.tree.leaves(grad), strict=True):
            np.testing.assert_allclose(got, -eta * g, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("curvatures", [(0.5, 3.0, 9.0, 40.0), (1.0, 1.0), (300.0,)])
def test_halving_ladder_finds_the_largest_stable_step_of_quadratics(curvatures):
    """GD on ``L x²/2`` from ``x = 1``: ``x_t = (1 − ηL)^t``, so the loss never rises iff
    ``|1 − ηL| ≤ 1``, i.e. ``η ≤ 2/L``. With ``η = f·1`` and ``f = 1/2, 1/4, …`` the ladder
    must stop at the largest ``2^{−k}/2 ≤ 2/L`` (oracle: that inequality solved by hand)."""
    curvatures = np.asarray(curvatures)
    calls = []

    def run(rows, fractions):
        calls.append(list(rows))
        x = (1.0 - fractions[:, None] * curvatures[rows, None]) ** np.arange(9)
        loss = curvatures[rows, None] * x**2 / 2
        return {"train_loss": loss[:, -1].tolist(), "curves": loss[:, :-1].tolist(),
                "accuracy": list(rows), "seconds": [float(len(rows))]}  # fmt: skip

    unit = lz.halving_ladder(run, len(curvatures), 0.5, halvings=10)
    k = np.maximum(np.ceil(np.log2(curvatures / 4)), 0)  # 2^{−k}/2 ≤ 2/L  ⇔  2^k ≥ L/4
    np.testing.assert_array_equal(unit["step_fraction"], 0.5 / 2.0**k)
    assert unit["accuracy"] == list(range(len(curvatures)))  # each row's own entries
    assert unit["seconds"] == [float(len(curvatures))]  # the first call's, all rows
    assert calls[0] == list(range(len(curvatures)))
    assert all(set(later) <= set(earlier) for earlier, later in itertools.pairwise(calls))
    # a row left rising after the last halving keeps its last fraction
    capped = lz.halving_ladder(run, len(curvatures), 0.5, halvings=1)
    np.testing.assert_array_equal(capped["step_fraction"], 0.5 / 2.0 ** np.minimum(k, 1))


def test_gd_rises_marks_non_finite_and_rising_losses():
    assert not lz.gd_rises([1.0, 0.9, 0.9 * (1 + lz.RISE_TOLERANCE / 2)])
    assert lz.gd_rises([1.0, 0.9, 0.9 * (1 + 2 * lz.RISE_TOLERANCE)])
    assert lz.gd_rises([1.0, np.inf]) and lz.gd_rises([np.nan, 0.5])


def test_kappa_loss_correlation_reads_seed_means_over_points():
    """Points ordered identically by mean log κ and mean loss: ρ = 1, whatever the seeds."""
    kappa = np.exp(np.arange(8.0)).reshape(2, 4, 1) * np.array([1.0, 3.0])  # (D, C, S)
    loss = np.arange(8.0).reshape(2, 4, 1) + np.array([0.0, 0.2])
    fields = {f: None for f in lz.MiniLMKappaRun._fields}
    fields.update(kappa_ntk=kappa, train_loss_adamw=loss)
    run = lz.MiniLMKappaRun(**fields)
    rho, (lo, hi), log_kappa, points = lz.minilm_kappa_loss_correlation(run, "ntk", "adamw")
    assert rho == 1.0 and hi == 1.0
    np.testing.assert_allclose(log_kappa, np.arange(8.0) + np.log(3.0) / 2)
    np.testing.assert_allclose(points, np.arange(8.0) + 0.1)
    reversed_run = run._replace(train_loss_adamw=-loss)
    assert lz.minilm_kappa_loss_correlation(reversed_run, "ntk", "adamw")[0] == -1.0


# ---- the simulations' units (memo): no fine-tuning, only the model's loading (~3 s) ------


@pytest.fixture
def synthetic_sentiment(monkeypatch):
    """Both datasets replaced by 80 two-word texts (no ``make data`` needed)."""
    from ntsim.transformers import _text_splits

    words = ("bad", "okay", "good")
    texts = [f"{words[i % 3]} {i}" for i in range(120)]
    labels = np.arange(120) % 3
    monkeypatch.setattr(_text_splits, "load_text_dataset", lambda name: (texts, labels))


def _replay(units):
    """A memo that never computes: it returns ``units[name]`` and records the names asked."""
    asked = []

    def memo(name, compute):
        asked.append(name)
        return units[name]

    return memo, asked


def test_lambda_units_fill_rows_l_times_seeds_plus_j(synthetic_sentiment, key):
    """Dataset units hold rows λ_l·S + seed j; the run's [d, l, j] must read that row."""
    setting = lz.MiniLMLambdaSetting(checkpoint="minilm-l3", train_size=8, test_size=8,
                                     max_length=8, seeds=2, epochs=1, batch_size=4,
                                     lambdas=(0.0, 1.0, 50.0))  # fmt: skip
    rows = np.arange(6.0)  # row l·S + j
    units = {dataset: {name: (rows + 100 * d + 1000 * m).tolist()
                       for m, name in enumerate(("distance", "gap_train", "gap_test", "kl_test",
                                                 "accuracy", "train_loss", "logit_max_test"))}
             for d, dataset in enumerate(setting.datasets)}  # fmt: skip
    for d, dataset in enumerate(setting.datasets):  # (rows, 2): s = ½ then ¼
        units[dataset]["gap_test_scaled"] = np.stack([rows + 100 * d + 0.5, rows + 100 * d + 0.25],
                                                     axis=1).tolist()  # fmt: skip
        units[dataset]["gap_train_scaled"] = units[dataset]["gap_test_scaled"]
        units[dataset]["train_targets"] = [[1.0, -1.0] * 4] * 6
    memo, asked = _replay(units)
    run = lz.simulate_minilm_lambda(key, setting, memo=memo)
    assert asked == list(setting.datasets)
    assert run.train_targets.shape == (2, 3, 2, 8)
    for d in range(2):
        for lam in range(3):
            for j in range(2):
                assert float(run.distance[d, lam, j]) == lam * 2 + j + 100 * d
                assert float(run.gap_test[d, lam, j]) == lam * 2 + j + 100 * d + 2000
                for k, fraction in enumerate((0.5, 0.25)):
                    assert (
                        float(run.gap_test_scaled[d, lam, j, k]) == lam * 2 + j + 100 * d + fraction
                    )


def test_kappa_units_fill_rows_seed_times_configs_plus_c(synthetic_sentiment, key):
    """Kernel units give λ_max, λ_min and the GD step ``f·n/max_seed λ_max`` (``f`` the
    unit's ``step_fraction``); training units hold rows ``seed·C + configuration`` (one group
    per seed here), and the run's ``[d, c, j]`` must read that row."""
    configs = ("head", "lora_qv1", "last_layer")
    setting = lz.MiniLMKappaSetting(checkpoint="minilm-l3", datasets=("tweets",), train_size=4,
                                    test_size=4, max_length=8, seeds=2, epochs=1, batch_size=4,
                                    gd_steps=2, configs=configs, seeds_at_once=1)  # fmt: skip
    C, S, n = 3, 2, 4
    eigenvalues = np.stack([np.stack([np.array([8.0, 4.0, 2.0, 1.0]) * (c + 1) * (j + 1)
                                      for j in range(S)]) for c in range(C)])  # fmt: skip
    kernels = {f"{name}_{kind}": np.full((C, S), 1.5).tolist() for kind in ("ntk", "sign")
               for name in ("kappa", "decay", "effective_rank")}  # fmt: skip
    kernels["eigenvalues"] = eigenvalues.tolist()
    units = {"tweets_kernels": kernels}
    steps = {"adamw": setting.adamw_steps, "gd": setting.gd_steps}
    for r, regime in enumerate(("adamw", "gd")):
        for j in range(S):  # seeds_at_once = 1: group j holds seed j's C rows
            rows = 10.0 * r + j * C + np.arange(C)
            units[f"tweets_{regime}_group{j}"] = {
                "train_loss": rows.tolist(), "accuracy": (rows / 100).tolist(),
                "curves": np.tile(rows[:, None], (1, steps[regime])).tolist(),
                "seconds": [0.1]}  # fmt: skip
            if regime == "gd":
                units[f"tweets_gd_group{j}"]["step_fraction"] = (0.5 / 2 ** (rows % 4)).tolist()
    memo, asked = _replay(units)
    run = lz.simulate_minilm_kappa(key, setting, memo=memo)
    assert set(asked) == set(units)
    np.testing.assert_array_equal(run.lambda_max[0], eigenvalues[..., 0])
    np.testing.assert_array_equal(run.lambda_min[0], eigenvalues[..., -1])
    fraction = 0.5 / 2 ** ((10 + np.arange(S)[None, :] * C + np.arange(C)[:, None]) % 4)
    np.testing.assert_array_equal(run.step_fraction_gd[0], fraction)
    stable = n / (8.0 * np.arange(1, 4) * 2)  # n / λ_max of the seed with the larger λ_max
    np.testing.assert_allclose(run.learning_rate_gd[0], fraction * stable[:, None])
    for c in range(C):
        for j in range(S):
            assert float(run.train_loss_adamw[0, c, j]) == j * C + c
            assert float(run.train_loss_gd[0, c, j]) == 10 + j * C + c
            np.testing.assert_allclose(float(run.accuracy_gd[0, c, j]), (10 + j * C + c) / 100)
            assert float(run.loss_curve_adamw[0, c, j, -1]) == j * C + c


def test_a_kept_lambda_unit_from_older_code_is_named_not_misread(synthetic_sentiment, key):
    """A unit without the fields added later (kept by older code) raises a clear error."""
    setting = lz.MiniLMLambdaSetting(checkpoint="minilm-l3", train_size=8, test_size=8,
                                     max_length=8, seeds=2, epochs=1, batch_size=4,
                                     lambdas=(0.0, 1.0, 50.0))  # fmt: skip
    fields = ("distance", "gap_train", "gap_test", "kl_test", "accuracy", "train_loss")
    old = {name: np.zeros(6).tolist() for name in fields}
    memo, _ = _replay({dataset: old for dataset in setting.datasets})
    with pytest.raises(ValueError, match="older code"):
        lz.simulate_minilm_lambda(key, setting, memo=memo)
