r"""Regularised fine-tuning dynamics of Rahimi Afzal et al. (2025): loss, runs, Thm 1, Lemma 3.

Setting (slides, "Setting"): a scalar model ``f_θ(x)``, training inputs ``x* = (x_1..x_n)``,
targets ``y* ∈ ℝⁿ``, outputs ``y(t) = f_{θ_t}(x*)``, Jacobian ``J_θ = ∇_θ f_θ(x*) ∈ ℝ^{n×p}``,
empirical NTK ``k_θ = J_θ J_θᵀ``, and the *summed* squared loss

.. math:: \tilde R(θ) = \sum_i (f_θ(x_i) - y_i)^2 = ‖f_θ(x^*) - y^*‖^2,
   \qquad ∇_θ\tilde R(θ) = 2(y - y^*)ᵀ J_θ .

Training is the split proximal step (:func:`ntsim.core._proximal.proximal_gd`) with constant
or selective ``λ_t``; its ``η → 0`` limit is the flow ``θ̇ = −∇R̃ᵀ − λ_t(θ − θ_0)`` (Lemma 3).
The linearised model ``f̄_θ(x) = f_{θ_0}(x) + ∇f_{θ_0}(x)(θ − θ_0)`` is trained with the same
dynamics (:func:`finetune` with ``linearised=True``).

All functions are pure and ``vmap``-compatible; ``apply(params, x)`` acts on one example and
returns a scalar or a shape-``(1,)`` output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from ntsim._types import Array, ArrayLike, Params
from ntsim.core import Record, gradient_flow, linearize, mse_loss, proximal_gd, tree_distance

__all__ = [
    "Thm1Identity",
    "Trajectory",
    "finetune",
    "flat_jacobian",
    "flow_path",
    "jacobian_op_norm",
    "outputs",
    "squared_loss",
    "thm1_identity",
]


def _scalar(apply: Callable[[Params, Array], Array]) -> Callable[[Params, Array], Array]:
    """``apply`` with its (size-1) output reshaped to a scalar."""

    def f(params: Params, x: Array) -> Array:
        y = apply(params, x)
        if jnp.size(y) != 1:
            raise ValueError(
                "linearization: the theory needs a scalar model f_θ(x) (Rahimi Afzal et al. "
                f"2025, setting); apply returned shape {jnp.shape(y)}."
            )
        return jnp.reshape(y, ())

    return f


def outputs(apply: Callable[[Params, Array], Array], params: Params, x: ArrayLike) -> Array:
    """``y = f_θ(x*) ∈ ℝⁿ`` for the rows of ``x`` (scalar model)."""
    return jax.vmap(_scalar(apply), in_axes=(None, 0))(params, jnp.asarray(x))


def squared_loss(
    apply: Callable[[Params, Array], Array], x: ArrayLike, y: ArrayLike
) -> Callable[[Params], Array]:
    """``R̃(θ) = Σ_i (f_θ(x_i) − y_i)²`` (the slides' summed loss; ``loss_scale = 1``)."""
    return mse_loss(apply, x, y, loss_scale=1.0)


def flat_jacobian(apply: Callable[[Params, Array], Array], params: Params, x: ArrayLike) -> Array:
    """``J_θ = ∇_θ f_θ(x*)``, shape ``(n, p)`` with ``p`` the number of parameters."""
    flat, unravel = ravel_pytree(params)
    f = _scalar(apply)
    return jax.vmap(lambda xi: jax.grad(lambda p: f(unravel(p), xi))(flat))(jnp.asarray(x))


def _op_norm(jac: Array) -> Array:
    """Spectral norm of an ``(n, p)`` matrix through the ``n × n`` Gram matrix."""
    return jnp.sqrt(jnp.maximum(jnp.linalg.eigvalsh(jac @ jac.T)[-1], 0))


def jacobian_op_norm(
    apply: Callable[[Params, Array], Array], params: Params, x: ArrayLike
) -> Array:
    """``‖J_θ‖_op = sqrt(λ_max(J_θJ_θᵀ))``: a lower bound on ``Lip(f)`` (equal on a convex set
    when taken as the sup over it)."""
    return _op_norm(flat_jacobian(apply, params, x))


class Trajectory(NamedTuple):
    """A recorded fine-tuning run.

    Attributes:
      steps: ``(T,)`` recorded step indices (``0, every, …``).
      times: ``(T,)`` flow times ``t = η·step``.
      distance: ``(T,)`` ``‖θ_t − θ_0‖``.
      train: ``(T, n)`` ``f_{θ_t}(x*)``.
      test: ``(T, m)`` outputs on ``x_test`` (``None`` without it).
      jac_norm: ``(T,)`` ``‖J_{θ_t}‖_op`` on ``x*`` (``None`` without ``record_jacobian``).
      grad_lip: ``(T,)`` ``‖J_{θ_t} − J_{θ_0}‖_op/‖θ_t − θ_0‖`` (0 at ``θ_0``): a path
        estimate of ``Lip(∇f)``.
      strengths: ``(num_steps,)`` the ``λ_t`` used at each step.
      inner: ``(num_steps,)`` ``∇R̃(θ_t)·(θ_t − θ_0)`` at each pre-step point.
      fraction_regularised: fraction of steps with ``λ_t > 0``.
      params: the final parameters.
      first_nonfinite_step: ``−1`` when the run stayed finite.
    """

    steps: Array
    times: Array
    distance: Array
    train: Array
    test: Array | None
    jac_norm: Array | None
    grad_lip: Array | None
    strengths: Array
    inner: Array
    fraction_regularised: Array
    params: Params
    first_nonfinite_step: Array


def finetune(
    apply: Callable[[Params, Array], Array],
    params0: Params,
    x: ArrayLike,
    y: ArrayLike,
    *,
    proximal: ArrayLike,
    learning_rate: ArrayLike,
    num_steps: int,
    selective: bool = False,
    record_every: int = 1,
    x_test: ArrayLike | None = None,
    linearised: bool = False,
    record_jacobian: bool = True,
) -> Trajectory:
    r"""Split-step GD on ``R̃(θ) + (λ/2)‖θ − θ_0‖²`` from ``θ_0``, recording Thm 1–4 quantities.

    .. math:: θ_{t+1} - θ_0 = (1 - λ_tη)(θ_t - θ_0 - η∇\tilde R(θ_t)ᵀ)

    (Rahimi Afzal et al. 2025, split step; ``λ_t = λ`` or the selective rule). With
    ``linearised=True`` the model is ``f̄_θ = f_{θ_0} + J_{θ_0}(θ − θ_0)``
    (:func:`ntsim.core.linearize`), trained by the same dynamics.

    Args:
      apply: scalar model on one example.
      params0: the pretrained parameters ``θ_0`` (also the anchor).
      x: training inputs ``(n, ...)``.
      y: training targets ``(n,)``.
      proximal: ``λ ≥ 0`` with ``λη ≤ 1``.
      learning_rate: ``η > 0``.
      num_steps: number of steps (static).
      selective: the selective scheme (``λ_t = λ`` iff ``∇R̃·(θ_t − θ_0) ≥ 0``).
      record_every: record every this many steps (static).
      x_test: optional test inputs whose outputs are recorded.
      linearised: train the linearisation at ``θ_0`` instead of the network.
      record_jacobian: record ``jac_norm`` and ``grad_lip`` (one Jacobian per record);
        ``False`` leaves them ``None`` (cheaper when only losses are needed).

    Returns:
      :class:`Trajectory` (``throw=False``: check ``first_nonfinite_step`` under ``vmap``).
    """
    model = linearize(apply, params0) if linearised else apply
    x = jnp.asarray(x)
    loss = squared_loss(model, x, y)
    jac0 = flat_jacobian(model, params0, x) if record_jacobian else None

    def jacobian_stats(p, s):
        dist = tree_distance(p, params0)
        if not record_jacobian:
            return {"distance": dist}
        jac = flat_jacobian(model, p, x)
        gap = _op_norm(jac - jac0)
        return {
            "distance": dist,
            "jac_norm": _op_norm(jac),
            "grad_lip": jnp.where(dist > 0, gap / jnp.where(dist > 0, dist, 1.0), 0.0),
        }

    fns = {"stats": jacobian_stats, "train": lambda p, s: outputs(model, p, x)}
    if x_test is not None:
        x_test = jnp.asarray(x_test)
        fns["test"] = lambda p, s: outputs(model, p, x_test)
    record = Record(every=record_every, fn=lambda p, s: {k: fn(p, s) for k, fn in fns.items()})
    res = proximal_gd(
        loss,
        params0,
        num_steps=num_steps,
        learning_rate=learning_rate,
        proximal=proximal,
        selective=selective,
        record=record,
        throw=False,
    )
    rec = res.records
    return Trajectory(
        steps=res.steps,
        times=res.steps * jnp.asarray(learning_rate, rec["train"].dtype),
        distance=rec["stats"]["distance"],
        train=rec["train"],
        test=rec.get("test"),
        jac_norm=rec["stats"].get("jac_norm"),
        grad_lip=rec["stats"].get("grad_lip"),
        strengths=res.strengths,
        inner=res.inner,
        fraction_regularised=res.fraction_regularised,
        params=res.params,
        first_nonfinite_step=res.first_nonfinite_step,
    )


def flow_path(
    apply: Callable[[Params, Array], Array],
    params0: Params,
    x: ArrayLike,
    y: ArrayLike,
    *,
    proximal: ArrayLike,
    times: ArrayLike,
    linearised: bool = False,
    rtol: float = 1e-10,
    atol: float = 1e-10,
) -> Params:
    r"""The Lemma-3 flow ``θ̇ = −∇R̃(θ)ᵀ − λ(θ − θ_0)`` (constant ``λ``) at ``times``, via diffrax.

    Rahimi Afzal et al. (2025), Lemma 3: the ``η → 0`` limit of the split step. Solved by
    :func:`ntsim.core.gradient_flow` (Tsit5, PID control) with ``learning_rate = 1``.

    Returns:
      ``params`` with a leading axis ``len(times)``.
    """
    model = linearize(apply, params0) if linearised else apply
    times = jnp.asarray(times)
    return gradient_flow(
        squared_loss(model, x, y),
        params0,
        t1=times[-1],
        save_times=times,
        proximal=proximal,
        rtol=rtol,
        atol=atol,
    )


class Thm1Identity(NamedTuple):
    """Both sides of the Thm 1 identities at one point ``θ``.

    Attributes:
      lhs: ``½ d/dt‖y − y*‖²`` along the flow, by a JVP of ``θ ↦ f_θ(x*)``.
      rhs: ``−2(y − y*)ᵀk_θ(y − y*) − (λ/2)∇R̃(θ)(θ − θ_0)`` from ``J_θ``.
      dy_jvp: ``dy/dt`` by JVP, ``(n,)``.
      dy_formula: ``−(2k_θ(y − y*) + λJ_θ(θ − θ_0))``, ``(n,)``.
      kernel_term: ``−2(y − y*)ᵀk_θ(y − y*) ≤ 0``.
      inner: ``∇R̃(θ)(θ − θ_0)`` (its sign decides the selective ``λ_t``).
    """

    lhs: Array
    rhs: Array
    dy_jvp: Array
    dy_formula: Array
    kernel_term: Array
    inner: Array


def thm1_identity(
    apply: Callable[[Params, Array], Array],
    params: Params,
    params0: Params,
    x: ArrayLike,
    y: ArrayLike,
    proximal: ArrayLike,
) -> Thm1Identity:
    r"""Thm 1's identities at ``θ`` = ``params`` (Rahimi Afzal et al. 2025, Thm 1 proof).

    .. math::

       \frac{dy}{dt} = -\big(2k_θ(y - y^*) + λ J_θ(θ - θ_0)\big), \qquad
       \tfrac12 \frac{d}{dt}‖y - y^*‖^2 = -2⟨k_θ(y - y^*), y - y^*⟩
       - \tfrac{λ}{2} ∇_θ\tilde R(θ)(θ - θ_0),

    along ``θ̇ = −∇R̃(θ)ᵀ − λ(θ − θ_0)``. The left sides come from one ``jax.jvp`` of
    ``θ ↦ f_θ(x*)`` along ``θ̇``; the right sides from the explicit Jacobian ``J_θ``.
    """
    x, y = jnp.asarray(x), jnp.asarray(y)
    loss = squared_loss(apply, x, y)
    grads = jax.grad(loss)(params)
    delta = jax.tree.map(jnp.subtract, params, params0)
    velocity = jax.tree.map(lambda g, d: -g - proximal * d, grads, delta)
    y_now, dy = jax.jvp(lambda p: outputs(apply, p, x), (params,), (velocity,))
    residual = y_now - y
    lhs = residual @ dy
    jac = flat_jacobian(apply, params, x)
    flat_delta, _ = ravel_pytree(delta)
    kernel = jac @ jac.T
    inner = 2 * residual @ (jac @ flat_delta)  # ∇R̃(θ)(θ − θ_0) = 2(y − y*)ᵀJ_θ(θ − θ_0)
    kernel_term = -2 * residual @ kernel @ residual
    rhs = kernel_term - 0.5 * proximal * inner
    dy_formula = -(2 * kernel @ residual + proximal * jac @ flat_delta)
    return Thm1Identity(lhs, rhs, dy, dy_formula, kernel_term, inner)
