r"""The stabilising fine-tuning methods of Fu et al. (2023) on a pretrained BERT encoder.

The model is the encoder, masked mean pooling and ``H`` linear heads,
``s_h(x) = wᵀ_h \bar h(x) + b_h`` with the binary label ``y ∈ {−1, +1}``; every method's
loss is built from the pure pieces of :mod:`ntsim.core` (the same ones the small-scale
analogue uses), so what differs between methods is exactly their definition:

* ``"finetune"`` — ``H = 1``, mean logistic loss ``ℓ(y s(x))``;
* ``"mhloss"`` — ``H`` heads from independent random inits, eq. (10):
  ``(1/nH) Σ_h Σ_i ℓ(y_i s_h(x_i))`` (:func:`ntsim.core.multi_head_loss`); predictions
  average the heads;
* ``"mmr"`` — FineTune plus ``α·R`` (eq. (8)–(9)) on the pooled features of the minibatch
  (:func:`ntsim.core.max_margin_regularizer`; a minibatch holding one class only adds 0);
* ``"mixout"`` — the encoder weights replaced by
  :func:`ntsim.core.mixout` ``(θ, θ_0, p)`` in every training step (Lee et al. 2020);
* ``"lnsr"`` — FineTune plus ``β·E‖s(x; ε) − s(x; 0)‖²`` with Gaussian ``ε`` (std ``σ``)
  added to the embedding output (Hua et al. 2021, their injection point);
* ``"surt"`` — FineTune after masked-LM re-training of the encoder on the task's own
  training inputs (:func:`surt_retrain`; 15% of the non-special tokens replaced by
  ``[MASK]``; the MLM head is not shipped with the sentence-transformers checkpoints, so
  it is initialised fresh, its decoder tied to the word embeddings as in BERT).

Dropout (the checkpoint's rates) is on during training in every method.

**One compiled step for every method.** A method is data, not code: :func:`method_terms`
gives the weights of its extra terms (MixOut's ``p``, LNSR's ``σ`` and ``β``, MMR's ``α``;
zero = off) as arrays, and :func:`method_loss` builds the same loss for every method with
each extra term behind a ``lax.cond`` on its weight (when traced; an eager call runs the
chosen branch). The arrays are closed over, so :func:`ntsim.transformers.finetune` passes
them to its compiled segment as arguments (it hoists closed-over arrays): FineTune,
MixOut, LNSR, MMR and SURT's fine-tuning stage, with any of their hyperparameters, lower
to one XLA program per shape (MHLoss's ``H`` heads are a shape). The price is a program
about twice the size (it holds LNSR's second pass and MixOut's masks) and, measured on
MiniLM-L6, a step ~10% slower for the methods whose terms are off: JAX differentiates a
``cond`` by saving both branches' residuals, so the untaken branch's are filled with
zeros. Where compilation is not the cost (long runs), ``method_loss(..., shared=False)``
gives a method its own lean program (the same numbers).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

from ntsim._types import Array, Params, PRNGKey, PyTree
from ntsim.core import logistic_loss, max_margin_regularizer, mixout
from ntsim.transformers._bert import BertConfig, BertEncoder, mean_pool
from ntsim.transformers._finetune import finetune
from ntsim.transformers._optim import adamw, learning_rate_schedule

__all__ = [
    "METHODS",
    "MethodSettings",
    "MethodTerms",
    "init_heads",
    "mask_tokens",
    "method_loss",
    "method_terms",
    "num_heads",
    "pooled_features",
    "predict_scores",
    "surt_retrain",
    "terms_loss",
]

METHODS = ("finetune", "mixout", "lnsr", "mhloss", "mmr", "surt")
_MASK_ID, _SPECIAL_IDS = 103, (0, 101, 102)  # [MASK]; [PAD], [CLS], [SEP] of the vocabulary


@dataclasses.dataclass(frozen=True)
class MethodSettings:
    """Hyperparameters of the methods (the paper gives none but H = 50; ours are stated)."""

    heads: int = 50  # MHLoss H (Fu et al. Sec 4.2)
    mixout_p: float = 0.1  # MixOut probability (Lee et al.'s default range 0.1–0.9)
    lnsr_sigma: float = 0.01  # LNSR noise std at the embedding output
    lnsr_weight: float = 1.0
    mmr_weight: float = 1.0  # α of eq. (9)
    surt_steps: int = 100
    surt_learning_rate: float = 5e-5
    mask_rate: float = 0.15  # BERT's masked-LM rate

    def __post_init__(self):
        for name in ("heads", "surt_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"MethodSettings.{name} must be a positive integer, got {value!r}."
                )
        rules = {
            "mixout_p": (0.0, 1.0, "[0, 1)"), "mask_rate": (0.0, 1.0, "(0, 1)"),
            "lnsr_sigma": (0.0, None, "≥ 0"), "lnsr_weight": (0.0, None, "≥ 0"),
            "mmr_weight": (0.0, None, "≥ 0"), "surt_learning_rate": (0.0, None, "> 0"),
        }  # fmt: skip
        for name, (low, high, text) in rules.items():
            value = getattr(self, name)
            bad = not isinstance(value, (int, float)) or not math.isfinite(value) or value < low
            bad = bad or (high is not None and value >= high)
            bad = bad or (text.startswith(("(", ">")) and value == low)
            if bad:
                raise ValueError(f"MethodSettings.{name} must be {text}, got {value!r}.")


class MethodTerms(NamedTuple):
    """The weights of a method's extra loss terms as float32 scalars (``0``: term off)."""

    mixout_p: Array  # MixOut probability p (Lee et al. 2020, eq. (4))
    lnsr_sigma: Array  # LNSR noise std σ at the embedding output
    lnsr_weight: Array  # LNSR weight β
    mmr_weight: Array  # MMR weight α (Fu et al. eq. (9))


def method_terms(method: str, settings: MethodSettings) -> MethodTerms:
    """The extra terms ``method`` switches on, with their weights from ``settings``.

    FineTune, MHLoss and SURT (after its re-training) have none: all four are zero.

    Examples:
      >>> method_terms("mmr", MethodSettings(mmr_weight=0.5)).mmr_weight.item()
      0.5
      >>> float(sum(method_terms("finetune", MethodSettings())))
      0.0
    """
    return MethodTerms(*(jnp.asarray(w, jnp.float32) for w in _term_weights(method, settings)))


def _term_weights(method: str, settings: MethodSettings) -> MethodTerms:
    """:func:`method_terms` as Python floats."""
    if method not in METHODS:
        raise ValueError(f"method_terms: method must be one of {METHODS}, got {method!r}.")
    return MethodTerms(
        mixout_p=settings.mixout_p if method == "mixout" else 0.0,
        lnsr_sigma=settings.lnsr_sigma if method == "lnsr" else 0.0,
        lnsr_weight=settings.lnsr_weight if method == "lnsr" else 0.0,
        mmr_weight=settings.mmr_weight if method == "mmr" else 0.0,
    )


def num_heads(method: str, settings: MethodSettings) -> int:
    """``H`` of a method (``settings.heads`` for MHLoss, else 1)."""
    return settings.heads if method == "mhloss" else 1


def init_heads(key: PRNGKey, hidden: int, heads: int) -> dict[str, Array]:
    """``H`` independent linear heads, ``w_h ~ N(0, I/hidden)``, ``b_h = 0``."""
    return {
        "kernel": jax.random.normal(key, (hidden, heads)) / jnp.sqrt(hidden),
        "bias": jnp.zeros((heads,)),
    }


def pooled_features(
    config: BertConfig,
    encoder: Params,
    batch: PyTree,
    *,
    key: PRNGKey | None = None,
    embedding_noise: Array | None = None,
) -> Array:
    """Mean-pooled encoder output ``(B, hidden)``; dropout on when ``key`` is given."""
    hidden = BertEncoder(config).apply(
        {"params": encoder},
        batch["input_ids"],
        batch["attention_mask"],
        deterministic=key is None,
        embedding_noise=embedding_noise,
        rngs=None if key is None else {"dropout": key},
    )
    return mean_pool(hidden, batch["attention_mask"])


def predict_scores(config: BertConfig, params: Params, batch: PyTree) -> Array:
    """Head-averaged score ``(1/H) Σ_h s_h(x)`` (dropout off); the label is its sign."""
    features = pooled_features(config, params["encoder"], batch)
    return jnp.mean(features @ params["head"]["kernel"] + params["head"]["bias"], axis=-1)


def method_loss(
    config: BertConfig,
    method: str,
    settings: MethodSettings,
    encoder0: Params,
    *,
    shared: bool = True,
) -> Callable[[Params, PyTree, PRNGKey], tuple[Array, dict[str, Array]]]:
    """``loss_fn(params, batch, key)`` of ``method`` for :func:`ntsim.transformers.finetune`.

    ``params = {"encoder", "head"}``; ``batch`` has ``input_ids``, ``attention_mask`` and
    ``label`` in ``{0, 1}``; ``encoder0`` is the pretrained encoder (MixOut's target).
    Metrics: ``accuracy`` of the head-averaged score on the batch.

    ``shared=True``: every method returns the same function of :func:`method_terms` (module
    doc), so one compiled step serves all methods of one shape. ``shared=False``: only this
    method's own terms, their weights compiled in: a program about half the size (no second
    BERT pass of LNSR, no MixOut masks), for a run no other method shares a shape with
    (MHLoss's ``H`` heads, another training-set size); the same numbers either way.
    """
    terms = method_terms(method, settings) if shared else _term_weights(method, settings)
    return terms_loss(config, terms, encoder0, shared=shared)


def _cond(predicate: Array, on: Callable, off: Callable, *operands):
    """``lax.cond`` when tracing (the compiled step: one program for every predicate); the
    chosen branch alone when the predicate is concrete (an eager call compiles nothing)."""
    if isinstance(predicate, jax.core.Tracer):
        return jax.lax.cond(predicate, on, off, *operands)
    return on(*operands) if bool(predicate) else off(*operands)


def terms_loss(
    config: BertConfig, terms: MethodTerms, encoder0: Params, *, shared: bool = True
) -> Callable[[Params, PyTree, PRNGKey], tuple[Array, dict[str, Array]]]:
    """The loss of every method: mean logistic loss over heads (eq. (10)) plus the terms
    ``terms`` switches on (module doc), each computed only when its weight is non-zero.

    ``shared=False`` reads the weights as Python numbers (``terms`` concrete): the terms
    that are off are left out of the traced function instead of put behind a ``lax.cond``
    (:func:`method_loss`).
    """
    if not shared:
        terms = MethodTerms(*(float(t) for t in terms))

    def loss_fn(params, batch, key):
        k_drop, k_mix, k_noise = jax.random.split(key, 3)
        y = 2.0 * batch["label"] - 1.0
        encoder = _cond(
            terms.mixout_p > 0,
            lambda e: mixout(k_mix, e, encoder0, terms.mixout_p),
            lambda e: e,
            params["encoder"],
        )
        features = pooled_features(config, encoder, batch, key=k_drop)
        head = params["head"]
        scores = features @ head["kernel"] + head["bias"]  # (B, H)
        loss = jnp.mean(logistic_loss(y[:, None] * scores))  # eq. (10); H = 1: FineTune

        def mmr(features, y):  # a minibatch of one class has no μ₊ − μ₋: 0 for that batch
            return terms.mmr_weight * max_margin_regularizer(features, y, missing_class=0.0)

        def lnsr(encoder, head, batch, scores):
            shape = (*batch["input_ids"].shape, config.hidden_size)
            noise = terms.lnsr_sigma * jax.random.normal(k_noise, shape)
            noisy = pooled_features(config, encoder, batch, key=k_drop, embedding_noise=noise)
            noisy_scores = noisy @ head["kernel"] + head["bias"]
            return terms.lnsr_weight * jnp.mean(jnp.sum((noisy_scores - scores) ** 2, axis=-1))

        zero = lambda *_: jnp.zeros((), loss.dtype)  # noqa: E731
        loss = loss + _cond(terms.mmr_weight > 0, mmr, zero, features, y)
        loss = loss + _cond(terms.lnsr_weight > 0, lnsr, zero, encoder, head, batch, scores)
        accuracy = jnp.mean(jnp.sign(scores.mean(axis=-1)) == y)
        return loss, {"accuracy": accuracy}

    return loss_fn


class _MaskedLMHead(nn.Module):
    """BERT's MLM head: dense + GELU + LayerNorm, decoder tied to the word embeddings."""

    config: BertConfig

    @nn.compact
    def __call__(self, hidden: Array, word_embeddings: Array) -> Array:
        c = self.config
        h = nn.gelu(nn.Dense(c.hidden_size, name="transform")(hidden), approximate=False)
        h = nn.LayerNorm(epsilon=c.layer_norm_eps, name="layer_norm")(h)
        bias = self.param("bias", nn.initializers.zeros, (c.vocab_size,))
        return h @ word_embeddings.T + bias


def mask_tokens(key: PRNGKey, input_ids: Array, attention_mask: Array, rate: float):
    """``(masked_ids, selected)``: a ``rate`` fraction of the real, non-special tokens → [MASK]."""
    eligible = attention_mask.astype(bool)
    for special in _SPECIAL_IDS:
        eligible &= input_ids != special
    selected = eligible & (jax.random.uniform(key, input_ids.shape) < rate)
    return jnp.where(selected, _MASK_ID, input_ids), selected


def surt_retrain(
    config: BertConfig,
    encoder0: Params,
    tokens: PyTree,
    key: PRNGKey,
    settings: MethodSettings,
    *,
    batch_size: int = 16,
) -> Params:
    """SURT step 1: masked-LM re-training of the encoder on the task's inputs (Sec 3.3).

    AdamW (warm-up 10%, linear decay) for ``settings.surt_steps`` steps; the loss is the
    cross-entropy of the original token at the masked positions. Returns the encoder.
    """
    k_head, k_run = jax.random.split(key)
    head = _MaskedLMHead(config)
    hidden0 = jnp.zeros((1, 1, config.hidden_size))
    word = encoder0["embeddings"]["word"]["embedding"]
    params0 = {"encoder": encoder0, "mlm": head.init(k_head, hidden0, word)["params"]}
    data = {"input_ids": tokens["input_ids"], "attention_mask": tokens["attention_mask"]}

    def loss_fn(params, batch, key):
        k_mask, k_drop = jax.random.split(key)
        ids, selected = mask_tokens(k_mask, batch["input_ids"], batch["attention_mask"],
                                    settings.mask_rate)  # fmt: skip
        hidden = BertEncoder(config).apply(
            {"params": params["encoder"]}, ids, batch["attention_mask"],
            deterministic=False, rngs={"dropout": k_drop},
        )  # fmt: skip
        logits = head.apply({"params": params["mlm"]}, hidden,
                            params["encoder"]["embeddings"]["word"]["embedding"])  # fmt: skip
        nll = optax.softmax_cross_entropy_with_integer_labels(logits, batch["input_ids"])
        weight = selected.astype(nll.dtype)
        loss = jnp.sum(nll * weight) / jnp.maximum(jnp.sum(weight), 1.0)
        return loss, {"masked": jnp.sum(weight)}

    steps = settings.surt_steps
    schedule = learning_rate_schedule(settings.surt_learning_rate, total_steps=steps,
                                      warmup_steps=max(steps // 10, 1), decay="linear")  # fmt: skip
    out = finetune(loss_fn, params0, data, optimizer=adamw(schedule), num_steps=steps,
                   batch_size=min(batch_size, len(data["input_ids"])), keys=k_run)  # fmt: skip
    return out.params["encoder"]
