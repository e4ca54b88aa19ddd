"""Optimisers of the fine-tuning loop: AdamW with clipping and masks, warm-up + decay schedules.

AdamW (Loshchilov & Hutter 2019) under a linear warm-up followed by a cosine or linear
decay, frozen leaves receiving exactly zero updates (no weight decay either); the peak
learning rate can be held in the optimiser state (data, not a compiled constant), so a
learning-rate sweep compiles one program. Used by :func:`ntsim.transformers.finetune`.
"""

from __future__ import annotations

import jax
import optax

from ntsim._types import PyTree
from ntsim._validation import check_choice, check_nonnegative, check_positive, check_positive_int

__all__ = ["SCHEDULES", "adamw", "learning_rate_schedule"]

SCHEDULES = ("cosine", "linear", "constant")


def learning_rate_schedule(
    peak: float, *, total_steps: int, warmup_steps: int = 0, decay: str = "cosine"
) -> optax.Schedule:
    """Linear warm-up from 0 to ``peak`` over ``warmup_steps``, then ``decay`` to 0 at
    ``total_steps`` (``"cosine"``, ``"linear"``) or stay at ``peak`` (``"constant"``).

    Examples:
      >>> s = learning_rate_schedule(1.0, total_steps=10, warmup_steps=2, decay="linear")
      >>> [round(float(s(t)), 3) for t in (0, 1, 2, 6, 10)]
      [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    where = "learning_rate_schedule"
    check_positive(where, "peak", peak)
    total_steps = check_positive_int(where, "total_steps", total_steps)
    check_choice(where, "decay", decay, SCHEDULES)
    if not 0 <= warmup_steps <= total_steps:
        raise ValueError(f"{where}: need 0 <= warmup_steps <= total_steps, got {warmup_steps}.")
    warmup = optax.linear_schedule(0.0, peak, max(warmup_steps, 1))
    rest = max(total_steps - warmup_steps, 1)
    tail = {
        "cosine": optax.cosine_decay_schedule(peak, rest),
        "linear": optax.linear_schedule(peak, 0.0, rest),
        "constant": optax.constant_schedule(peak),
    }[decay]
    if warmup_steps == 0:
        return tail
    return optax.join_schedules([warmup, tail], [warmup_steps])


def adamw(
    learning_rate: float | optax.Schedule,
    *,
    mask: PyTree[bool] | None = None,
    weight_decay: float = 0.01,
    max_grad_norm: float | None = 1.0,
    peak: float | None = None,
) -> optax.GradientTransformation:
    """AdamW with optional global-norm clipping, updating only the ``mask``-ed leaves.

    Frozen leaves (``mask`` False) get zero updates and keep no Adam moments
    (``optax.multi_transform`` with ``optax.set_to_zero``).

    ``peak``: when given, the step size is ``peak · learning_rate(t)`` with ``peak`` held
    in the optimiser state (``optax.inject_hyperparams``) instead of compiled into the
    program, so runs that differ only in the peak learning rate (a learning-rate sweep)
    lower to the same XLA program and compile once (the persistent compilation cache
    shares it between runs). ``learning_rate`` is then the schedule's shape, e.g.
    :func:`learning_rate_schedule` with peak 1. AdamW's update ``−η_t(m̂/(√v̂ + ε) + wθ)``
    is linear in ``η_t``, so both spellings are the same optimiser.

    Examples:
      >>> import jax.numpy as jnp
      >>> params = {"w": jnp.ones(3)}
      >>> grads = {"w": jnp.asarray([1.0, -2.0, 0.5])}
      >>> def first_update(optimizer):
      ...     return optimizer.update(grads, optimizer.init(params), params)[0]["w"]
      >>> baked = first_update(adamw(1e-3, max_grad_norm=None))
      >>> data = first_update(adamw(1.0, max_grad_norm=None, peak=1e-3))
      >>> bool(jnp.allclose(baked, data, rtol=1e-6))
      True
    """
    check_nonnegative("adamw", "weight_decay", weight_decay)
    if not callable(learning_rate):
        check_positive("adamw", "learning_rate", learning_rate)
    parts = [] if max_grad_norm is None else [optax.clip_by_global_norm(max_grad_norm)]
    parts.append(optax.adamw(learning_rate, weight_decay=weight_decay))
    if peak is not None:
        check_positive("adamw", "peak", peak)
        parts.append(optax.inject_hyperparams(optax.scale)(step_size=peak))
    inner = optax.chain(*parts)
    if mask is None:
        return inner
    labels = jax.tree.map(lambda m: "train" if m else "freeze", mask)
    return optax.multi_transform({"train": inner, "freeze": optax.set_to_zero()}, labels)
