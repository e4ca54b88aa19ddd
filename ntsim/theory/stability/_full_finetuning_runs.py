"""The full fine-tuning simulations of Fu et al. 2023 (Sec 2.2, Thm 2.2) that claims read.

Each is a public ``simulate_*(key, setting) -> NamedTuple`` with a frozen setting (sizes the
paper leaves open are ours), built on the quadratic (Taylor) model of
:mod:`ntsim.theory.stability._full_finetuning`. Run them in float64 (``jax.enable_x64``).

* :func:`simulate_loo_grid` — leave-one-out GD (``η = 1/β``) and the Thm 2.2 bounds over a
  grid of ``μ/β`` (:func:`~ntsim.theory.stability.simulate_loo_stability_grid`).
* :func:`simulate_radius_scaling` — the same instances at several ``R = ‖w_0 − w_*‖``.
* :func:`simulate_quadratic_divergence` — GD on the mean quadratic at ``η = factor/β_F``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_key, check_setting_type
from ntsim.theory.stability import _full_finetuning as ff

__all__ = [
    "simulate_pointwise_lemma",
    "simulate_lipschitz_scaling",
    "simulate_contraction",
    "PointwiseLemmaSetting",
    "PointwiseLemmaRun",
    "POINTWISE_LEMMAS",
    "LOSS_FAMILIES",
    "LipschitzScalingSetting",
    "LipschitzScalingRun",
    "ContractionSetting",
    "ContractionRun",
    "DivergenceRun",
    "DivergenceSetting",
    "LooGridRun",
    "LooGridSetting",
    "RadiusScalingRun",
    "RadiusScalingSetting",
    "printed_bound_safe_ratio",
    "simulate_loo_grid",
    "simulate_quadratic_divergence",
    "simulate_radius_scaling",
]


def printed_bound_safe_ratio(r):
    r"""``√2·r·(1 − r)^{1/4} − (1 − (1 − r)^{1/4})``: ``≥ 0`` iff eq. (3) (``R = β = 1``,
    ``L = βR``) is at least ``R/(n·μ/β)``, an upper bound on ``sup_T‖w_T − w^i_T‖``.

    With ``η = 1/β`` GD on the mean quadratic contracts by ``q = 1 − μ/β`` per step, so
    ``‖∇f(w_t, z_i)‖ ≤ β q^t R`` and the certificate of the proof (steps P1–P2) gives
    ``sup_T‖Δ_T‖ ≤ (1/n) Σ_t q^t R = R/(n μ/β)``. Eq. (3) is
    ``√2 q^{1/4}/(n(1 − q^{1/4}))``; dividing by ``1/(n r)`` gives this function's sign.
    It is positive up to ``μ/β ≈ 0.968`` and negative from there on.

    Examples:
      >>> round(float(printed_bound_safe_ratio(0.5)), 4), float(printed_bound_safe_ratio(0.97)) < 0
      (0.4355, True)
    """
    q4 = (1 - np.asarray(r, float)) ** 0.25
    return np.sqrt(2) * np.asarray(r, float) * q4 - (1 - q4)


@dataclass(frozen=True)
class LooGridSetting:
    """Leave-one-out GD on random quadratics (Thm 2.2), ``instances`` per cell of the grid
    ``mu_over_beta × num_samples × radius × beta`` (in that order, flattened)."""

    mu_over_beta: tuple[float, ...] = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85, 0.95)
    num_samples: tuple[int, ...] = (10,)
    radius: tuple[float, ...] = (1.0,)
    beta: tuple[float, ...] = (1.0,)
    d: int = 5
    num_steps: int = 600
    instances: int = 125


class LooGridRun(NamedTuple):
    """Per cell ``(C,)``: ``mu_over_beta``, ``num_samples``, ``radius``, ``beta`` (the
    smoothness; ``μ = mu_over_beta·β``, ``η = 1/β``); per cell and instance
    ``(C, instances)``: ``sup_distance`` ``max_t ‖w_t − w^i_t‖``, ``certificate`` (the proof's
    full sum), ``max_certificate_gap`` ``max_t (‖Δ_t‖ − certificate_t)``, and the bounds
    ``bound_printed`` (eq. (3), main text), ``bound_proof`` and ``bound_corrected``
    (``L = βR``)."""

    mu_over_beta: np.ndarray
    num_samples: np.ndarray
    radius: np.ndarray
    beta: np.ndarray
    sup_distance: np.ndarray
    certificate: np.ndarray
    max_certificate_gap: np.ndarray
    bound_printed: np.ndarray
    bound_proof: np.ndarray
    bound_corrected: np.ndarray


def simulate_loo_grid(key, setting: LooGridSetting) -> LooGridRun:
    """:func:`~ntsim.theory.stability.simulate_loo_stability_grid` over the setting's grid."""
    check_setting_type("simulate_loo_grid", setting, LooGridSetting)
    check_key("simulate_loo_grid", key)
    s = setting
    mu = np.asarray(s.mu_over_beta, float)[:, None, None, None]
    ns = np.asarray(s.num_samples, int)[None, :, None, None]
    radii = np.asarray(s.radius, float)[None, None, :, None]
    betas = np.asarray(s.beta, float)[None, None, None, :]
    out = ff.simulate_loo_stability_grid(
        key, mu_over_beta=mu, num_samples=ns, radius=radii, beta=betas, d=s.d,
        num_steps=s.num_steps, instances=s.instances,
    )  # fmt: skip
    cells = np.broadcast_arrays(mu, ns, radii, betas)
    flat = {k: v.reshape(-1, s.instances) for k, v in out.items()}
    return LooGridRun(
        *(c.ravel() for c in cells), flat["sup_distance"], flat["certificate"],
        flat["max_certificate_gap"], flat["bound_printed"], flat["bound_proof"],
        flat["bound_corrected"],
    )  # fmt: skip


@dataclass(frozen=True)
class RadiusScalingSetting:
    """The same quadratic instances at several ``R = ‖w_0 − w_*‖`` (same direction)."""

    instances: int = 1000
    n: int = 10
    d: int = 5
    mu_over_beta: float = 0.5
    radii: tuple[float, ...] = (1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0)
    num_steps: int = 600


class RadiusScalingRun(NamedTuple):
    """``radii`` ``(R,)``; ``sup_distance`` and ``bound_printed`` ``(instances, R)``."""

    radii: np.ndarray
    sup_distance: jax.Array
    bound_printed: jax.Array


def simulate_radius_scaling(key, setting: RadiusScalingSetting) -> RadiusScalingRun:
    """:func:`~ntsim.theory.stability.simulate_loo_stability` per instance at every radius."""
    check_setting_type("simulate_radius_scaling", setting, RadiusScalingSetting)
    check_key("simulate_radius_scaling", key)
    s = setting

    def one(k):
        return jax.vmap(
            lambda r: ff.simulate_loo_stability(
                k, s.n, s.d, mu_over_beta=s.mu_over_beta, radius=r, num_steps=s.num_steps
            )  # fmt: skip
        )(jnp.asarray(s.radii))

    out = jax.jit(jax.vmap(one))(jax.random.split(key, s.instances))
    return RadiusScalingRun(np.asarray(s.radii), out["sup_distance"], out["bound_printed"])


@dataclass(frozen=True)
class DivergenceSetting:
    """GD on the mean quadratic at ``η = factor/β_F`` (``β_F`` = top eigenvalue of the mean
    Hessian) from ``w_0 = w_* + R u``."""

    instances: int = 1000
    n: int = 10
    d: int = 5
    mu_over_beta: float = 0.5
    factor: float = 2.2
    num_steps: int = 200


class DivergenceRun(NamedTuple):
    """``log_growth`` ``(instances,)``: ``log(‖w_T − w_*‖/‖w_0 − w_*‖)``."""

    log_growth: jax.Array


def simulate_quadratic_divergence(key, setting: DivergenceSetting) -> DivergenceRun:
    """``log(‖w_T − w_*‖/‖w_0 − w_*‖)`` of GD at ``η = factor/β_F`` per instance."""
    check_setting_type("simulate_quadratic_divergence", setting, DivergenceSetting)
    check_key("simulate_quadratic_divergence", key)
    s = setting

    def one(k):
        inst = ff.quadratic_instance(k, s.n, s.d, mu=s.mu_over_beta, beta=1.0, radius=1.0)
        beta = jnp.linalg.eigvalsh(inst.hessians.mean(axis=0))[-1]
        traj = ff.loo_trajectory(inst, 0, learning_rate=s.factor / beta, num_steps=s.num_steps)
        return jnp.log(traj.error[-1] / traj.error[0])

    return DivergenceRun(jax.jit(jax.vmap(one))(jax.random.split(key, s.instances)))


@dataclass(frozen=True)
class LipschitzScalingSetting:
    """``H_j → c·H_j`` (``L = cβR``) on the same instances, GD with ``η = 1/β`` fixed and with
    ``η = 1/(cβ)`` retuned."""

    instances: int = 1000
    n: int = 10
    d: int = 5
    scales: tuple[float, ...] = (0.125, 0.25, 0.5, 0.75, 1.0)
    num_steps: int = 600


class LipschitzScalingRun(NamedTuple):
    """``scales`` ``(C,)``; ``fixed`` and ``retuned`` ``(instances, C)`` ``sup_T‖Δ_T‖``;
    the instances' constants ``n``, ``μ/β`` and ``R`` (for the first-step floor)."""

    scales: np.ndarray
    fixed: jax.Array
    retuned: jax.Array
    n: int
    mu_over_beta: float
    radius: float


def simulate_lipschitz_scaling(key, setting: LipschitzScalingSetting) -> LipschitzScalingRun:
    """``sup_T‖Δ_T‖`` per instance and curvature scale, ``η`` fixed and retuned."""
    check_setting_type("simulate_lipschitz_scaling", setting, LipschitzScalingSetting)
    check_key("simulate_lipschitz_scaling", key)
    s = setting

    mu_over_beta, radius = 0.5, 1.0

    def one(k, c, retuned):
        inst = ff.quadratic_instance(k, s.n, s.d, mu=mu_over_beta * c, beta=c, radius=radius)
        eta = jnp.where(retuned, 1.0 / c, 1.0)
        return ff.loo_trajectory(inst, 0, learning_rate=eta, num_steps=s.num_steps).distance.max()

    over_c = jax.jit(jax.vmap(jax.vmap(one, (None, 0, None)), (0, None, None)))
    keys, scales = jax.random.split(key, s.instances), jnp.asarray(s.scales)
    return LipschitzScalingRun(np.asarray(s.scales), over_c(keys, scales, False),
                               over_c(keys, scales, True), s.n, mu_over_beta, radius)  # fmt: skip


@dataclass(frozen=True)
class ContractionSetting:
    """Lemma A.1.1: GD on the mean of ``n`` random quadratics (sample ``μ/β ∈ U[0.01, 1]``)
    with ``η = frac/β``, ``frac ∈ U[0.01, 1]`` (1 on a quarter)."""

    instances: int = 1000
    n: int = 10
    d: int = 5
    num_steps: int = 200


class ContractionRun(NamedTuple):
    """``gap`` ``(instances,)``: ``max_t (‖w_t − w_*‖ − bound_t)/bound_t`` (where the bound
    ``(1 − ημ)^{t/2}R`` underflows, the error itself).

    The anchor, ``(instances, T + 1)``: the same GD from ``w_0 = w_* + q`` with ``q`` the unit
    eigenvector of the mean Hessian's smallest eigenvalue μ, where ``‖w_t − w_*‖ =
    (1 − ημ)^t`` exactly: ``slow_error`` that distance and ``slow_bound`` the lemma's bound
    ``(1 − ημ)^{t/2}`` (R = 1), so ``slow_bound² = slow_error``."""

    gap: jax.Array
    slow_error: jax.Array
    slow_bound: jax.Array


def simulate_contraction(key, setting: ContractionSetting) -> ContractionRun:
    """The largest relative excess of ``‖w_t − w_*‖`` over Lemma A.1.1's bound, per instance."""
    check_setting_type("simulate_contraction", setting, ContractionSetting)
    check_key("simulate_contraction", key)
    s = setting
    k_inst, k_ratio, k_eta = jax.random.split(key, 3)

    def one(k, ratio, frac):
        inst = ff.quadratic_instance(k, s.n, s.d, mu=ratio, beta=1.0, radius=1.0)
        eig = jnp.linalg.eigvalsh(inst.hessians.mean(axis=0))  # objective's μ and β
        eta = frac / eig[-1]
        traj = ff.loo_trajectory(inst, 0, learning_rate=eta, num_steps=s.num_steps)
        bound = ff.lemma_a1_1_rate(jnp.arange(s.num_steps + 1), eta, eig[0], 1.0)
        slowest = jnp.linalg.eigh(inst.hessians.mean(axis=0))[1][:, 0]
        slow = ff.loo_trajectory(inst._replace(w0=inst.w_star + slowest), 0, learning_rate=eta,
                                 num_steps=s.num_steps)  # fmt: skip
        gap = jnp.max(jnp.where(bound > 0, (traj.error - bound) / bound, traj.error))
        return gap, slow.error, bound

    ratios = jax.random.uniform(k_ratio, (s.instances,), minval=0.01, maxval=1.0)
    frac = jax.random.uniform(k_eta, (s.instances,), minval=1e-2, maxval=1.0)
    frac = jnp.where(jnp.arange(s.instances) % 4 == 0, 1.0, frac)  # η = 1/β on a quarter
    keys = jax.random.split(k_inst, s.instances)
    return ContractionRun(*jax.jit(jax.vmap(one))(keys, ratios, frac))


#: Lemmas checked pointwise on random losses, and the loss families.
POINTWISE_LEMMAS = ("a1_2", "a1_3", "a5_1")
LOSS_FAMILIES = ("quadratic", "logistic")


@dataclass(frozen=True)
class PointwiseLemmaSetting:
    """Lemma A.1.2 (non-expansive steps, ``η ∈ (0, 2/β]``), A.1.3 (``‖∇f‖² ≤ 2βf``) or A.5.1
    (descent, ``η ∈ (0, 1/β]``) on random quadratics ``½(w − a)ᵀH(w − a) + c`` or logistic
    losses (A.5.1: the mean over 8 samples), ``d = 5``, points spread over four decades."""

    lemma: str = "a1_2"
    family: str = "quadratic"
    instances: int = 1000
    d: int = 5


class PointwiseLemmaRun(NamedTuple):
    """``lhs``, ``rhs`` ``(instances,)`` and ``scale`` = ``max(|lhs|, |rhs|)`` (for relative
    margins; both sides can underflow to 0)."""

    lhs: jax.Array
    rhs: jax.Array
    scale: jax.Array


def _random_points(key, count, shape, spread):
    k_dir, k_scale = jax.random.split(key)
    scale = spread * 10.0 ** jax.random.uniform(k_scale, (count,), minval=-2, maxval=2)
    return jax.random.normal(k_dir, (count, *shape)) * scale.reshape((count,) + (1,) * len(shape))


def simulate_pointwise_lemma(key, setting: PointwiseLemmaSetting) -> PointwiseLemmaRun:
    """Both sides of the lemma on ``instances`` random losses and points."""
    check_setting_type("simulate_pointwise_lemma", setting, PointwiseLemmaSetting)
    check_key("simulate_pointwise_lemma", key)
    s = setting
    if s.lemma not in POINTWISE_LEMMAS or s.family not in LOSS_FAMILIES:
        raise ValueError(f"simulate_pointwise_lemma: unknown lemma/family {s.lemma}/{s.family}.")
    count = s.instances
    k_fam, k_u, k_v, k_eta = jax.random.split(key, 4)
    if s.family == "quadratic":
        k_inst, k_c, k_ratio = jax.random.split(k_fam, 3)
        ratios = jax.random.uniform(k_ratio, (count,), minval=0.01, maxval=1.0)
        insts = jax.vmap(lambda k, r: ff.quadratic_instance(k, 1, s.d, mu=r, beta=1.0,
                                                            radius=1.0))(
            jax.random.split(k_inst, count), ratios)  # fmt: skip
        offset = jnp.where(jnp.arange(count) % 2 == 0, 0.0,
                           jax.random.exponential(k_c, (count,)))  # fmt: skip
        hessian = insts.hessians[:, 0]
        beta = jnp.linalg.eigvalsh(hessian)[:, -1]
        losses = (hessian, insts.w_star, offset)

        def make(h, a, c):
            return lambda w: ff.quadratic_loss(w, h, a) + c
    else:
        n = 1 if s.lemma != "a5_1" else 8  # A.5.1 on the mean loss over n samples
        k_x, k_y = jax.random.split(k_fam)
        x = _random_points(k_x, count, (n, s.d), 1.0)
        y = jnp.where(jax.random.bernoulli(k_y, 0.5, (count, n)), 1.0, -1.0)
        beta = jax.vmap(ff.logistic_smoothness)(x)
        losses = (x, y)

        def make(x, y):
            return lambda w: jnp.mean(jax.vmap(ff.logistic_sample_loss, (None, 0, 0))(w, x, y))

    u = _random_points(k_u, count, (s.d,), 1.0 if s.family == "logistic" else 0.3)
    v = _random_points(k_v, count, (s.d,), 1.0)
    frac = jax.random.uniform(k_eta, (count,), minval=1e-3, maxval=1.0)
    frac = jnp.where(jnp.arange(count) % 4 == 0, 1.0, frac)  # a quarter at the largest η
    if s.lemma == "a1_2":
        sides = jax.jit(jax.vmap(lambda ls, u, v, eta: ff.lemma_a1_2_sides(make(*ls), u, v, eta)))(
            losses, u, v, frac * 2.0 / beta)  # fmt: skip
    elif s.lemma == "a1_3":
        sides = jax.jit(jax.vmap(lambda ls, w, b: ff.lemma_a1_3_sides(make(*ls), w, b)))(
            losses, u, beta)  # fmt: skip
    else:
        sides = jax.jit(jax.vmap(lambda ls, w, eta: ff.lemma_a5_1_sides(make(*ls), w, eta)))(
            losses, u, frac / beta)  # fmt: skip
    scale = jnp.maximum(jnp.maximum(jnp.abs(sides.rhs), jnp.abs(sides.lhs)),
                        jnp.finfo(sides.lhs.dtype).tiny)  # fmt: skip
    return PointwiseLemmaRun(sides.lhs, sides.rhs, scale)
