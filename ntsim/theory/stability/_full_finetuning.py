r"""Full fine-tuning (Fu et al. 2023, Sec 2.2): the quadratic model, Thm 2.2 and its lemmas.

Setting (Sec 2.2, eq. (2); sizes the paper leaves open are ours). Each sample ``z_j`` has the loss

.. math::  f(w, z_j) = \tfrac12 (w - w_*)^\top H_j (w - w_*),\qquad
           \mu I \preceq H_j \preceq \beta I,

the exact second-order Taylor model at the shared minimiser ``w_*`` with ``f(w_*, z) = 0``
(so ``∇f(w_*, z) = 0``). Full-batch GD on ``S`` is ``w_{t+1} = w_t − (η/n) Σ_j ∇f(w_t, z_j)``;
on the leave-one-out set ``S^i`` the paper's proof (eq. (12)) keeps the normaliser ``1/n``:
``w^i_{t+1} = w^i_t − (η/n) Σ_{j≠i} ∇f(w^i_t, z_j)``, from the same ``w^i_0 = w_0``.

Thm 2.2 (eq. (3)) bounds ``‖w_T − w^i_T‖`` for ``η = 1/β``. Three versions, with
``q = 1 − μ/β`` and ``R = ‖w_0 − w_*‖``:

* :func:`thm2_2_bound_printed` — main text, eq. (3): ``√(2L)·R/β / (n(q^{−1/4} − 1))``;
* :func:`thm2_2_bound_proof` — the last line of App. A.1: ``√(2LR/β) / (n(q^{−1/4} − 1))``
  (the two agree iff ``R = β``; the proof's is the derived one);
* :func:`thm2_2_bound_corrected` — the proof with its off-by-one fixed (the unrolled sum runs
  over ``t = 0..T−1``, the paper drops ``t = 0``): ``√(2LR/β) / (n(1 − q^{1/4}))``
  ``= proof bound × q^{−1/4}``. It holds pathwise, for every ``S``, ``i`` and ``T``.

At ``μ = β`` (``q = 0``) both printed versions are 0, yet ``‖w_1 − w^i_1‖ = R/n``
(:func:`loo_distance_isotropic`): the printed theorem is false there.

**Choice of L.** A quadratic is not globally Lipschitz, so ``L`` is the Lipschitz constant on
the ball ``B(w_*, R)``, which contains both GD paths (the iterates contract towards ``w_*``):
``L = max_j λ_max(H_j)·R ≤ βR`` (:func:`path_lipschitz_constant`). The proof only uses
``f(w, z) ≤ L‖w − w_*‖`` (step P3), for which ``L = βR/2`` already suffices; with that
smaller ``L`` the corrected bound is tight at ``μ = β`` (it equals ``R/n``).

Lemmas used by the proof (App. A.1, A.5), as functions returning the two sides of the
inequality (``lhs <= rhs``): :func:`lemma_a1_1_rate` (GD rate), :func:`lemma_a1_2_sides`
(non-expansive GD step), :func:`lemma_a1_3_sides` (self-bounding), :func:`lemma_a5_1_sides`
(descent lemma; its proof has the slip ``(η − η²β)/2`` for ``η(1 − ηβ/2)``, the final
inequality still holds for ``η ≤ 1/β``).

Functions are pure and keep the input dtype; use ``with jax.enable_x64(True):`` for checks
to round-off. ``n`` and ``d`` are static; ``μ``, ``β``, ``R``, ``η`` and the left-out index
``i`` may be traced (vmap over instances, over ``μ/β`` and over ``i``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import _is_concrete, check_ndim, check_positive, check_positive_int
from ntsim.core import logistic_loss, random_orthogonal

__all__ = [
    "LemmaSides",
    "LooTrajectory",
    "QuadraticInstance",
    "lemma_a1_1_rate",
    "lemma_a1_2_sides",
    "lemma_a1_3_sides",
    "lemma_a5_1_sides",
    "logistic_sample_loss",
    "logistic_smoothness",
    "loo_distance_isotropic",
    "loo_trajectory",
    "path_lipschitz_constant",
    "quadratic_instance",
    "quadratic_loss",
    "simulate_loo_stability",
    "simulate_loo_stability_grid",
    "thm2_2_bound_corrected",
    "thm2_2_bound_printed",
    "thm2_2_bound_proof",
]


class QuadraticInstance(NamedTuple):
    """One training set of the quadratic model: ``f(w, z_j) = ½(w − w_*)ᵀH_j(w − w_*)``.

    Attributes:
      hessians: ``(n, d, d)`` per-sample Hessians ``H_j`` (symmetric, ``μI ⪯ H_j ⪯ βI``).
      w_star: ``(d,)`` the shared minimiser ``w_*``.
      w0: ``(d,)`` the pre-trained start ``w_0``.
    """

    hessians: Array
    w_star: Array
    w0: Array


class LooTrajectory(NamedTuple):
    """GD on ``S`` and on ``S^i`` from the same ``w_0`` (``t = 0..T``).

    Attributes:
      distance: ``(T+1,)`` ``‖w_t − w^i_t‖``.
      certificate: ``(T+1,)`` ``(η/n) Σ_{s<t} ‖∇f(w_s, z_i)‖`` (0 at ``t = 0``).
      error: ``(T+1,)`` ``‖w_t − w_*‖``.
      error_loo: ``(T+1,)`` ``‖w^i_t − w_*‖``.
    """

    distance: Array
    certificate: Array
    error: Array
    error_loo: Array


class LemmaSides(NamedTuple):
    """The two sides of an inequality ``lhs <= rhs``."""

    lhs: Array
    rhs: Array


def _check_mu_beta(where: str, mu, beta) -> None:
    check_positive(where, "mu", mu)
    check_positive(where, "beta", beta)
    if _is_concrete(mu) and _is_concrete(beta) and bool(np.any(np.asarray(mu) > np.asarray(beta))):
        raise ValueError(f"{where}: mu must satisfy 0 < mu <= beta, got {mu=}, {beta=}.")


def quadratic_instance(
    key: PRNGKey, n: int, d: int, *, mu: ArrayLike, beta: ArrayLike, radius: ArrayLike
) -> QuadraticInstance:
    """A random training set of the quadratic model of Sec 2.2 (Fu et al. 2023, eq. (2)).

    ``H_j = Q_j diag(λ_j) Q_jᵀ`` with Haar ``Q_j`` and ``λ_j`` uniform in ``[μ, β]``, its
    largest entry set to ``β`` and its smallest to ``μ`` (so ``μ`` and ``β`` are the exact
    extreme curvatures of every sample, the tightest constants for the theorem);
    ``w_* ~ N(0, I_d)``; ``w_0 = w_* + R·u`` with ``u`` uniform on the unit sphere.

    Args:
      key: a ``jax.random`` key.
      n: number of samples (static).
      d: dimension, at least 2 (static).
      mu: strong-convexity constant ``μ > 0``.
      beta: smoothness constant ``β >= μ``.
      radius: ``R = ‖w_0 − w_*‖ > 0``.

    Examples:
      >>> inst = quadratic_instance(jax.random.key(0), 3, 2, mu=0.5, beta=1.0, radius=2.0)
      >>> inst.hessians.shape, round(float(jnp.linalg.norm(inst.w0 - inst.w_star)), 4)
      ((3, 2, 2), 2.0)
    """
    where = "quadratic_instance"
    n = check_positive_int(where, "n", n)
    d = check_positive_int(where, "d", d)
    if d < 2:
        raise ValueError(f"{where}: d must be >= 2 (λ_max = β and λ_min = μ), got {d=}.")
    _check_mu_beta(where, mu, beta)
    check_positive(where, "radius", radius)
    k_spec, k_basis, k_star, k_dir = jax.random.split(key, 4)
    u = jax.random.uniform(k_spec, (n, d)).at[:, 0].set(1.0).at[:, 1].set(0.0)
    spectra = mu + (beta - mu) * u
    bases = jax.vmap(lambda k: random_orthogonal(k, d))(jax.random.split(k_basis, n))
    hessians = jnp.einsum("nij,nj,nkj->nik", bases, spectra, bases)
    hessians = 0.5 * (hessians + jnp.swapaxes(hessians, 1, 2))  # exactly symmetric
    w_star = jax.random.normal(k_star, (d,))
    direction = jax.random.normal(k_dir, (d,))
    w0 = w_star + radius * direction / jnp.linalg.norm(direction)
    return QuadraticInstance(hessians, w_star, w0)


def quadratic_loss(w: ArrayLike, hessian: ArrayLike, w_star: ArrayLike) -> Array:
    """Per-sample loss ``f(w, z) = ½(w − w_*)ᵀH(w − w_*)`` (Fu et al. 2023, eq. (2), f(w_*)=0).

    Its gradient is ``H(w − w_*)``.

    Examples:
      >>> float(quadratic_loss(jnp.array([1.0, 2.0]), jnp.diag(jnp.array([2.0, 1.0])),
      ...                      jnp.zeros(2)))
      3.0
    """
    e = jnp.asarray(w) - jnp.asarray(w_star)
    return 0.5 * e @ jnp.asarray(hessian) @ e


def path_lipschitz_constant(
    hessians: ArrayLike, radius: ArrayLike, num_samples: ArrayLike | None = None
) -> Array:
    """``L = max_j λ_max(H_j)·R``: Lipschitz constant of every ``f(·, z_j)`` on ``B(w_*, R)``.

    The GD paths on ``S`` and ``S^i`` stay in ``B(w_*, R)`` for ``η <= 1/β`` (Lemma A.1.1),
    so this is the ``L`` of Thm 2.2 for the quadratic model (module doc, "Choice of L").
    ``num_samples = m`` restricts the max to the first ``m`` samples (as :func:`loo_trajectory`).

    Examples:
      >>> float(path_lipschitz_constant(jnp.diag(jnp.array([3.0, 1.0]))[None], 2.0))
      6.0
    """
    check_ndim("path_lipschitz_constant", "hessians", hessians, 3)
    top = jnp.linalg.eigvalsh(jnp.asarray(hessians))[:, -1]
    if num_samples is not None:
        top = jnp.where(jnp.arange(top.shape[0]) < num_samples, top, 0.0)
    return jnp.max(top) * radius


def loo_trajectory(
    instance: QuadraticInstance,
    i: ArrayLike,
    *,
    learning_rate: ArrayLike,
    num_steps: int,
    num_samples: ArrayLike | None = None,
) -> LooTrajectory:
    """GD on ``S`` and ``S^i`` with the ``1/n`` convention (Fu et al. 2023, App. A.1, eq. (12)).

    ``w_{t+1} = w_t − (η/n) Σ_j H_j(w_t − w_*)`` and
    ``w^i_{t+1} = w^i_t − (η/n) Σ_{j≠i} H_j(w^i_t − w_*)``, one ``lax.scan`` over the
    precomputed ``(1/n)Σ_j H_j`` (algebraically the per-sample sum), with the pathwise
    certificate ``(η/n) Σ_{s<t} ‖∇f(w_s, z_i)‖`` of steps P1–P2 (``‖w_t − w^i_t‖`` is at most
    this for every ``t``; notes, Thm 2.2 erratum). ``i`` may be traced (vmap over ``i``).

    ``num_samples = m`` (default: all) trains on the first ``m`` samples only (``i < m``);
    ``m`` may be traced, so one compilation serves every sample size (the samples of
    :func:`quadratic_instance` are i.i.d., so a prefix is an ``m``-sample training set).

    Examples:
      >>> inst = QuadraticInstance(jnp.stack([jnp.eye(2)] * 4), jnp.zeros(2), jnp.ones(2))
      >>> traj = loo_trajectory(inst, 0, learning_rate=1.0, num_steps=2)
      >>> [round(float(v), 4) for v in traj.distance]  # R/n^t with R = √2, n = 4
      [0.0, 0.3536, 0.0884]
    """
    where = "loo_trajectory"
    num_steps = check_positive_int(where, "num_steps", num_steps)
    check_positive(where, "learning_rate", learning_rate)
    hessians, w_star, w0 = (jnp.asarray(a) for a in instance)
    check_ndim(where, "instance.hessians", hessians, 3)
    n = hessians.shape[0] if num_samples is None else num_samples
    used = jnp.arange(hessians.shape[0]) < n
    h_full = jnp.einsum("j,jkl->kl", used.astype(hessians.dtype), hessians) / n
    h_i = hessians[i]
    h_loo = h_full - h_i / n
    step_scale = learning_rate / n

    def step(carry, _):
        e, e_loo, cert = carry  # e = w_t − w_*, e_loo = w^i_t − w_*
        record = (jnp.linalg.norm(e - e_loo), cert, jnp.linalg.norm(e), jnp.linalg.norm(e_loo))
        cert = cert + step_scale * jnp.linalg.norm(h_i @ e)
        e, e_loo = e - learning_rate * h_full @ e, e_loo - learning_rate * h_loo @ e_loo
        return (e, e_loo, cert), record

    e0 = w0 - w_star
    init = (e0, e0, jnp.zeros((), e0.dtype))
    (e, e_loo, cert), rec = jax.lax.scan(step, init, None, length=num_steps)
    last = (jnp.linalg.norm(e - e_loo), cert, jnp.linalg.norm(e), jnp.linalg.norm(e_loo))
    return LooTrajectory(*(jnp.append(r, x) for r, x in zip(rec, last, strict=True)))


def loo_distance_isotropic(
    n: ArrayLike, radius: ArrayLike, step_factor: ArrayLike, t: ArrayLike
) -> Array:
    """Closed form of ``‖w_t − w^i_t‖`` when every ``H_j = hI`` and ``c = ηh``.

    Then ``w_t − w_* = (1 − c)^t (w_0 − w_*)`` and ``w^i_t − w_* = (1 − c(n−1)/n)^t (w_0 − w_*)``,
    so the distance is ``R·|(1 − c + c/n)^t − (1 − c)^t|``. At ``μ = β`` (``c = 1``) it is
    ``R/n^t``, whose sup over ``t`` is ``R/n > 0``: the counterexample to the printed
    Thm 2.2 (Fu et al. 2023, eq. (3)), whose right-hand side is 0 there.

    Examples:
      >>> round(float(loo_distance_isotropic(10, 1.0, 1.0, 1)), 6)
      0.1
    """
    return radius * jnp.abs((1 - step_factor + step_factor / n) ** t - (1 - step_factor) ** t)


def _q_root(where, n, mu, beta, lipschitz, radius):
    check_positive(where, "n", n)
    _check_mu_beta(where, mu, beta)
    check_positive(where, "lipschitz", lipschitz)
    check_positive(where, "radius", radius)
    q = jnp.clip(1.0 - jnp.asarray(mu) / beta, 0.0, 1.0)
    return q**0.25


def thm2_2_bound_printed(
    n: ArrayLike, mu: ArrayLike, beta: ArrayLike, lipschitz: ArrayLike, radius: ArrayLike
) -> Array:
    r"""Thm 2.2 as printed in the main text (Fu et al. 2023, eq. (3)).

    .. math::  \frac{\sqrt{2L}\,\|w_0 - w_*\|/\beta}{n\,\big((1 - \mu/\beta)^{-1/4} - 1\big)}

    with ``L = lipschitz``, ``‖w_0 − w_*‖ = radius``. **Not** what the proof derives (see
    :func:`thm2_2_bound_proof`; they agree iff ``R = β``), and false near ``μ = β``: it is 0
    at ``μ = β`` where ``sup_T‖w_T − w^i_T‖ = R/n``. With ``L ∝ R`` (the quadratic model,
    module doc) it scales as ``R^{3/2}`` while the measured distance is linear in ``R``, so it
    also fails for small ``R``. Evaluated as ``√(2L)R/β · q^{1/4}/(n(1 − q^{1/4}))``
    (``q = 1 − μ/β``), which is finite (0) at ``q = 0``.

    Examples:
      >>> float(thm2_2_bound_printed(10, 1.0, 1.0, 1.0, 1.0))  # μ = β: the bound is 0
      0.0
    """
    root = _q_root("thm2_2_bound_printed", n, mu, beta, lipschitz, radius)
    return jnp.sqrt(2 * lipschitz) * radius / beta * root / (n * (1 - root))


def thm2_2_bound_proof(
    n: ArrayLike, mu: ArrayLike, beta: ArrayLike, lipschitz: ArrayLike, radius: ArrayLike
) -> Array:
    r"""Thm 2.2 as the proof ends (Fu et al. 2023, App. A.1, last display).

    .. math::  \frac{\sqrt{2L\|w_0 - w_*\|/\beta}}{n\,\big((1 - \mu/\beta)^{-1/4} - 1\big)}

    Derived with the sum ``Σ_{t=1}^{T}`` where unrolling gives ``Σ_{t=0}^{T−1}`` (the ``t = 0``
    term is dropped), so it is :func:`thm2_2_bound_corrected` times ``q^{1/4}`` and is
    violated near ``μ = β`` (0 at ``μ = β``).

    Examples:
      >>> round(float(thm2_2_bound_proof(10, 15 / 16, 1.0, 2.0, 1.0)), 6)  # q^{1/4} = 1/2
      0.2
    """
    root = _q_root("thm2_2_bound_proof", n, mu, beta, lipschitz, radius)
    return jnp.sqrt(2 * lipschitz * radius / beta) * root / (n * (1 - root))


def thm2_2_bound_corrected(
    n: ArrayLike, mu: ArrayLike, beta: ArrayLike, lipschitz: ArrayLike, radius: ArrayLike
) -> Array:
    r"""Thm 2.2 with the off-by-one of its geometric sum fixed (Fu et al. 2023, App. A.1).

    .. math::  \sup_T \|w_T - w^i_T\| \le \frac{\eta}{n}\sum_{t \ge 0}\|\nabla f(w_t, z_i)\|
               \le \frac{\sqrt{2L\|w_0 - w_*\|/\beta}}{n\,\big(1 - (1 - \mu/\beta)^{1/4}\big)}

    (steps P1–P4 with the ``t = 0`` term kept), for every ``S``, ``i`` and ``T``, ``η = 1/β``.
    At ``μ = β`` it is ``√(2LR/β)/n``; with ``L = βR/2`` that is ``R/n``, attained.

    Examples:
      >>> round(float(thm2_2_bound_corrected(10, 15 / 16, 1.0, 2.0, 1.0)), 6)
      0.4
    """
    root = _q_root("thm2_2_bound_corrected", n, mu, beta, lipschitz, radius)
    return jnp.sqrt(2 * lipschitz * radius / beta) / (n * (1 - root))


def simulate_loo_stability(
    key: PRNGKey,
    n: int,
    d: int,
    *,
    mu_over_beta: ArrayLike,
    beta: ArrayLike = 1.0,
    radius: ArrayLike = 1.0,
    num_steps: int,
    index: ArrayLike = 0,
    num_samples: ArrayLike | None = None,
) -> dict[str, Array]:
    """One random quadratic instance, LOO GD with ``η = 1/β``, and every Thm 2.2 bound.

    Draws :func:`quadratic_instance` (``μ = mu_over_beta·β``), runs :func:`loo_trajectory`
    leaving out sample ``index`` (samples are exchangeable, so a fixed index loses nothing),
    and returns ``sup_distance = max_t ‖w_t − w^i_t‖``, ``certificate`` (the full sum),
    ``max_certificate_gap = max_t (‖w_t − w^i_t‖ − certificate_t)`` (``<= 0`` by P1–P2),
    ``lipschitz`` (:func:`path_lipschitz_constant`) and the three bounds with that ``L``.
    Vmappable over ``key``, ``mu_over_beta``, ``beta``, ``radius``, ``index`` and
    ``num_samples`` (train on the first ``num_samples <= n`` samples; default ``n``).

    Examples:
      >>> out = simulate_loo_stability(jax.random.key(0), 10, 3, mu_over_beta=1.0, num_steps=5)
      >>> round(float(out["sup_distance"]), 6), float(out["bound_printed"])  # R/n vs 0
      (0.1, 0.0)
    """
    mu = mu_over_beta * beta
    inst = quadratic_instance(key, n, d, mu=mu, beta=beta, radius=radius)
    traj = loo_trajectory(
        inst, index, learning_rate=1.0 / beta, num_steps=num_steps, num_samples=num_samples
    )
    lipschitz = path_lipschitz_constant(inst.hessians, radius, num_samples)
    args = (n if num_samples is None else num_samples, mu, beta, lipschitz, radius)
    return {
        "sup_distance": traj.distance.max(),
        "certificate": traj.certificate[-1],
        "max_certificate_gap": jnp.max(traj.distance - traj.certificate),
        "lipschitz": lipschitz,
        "bound_printed": thm2_2_bound_printed(*args),
        "bound_proof": thm2_2_bound_proof(*args),
        "bound_corrected": thm2_2_bound_corrected(*args),
    }


def simulate_loo_stability_grid(
    key: PRNGKey,
    *,
    mu_over_beta: ArrayLike,
    num_samples: ArrayLike,
    radius: ArrayLike = 1.0,
    beta: ArrayLike = 1.0,
    d: int,
    num_steps: int,
    instances: int,
) -> dict[str, np.ndarray]:
    """:func:`simulate_loo_stability` on a grid of cells, ``instances`` per cell, one jit.

    ``mu_over_beta``, ``num_samples`` (``n``), ``radius`` and ``beta`` broadcast to the cell shape
    ``C``; every cell gets ``instances`` independent quadratic instances, each leaving out an
    index uniform in ``[0, n)``. All cells share one compiled, vmapped program (instances are
    drawn with ``max(n)`` samples and train on their first ``n``). Returns numpy arrays of
    shape ``C + (instances,)`` with the keys of :func:`simulate_loo_stability`. Runs in the
    caller's precision (wrap in ``jax.enable_x64(True)`` for round-off-level checks).

    Examples:
      >>> out = simulate_loo_stability_grid(jax.random.key(0), mu_over_beta=[0.5, 1.0],
      ...     num_samples=10, d=3, num_steps=20, instances=4)
      >>> out["sup_distance"].shape
      (2, 4)
    """
    where = "simulate_loo_stability_grid"
    instances = check_positive_int(where, "instances", instances)
    grid = (mu_over_beta, num_samples, radius, beta)
    ratios, ns, radii, betas = np.broadcast_arrays(*map(np.asarray, grid))
    if not np.issubdtype(ns.dtype, np.integer) or ns.min() < 1:
        raise ValueError(f"{where}: num_samples must be positive integers, got {num_samples!r}.")
    if not np.all(betas > 0):
        raise ValueError(f"{where}: beta must be positive, got {beta!r}.")
    n_max = int(ns.max())
    flat = [jnp.asarray(np.repeat(a.ravel(), instances)) for a in (ratios, ns, radii, betas)]
    k_inst, k_index = jax.random.split(key)
    keys = jax.random.split(k_inst, flat[0].shape[0])
    index = jax.random.randint(k_index, flat[1].shape, 0, flat[1])  # i < n, uniform

    def one(k, ratio, n, r, b, i):
        return simulate_loo_stability(
            k, n_max, d, mu_over_beta=ratio, beta=b, radius=r, num_steps=num_steps,
            index=i, num_samples=n,
        )  # fmt: skip

    out = jax.jit(jax.vmap(one))(keys, *flat, index)
    return {name: np.asarray(v).reshape(ratios.shape + (instances,)) for name, v in out.items()}


# ------------------------------------------------------------------------------ lemmas


def lemma_a1_1_rate(t: ArrayLike, learning_rate: ArrayLike, mu: ArrayLike, radius: ArrayLike):
    """Lemma A.1.1 (Nesterov): ``‖w_t − w_*‖ <= (1 − ημ)^{t/2}‖w_0 − w_*‖`` for ``0 < η <= 1/β``.

    Returns the right-hand side for GD on a β-smooth, μ-strongly convex function
    (Fu et al. 2023, App. A.1; the proof of Thm 2.2 uses it with ``η = 1/β``, step P3).

    Examples:
      >>> float(lemma_a1_1_rate(2, 0.5, 1.0, 3.0))
      1.5
    """
    return (1.0 - learning_rate * mu) ** (jnp.asarray(t) / 2) * radius


def lemma_a1_2_sides(
    loss: Callable[[Array], Array], u: ArrayLike, v: ArrayLike, learning_rate: ArrayLike
) -> LemmaSides:
    """Lemma A.1.2: ``‖(u − η∇f(u)) − (v − η∇f(v))‖ <= ‖u − v‖`` (Fu et al. 2023, App. A.1).

    Holds for convex β-smooth ``f`` and ``0 < η <= 2/β`` (co-coercivity); used in step P1.

    Examples:
      >>> s = lemma_a1_2_sides(lambda w: w @ w, jnp.ones(2), jnp.zeros(2), 0.25)  # β = 2
      >>> round(float(s.lhs), 4), round(float(s.rhs), 4)
      (0.7071, 1.4142)
    """
    grad = jax.grad(loss)
    u, v = jnp.asarray(u), jnp.asarray(v)
    lhs = jnp.linalg.norm((u - learning_rate * grad(u)) - (v - learning_rate * grad(v)))
    return LemmaSides(lhs, jnp.linalg.norm(u - v))


def lemma_a1_3_sides(loss: Callable[[Array], Array], w: ArrayLike, beta: ArrayLike) -> LemmaSides:
    """Lemma A.1.3 (self-bounding): ``‖∇f(w)‖² <= 2βf(w)`` (Fu et al. 2023, App. A.1).

    For non-negative, twice differentiable, β-smooth ``f``; used in step P2.

    Examples:
      >>> s = lemma_a1_3_sides(lambda w: w @ w, jnp.array([1.0, 0.0]), 2.0)
      >>> float(s.lhs), float(s.rhs)
      (4.0, 4.0)
    """
    value, grad = jax.value_and_grad(loss)(jnp.asarray(w))
    return LemmaSides(grad @ grad, 2 * beta * value)


def lemma_a5_1_sides(
    loss: Callable[[Array], Array], w: ArrayLike, learning_rate: ArrayLike
) -> LemmaSides:
    """Lemma A.5.1 (descent): ``f(w − η∇f(w)) <= f(w) − (η/2)‖∇f(w)‖²`` for ``η <= 1/β``.

    Fu et al. 2023, App. A.5. The paper states ``η < 1/β``; its proof writes
    ``(η − η²β)/2`` where ``η(1 − ηβ/2)`` is meant, but the final inequality holds for
    ``η <= 1/β`` (``1 − ηβ/2 >= 1/2``). Returns ``lhs = f(w_{t+1})``, ``rhs`` the bound.

    Examples:
      >>> s = lemma_a5_1_sides(lambda w: w @ w, jnp.array([1.0, 0.0]), 0.25)  # β = 2
      >>> float(s.lhs), float(s.rhs)
      (0.25, 0.5)
    """
    value, grad = jax.value_and_grad(loss)(jnp.asarray(w))
    return LemmaSides(loss(w - learning_rate * grad), value - learning_rate / 2 * grad @ grad)


def logistic_sample_loss(w: ArrayLike, x: ArrayLike, y: ArrayLike) -> Array:
    """Per-sample logistic loss ``ℓ(y·xᵀw) = log(1 + exp(−y·xᵀw))`` (the loss of Sec 2.3).

    :func:`ntsim.core.logistic_loss` applied to the margin ``y·xᵀw``.

    Non-negative, convex, and ``‖x‖²/4``-smooth in ``w`` (:func:`logistic_smoothness`).

    Examples:
      >>> round(float(logistic_sample_loss(jnp.zeros(2), jnp.ones(2), 1.0)), 6)  # log 2
      0.693147
    """
    return logistic_loss(y * (jnp.asarray(x) @ w))


def logistic_smoothness(x: ArrayLike) -> Array:
    """Smoothness ``β`` of the mean logistic loss over rows of ``x``: ``σ_max(X)²/(4n)``.

    The Hessian is ``(1/n) Xᵀ diag(σ(1−σ)) X ⪯ XᵀX/(4n)``; for one sample (``x`` of shape
    ``(d,)``) this is ``‖x‖²/4``.

    Examples:
      >>> round(float(logistic_smoothness(jnp.array([2.0, 0.0]))), 5)
      1.0
    """
    x = jnp.atleast_2d(jnp.asarray(x))
    return jnp.linalg.norm(x, ord=2) ** 2 / (4 * x.shape[0])
