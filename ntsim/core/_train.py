"""Full-batch training as one ``lax.scan``, with recorders and divergence checks.

* :func:`gradient_descent` runs ``θ_{t+1} = θ_t − η ∇F(θ_t)`` (or any optax optimiser) with
  ``F(θ) = L(θ) + (λ/2)‖θ − θ_0‖²`` as ONE ``lax.scan`` over chunks of ``Record.every``
  steps, so recording costs nothing between records. It is jit- and vmap-compatible.
* :func:`ntsim.core.gradient_flow` (in ``_flow.py``) is its continuous-time limit.
* :class:`Record` says what to record and how often, in the spirit of diffrax's ``SaveAt``;
  :func:`record_loss`, :func:`record_distance`, :func:`record_predictions`,
  :func:`record_params` and :func:`combine_recorders` build its ``fn``.

Divergence (a NaN/Inf objective) is tracked inside the scan as the first step ``t`` at which
``F(θ_t)`` was non-finite. A plain call raises :class:`DivergenceError` naming that step;
under ``jit``/``vmap`` pass ``throw=False`` and call :func:`check_finite` on the result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ntsim._types import Array, ArrayLike, Params, PyTree
from ntsim._validation import (
    _is_concrete,
    check_ndim,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_same_leading_dim,
)

__all__ = [
    "DivergenceError",
    "Record",
    "TrainResult",
    "TrainState",
    "check_finite",
    "check_learning_rate",
    "combine_recorders",
    "gradient_descent",
    "mse_loss",
    "record_distance",
    "record_loss",
    "record_params",
    "record_predictions",
    "tree_distance",
]

_NO_BAD_STEP = np.iinfo(np.int32).max  # sentinel of the scan carry: "no non-finite step yet"


class DivergenceError(FloatingPointError):
    """The training objective became NaN/Inf; the message names the first such step."""


@dataclasses.dataclass(frozen=True)
class Record:
    """What to record during :func:`gradient_descent` (like diffrax's ``SaveAt``).

    Records are taken at steps ``0, every, 2·every, …, ⌊num_steps/every⌋·every``, i.e. on
    the initial parameters and after every ``every`` updates; when ``every`` does not divide
    ``num_steps`` the last ``num_steps mod every`` steps run unrecorded.

    Attributes:
      every: record every ``every`` steps (a positive integer).
      fn: ``fn(params, step) -> pytree`` evaluated at the recorded steps; outputs are
        stacked along a new leading axis.

    Examples:
      >>> Record(every=0, fn=record_params())
      Traceback (most recent call last):
      ...
      ValueError: Record: every must be a positive integer, got 0.
    """

    every: int
    fn: Callable[[Params, Array], PyTree]

    def __post_init__(self):
        check_positive_int("Record", "every", self.every)
        if not callable(self.fn):
            raise TypeError(f"Record: fn must be callable fn(params, step), got {self.fn!r}.")


class TrainState(NamedTuple):
    """Carry of the training scan: parameters, optimiser state and the step counter."""

    params: Params
    opt_state: Any
    step: Array  # int32 scalar: number of updates applied so far


class TrainResult(NamedTuple):
    """Output of :func:`gradient_descent`.

    Attributes:
      params: parameters after ``num_steps`` updates.
      records: ``Record.fn`` outputs stacked along a leading axis (``None`` without a record).
      steps: int32 step index of each record (``None`` without a record).
      first_nonfinite_step: int32, first step ``t`` at which ``F(θ_t)`` was NaN/Inf
        (``t = num_steps`` means the final parameters), or ``-1`` if the run stayed finite.
    """

    params: Params
    records: PyTree | None
    steps: Array | None
    first_nonfinite_step: Array


def _check_same_tree(where: str, params: Params, params0: Params) -> None:
    """Require ``params`` to have ``params0``'s pytree structure and leaf shapes (static)."""
    structure, structure0 = jax.tree.structure(params), jax.tree.structure(params0)
    if structure != structure0:
        raise ValueError(
            f"{where}: params must have the pytree structure of params0, got {structure} vs "
            f"{structure0}."
        )
    for (path, leaf), leaf0 in zip(
        jax.tree_util.tree_leaves_with_path(params), jax.tree.leaves(params0), strict=True
    ):
        if jnp.shape(leaf) != jnp.shape(leaf0):
            raise ValueError(
                f"{where}: params{jax.tree_util.keystr(path)} must have params0's shape "
                f"{jnp.shape(leaf0)}, got {jnp.shape(leaf)}."
            )


def _squared_distance(params: Params, params0: Params) -> Array:
    _check_same_tree("tree_distance", params, params0)
    leaves = jax.tree.leaves(jax.tree.map(lambda a, b: jnp.sum(jnp.square(a - b)), params, params0))
    return sum(leaves, start=jnp.zeros(()))


def tree_distance(params: Params, params0: Params) -> Array:
    """Euclidean distance ``‖θ − θ_0‖`` over all leaves, with a zero-safe gradient.

    The gradient of ``sqrt`` at 0 is infinite; as in optax's ``safe_norm`` the square root
    is taken of a value that is never 0 and masked, so the gradient at ``θ = θ_0`` is 0.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> tree_distance({"a": jnp.array([3.0]), "b": jnp.array(4.0)}, {"a": jnp.zeros(1), "b": 0.0})
      Array(5., dtype=float32)
      >>> jax.grad(tree_distance)(jnp.ones(2), jnp.ones(2)).tolist()
      [0.0, 0.0]
    """
    sq = _squared_distance(params, params0)
    positive = sq > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, sq, 1.0)), 0.0)


def record_loss(loss_fn: Callable[[Params], Array]) -> Callable[[Params, Array], Array]:
    """Recorder of ``loss_fn(params)`` (pass the data loss; the proximal term is not added)."""
    return lambda params, step: loss_fn(params)


def record_distance(params0: Params) -> Callable[[Params, Array], Array]:
    """Recorder of the distance ``‖θ − θ_0‖`` travelled from ``params0`` (:func:`tree_distance`)."""
    return lambda params, step: tree_distance(params, params0)


def record_predictions(
    apply: Callable[[Params, Array], Array], x: ArrayLike
) -> Callable[[Params, Array], Array]:
    """Recorder of ``apply(params, x_i)`` for each row of ``x`` (``apply`` acts on one example)."""
    x = jnp.asarray(x)
    return lambda params, step: jax.vmap(apply, in_axes=(None, 0))(params, x)


def record_params() -> Callable[[Params, Array], Params]:
    """Recorder of the parameters themselves (the full trajectory at the recorded steps)."""
    return lambda params, step: params


def combine_recorders(**fns: Callable[[Params, Array], PyTree]) -> Callable[[Params, Array], dict]:
    """One recorder returning ``{name: fn(params, step)}`` for several named recorders.

    Examples:
      >>> import jax.numpy as jnp
      >>> fn = combine_recorders(loss=record_loss(lambda p: jnp.sum(p**2)),
      ...                        dist=record_distance(jnp.zeros(2)))
      >>> {k: float(v) for k, v in fn(jnp.array([3.0, 4.0]), 0).items()}
      {'loss': 25.0, 'dist': 5.0}
    """
    for name, fn in fns.items():
        if not callable(fn):
            raise TypeError(f"combine_recorders: {name} must be callable, got {fn!r}.")
    return lambda params, step: {name: fn(params, step) for name, fn in fns.items()}


def mse_loss(
    apply: Callable[[Params, Array], Array], x: ArrayLike, y: ArrayLike, *, loss_scale: ArrayLike
) -> Callable[[Params], Array]:
    """Squared loss ``L(θ) = c · Σ_i ‖f(θ, x_i) − y_i‖²`` with ``c = loss_scale``.

    ``apply(params, x_i)`` acts on one example; it is vmapped over the rows of ``x``.
    The normalisation is explicit: Shachaf et al. (2021)'s ``(1/n)‖Xw − y‖²`` is
    ``loss_scale = 1/n``; neural-tangents' ``1/(2·n·out_dim)`` is ``loss_scale=1/(2*n*out)``.

    Args:
      apply: ``apply(params, x_i) -> y_i`` on one example.
      x: inputs, leading axis ``n``.
      y: targets, shape ``(n,)`` or ``(n, out_dim)`` (compared to the flattened outputs).
      loss_scale: the factor ``c > 0``.

    Returns:
      ``loss_fn(params) -> scalar``.

    Examples:
      >>> import jax.numpy as jnp
      >>> loss = mse_loss(lambda w, x: x @ w[:, None], jnp.eye(2), jnp.array([1.0, 2.0]),
      ...                 loss_scale=0.5)
      >>> float(loss(jnp.zeros(2)))
      2.5
    """
    x, y = jnp.asarray(x), jnp.asarray(y)
    check_ndim("mse_loss", "y", y, (1, 2))
    check_same_leading_dim("mse_loss", ("x", "y"), (x, y))
    check_positive("mse_loss", "loss_scale", loss_scale)
    n = y.shape[0]
    targets = y.reshape(n, -1)

    def loss_fn(params: Params) -> Array:
        preds = jax.vmap(apply, in_axes=(None, 0))(params, x).reshape(n, -1)
        if preds.shape != targets.shape:
            raise ValueError(
                f"mse_loss: apply outputs flatten to {preds.shape[1:]} per example but y has "
                f"{targets.shape[1:]} per example (y.shape={y.shape})."
            )
        return loss_scale * jnp.sum(jnp.square(preds - targets))

    return loss_fn


def _objective(loss_fn, params0, proximal, where):
    """``F(θ) = L(θ) + (λ/2)‖θ − θ_0‖²``; the term is skipped when ``proximal`` is literally 0."""
    check_nonnegative(where, "proximal", proximal)
    out = jax.eval_shape(loss_fn, params0)
    if not hasattr(out, "shape") or out.shape != ():
        raise ValueError(
            f"{where}: loss_fn must return a scalar, got "
            f"{getattr(out, 'shape', type(out).__name__)} (reduce the per-example losses, e.g. "
            "with jnp.mean)."
        )
    if isinstance(proximal, (int, float)) and proximal == 0:
        return loss_fn

    return lambda params: loss_fn(params) + 0.5 * proximal * _squared_distance(params, params0)


def gradient_descent(
    loss_fn: Callable[[Params], Array],
    params0: Params,
    *,
    num_steps: int,
    learning_rate: ArrayLike | None = None,
    optimizer: optax.GradientTransformation | None = None,
    proximal: ArrayLike = 0.0,
    record: Record | None = None,
    throw: bool = True,
) -> TrainResult:
    r"""Full-batch gradient descent on ``F(θ) = L(θ) + (λ/2)‖θ − θ_0‖²`` as one ``lax.scan``.

    .. math::  \theta_{t+1} = \theta_t - \eta \nabla L(\theta_t) - \eta\lambda(\theta_t-\theta_0)

    with :math:`\eta` = ``learning_rate``, :math:`\lambda` = ``proximal`` and
    :math:`\theta_0` = ``params0``. Pass exactly one of ``learning_rate`` (plain GD, the
    update above) or ``optimizer`` (any optax ``GradientTransformation`` applied to
    :math:`\nabla F`; its step size is its own, so ``learning_rate`` is then forbidden).
    ``learning_rate`` and ``proximal`` may be traced arrays, so both can be vmapped over.

    Args:
      loss_fn: ``loss_fn(params) -> scalar`` (e.g. :func:`mse_loss`).
      params0: initial parameters θ_0 (any pytree); also the proximal anchor.
      num_steps: number of updates (static, ≥ 0).
      learning_rate: η of plain GD. Stability on a quadratic needs η < 2/(λ_max(∇²L) + λ),
        see :func:`check_learning_rate`.
      optimizer: an optax optimiser, instead of ``learning_rate``.
      proximal: λ ≥ 0 (a negative concrete value raises ``ValueError``).
      record: what to record and how often (:class:`Record`), or ``None``.
      throw: raise :class:`DivergenceError` if ``F`` became NaN/Inf. Needs concrete
        values, so under ``jit``/``vmap`` pass ``throw=False`` and use :func:`check_finite`.

    Returns:
      :class:`TrainResult` ``(params, records, steps, first_nonfinite_step)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> res = gradient_descent(lambda w: jnp.sum(w**2), jnp.array([1.0]), learning_rate=0.25,
      ...                        num_steps=4, record=Record(every=2, fn=record_params()))
      >>> res.steps.tolist(), res.records[:, 0].tolist()
      ([0, 2, 4], [1.0, 0.25, 0.0625])
    """
    where = "gradient_descent"
    if isinstance(num_steps, bool) or not isinstance(num_steps, (int, np.integer)) or num_steps < 0:
        raise ValueError(f"{where}: num_steps must be a non-negative integer, got {num_steps!r}.")
    if (learning_rate is None) == (optimizer is None):
        raise ValueError(
            f"{where}: pass exactly one of learning_rate (plain GD) or optimizer (optax), got "
            f"learning_rate={learning_rate!r} and optimizer={optimizer!r}."
        )
    if record is not None and not isinstance(record, Record):
        raise TypeError(f"{where}: record must be a Record(every=..., fn=...), got {record!r}.")
    params0 = jax.tree.map(jnp.asarray, params0)
    objective = _objective(loss_fn, params0, proximal, where)
    if optimizer is None:
        check_positive(where, "learning_rate", learning_rate)
        optimizer = optax.sgd(learning_rate)  # updates -η·g: same arithmetic as θ − η·g

    def step(carry, _):
        state, first_bad = carry
        value, grads = jax.value_and_grad(objective)(state.params)
        first_bad = jnp.where(jnp.isfinite(value), first_bad, jnp.minimum(first_bad, state.step))
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        params = jax.tree.map(
            lambda p, u: (p + u).astype(jnp.result_type(p)), state.params, updates
        )
        return (TrainState(params, opt_state, state.step + 1), first_bad), None

    def run_steps(carry, length):
        return jax.lax.scan(step, carry, length=length)[0] if length else carry

    state = TrainState(params0, optimizer.init(params0), jnp.zeros((), jnp.int32))
    carry = (state, jnp.asarray(_NO_BAD_STEP, jnp.int32))
    records = steps = None
    if record is None:
        carry = run_steps(carry, num_steps)
    else:
        num_chunks, remainder = divmod(num_steps, record.every)

        def chunk(carry, _):
            carry = run_steps(carry, record.every)
            return carry, record.fn(carry[0].params, carry[0].step)

        first = record.fn(params0, state.step)
        carry, rest = jax.lax.scan(chunk, carry, length=num_chunks)
        records = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), first, rest)
        steps = jnp.arange(num_chunks + 1, dtype=jnp.int32) * record.every
        carry = run_steps(carry, remainder)
    (state, first_bad) = carry
    final_bad = ~jnp.isfinite(objective(state.params))
    first_bad = jnp.where(final_bad, jnp.minimum(first_bad, num_steps), first_bad)
    first_bad = jnp.where(first_bad == _NO_BAD_STEP, -1, first_bad)
    result = TrainResult(state.params, records, steps, first_bad)
    if throw:
        if not _is_concrete(first_bad):
            raise ValueError(
                f"{where}: throw=True needs concrete values, but it was called under jit/vmap. "
                "Pass throw=False there and call check_finite(result) outside."
            )
        check_finite(result, where=where)
    return result


def check_finite(result: TrainResult, *, where: str = "gradient_descent") -> TrainResult:
    """Raise :class:`DivergenceError` if any run in ``result`` (possibly vmapped) diverged.

    Args:
      result: a :class:`TrainResult`, with any leading batch axes from ``vmap``.
      where: the function name used in the message.

    Returns:
      ``result`` unchanged when every run stayed finite.

    Examples:
      >>> import jax.numpy as jnp
      >>> res = gradient_descent(lambda w: jnp.sum(w**2), jnp.ones(1), learning_rate=1.5,
      ...                        num_steps=200, throw=False)
      >>> check_finite(res)
      Traceback (most recent call last):
      ...
      ntsim.core._train.DivergenceError: gradient_descent: the objective became non-finite ...
    """
    first = np.asarray(result.first_nonfinite_step)
    if np.all(first < 0):
        return result
    if first.ndim == 0:
        what = f"first at step {int(first)}"
    else:
        bad = np.argwhere(first >= 0)
        pairs = ", ".join(f"{tuple(map(int, i))}: step {int(first[tuple(i)])}" for i in bad)
        what = f"in {len(bad)} of {first.size} runs (batch index: first step) {pairs}"
    raise DivergenceError(
        f"{where}: the objective became non-finite (NaN/Inf) {what}; lower learning_rate (on a "
        "quadratic GD is stable only for learning_rate < 2 / largest Hessian eigenvalue, see "
        "check_learning_rate)."
    )


def check_learning_rate(learning_rate: float, hessian_max_eigenvalue: float) -> float:
    """Require the GD stability condition ``η ≤ 2/λ_max`` on a quadratic loss.

    On ``L(θ) = ½ θᵀHθ + …`` gradient descent multiplies the error along the top eigenvector
    by ``1 − ηλ_max``, which grows in modulus iff ``η > 2/λ_max``. With a proximal term use
    the eigenvalue of ``H + λI``. A host-side check: both arguments must be concrete.

    Args:
      learning_rate: η > 0.
      hessian_max_eigenvalue: λ_max > 0 of the Hessian of the objective.

    Returns:
      The limit ``2/λ_max``.

    Raises:
      ValueError: if ``η > 2/λ_max`` (the message states the limit).

    Examples:
      >>> check_learning_rate(0.4, 4.0)
      0.5
      >>> check_learning_rate(0.6, 4.0)
      Traceback (most recent call last):
      ...
      ValueError: check_learning_rate: learning_rate must be <= 2 / hessian_max_eigenvalue = 0.5 ...
    """
    where = "check_learning_rate"
    check_positive(where, "learning_rate", learning_rate)
    check_positive(where, "hessian_max_eigenvalue", hessian_max_eigenvalue)
    limit = 2.0 / float(hessian_max_eigenvalue)
    if float(learning_rate) > limit:
        raise ValueError(
            f"{where}: learning_rate must be <= 2 / hessian_max_eigenvalue = {limit:.6g} for "
            f"stable gradient descent, got {learning_rate=}."
        )
    return limit
