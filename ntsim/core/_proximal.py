r"""Split (proximal) gradient steps towards an anchor, constant or selective, as one ``lax.scan``.

Gradient descent on ``L(θ) + (λ/2)‖θ − θ_0‖²`` can be taken jointly (what
:func:`ntsim.core.gradient_descent` does, ``θ' = θ − η∇L − ηλ(θ − θ_0)``) or *split* into a
gradient step and a pull towards the anchor:

.. math::

   \tilde θ = θ - η ∇L(θ), \qquad θ' = \tilde θ - λη(\tilde θ - θ_0)
   \;\Longleftrightarrow\; θ' - θ_0 = (1 - λη)(θ - θ_0 - η∇L(θ)).

The two differ by ``η²λ∇L(θ)`` per step (``O(η²)``), so both have the same gradient-flow
limit ``θ̇ = −∇L − λ(θ − θ_0)``. The *selective* scheme switches the pull on only when the
gradient points away from the anchor,

.. math:: λ_t = λ \cdot 1[\,⟨∇L(θ_t), θ_t - θ_0⟩ ≥ 0\,],

evaluated at the pre-step point ``θ_t`` (where the gradient is computed; a rule evaluated
at the post-step point would be circular). :func:`proximal_gd` records, per step, whether
the pull was on and the inner product that decided it.

References:
  Rahimi Afzal, Esmaeilbeig, Soltanalian & Ohannessian (2025), *Linearization Explains
  Fine-Tuning in Large Language Models*, arXiv:2602.08239 (split step, selective λ_t,
  Lemma 3). Parikh & Boyd (2014), *Proximal Algorithms*, Sec 4.2 (the anchor pull
  ``θ̃ ↦ θ_0 + (1 − λη)(θ̃ − θ_0)`` is the proximal map of ``(λ/(2(1−λη)))‖· − θ_0‖²``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike, Params, PyTree
from ntsim._validation import _is_concrete, check_nonnegative, check_positive
from ntsim.core._train import DivergenceError, Record

__all__ = [
    "ProximalResult",
    "proximal_combined_step",
    "proximal_gd",
    "proximal_split_step",
    "selective_strength",
    "tree_inner",
]


def tree_inner(a: Params, b: Params) -> Array:
    """``⟨a, b⟩ = Σ_leaves Σ a·b`` for two pytrees of the same structure.

    Examples:
      >>> import jax.numpy as jnp
      >>> float(tree_inner({"u": jnp.array([1.0, 2.0])}, {"u": jnp.array([3.0, 4.0])}))
      11.0
    """
    leaves = jax.tree.leaves(jax.tree.map(lambda x, y: jnp.sum(x * y), a, b))
    return sum(leaves, start=jnp.zeros(()))


def _check_rates(where: str, learning_rate, proximal) -> None:
    check_positive(where, "learning_rate", learning_rate)
    check_nonnegative(where, "proximal", proximal)
    if _is_concrete(learning_rate) and _is_concrete(proximal):
        product = np.asarray(proximal) * np.asarray(learning_rate)
        if np.any(product > 1):
            raise ValueError(
                f"{where}: proximal·learning_rate must be at most 1 (the pull θ̃ − λη(θ̃ − θ_0) "
                f"overshoots the anchor beyond it), got {proximal=} and {learning_rate=}."
            )


def proximal_split_step(
    params: Params,
    grads: Params,
    params0: Params,
    *,
    learning_rate: ArrayLike,
    proximal: ArrayLike,
) -> tuple[Params, Params]:
    r"""The split step: a gradient step, then a pull towards the anchor ``θ_0``.

    .. math:: \tilde θ = θ - η g, \qquad θ' = \tilde θ - λη(\tilde θ - θ_0)

    (Rahimi Afzal et al. 2025, "split step"), with ``η`` = ``learning_rate``, ``λ`` =
    ``proximal`` and ``g`` = ``grads`` (the gradient of the loss at ``params``).

    Args:
      params: current parameters ``θ``.
      grads: ``∇L(θ)``, same structure.
      params0: the anchor ``θ_0``.
      learning_rate: ``η > 0``.
      proximal: ``λ ≥ 0`` with ``λη ≤ 1``.

    Returns:
      ``(θ̃, θ')``: the intermediate and the final parameters.

    Examples:
      >>> import jax.numpy as jnp
      >>> mid, new = proximal_split_step(jnp.array(2.0), jnp.array(1.0), jnp.array(0.0),
      ...                                learning_rate=0.5, proximal=1.0)
      >>> float(mid), float(new)
      (1.5, 0.75)
    """
    _check_rates("proximal_split_step", learning_rate, proximal)
    mid = jax.tree.map(lambda p, g: p - learning_rate * g, params, grads)
    new = jax.tree.map(lambda m, p0: m - proximal * learning_rate * (m - p0), mid, params0)
    return mid, new


def proximal_combined_step(
    params: Params,
    grads: Params,
    params0: Params,
    *,
    learning_rate: ArrayLike,
    proximal: ArrayLike,
) -> Params:
    r"""The split step in one line: ``θ' = θ_0 + (1 − λη)(θ − θ_0 − η g)``.

    Algebraically equal to :func:`proximal_split_step`'s ``θ'`` (Rahimi Afzal et al. 2025,
    combined form ``θ_{t+1} = (1 − λη)θ_t − η(1 − λη)∇R̃(θ_t)ᵀ + ληθ_0``).

    Examples:
      >>> import jax.numpy as jnp
      >>> float(proximal_combined_step(jnp.array(2.0), jnp.array(1.0), jnp.array(0.0),
      ...                              learning_rate=0.5, proximal=1.0))
      0.75
    """
    _check_rates("proximal_combined_step", learning_rate, proximal)
    shrink = 1 - proximal * learning_rate
    return jax.tree.map(
        lambda p, g, p0: p0 + shrink * (p - p0 - learning_rate * g), params, grads, params0
    )


def selective_strength(
    params: Params, grads: Params, params0: Params, proximal: ArrayLike
) -> tuple[Array, Array]:
    r"""``λ_t = λ·1[⟨∇L(θ_t), θ_t − θ_0⟩ ≥ 0]`` and the inner product that decides it.

    The selective regularisation of Rahimi Afzal et al. (2025), Thms 1–3, evaluated at the
    pre-step point ``θ_t``. The slides state the rule with the post-step point, which makes
    it circular (the step depends on itself); evaluating it before the step is our reading.

    Returns:
      ``(λ_t, ⟨∇L(θ_t), θ_t − θ_0⟩)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> lam, inner = selective_strength(jnp.array(1.0), jnp.array(-2.0), jnp.array(0.0), 3.0)
      >>> float(lam), float(inner)
      (0.0, -2.0)
    """
    delta = jax.tree.map(jnp.subtract, params, params0)
    inner = tree_inner(grads, delta)
    lam = jnp.where(inner >= 0, jnp.asarray(proximal, inner.dtype), jnp.zeros((), inner.dtype))
    return lam, inner


class ProximalResult(NamedTuple):
    """Output of :func:`proximal_gd`.

    Attributes:
      params: parameters after ``num_steps`` steps.
      records: ``Record.fn`` outputs at steps ``0, every, …`` (``None`` without a record).
      steps: int32 step index of each record (``None`` without a record).
      strengths: ``(num_steps,)`` the ``λ_t`` used at each step (``λ`` or ``0``).
      inner: ``(num_steps,)`` ``⟨∇L(θ_t), θ_t − θ_0⟩`` at each pre-step point.
      fraction_regularised: the fraction of steps with ``λ_t > 0``.
      first_nonfinite_step: first step at which ``L`` was NaN/Inf, or ``-1``.
    """

    params: Params
    records: PyTree | None
    steps: Array | None
    strengths: Array
    inner: Array
    fraction_regularised: Array
    first_nonfinite_step: Array


def proximal_gd(
    loss_fn: Callable[[Params], Array],
    params0: Params,
    *,
    num_steps: int,
    learning_rate: ArrayLike,
    proximal: ArrayLike,
    selective: bool = False,
    record: Record | None = None,
    throw: bool = True,
) -> ProximalResult:
    r"""Split proximal gradient descent (constant or selective ``λ``) as one ``lax.scan``.

    .. math::

       θ_{t+1} = θ_0 + (1 - λ_tη)(θ_t - θ_0 - η∇L(θ_t)), \qquad
       λ_t = \begin{cases} λ & \text{constant} \\
       λ\,1[⟨∇L(θ_t), θ_t - θ_0⟩ ≥ 0] & \text{selective}\end{cases}

    (Rahimi Afzal et al. 2025, split step and selective regularisation). As ``η → 0`` with
    ``t = kη`` this tends to the flow ``θ̇ = −∇L − λ_t(θ − θ_0)`` (their Lemma 3) with an
    ``O(η)`` gap. ``learning_rate`` and ``proximal`` may be traced (vmappable).

    Args:
      loss_fn: ``loss_fn(params) -> scalar``, e.g. the summed squared loss ``R̃``.
      params0: initial parameters, also the anchor ``θ_0``.
      num_steps: number of steps (static, ``≥ 0``).
      learning_rate: ``η > 0``.
      proximal: ``λ ≥ 0`` with ``λη ≤ 1``.
      selective: switch the pull on only when ``⟨∇L, θ − θ_0⟩ ≥ 0`` (pre-step point).
      record: what to record and how often (:class:`ntsim.core.Record`), or ``None``.
      throw: raise :class:`ntsim.core.DivergenceError` when the loss became NaN/Inf (needs
        concrete values; pass ``False`` under ``jit``/``vmap``).

    Returns:
      :class:`ProximalResult`.

    Examples:
      >>> import jax.numpy as jnp
      >>> res = proximal_gd(lambda w: jnp.sum((w - 1.0) ** 2), jnp.array([0.0]),
      ...                   num_steps=200, learning_rate=0.1, proximal=2.0)
      >>> round(float(res.params[0]), 4)  # minimiser of (w − 1)² + w²: 1/2 (pull η²λ bias)
      0.4444
    """
    where = "proximal_gd"
    if isinstance(num_steps, bool) or not isinstance(num_steps, (int, np.integer)) or num_steps < 0:
        raise ValueError(f"{where}: num_steps must be a non-negative integer, got {num_steps!r}.")
    if record is not None and not isinstance(record, Record):
        raise TypeError(f"{where}: record must be a Record(every=..., fn=...), got {record!r}.")
    _check_rates(where, learning_rate, proximal)
    params0 = jax.tree.map(jnp.asarray, params0)
    value_and_grad = jax.value_and_grad(loss_fn)

    def step(carry, _):
        params, bad, t = carry
        value, grads = value_and_grad(params)
        if selective:
            lam, inner = selective_strength(params, grads, params0, proximal)
        else:
            lam = jnp.asarray(proximal, value.dtype) * jnp.ones((), value.dtype)
            inner = tree_inner(grads, jax.tree.map(jnp.subtract, params, params0))
        bad = jnp.where(jnp.isfinite(value), bad, jnp.minimum(bad, t))
        shrink = 1 - lam * learning_rate
        params = jax.tree.map(
            lambda p, g, p0: (p0 + shrink * (p - p0 - learning_rate * g)).astype(p.dtype),
            params,
            grads,
            params0,
        )
        return (params, bad, t + 1), (lam, inner)

    def run_steps(carry, length):
        if not length:
            dtype = jnp.result_type(*jax.tree.leaves(params0))
            empty = jnp.zeros((0,), dtype)
            return carry, (empty, empty)
        return jax.lax.scan(step, carry, length=length)

    sentinel = np.iinfo(np.int32).max
    carry = (params0, jnp.asarray(sentinel, jnp.int32), jnp.zeros((), jnp.int32))
    records = steps = None
    if record is None:
        carry, (lams, inner) = run_steps(carry, num_steps)
    else:
        num_chunks, remainder = divmod(num_steps, record.every)

        def chunk(carry, _):
            carry, outs = run_steps(carry, record.every)
            return carry, (record.fn(carry[0], carry[2]), outs)

        first = record.fn(params0, carry[2])
        carry, (rest, (lams, inner)) = jax.lax.scan(chunk, carry, length=num_chunks)
        records = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), first, rest)
        steps = jnp.arange(num_chunks + 1, dtype=jnp.int32) * record.every
        lams, inner = lams.reshape(-1), inner.reshape(-1)
        carry, (lams_r, inner_r) = run_steps(carry, remainder)
        lams = jnp.concatenate([lams, lams_r])
        inner = jnp.concatenate([inner, inner_r])
    params, bad, _ = carry
    final_bad = ~jnp.isfinite(loss_fn(params))
    bad = jnp.where(final_bad, jnp.minimum(bad, num_steps), bad)
    bad = jnp.where(bad == sentinel, -1, bad)
    fraction = jnp.mean(lams > 0) if num_steps else jnp.zeros(())
    result = ProximalResult(params, records, steps, lams, inner, fraction, bad)
    if throw:
        if not _is_concrete(bad):
            raise ValueError(
                f"{where}: throw=True needs concrete values, but it was called under jit/vmap; "
                "pass throw=False there and inspect first_nonfinite_step."
            )
        if int(np.max(np.asarray(bad))) >= 0:
            raise DivergenceError(
                f"{where}: the loss became non-finite (NaN/Inf) first at step "
                f"{int(np.max(np.asarray(bad)))}; lower learning_rate."
            )
    return result
