"""The pretraining-budget analogue of Springer et al. 2025 (Figs 3–5, 8) with a tiny decoder.

The paper pretrains OLMo models for growing token budgets and shows that (a) Gaussian
parameter noise of a fixed relative size hurts later checkpoints more (progressive
sensitivity, Fig 3), and (b) after fine-tuning at a fixed learning rate the *pretraining*
loss is U-shaped in the budget: beyond an inflection point more pretraining makes the
fine-tuned model worse (catastrophic overtraining, Figs 4–5); ‖θ_ft − θ_pre‖ grows with the
learning rate (Fig 8). Here the same protocol runs on :func:`ntsim.core.causal_decoder`
(byte-level; a few 10k–100k parameters) pretrained on the Python standard library's
sources (:func:`ntsim.core.stdlib_corpus`):

* :func:`pretrain_for_budget` — one separate run per budget ``T`` (number of AdamW steps), linear
  warm-up then cosine decay to zero *at T* (:func:`cosine_to_zero`), as the paper's
  per-budget runs. One compiled chunk of steps serves every budget (the budget is traced).
* :func:`perturbation_loss_increase` — held-out loss after adding ``γ · std(W_init) · N(0, I)``
  to every tensor ``W`` (the paper's per-tensor scaling by the initial std; tensors
  initialised to constants — LayerNorm, biases — have std 0 and are left unperturbed), minus
  the unperturbed loss; vmapped over noise draws and ``γ``.
* :func:`finetune_at_learning_rates` — fixed-learning-rate Adam on the shifted task,
  vmapped over learning rates; returns the fine-tuned parameters for evaluation on both tasks.

Losses are mean next-byte cross-entropies in nats (perplexity = ``exp``), on a fixed set of
held-out windows so that differences between checkpoints are paired.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import optax

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import check_positive_int
from ntsim.core import next_token_loss, sample_windows, tree_distance

__all__ = [
    "cosine_to_zero",
    "finetune_at_learning_rates",
    "perturbation_loss_increase",
    "pretrain_for_budget",
    "pretrain_replicates_for_budget",
]


def cosine_to_zero(step: ArrayLike, budget: ArrayLike, peak: float, warmup: int) -> Array:
    """Learning rate at ``step`` of a ``budget``-step run: linear warm-up, cosine to 0 at T.

    .. math:: η(s) = η_{peak} \\min(1, s/w) \\cdot \\tfrac12\\,(1 + \\cos(π \\min(s/T, 1)))

    Examples:
      >>> [round(float(cosine_to_zero(s, 100, 1.0, 10)), 3) for s in (0, 5, 10, 50, 100, 150)]
      [0.0, 0.497, 0.976, 0.5, 0.0, 0.0]
    """
    step = jnp.asarray(step, jnp.float32)
    ramp = jnp.minimum(1.0, step / max(warmup, 1))
    progress = jnp.minimum(step / budget, 1.0)
    return peak * ramp * 0.5 * (1.0 + jnp.cos(math.pi * progress))


def pretrain_for_budget(
    apply: Callable,
    params: Params,
    data: Array,
    key: PRNGKey,
    *,
    budget: int,
    batch_size: int,
    context: int,
    peak_lr: float,
    warmup: int,
    weight_decay: float = 0.0,
    chunk: int = 128,
    progress: Callable[[int], None] | None = None,
) -> Params:
    """AdamW for ``budget`` steps with :func:`cosine_to_zero`; batches are random windows.

    Args:
      apply: ``apply(params, tokens (T,)) -> logits (T, V)``.
      params: the initialisation (the same for every budget, as the paper's runs share one).
      data: the training byte stream (int array).
      key: batch key (the same key gives the same batch sequence for every budget).
      budget: number of optimisation steps ``T`` (a multiple of ``chunk``).
      batch_size: windows per step.
      context: length of each window in bytes.
      peak_lr: the schedule's peak learning rate ``η_peak`` (:func:`cosine_to_zero`).
      warmup: the schedule's linear warm-up length ``w`` in steps.
      weight_decay: AdamW's decoupled weight decay.
      chunk: steps per compiled scan (the budget is traced: one compilation for all budgets).
      progress: called with the number of steps done after each chunk.

    Returns:
      The parameters after ``budget`` steps.

    Raises:
      ValueError: ``budget`` is not a positive multiple of ``chunk``.
    """
    budget = check_positive_int("pretrain_for_budget", "budget", budget)
    if budget % chunk:
        raise ValueError(
            f"pretrain_for_budget: budget={budget} must be a multiple of chunk={chunk}."
        )
    state = (params, _adamw(weight_decay).init(params))
    keys = jax.random.split(key, budget).reshape(budget // chunk, chunk, -1)
    data = jnp.asarray(data)
    static = {"apply": apply, "batch_size": batch_size, "context": context, "peak_lr": peak_lr,
              "warmup": warmup, "weight_decay": weight_decay}  # fmt: skip
    for i in range(budget // chunk):
        step0, total = jnp.asarray(i * chunk), jnp.asarray(budget, jnp.float32)
        state = _pretrain_chunk(state, keys[i], step0, total, data, **static)
        if progress is not None:
            progress((i + 1) * chunk)
    return state[0]


def pretrain_replicates_for_budget(
    apply: Callable,
    params: Params,
    data: Array,
    keys: Array,
    *,
    budget: int,
    batch_size: int,
    context: int,
    peak_lr: float,
    warmup: int,
    weight_decay: float = 0.0,
    chunk: int = 128,
    progress: Callable[[int], None] | None = None,
) -> Params:
    """:func:`pretrain_for_budget` vmapped over independent pretraining runs.

    Args:
      apply: ``apply(params, tokens (T,)) -> logits (T, V)``, shared by every run.
      params: the initialisations with a leading replicate axis ``R`` (one per run).
      data: the training byte stream (int array), shared by every run.
      keys: ``(R, 2)`` batch keys, one per run (row ``r`` gives run ``r`` the batch sequence
        that :func:`pretrain_for_budget` would draw from it).
      budget: number of optimisation steps ``T`` (a multiple of ``chunk``).
      batch_size: windows per step.
      context: length of each window in bytes.
      peak_lr: the schedule's peak learning rate ``η_peak`` (:func:`cosine_to_zero`).
      warmup: the schedule's linear warm-up length ``w`` in steps.
      weight_decay: AdamW's decoupled weight decay.
      chunk: steps per compiled scan (one compilation for all budgets).
      progress: called with the number of steps done after each chunk.

    Returns:
      The pretrained parameters with the leading replicate axis.

    Raises:
      ValueError: ``budget`` is not a positive multiple of ``chunk``.
    """
    budget = check_positive_int("pretrain_replicates_for_budget", "budget", budget)
    if budget % chunk:
        raise ValueError(
            f"pretrain_replicates_for_budget: budget={budget} must be a multiple of chunk={chunk}."
        )
    keys = jnp.asarray(keys)
    state = (params, jax.vmap(_adamw(weight_decay).init)(params))
    steps_keys = jax.vmap(lambda k: jax.random.split(k, budget))(keys)
    steps_keys = steps_keys.reshape(keys.shape[0], budget // chunk, chunk, -1)
    data = jnp.asarray(data)
    static = {"apply": apply, "batch_size": batch_size, "context": context, "peak_lr": peak_lr,
              "warmup": warmup, "weight_decay": weight_decay}  # fmt: skip
    for i in range(budget // chunk):
        step0, total = jnp.asarray(i * chunk), jnp.asarray(budget, jnp.float32)
        state = _pretrain_chunks(state, steps_keys[:, i], step0, total, data, **static)
        if progress is not None:
            progress((i + 1) * chunk)
    return state[0]


@functools.partial(
    jax.jit,
    static_argnames=("apply", "batch_size", "context", "peak_lr", "warmup", "weight_decay"),
)
def _pretrain_chunks(state, keys, step0, budget, data, **static):
    """:func:`_pretrain_chunk` vmapped over the leading replicate axis of ``state``, ``keys``."""
    return jax.vmap(lambda s, k: _pretrain_chunk(s, k, step0, budget, data, **static))(state, keys)


def _adamw(weight_decay: float):
    """AdamW's direction (Adam + decoupled decay); the learning rate is applied by the loop."""
    return optax.chain(optax.scale_by_adam(), optax.add_decayed_weights(weight_decay))


@functools.partial(
    jax.jit,
    static_argnames=("apply", "batch_size", "context", "peak_lr", "warmup", "weight_decay"),
)
def _pretrain_chunk(state, keys, step0, budget, data, *, apply, batch_size, context, peak_lr,
                    warmup, weight_decay):  # fmt: skip
    """``len(keys)`` steps from ``state``; compiled once per model and settings, not budget."""
    optimizer = _adamw(weight_decay)

    def step(carry, inputs):
        params, opt_state = carry
        k, s = inputs
        windows = sample_windows(k, data, batch_size, context + 1)
        grads = jax.grad(lambda p: next_token_loss(apply, p, windows))(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        lr = cosine_to_zero(s, budget, peak_lr, warmup)
        params = jax.tree.map(lambda p, u: p - lr * u, params, updates)
        return (params, opt_state), None

    steps = step0 + jnp.arange(keys.shape[0])
    return jax.lax.scan(step, state, (keys, steps))[0]


def perturbation_loss_increase(
    apply: Callable,
    params: Params,
    init_params: Params,
    windows: Array,
    gammas: ArrayLike,
    key: PRNGKey,
    *,
    num_draws: int,
) -> Array:
    """``L(θ + γ·std(θ_init)·ε) − L(θ)`` on ``windows``, shape ``(len(gammas), num_draws)``.

    ``std(θ_init)`` is taken per tensor of ``init_params`` (Springer et al. Sec 3.1).
    """
    gammas = jnp.asarray(gammas, jnp.float32)
    keys = jax.random.split(key, num_draws)
    return _perturbation(params, init_params, windows, gammas, keys, apply=apply)


@functools.partial(jax.jit, static_argnames=("apply",))
def _perturbation(params, init_params, windows, gammas, keys, *, apply):
    stds = jax.tree.map(jnp.std, init_params)
    base = next_token_loss(apply, params, windows)
    leaves, treedef = jax.tree.flatten(params)

    def one(gamma, k):
        noise_keys = jax.random.split(k, len(leaves))
        noisy = [
            p + gamma * s * jax.random.normal(nk, p.shape, p.dtype)
            for p, s, nk in zip(leaves, jax.tree.leaves(stds), noise_keys, strict=True)
        ]
        return next_token_loss(apply, jax.tree.unflatten(treedef, noisy), windows) - base

    return jax.vmap(jax.vmap(one, in_axes=(None, 0)), in_axes=(0, None))(gammas, keys)


def finetune_at_learning_rates(
    apply: Callable,
    params: Params,
    data: Array,
    key: PRNGKey,
    *,
    learning_rates: ArrayLike,
    steps: int,
    batch_size: int,
    context: int,
) -> tuple[Params, Array]:
    """Constant-learning-rate Adam on ``data`` from ``params``, vmapped over learning rates.

    Every learning rate sees the same batches (common random numbers).

    Returns:
      ``(params_ft, distances)``: the fine-tuned parameters with a leading learning-rate
      axis, and ``‖θ_ft − θ_pre‖`` per learning rate (Fig 8).
    """
    steps = check_positive_int("finetune_at_learning_rates", "steps", steps)
    learning_rates = jnp.asarray(learning_rates, jnp.float32)
    if learning_rates.ndim != 1 or bool(jnp.any(learning_rates < 0)):
        raise ValueError(
            "finetune_at_learning_rates: learning_rates must be a 1-D array of non-negative rates."
        )
    return _finetune(params, jnp.asarray(data), key, learning_rates, apply=apply, steps=steps,
                     batch_size=batch_size, context=context)  # fmt: skip


@functools.partial(jax.jit, static_argnames=("apply", "steps", "batch_size", "context"))
def _finetune(params, data, key, learning_rates, *, apply, steps, batch_size, context):
    optimizer = optax.scale_by_adam()

    def run(lr):
        def step(carry, k):
            p, opt_state = carry
            windows = sample_windows(k, data, batch_size, context + 1)
            grads = jax.grad(lambda q: next_token_loss(apply, q, windows))(p)
            updates, opt_state = optimizer.update(grads, opt_state, p)
            return (jax.tree.map(lambda a, u: a - lr * u, p, updates), opt_state), None

        start = (params, optimizer.init(params))
        tuned = jax.lax.scan(step, start, jax.random.split(key, steps))[0][0]
        return tuned, tree_distance(tuned, params)

    return jax.vmap(run)(learning_rates)
