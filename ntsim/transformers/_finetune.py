r"""Fine-tuning with optax: AdamW + schedules, masks, proximal term, recorders, early stopping.

One run minimises, over the trainable leaves ``θ_M`` selected by a mask
(:func:`ntsim.transformers.param_mask`),

.. math:: F(θ) = \frac{1}{|B_t|}\sum_{(x, y) ∈ B_t} \ell(θ; x, y) + \frac{λ}{2}‖θ_M − θ_{0,M}‖²

with minibatches ``B_t`` drawn without replacement within each epoch from the run's key,
AdamW (Loshchilov & Hutter 2019) under a linear warm-up followed by a cosine or linear
decay (:func:`learning_rate_schedule`), and frozen leaves receiving exactly zero updates
(no weight decay either). ``λ`` is the proximal pull toward the checkpoint ``θ_0`` (the
"stay close to pretrained" regulariser of the fine-tuning theory papers).

Structure (all pure JAX): one step is ``(state, batch) → state``; ``eval_every`` steps are
one ``lax.scan``; the driver loops over those segments in Python, which is where the dev
evaluation, early stopping, progress bar and checkpoints happen. **Seeds are an axis**:
pass ``keys`` of shape ``(S, 2)`` for ``S`` runs (same data, different minibatch orders,
dropout masks and head inits). ``seed_batching`` says how they run: ``"vmap"`` (one
program over the seeds axis), ``"loop"`` (the single-seed program once per seed and
segment) or ``"auto"`` (the default: loop on the CPU, vmap on an accelerator). The results
agree to round-off either way. Measured on 2 CPU cores (``make bench``), the vmapped
MiniLM step was *slower* than the loop (0.6x at 4 seeds of L3, 0.8x at 5 seeds of L6; a
re-run on busier cores: the loop 1.3x faster on L3, about even on L6): the CPU gains little
from the larger batched matmuls, and the loop holds one seed's activations at a time. An
accelerator is expected to gain from them (not yet measured: ``python -m benchmarks.run``
reports the ratio on whatever backend it runs).

**One compiled step per shape.** The learning rate (``adamw(peak=...)``), the proximal
``λ`` and every array the loss and evaluation functions close over (e.g. the weights of
:func:`ntsim.transformers.method_terms`) are arguments of the compiled segment, not
constants: runs that differ only in such values reuse one XLA program (within a process,
and across processes through JAX's persistent compilation cache). With ``share_program``,
such runs in one process also skip tracing and lowering it again: the later calls take the
first call's segment (:mod:`ntsim.transformers._programs` says when that is safe).

Per-step records: ``loss`` (the minibatch objective without the proximal term), every
metric the loss function returns, and ``distance`` = ``‖θ_M − θ_{0,M}‖`` before the step.
Dev records (once per segment): every metric of ``eval_fn``. Early stopping keeps
the parameters with the best monitored dev metric and stops updating after ``patience``
evaluations without improvement (the scan keeps its static length; stopped runs are
frozen, so the seeds axis stays rectangular).

Checkpoints (:func:`save_finetune_state` / :func:`load_finetune_state`) hold the whole state
(parameters, optimiser state, best parameters, step, keys) in one ``.npz`` written
atomically (temporary file + ``os.replace``); a run given an existing ``state_path``
resumes from it and reproduces the uninterrupted run's parameters exactly (the returned
records then cover only the segments run by that call).
"""

from __future__ import annotations

import os
import pathlib
import time
from collections.abc import Callable, Hashable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ntsim._types import Array, Params, PRNGKey, PyTree
from ntsim._validation import check_choice, check_nonnegative, check_positive_int
from ntsim.transformers._finetune_state import (
    FinetuneState,
    is_key,
    load_finetune_state,
    save_finetune_state,
)
from ntsim.transformers._optim import adamw, learning_rate_schedule
from ntsim.transformers._programs import hoist_constants, shared_segment

__all__ = [
    "FinetuneResult",
    "FinetuneState",
    "adamw",
    "finetune",
    "learning_rate_schedule",
    "load_finetune_state",
    "resolve_seed_batching",
    "save_finetune_state",
]

SEED_BATCHINGS = ("auto", "vmap", "loop")

#: ``loss_fn(params, batch, key) -> (loss, metrics)``: mean loss over the minibatch and a
#: dict of scalar metrics (e.g. accuracy); ``key`` drives dropout/MixOut/noise.
LossFn = Callable[[Params, PyTree, PRNGKey], tuple[Array, dict[str, Array]]]


class FinetuneResult(NamedTuple):
    """Output of :func:`finetune` (leading seeds axis on every array when ``keys`` had one).

    Attributes:
      params: final parameters (frozen at the stopping step if early stopping fired).
      best_params: parameters at the best dev evaluation (= ``params`` without ``dev_data``).
      records: per-step ``{"loss", "distance", <metrics>}``, shape
        ``(num_steps,)`` each.
      dev_records: per-evaluation dev metrics, shape ``(num_steps // eval_every,)``; also
        ``"step"`` (the step after which each evaluation ran).
      best_step: step of the best dev evaluation (``num_steps`` without ``dev_data``).
      stopped_step: step at which early stopping fired (``-1`` if it did not).
      segment_seconds: wall time of each segment run by this call (``eval_every`` steps
        and one dev evaluation, for all seeds together), host-blocked; the first includes
        compilation, so ``median(segment_seconds[1:]) / eval_every`` is the time per step.
    """

    params: Params
    best_params: Params
    records: dict[str, Array]
    dev_records: dict[str, Array]
    best_step: Array
    stopped_step: Array
    segment_seconds: np.ndarray


def resolve_seed_batching(seed_batching: str = "auto", backend: str | None = None) -> str:
    """``"vmap"`` or ``"loop"``: ``"auto"`` is ``"loop"`` on the CPU and ``"vmap"`` on an
    accelerator (``backend``: default JAX's default backend); the others are themselves.

    Examples:
      >>> resolve_seed_batching("auto", "cpu"), resolve_seed_batching("auto", "gpu")
      ('loop', 'vmap')
    """
    check_choice("finetune", "seed_batching", seed_batching, SEED_BATCHINGS)
    if seed_batching != "auto":
        return seed_batching
    return "loop" if (backend or jax.default_backend()) == "cpu" else "vmap"


def _squared_distance(params: Params, params0: Params, mask: PyTree[bool] | None) -> Array:
    leaves = zip(jax.tree.leaves(params), jax.tree.leaves(params0), strict=True)
    selected = jax.tree.leaves(mask) if mask is not None else [True] * len(jax.tree.leaves(params))
    return sum(
        (jnp.sum((p - p0) ** 2) for (p, p0), m in zip(leaves, selected, strict=True) if m),
        start=jnp.zeros(()),
    )


def _num_examples(where: str, data: PyTree) -> int:
    sizes = {int(np.shape(leaf)[0]) for leaf in jax.tree.leaves(data)}
    if len(sizes) != 1:
        raise ValueError(
            f"{where}: every array of the data must share its leading size, got {sizes}."
        )
    return sizes.pop()


def _take(data: PyTree, index: Array) -> PyTree:
    return jax.tree.map(lambda a: a[index], data)


def _check_finite_loss(where: str, losses, end_step, seeded: bool, eval_every: int) -> None:
    """Raise at the first non-finite loss of a segment (``losses``: ``([S,] eval_every)``)."""
    losses = np.asarray(losses)
    bad = ~np.isfinite(losses)
    if not bad.any():
        return
    seed, position = np.argwhere(bad)[0] if seeded else (None, int(np.argmax(bad)))
    last = int(np.max(np.asarray(end_step)))
    step = last - eval_every + int(position)
    run = f" (seed {int(seed)})" if seeded else ""
    raise FloatingPointError(
        f"{where}: the training loss is {losses[bad][0]} at step {step}{run}. Usual causes: a "
        "label outside the head's classes (e.g. label 7 for a 2-class head), a step size too "
        "large, or non-finite inputs or parameters. Pass throw=False to train on."
    )


def finetune(
    loss_fn: LossFn,
    params0: Params | Callable[[PRNGKey], Params],
    train_data: PyTree,
    *,
    optimizer: optax.GradientTransformation,
    num_steps: int,
    batch_size: int,
    keys: PRNGKey,
    mask: PyTree[bool] | None = None,
    proximal: float = 0.0,
    dev_data: PyTree | None = None,
    eval_fn: Callable[[Params, PyTree], dict[str, Array]] | None = None,
    eval_every: int | None = None,
    monitor: str = "loss",
    higher_is_better: bool = False,
    patience: int | None = None,
    state_path: str | os.PathLike | None = None,
    progress: bool = False,
    description: str = "finetune",
    throw: bool = True,
    seed_batching: str = "auto",
    share_program: Hashable | None = None,
) -> FinetuneResult:
    """Fine-tune ``params0`` on ``train_data`` (module doc for the objective and records).

    Args:
      loss_fn: ``loss_fn(params, batch, key) -> (mean loss, metrics dict)``.
      params0: the checkpoint ``θ_0`` (also the proximal anchor), or ``params0(key)``
        building it per run (e.g. the pretrained encoder plus a seed-dependent random head;
        each seed's own ``θ_0`` is then its anchor).
      train_data: pytree of arrays with a shared leading example axis.
      optimizer: e.g. :func:`adamw` (its own mask freezes leaves).
      num_steps: optimiser steps (a multiple of ``eval_every``).
      batch_size: minibatch size (``≤`` the number of training examples).
      keys: one PRNG key, or a stack ``(S, 2)`` for ``S`` seeds run side by side.
      mask: leaves counted in the proximal term and in ``distance`` (default: all).
      proximal: ``λ ≥ 0`` (an argument of the compiled step: every ``λ`` shares one program).
      dev_data: the dev set ``eval_fn`` is evaluated on every ``eval_every`` steps.
      eval_fn: ``eval_fn(params, dev_data) -> metrics``.
      eval_every: steps per segment (default ``num_steps``).
      monitor: the dev metric early stopping and ``best_params`` follow.
      higher_is_better: whether a larger ``monitor`` is better.
      patience: stop after this many evaluations without improvement (``None``: never).
      state_path: save the state here after every segment; resume if it exists.
      progress: show a tqdm bar over segments.
      description: the progress bar's label.
      throw: raise :class:`FloatingPointError` as soon as a segment records a non-finite
        training loss (``False``: train on and return the NaNs).
      seed_batching: with a stack of ``keys``: ``"vmap"``, ``"loop"`` or ``"auto"`` (loop on
        the CPU, vmap on an accelerator; :func:`resolve_seed_batching`). Same results to
        round-off; the loop also holds one seed's activations at a time.
      share_program: a name under which calls of this process whose loss, evaluation and
        optimiser differ at most in the arrays they close over reuse one traced and
        compiled segment (:mod:`ntsim.transformers._programs`; ``None``: build it anew).

    Returns:
      :class:`FinetuneResult`.

    Raises:
      FloatingPointError: with ``throw``, naming the first step (and seed) whose loss is not
        finite and the usual causes (a label outside the head's classes, a step size too
        large, non-finite inputs or parameters).
    """
    where = "finetune"
    num_steps = check_positive_int(where, "num_steps", num_steps)
    batch_size = check_positive_int(where, "batch_size", batch_size)
    eval_every = (
        num_steps if eval_every is None else check_positive_int(where, "eval_every", eval_every)
    )
    if num_steps % eval_every:
        raise ValueError(
            f"{where}: num_steps ({num_steps}) must be a multiple of eval_every ({eval_every})."
        )
    check_nonnegative(where, "proximal", proximal)
    batching = resolve_seed_batching(seed_batching)
    if (dev_data is None) != (eval_fn is None):
        raise ValueError(f"{where}: pass both dev_data and eval_fn, or neither.")
    if patience is not None:
        patience = check_positive_int(where, "patience", patience)
        if dev_data is None:
            raise ValueError(f"{where}: early stopping (patience) needs dev_data and eval_fn.")
    n = _num_examples(where, train_data)
    if batch_size > n:
        raise ValueError(f"{where}: batch_size {batch_size} exceeds the {n} training examples.")
    keys = jnp.asarray(keys) if not is_key(keys) else keys
    key_data = jax.random.key_data(keys) if is_key(keys) else keys
    if (
        is_key(keys)
        and keys.ndim > 1
        or not is_key(keys)
        and (key_data.ndim not in (1, 2) or key_data.shape[-1] != 2)
    ):
        raise ValueError(
            f"{where}: keys must be one PRNG key (jax.random.PRNGKey(s), shape (2,)) or a "
            f"batch of them (shape (seeds, 2)), got shape {tuple(jnp.shape(keys))}."
        )
    seeded = key_data.ndim == 2
    looped = seeded and batching == "loop"
    labels = train_data.get("label") if isinstance(train_data, dict) else None
    if labels is not None and jnp.issubdtype(jnp.asarray(labels).dtype, jnp.integer):
        if int(jnp.min(jnp.asarray(labels))) < 0:
            raise ValueError(
                f"{where}: train_data['label'] holds a negative label "
                f"({int(jnp.min(jnp.asarray(labels)))}); class labels are 0, 1, …, K − 1."
            )
    if state_path is not None:
        folder = pathlib.Path(state_path).parent
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            raise ValueError(
                f"{where}: state_path {state_path}: its directory {folder} is missing or not "
                "writable (checked before training, so no run is lost)."
            )
    steps_per_epoch = n // batch_size
    sign = -1.0 if higher_is_better else 1.0
    train_data = jax.tree.map(jnp.asarray, train_data)

    one_key = keys[0] if seeded else keys
    example = jax.eval_shape(params0, one_key) if callable(params0) else params0
    example_batch = jax.eval_shape(lambda d: _take(d, jnp.arange(batch_size)), train_data)
    example_key = jax.eval_shape(lambda k: jax.random.fold_in(k, 0), one_key)
    loss_program = hoist_constants(loss_fn, example, example_batch, example_key)
    eval_program = None if eval_fn is None else hoist_constants(eval_fn, example, dev_data)
    update_program = hoist_constants(
        optimizer.update, example, jax.eval_shape(optimizer.init, example), example
    )
    loss_with_consts, eval_with_consts = loss_program.fn, eval_program and eval_program.fn

    def objective(params, anchor, batch, key, consts, lam):
        loss, metrics = loss_with_consts(consts, params, batch, key)
        penalty = 0.5 * lam * _squared_distance(params, anchor, mask)  # λ = 0: adds exactly 0
        return loss + penalty, (loss, metrics)

    def step(state: FinetuneState, train_data, loss_consts, opt_consts, lam):
        epoch, position = jnp.divmod(state.step, steps_per_epoch)
        key_order, key_step = jax.random.split(jax.random.fold_in(state.key, epoch))
        order = jax.random.permutation(key_order, n)
        index = jax.lax.dynamic_slice_in_dim(order, position * batch_size, batch_size)
        batch = _take(train_data, index)
        grads, (loss, metrics) = jax.grad(objective, has_aux=True)(
            state.params,
            state.anchor,
            batch,
            jax.random.fold_in(key_step, position),
            loss_consts,
            lam,
        )
        updates, opt_state = update_program.fn(opt_consts, grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        keep = state.stopped
        params = jax.tree.map(lambda old, new: jnp.where(keep, old, new), state.params, params)
        opt_state = jax.tree.map(
            lambda old, new: jnp.where(keep, old, new), state.opt_state, opt_state
        )
        record = {
            "loss": loss,
            **metrics,
            "distance": jnp.sqrt(_squared_distance(state.params, state.anchor, mask)),
        }
        return state._replace(params=params, opt_state=opt_state, step=state.step + 1), record

    def segment(
        state: FinetuneState, train_data, dev_data, loss_consts, eval_consts, opt_consts, lam
    ):
        state, records = jax.lax.scan(
            lambda state, _: step(state, train_data, loss_consts, opt_consts, lam),
            state,
            None,
            length=eval_every,
        )
        dev = {} if eval_fn is None else eval_with_consts(eval_consts, state.params, dev_data)
        if dev:
            score = sign * dev[monitor]
            improved = (score < state.best_score) & ~state.stopped
            best_params = jax.tree.map(
                lambda b, p: jnp.where(improved, p, b), state.best_params, state.params
            )
            since = jnp.where(improved, 0, state.evals_since_best + 1)
            stopped = state.stopped | (since >= (patience or np.iinfo(np.int32).max))
            state = state._replace(
                best_params=best_params,
                best_score=jnp.where(improved, score, state.best_score),
                evals_since_best=jnp.where(state.stopped, state.evals_since_best, since),
                stopped=stopped,
            )
        else:
            state = state._replace(best_params=state.params)
        return state, records, dev

    # best_score starts with the dtype (and strong type) the segment gives it: a weakly typed
    # inf made the second segment a new program, so every run compiled its step twice
    score_dtype = jnp.float32
    if dev_data is not None:
        dev_shapes = jax.eval_shape(eval_fn, example, dev_data)
        if monitor not in dev_shapes:
            raise ValueError(f"{where}: eval_fn returns no {monitor!r} metric to monitor.")
        score_dtype = jax.eval_shape(lambda m: sign * m, dev_shapes[monitor]).dtype

    def init(key) -> FinetuneState:
        if callable(params0):
            key, key_init = jax.random.split(key)
            start = params0(key_init)
        else:
            start = params0
        return FinetuneState(
            params=start,
            anchor=start,
            opt_state=optimizer.init(start),
            best_params=start,
            best_score=jnp.full((), jnp.inf, score_dtype),
            evals_since_best=jnp.zeros((), jnp.int32),
            stopped=jnp.zeros((), bool),
            step=jnp.zeros((), jnp.int32),
            key=key,
        )

    vmapped = seeded and not looped
    init_fn = jax.vmap(init) if vmapped else init

    def build_segment():
        axes = (0, None, None, None, None, None, None)
        return jax.jit(jax.vmap(segment, in_axes=axes) if vmapped else segment)

    if share_program is None:
        segment_fn = build_segment()
    else:  # what the segment closes over, beside the hoisted functions (module doc)
        static = (n, steps_per_epoch, batch_size, eval_every, sign, monitor, patience,
                  vmapped, str(score_dtype), str(jax.tree.structure(mask)),
                  tuple(jax.tree.leaves(mask)))  # fmt: skip
        programs = (loss_program, eval_program, update_program)
        printed = tuple(p and p.printed() for p in programs)
        segment_fn = shared_segment((share_program, printed, static), build_segment)
    consts = (loss_program.consts, eval_program.consts if eval_program else [],
              update_program.consts)  # fmt: skip
    arguments = (train_data, dev_data, *consts, jnp.float32(proximal))
    stack_seeds = lambda items: jax.tree.map(lambda *a: jnp.stack(a), *items)  # noqa: E731

    # looped: a list of single-seed states, stacked only to save, resume and return
    def stacked(states) -> FinetuneState:
        return stack_seeds(states) if looped else states

    def counters(states) -> tuple[Array, Array]:  # (step, stopped), seeds axis leading
        return stack_seeds([(s.step, s.stopped) for s in states]) if looped else (
            states.step, states.stopped
        )  # fmt: skip

    def run_segment(states):
        if not looped:
            return segment_fn(states, *arguments)
        outs = [segment_fn(one, *arguments) for one in states]
        return [o[0] for o in outs], stack_seeds([o[1] for o in outs]), stack_seeds(
            [o[2] for o in outs]
        )  # fmt: skip

    states = [init_fn(k) for k in keys] if looped else init_fn(keys)
    if state_path is not None and pathlib.Path(state_path).exists():
        loaded = load_finetune_state(state_path, stacked(states))
        states = [jax.tree.map(lambda a, s=s: a[s], loaded) for s in range(len(keys))] if (
            looped
        ) else loaded  # fmt: skip
    done = int(np.max(np.asarray(counters(states)[0])))
    segments = range(done // eval_every, num_steps // eval_every)
    if progress:
        from tqdm.auto import tqdm

        segments = tqdm(segments, desc=description, unit="segment")
    records, dev_records, stopped_at, seconds = [], [], [], []
    for _ in segments:
        start = time.perf_counter()
        states, segment_records, dev = jax.block_until_ready(run_segment(states))
        seconds.append(time.perf_counter() - start)
        steps_done, stopped = counters(states)
        if throw:
            _check_finite_loss(where, segment_records["loss"], steps_done, seeded, eval_every)
        records.append(segment_records)
        dev_records.append({**dev, "step": steps_done})
        stopped_at.append(stopped)
        if state_path is not None:
            save_finetune_state(state_path, stacked(states))
    state = stacked(states)
    axis = 1 if seeded else 0
    cat = lambda items: jax.tree.map(lambda *a: jnp.concatenate(a, axis=axis), *items)  # noqa: E731
    stack = lambda items: jax.tree.map(lambda *a: jnp.stack(a, axis=axis), *items)  # noqa: E731
    records = cat(records) if records else {}
    dev_records = stack(dev_records) if dev_records else {}
    if dev_records and dev_data is not None:
        scores = sign * dev_records[monitor]
        best_step = jnp.take_along_axis(
            dev_records["step"], jnp.argmin(scores, axis=-1, keepdims=True), axis=-1
        )[..., 0]
    else:
        best_step = jnp.full(np.shape(np.asarray(state.step)), num_steps)
    if stopped_at:
        fired = stack(stopped_at)
        first = jnp.argmax(fired, axis=-1)
        steps = dev_records["step"]
        stopped_step = jnp.where(
            jnp.any(fired, axis=-1),
            jnp.take_along_axis(steps, first[..., None], axis=-1)[..., 0],
            -1,
        )
    else:
        stopped_step = jnp.full(np.shape(np.asarray(state.step)), -1)
    return FinetuneResult(
        state.params,
        state.best_params,
        records,
        dev_records,
        best_step,
        stopped_step,
        np.asarray(seconds),
    )
