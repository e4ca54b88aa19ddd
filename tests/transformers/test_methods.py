"""Fu et al.'s methods on a (tiny, random) BERT: each loss against its definition."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.transformers import (
    BertConfig,
    BertEncoder,
    MethodSettings,
    init_heads,
    mask_tokens,
    method_loss,
    pooled_features,
    predict_scores,
    surt_retrain,
)

TINY = BertConfig(vocab_size=120, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=16, hidden_dropout_prob=0.0,
                  attention_probs_dropout_prob=0.0)  # fmt: skip


@pytest.fixture(scope="module")
def setup():
    key = jax.random.PRNGKey(0)
    ids = jax.random.randint(key, (6, 8), 104, 120).at[:, 0].set(101).at[:, -1].set(102)
    mask = jnp.ones_like(ids).at[:2, -3:].set(0)
    encoder = BertEncoder(TINY).init(key, ids[:1])["params"]
    batch = {"input_ids": ids, "attention_mask": mask, "label": jnp.array([0, 1, 1, 0, 1, 0])}
    return encoder, batch


def _logistic(m):
    return np.mean(np.log1p(np.exp(-np.asarray(m, float))))


def test_finetune_and_mhloss_are_mean_logistic_losses(setup):
    encoder, batch = setup
    key = jax.random.PRNGKey(3)
    features = np.asarray(pooled_features(TINY, encoder, batch))
    y = 2.0 * np.asarray(batch["label"]) - 1
    for method, heads in (("finetune", 1), ("mhloss", 5)):
        settings = MethodSettings(heads=5)
        params = {"encoder": encoder, "head": init_heads(jax.random.PRNGKey(1), 16, heads)}
        loss, metrics = method_loss(TINY, method, settings, encoder)(params, batch, key)
        scores = features @ np.asarray(params["head"]["kernel"])  # (B, H), bias 0
        assert float(loss) == pytest.approx(_logistic(y[:, None] * scores), rel=1e-5)
        assert float(metrics["accuracy"]) == pytest.approx(np.mean(np.sign(scores.mean(1)) == y))
        np.testing.assert_allclose(predict_scores(TINY, params, batch), scores.mean(1), rtol=1e-5)


def test_regularised_methods_reduce_to_finetune_and_add_their_terms(setup):
    encoder, batch = setup
    key = jax.random.PRNGKey(4)
    params = {"encoder": encoder, "head": init_heads(jax.random.PRNGKey(2), 16, 1)}
    base = float(method_loss(TINY, "finetune", MethodSettings(), encoder)(params, batch, key)[0])
    off = MethodSettings(mixout_p=0.0, lnsr_sigma=0.0)
    for method in ("mixout", "lnsr", "surt"):  # p = 0, σ = 0; SURT's loss is FineTune's
        value = method_loss(TINY, method, off, encoder)(params, batch, key)[0]
        assert float(value) == pytest.approx(base, rel=1e-6), method
    # MMR adds α/(1 + ‖μ₊ − μ₋‖) on the pooled features (eq. 8)
    features = np.asarray(pooled_features(TINY, encoder, batch))
    labels = np.asarray(batch["label"]).astype(bool)
    gap = np.linalg.norm(features[labels].mean(0) - features[~labels].mean(0))
    mmr = method_loss(TINY, "mmr", MethodSettings(mmr_weight=2.0), encoder)(params, batch, key)[0]
    assert float(mmr) == pytest.approx(base + 2.0 / (1 + gap), rel=1e-5)
    # a minibatch of one class (μ₋ undefined): MMR is FineTune there, gradients finite
    one_class = {**batch, "label": jnp.ones_like(batch["label"])}
    mmr_fn = method_loss(TINY, "mmr", MethodSettings(mmr_weight=2.0), encoder)
    ft_fn = method_loss(TINY, "finetune", MethodSettings(), encoder)
    (mmr_one, _), grads = jax.value_and_grad(mmr_fn, has_aux=True)(params, one_class, key)
    assert float(mmr_one) == pytest.approx(float(ft_fn(params, one_class, key)[0]), rel=1e-6)
    assert all(bool(jnp.all(jnp.isfinite(g))) for g in jax.tree.leaves(grads))
    # LNSR's penalty is positive for σ > 0 and MixOut with p > 0 changes the loss
    lnsr = method_loss(TINY, "lnsr", MethodSettings(lnsr_sigma=0.5), encoder)(params, batch, key)
    assert float(lnsr[0]) > base
    moved = {"encoder": jax.tree.map(lambda w: w + 0.1, encoder), "head": params["head"]}
    mix = method_loss(TINY, "mixout", MethodSettings(mixout_p=0.5), encoder)
    assert float(mix(moved, batch, key)[0]) != pytest.approx(
        float(method_loss(TINY, "finetune", MethodSettings(), encoder)(moved, batch, key)[0])
    )
    with pytest.raises(ValueError, match="method must be one of"):
        method_loss(TINY, "dropout", MethodSettings(), encoder)


def test_masking_and_surt_retraining(setup):
    encoder, batch = setup
    ids = jnp.tile(batch["input_ids"], (50, 1))
    mask = jnp.tile(batch["attention_mask"], (50, 1))
    masked, selected = mask_tokens(jax.random.PRNGKey(5), ids, mask, 0.15)
    special = (ids == 101) | (ids == 102) | (mask == 0)
    assert not np.any(np.asarray(selected) & np.asarray(special))
    eligible = ~np.asarray(special)
    assert np.asarray(selected)[eligible].mean() == pytest.approx(0.15, abs=0.03)
    assert np.all(np.asarray(masked)[np.asarray(selected)] == 103)
    retrained = surt_retrain(TINY, encoder, batch, jax.random.PRNGKey(6),
                             MethodSettings(surt_steps=4, surt_learning_rate=1e-2),
                             batch_size=3)  # fmt: skip
    assert jax.tree.structure(retrained) == jax.tree.structure(encoder)
    assert not np.allclose(retrained["layer_0"]["attention"]["query"]["kernel"],
                           encoder["layer_0"]["attention"]["query"]["kernel"])  # fmt: skip


def test_every_method_is_one_loss_program_with_its_terms_as_data(setup):
    """FineTune, MixOut, LNSR, MMR and SURT trace to the same jaxpr: their terms are closed-
    over arrays, which finetune passes to its compiled step as arguments (so one program
    serves them all, tested in test_finetune); MHLoss's H heads are a shape (the comparison
    can fail)."""
    encoder, batch = setup
    settings = MethodSettings(heads=5, mixout_p=0.3, lnsr_sigma=0.2, mmr_weight=0.7)
    key = jax.random.PRNGKey(0)

    def program(method):
        heads = 5 if method == "mhloss" else 1
        params = {"encoder": encoder, "head": init_heads(key, 16, heads)}
        closed = jax.make_jaxpr(method_loss(TINY, method, settings, encoder))(params, batch, key)
        terms = [c for c in closed.consts if jnp.shape(c) == ()]
        return str(closed.jaxpr), [float(t) for t in terms]

    finetune_program, finetune_terms = program("finetune")
    assert finetune_terms == [0.0, 0.0, 0.0, 0.0]  # MixOut p, LNSR σ and β, MMR α: all off
    for method in ("mixout", "lnsr", "mmr", "surt"):
        jaxpr, terms = program(method)
        assert jaxpr == finetune_program, method
        assert (terms != finetune_terms) == (method != "surt"), method
    assert program("mhloss")[0] != finetune_program


def test_shared_and_lean_losses_agree_under_jit(setup):
    """``shared=False`` (a method's own terms, compiled in) and the shared loss (every term
    behind a ``lax.cond`` on traced weights) give the same values inside one compiled
    function; the lean jaxpr leaves the off terms out."""
    encoder, batch = setup
    settings = MethodSettings(mixout_p=0.3, lnsr_sigma=0.2, mmr_weight=0.7)
    key = jax.random.PRNGKey(7)
    params = {"encoder": jax.tree.map(lambda w: w + 0.05, encoder),
              "head": init_heads(jax.random.PRNGKey(8), 16, 1)}  # fmt: skip
    methods = ("mixout", "lnsr", "mmr")

    def both(params, batch):  # the batch an argument: BertEncoder checks concrete ids
        return [[method_loss(TINY, m, settings, encoder, shared=s)(params, batch, key)[0]
                 for s in (True, False)] for m in methods]  # fmt: skip

    for method, (shared, lean) in zip(methods, jax.jit(both)(params, batch), strict=True):
        assert float(shared) == pytest.approx(float(lean), rel=1e-6), method
    lean_ft = jax.make_jaxpr(method_loss(TINY, "finetune", settings, encoder, shared=False))
    shared_ft = jax.make_jaxpr(method_loss(TINY, "finetune", settings, encoder))
    assert "cond" not in str(lean_ft(params, batch, key)) and "cond" in str(
        shared_ft(params, batch, key)
    )
