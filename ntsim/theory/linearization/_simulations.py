r"""Simulations behind the numerical checks of Rahimi Afzal et al. (2025), one per statement.

Each ``simulate_*(key, setting)`` draws ``setting.instances`` independent random instances
(``jax.random.split(key, instances)``, one compiled ``vmap``) and returns a NamedTuple of
arrays with a leading instance axis; the claims in ``ntsim.claims.linearization`` only
compare what these functions return with the paper's formulas. Sizes the paper leaves open
(it gives none for these checks) are ours, in frozen ``*Setting`` dataclasses.

A *network instance* (:func:`random_instance`) is a one-hidden-layer tanh MLP (NTK
parameterisation, bias std 0.3) at a random ``θ_0`` with ``n`` Gaussian inputs and ``±1``
targets: a scalar model as in the paper's setting, ``θ_0`` playing the pretrained point
(the theorems hold for any ``θ_0``). *Linear instances* ``f_θ = Φθ`` have ``Lip(f) = ‖Φ‖_op``
exactly; with the initial residual along the top singular direction of ``Φ`` they attain
the theorems' worst case, which makes the printed statements' violations closed forms:

* Thm 2 as printed, ``λ = 0``, ``a = 2ημ_max``: at step ``k`` the distance over the
  printed bound is exactly ``((1 − a)^{−k} − 1)/(ak) > 1`` (``→ (e^s − 1)/s``, ``s = 2μt``);
* Thm 4 as printed, ``λ = 20μ_max`` at the printed threshold, split step ``λη = 0.05``:
  the distance settles at ``√μ r_0/(μ + σ_eff)``, ``σ_eff = λ/(2(1 − λη))``, i.e. at
  ``10/(11.53 r_0)`` times the radius — outside the ball whenever ``r_0 < 0.87``.

This module holds the network and linear instances and the dynamics; :mod:`._kernel_simulations`
the kernel blocks and Thms 5 and 7; :mod:`._ball_simulations` the distances, the gap and
r-ball (Thms 2–4) and the KRR reduction.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree

from ntsim._config import Validated, param
from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import (
    mlp,
    proximal_combined_step,
    proximal_split_step,
)
from ntsim.theory.linearization._dynamics import finetune, flat_jacobian, flow_path

__all__ = [
    "GdToFlowRun",
    "GdToFlowSetting",
    "NetworkSetting",
    "NetworkInstance",
    "SelectiveRun",
    "SelectiveStepRun",
    "SelectiveStepSetting",
    "SplitStepRun",
    "SplitStepSetting",
    "Thm1Run",
    "instance_model",
    "random_instance",
    "simulate_gd_to_flow",
    "simulate_selective",
    "selective_step",
    "simulate_selective_step",
    "simulate_split_step",
    "simulate_thm1_identity",
]


def _instances(fn, key: PRNGKey, instances: int):
    """``fn`` over ``instances`` independent keys split from ``key``, one compiled vmap."""
    return jax.jit(jax.vmap(fn))(jax.random.split(key, instances))


# ------------------------------------------------------------------------ network instances


def instance_model(width: int):
    """The instance model: ``Dense(width) → tanh → Dense(1)``, NTK parameterisation."""
    return mlp((width,), activation="tanh", parameterization="ntk", b_std=0.3)


class NetworkInstance(NamedTuple):
    """One random fine-tuning problem (module doc)."""

    x: Array  # (n, d)
    y: Array  # (n,)
    params0: dict
    mu_max: Array  # λ_max(K) of the NTK at θ_0 (sets the step size)


def random_instance(
    key: PRNGKey, *, n: int, d: int, width: int, target_offset: float = 0.0
) -> NetworkInstance:
    """A random network instance; ``y = ±1 + target_offset``."""
    kx, ky, kp = jax.random.split(key, 3)
    x = jax.random.normal(kx, (n, d))
    y = jnp.where(jax.random.bernoulli(ky, 0.5, (n,)), 1.0, -1.0) + target_offset
    params0 = instance_model(width).init(kp, x[0])
    jac = flat_jacobian(instance_model(width).apply, params0, x)
    return NetworkInstance(x, y, params0, jnp.linalg.eigvalsh(jac @ jac.T)[-1])


@dataclasses.dataclass(frozen=True)
class NetworkSetting(Validated):
    """Sizes of the network instances.

    Attributes:
      n: training inputs ``x*``.
      d: input dimension.
      width: hidden width.
      steps: split-step GD steps of a fine-tuning run.
      instances: independent instances.
    """

    n: int = param(5, "training inputs x*", low=1)
    d: int = param(3, "input dimension", low=1)
    width: int = param(8, "hidden width", low=1)
    steps: int = param(150, "split-step GD steps of a fine-tuning run", low=1)
    instances: int = param(200, "independent instances", low=1)


def _constant_run(key, s: NetworkSetting, *, selective: bool, zero_fraction: float = 0.0):
    """Split-step GD with ``λ`` log-uniform on ``[0.1, 10]·λ_max(K)`` (0 w.p. ``zero_fraction``)
    and ``η = min(0.1/λ_max(K), 0.5/λ)``."""
    inst = random_instance(key, n=s.n, d=s.d, width=s.width)
    k_lam, k_zero = jax.random.split(jax.random.fold_in(key, 11))
    lam = 10 ** jax.random.uniform(k_lam, minval=-1.0, maxval=1.0) * inst.mu_max
    lam = jnp.where(jax.random.uniform(k_zero) < zero_fraction, 0.0, lam)
    eta = jnp.minimum(0.1 / inst.mu_max, 0.5 / jnp.maximum(lam, 1e-30))
    run = finetune(
        instance_model(s.width).apply,
        inst.params0,
        inst.x,
        inst.y,
        proximal=lam,
        learning_rate=eta,
        num_steps=s.steps,
        selective=selective,
    )
    return inst, run, lam, eta


# ------------------------------------------------------------------------------ dynamics


@dataclasses.dataclass(frozen=True)
class SplitStepSetting:
    """Random pytrees ``θ, g, θ_0`` (a 4×3 weight and a bias), ``η ~ U[0.01, 0.5]``,
    ``λη ~ U[0, 1]``."""

    instances: int = 200


class SplitStepRun(NamedTuple):
    """Flat ``θ, g, θ_0``, ``η, λ`` and the three forms of one step (``(I, p)`` each).

    Attributes:
      mid: ``θ̃ = θ − ηg`` from :func:`ntsim.core.proximal_split_step`.
      split: its ``θ' = θ̃ − λη(θ̃ − θ_0)``.
      combined: :func:`ntsim.core.proximal_combined_step`.
    """

    theta: Array
    grads: Array
    theta0: Array
    eta: Array
    lam: Array
    mid: Array
    split: Array
    combined: Array


def simulate_split_step(key: PRNGKey, setting: SplitStepSetting) -> SplitStepRun:
    """One split step and its combined form on random pytrees."""
    check_setting_type("simulate_split_step", setting, SplitStepSetting)
    check_key("simulate_split_step", key)

    def one(k):
        ka, kb, kc, ke, kl = jax.random.split(k, 5)
        shapes = {"w": (4, 3), "b": (3,)}

        def tree(kk):
            return {
                name: jax.random.normal(jax.random.fold_in(kk, i), shape)
                for i, (name, shape) in enumerate(shapes.items())
            }

        params, grads, params0 = tree(ka), tree(kb), tree(kc)
        eta = jax.random.uniform(ke, minval=0.01, maxval=0.5)
        lam = jax.random.uniform(kl, maxval=1.0) / eta
        mid, new = proximal_split_step(params, grads, params0, learning_rate=eta, proximal=lam)
        combined = proximal_combined_step(params, grads, params0, learning_rate=eta, proximal=lam)
        flat = lambda t: ravel_pytree(t)[0]  # noqa: E731
        return SplitStepRun(
            flat(params), flat(grads), flat(params0), eta, lam, flat(mid), flat(new),
            flat(combined),
        )  # fmt: skip

    return _instances(one, key, setting.instances)


@dataclasses.dataclass(frozen=True)
class GdToFlowSetting:
    """Lemma 3: GD with ``steps``, ``2·steps``, ``4·steps`` steps to ``T = 2/λ_max(K)`` vs the
    flow (diffrax Tsit5, rtol = atol = 1e-10); ``λ ~ U[0, 2]·λ_max(K)``."""

    n: int = 5
    d: int = 3
    width: int = 8
    steps: int = 20
    instances: int = 200


class GdToFlowRun(NamedTuple):
    """``gaps``: ``(I, 3)`` ``‖θ_GD(T) − θ(T)‖`` at ``η, η/2, η/4``; ``eta``: ``(I,)`` the
    coarsest step."""

    gaps: Array
    eta: Array


def simulate_gd_to_flow(key: PRNGKey, setting: GdToFlowSetting) -> GdToFlowRun:
    """Split-step GD at three step sizes against the Lemma-3 flow (:class:`GdToFlowRun`)."""
    check_setting_type("simulate_gd_to_flow", setting, GdToFlowSetting)
    check_key("simulate_gd_to_flow", key)
    s = setting

    def one(k):
        inst = random_instance(k, n=s.n, d=s.d, width=s.width)
        apply = instance_model(s.width).apply
        t_end = 2.0 / inst.mu_max
        lam = jax.random.uniform(jax.random.fold_in(k, 5), maxval=2.0) * inst.mu_max
        flow = flow_path(
            apply, inst.params0, inst.x, inst.y, proximal=lam, times=jnp.stack([0.0 * t_end, t_end])
        )
        target = ravel_pytree(jax.tree.map(lambda a: a[-1], flow))[0]
        gaps = []
        for factor in (1, 2, 4):
            run = finetune(
                apply, inst.params0, inst.x, inst.y, proximal=lam,
                learning_rate=t_end / (s.steps * factor), num_steps=s.steps * factor,
                record_every=s.steps * factor, record_jacobian=False,
            )  # fmt: skip
            gaps.append(jnp.linalg.norm(ravel_pytree(run.params)[0] - target))
        return GdToFlowRun(jnp.stack(gaps), t_end / s.steps)

    return _instances(one, key, s.instances)


class Thm1Run(NamedTuple):
    """Both sides of Thm 1's identities at ``θ = θ_0 + 0.5v/√p`` (``λ`` log-uniform on
    ``[0.01, 10]``), leading axis instances (fields of :class:`Thm1Identity`), with the
    point's distance ``‖θ − θ_0‖`` (``≈ 0.5``, as ``‖v‖/√p ≈ 1 ± 1/√(2p)``) and ``p``."""

    lhs: Array
    rhs: Array
    dy_jvp: Array
    dy_formula: Array
    kernel_term: Array
    inner: Array
    lam: Array
    distance: Array  # (I,): ‖θ − θ_0‖ of the evaluation point
    num_params: Array  # (I,): p, the length of θ


def simulate_thm1_identity(key: PRNGKey, setting: NetworkSetting) -> Thm1Run:
    """Thm 1's identities (:func:`thm1_identity`) at random points near ``θ_0``."""
    check_setting_type("simulate_thm1_identity", setting, NetworkSetting)
    check_key("simulate_thm1_identity", key)
    from ntsim.theory.linearization._dynamics import thm1_identity

    s = setting

    def one(k):
        inst = random_instance(k, n=s.n, d=s.d, width=s.width)
        flat0, unravel = ravel_pytree(inst.params0)
        k_dir, k_lam = jax.random.split(jax.random.fold_in(k, 3))
        flat = flat0 + 0.5 * jax.random.normal(k_dir, flat0.shape) / jnp.sqrt(flat0.size)
        lam = 10 ** jax.random.uniform(k_lam, minval=-2.0, maxval=1.0)
        ident = thm1_identity(
            instance_model(s.width).apply, unravel(flat), inst.params0, inst.x, inst.y, lam
        )
        return Thm1Run(*ident, lam, jnp.linalg.norm(flat - flat0), jnp.asarray(flat0.size))

    return _instances(one, key, s.instances)


class SelectiveRun(NamedTuple):
    """Selective-λ runs (``λ`` log-uniform on ``[0.1, 10]·λ_max(K)``, ``η = min(0.1/λ_max,
    0.5/λ)``).

    Attributes:
      residual: ``(I, T)`` ``‖f_θt(x*) − y*‖`` at every step.
      inner: ``(I, steps)`` ``∇R̃(θ_t)·(θ_t − θ_0)`` at the pre-step points.
      fraction_regularised: ``(I,)`` fraction of steps with ``λ_t = λ``.
      first_nonfinite_step: ``(I,)`` ``−1`` when the run stayed finite.
    """

    residual: Array
    inner: Array
    fraction_regularised: Array
    first_nonfinite_step: Array


def simulate_selective(key: PRNGKey, setting: NetworkSetting) -> SelectiveRun:
    """Thm 1's selective scheme on network instances (:class:`SelectiveRun`)."""
    check_setting_type("simulate_selective", setting, NetworkSetting)
    check_key("simulate_selective", key)
    s = setting

    def one(k):
        inst = random_instance(k, n=s.n, d=s.d, width=s.width)
        lam = 10 ** jax.random.uniform(jax.random.fold_in(k, 4), minval=-1.0, maxval=1.0)
        lam = lam * inst.mu_max
        eta = jnp.minimum(0.1 / inst.mu_max, 0.5 / lam)
        run = finetune(
            instance_model(s.width).apply, inst.params0, inst.x, inst.y, proximal=lam,
            learning_rate=eta, num_steps=s.steps, selective=True, record_jacobian=False,
        )  # fmt: skip
        residual = jnp.linalg.norm(run.train - inst.y, axis=1)
        return SelectiveRun(residual, run.inner, run.fraction_regularised, run.first_nonfinite_step)

    return _instances(one, key, s.instances)


def selective_step(theta: Array, theta0: Array, grad: Array, eta, lam) -> Array:
    """The slides' selective split step on flat parameters: ``θ̃ = θ − η∇R̃ᵀ``, then
    ``θ̃ − λη(θ̃ − θ_0)`` if ``∇R̃(θ)(θ − θ_0) ≥ 0``, else ``θ̃``."""
    mid = theta - eta * grad
    return jnp.where(grad @ (theta - theta0) >= 0, mid - lam * eta * (mid - theta0), mid)


@dataclasses.dataclass(frozen=True)
class SelectiveStepSetting:
    """One printed selective step from a constructed state of a linear model ``f_θ = Φθ``.

    Attributes:
      n: training inputs (``Φ`` is ``(n, 4n)``).
      epsilon: the state's residual ``y − y* = ε(y* − f_θ0)``, ``‖y* − f_θ0‖ = 1``.
      instances: independent instances (``λ`` log-uniform on ``[0.1, 10]·λ_max(K)``,
        ``η = min(0.1/λ_max(K), 0.5/λ)``, as in :func:`simulate_selective`).
    """

    n: int = 8
    epsilon: float = 1e-3
    instances: int = 200


class SelectiveStepRun(NamedTuple):
    """``(I,)`` each: ``before`` ``‖y − y*‖`` (= ε), ``after`` ``‖y' − y*‖`` after one step of
    the printed scheme, ``inner`` ``∇R̃(θ)(θ − θ_0)`` (> 0: ``λ_t = λ``), ``lam_eta`` ``λη``,
    ``flow_rate`` ``½ d/dt‖y − y*‖²`` along ``θ̇ = −∇R̃ᵀ − λ(θ − θ_0)`` at the state (a JVP),
    ``kernel_term`` ``2(y − y*)ᵀK(y − y*)``, ``eta`` ``η``; and the ingredients of the step's
    closed form in output space: ``kernel`` ``K = ΦΦᵀ`` ``(I, n, n)``, ``residual``
    ``y − y*`` and ``init_gap`` ``y* − f_θ0`` ``(I, n)`` each."""

    before: Array
    after: Array
    inner: Array
    lam_eta: Array
    flow_rate: Array
    kernel_term: Array
    eta: Array
    kernel: Array
    residual: Array
    init_gap: Array


def simulate_selective_step(key: PRNGKey, setting: SelectiveStepSetting) -> SelectiveStepRun:
    """The printed selective step (``θ̃ = θ − η∇R̃ᵀ``, then ``θ̃ − λη(θ̃ − θ_0)`` iff
    ``∇R̃(θ)(θ − θ_0) ≥ 0``) from ``θ = θ_0 + Φᵀ(ΦΦᵀ)^{-1}(1 + ε)(y* − f_θ0)``, where the
    residual is small and along ``y* − f_θ0``, so ``∇R̃·(θ − θ_0) = 2ε(1 + ε) > 0``. In closed
    form ``y' − y* = −λη(y* − f_θ0) + ε(1 − λη)(I − 2ηK)(y* − f_θ0)``.
    """
    check_setting_type("simulate_selective_step", setting, SelectiveStepSetting)
    check_key("simulate_selective_step", key)
    s = setting
    p = 4 * s.n

    def one(k):
        k_phi, k_theta, k_u, k_lam = jax.random.split(k, 4)
        phi = jax.random.normal(k_phi, (s.n, p)) / jnp.sqrt(p)
        theta0 = jax.random.normal(k_theta, (p,))
        u = jax.random.normal(k_u, (s.n,))
        y = phi @ theta0 + u / jnp.linalg.norm(u)
        kernel = phi @ phi.T
        mu = jnp.linalg.eigvalsh(kernel)[-1]
        lam = 10 ** jax.random.uniform(k_lam, minval=-1.0, maxval=1.0) * mu
        eta = jnp.minimum(0.1 / mu, 0.5 / lam)
        theta = theta0 + phi.T @ jnp.linalg.solve(kernel, (1 + s.epsilon) * (y - phi @ theta0))

        def risk(t):
            return jnp.sum((phi @ t - y) ** 2)

        grad = jax.grad(risk)(theta)
        inner = grad @ (theta - theta0)
        new = selective_step(theta, theta0, grad, eta, lam)
        velocity = -grad - lam * (theta - theta0)
        residual = phi @ theta - y
        _, dy = jax.jvp(lambda t: phi @ t, (theta,), (velocity,))
        return SelectiveStepRun(
            jnp.linalg.norm(residual), jnp.linalg.norm(phi @ new - y), inner, lam * eta,
            residual @ dy, 2 * residual @ kernel @ residual, eta, kernel, residual,
            y - phi @ theta0,
        )  # fmt: skip

    return _instances(one, key, s.instances)
