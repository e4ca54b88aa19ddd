"""Gradient flow ``θ̇ = −η ∇(L(θ) + (λ/2)‖θ − θ_0‖²)`` through diffrax.

The continuous-time limit of :func:`ntsim.core.gradient_descent` (same loss, learning rate
and proximal conventions), for comparing discrete training with its ODE.

References:
  P. Kidger, "On Neural Differential Equations", PhD thesis, Oxford, 2021 (diffrax).
  C. Tsitouras, "Runge–Kutta pairs of order 5(4) satisfying only the first column
  simplifying assumption", Computers & Mathematics with Applications 62(2), 2011 (Tsit5).
"""

from __future__ import annotations

from collections.abc import Callable

import diffrax
import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike, Params
from ntsim._validation import _is_concrete, check_ndim, check_positive, check_positive_int
from ntsim.core._train import _objective

__all__ = ["gradient_flow"]


def gradient_flow(
    loss_fn: Callable[[Params], Array],
    params0: Params,
    *,
    t1: float,
    save_times: ArrayLike,
    learning_rate: ArrayLike = 1.0,
    proximal: ArrayLike = 0.0,
    rtol: float = 1e-8,
    atol: float = 1e-8,
    max_steps: int = 16_384,
    solver: diffrax.AbstractSolver | None = None,
) -> Params:
    r"""Gradient flow ``θ̇ = −η ∇(L(θ) + (λ/2)‖θ − θ_0‖²)`` from ``θ(0) = θ_0``, via diffrax.

    The continuous-time limit of :func:`gradient_descent`: GD after ``k`` steps approximates
    the flow at ``t = η·k`` with error ``O(η)``. Solved with Tsit5 (Tsitouras 2011) and a
    PID step-size controller; for stiff (ill-conditioned) problems pass an implicit
    ``solver`` such as ``diffrax.Kvaerno5()``.

    Args:
      loss_fn: ``loss_fn(params) -> scalar``.
      params0: initial parameters (any pytree), also the proximal anchor.
      t1: final time (> 0).
      save_times: increasing times in ``[0, t1]`` at which to return the parameters.
      learning_rate: η > 0, a time rescaling (may be traced).
      proximal: λ ≥ 0 (may be traced).
      rtol: relative tolerance of the PID controller.
      atol: absolute tolerance of the PID controller.
      max_steps: solver step budget (diffrax raises if it runs out).
      solver: a diffrax solver; default ``diffrax.Tsit5()``.

    Returns:
      ``params`` pytree with a leading axis of length ``len(save_times)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> ts = jnp.array([0.0, 1.0])
      >>> w = gradient_flow(lambda w: 0.5 * jnp.sum(w**2), jnp.ones(1), t1=1.0, save_times=ts)
      >>> bool(jnp.allclose(w[:, 0], jnp.exp(-ts), rtol=1e-6))
      True
    """
    where = "gradient_flow"
    check_positive(where, "t1", t1)
    check_positive(where, "learning_rate", learning_rate)
    check_positive_int(where, "max_steps", max_steps)
    check_ndim(where, "save_times", save_times, 1)
    if _is_concrete(save_times) and _is_concrete(t1):
        ts = np.asarray(save_times)
        if ts.size == 0 or np.any(np.diff(ts) <= 0) or ts[0] < 0 or ts[-1] > float(t1):
            raise ValueError(
                f"{where}: save_times must be non-empty, strictly increasing and within "
                f"[0, t1={t1}], got {save_times!r}."
            )
    params0 = jax.tree.map(jnp.asarray, params0)
    grad = jax.grad(_objective(loss_fn, params0, proximal, where))

    def vector_field(t, params, args):
        return jax.tree.map(lambda g: -learning_rate * g, grad(params))

    sol = diffrax.diffeqsolve(
        diffrax.ODETerm(vector_field),
        diffrax.Tsit5() if solver is None else solver,
        t0=0.0,
        t1=t1,
        dt0=None,
        y0=params0,
        saveat=diffrax.SaveAt(ts=jnp.asarray(save_times)),
        stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
        max_steps=max_steps,
    )
    return sol.ys
