r"""Simulations of Rahimi Afzal et al. (2025): distances (Lemma 1, Thm 2), the gap and the
r-ball (Thms 3, 4) and the KRR reduction. The instances, settings and conventions are those
of :mod:`._simulations` (its module doc: the printed statements' closed-form violations).
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
    gradient_flow,
    linear,
    linearize,
    mse_loss,
)
from ntsim.theory.linearization import _bounds
from ntsim.theory.linearization._dynamics import finetune, flat_jacobian, flow_path, outputs
from ntsim.theory.linearization._lipschitz import estimate_lipschitz, lemma1_pair, sample_ball
from ntsim.theory.linearization._simulations import (
    NetworkSetting,
    _constant_run,
    _instances,
    instance_model,
    random_instance,
)
from ntsim.theory.linearization._spectral import residual_path
from ntsim.theory.linearization._sweeps import linearity_vs_lambda

__all__ = [
    "ContainmentRun",
    "ContainmentSetting",
    "DistanceRun",
    "DistanceSetting",
    "ExitRun",
    "GapRun",
    "KrrRun",
    "KrrSetting",
    "Lemma1Run",
    "Lemma1Setting",
    "LinearityTableRun",
    "PlateauRun",
    "ResidualRun",
    "simulate_containment",
    "simulate_distance",
    "simulate_exit_time",
    "simulate_gap",
    "simulate_krr",
    "simulate_lemma1",
    "simulate_linearity_table",
    "simulate_plateau",
    "simulate_residual_path",
]


# ------------------------------------------------------------------ distances (Lemma 1, Thm 2)


class Lemma1Run(NamedTuple):
    """``(I, pairs)`` both sides of Lemma 1 for pairs drawn by Algorithm 1 on an ``r``-sphere
    (``r`` log-uniform on ``[0.1, 3.2]``)."""

    kernel_gap: Array
    bound: Array


@dataclasses.dataclass(frozen=True)
class Lemma1Setting:
    """Network instances and ``pairs`` pairs of Algorithm-1 samples per instance."""

    network: NetworkSetting = NetworkSetting()
    pairs: int = 4


def simulate_lemma1(key: PRNGKey, setting: Lemma1Setting) -> Lemma1Run:
    """Lemma 1 on pairs of Jacobians around ``θ_0`` (:class:`Lemma1Run`)."""
    check_setting_type("simulate_lemma1", setting, Lemma1Setting)
    check_key("simulate_lemma1", key)
    s, pairs = setting.network, setting.pairs

    def one(k):
        inst = random_instance(k, n=s.n, d=s.d, width=s.width)
        apply = instance_model(s.width).apply
        radius = 10 ** jax.random.uniform(jax.random.fold_in(k, 2), minval=-1.0, maxval=0.5)
        samples = sample_ball(jax.random.fold_in(k, 3), inst.params0, radius, 2 * pairs)
        jacs = jax.vmap(lambda p: flat_jacobian(apply, p, inst.x))(samples)
        out = jax.vmap(lemma1_pair)(jacs[:pairs], jacs[pairs:])
        return Lemma1Run(out.kernel_gap, out.bound)

    return _instances(one, key, s.instances)


class DistanceRun(NamedTuple):
    """Runs behind Thm 2, leading axis instances, ``T = steps + 1`` recorded times.

    Network runs (``selective_*``: selective λ_t; ``constant_*``: constant λ, 0 in about a
    quarter of them): ``*_distance`` ``‖θ_t − θ_0‖``, ``*_residual`` ``‖f_θt(x*) − y*‖``,
    ``*_integral`` ``∫_0^t e^{−(Λ_t − Λ_s)}ds`` from the logged ``λ_s``, ``*_lip`` the path
    maximum of ``‖J_θs‖_op``, ``*_lam`` the hyperparameter λ, ``selective_fraction`` the
    fraction of regularised steps.

    Linear runs (``linear_*``): ``f_θ = Φθ`` with ``Φ`` ``(n, 4n)``, the initial residual along
    the top singular direction of ``Φ``, ``λ = 0`` (Thm 2's case ``λ_t ≡ 0``), ``η =
    0.01/μ_max`` for ``linear_steps`` steps (module doc: the printed bound's violation is
    then a closed form); ``linear_a`` is ``2ημ_max``.
    """

    selective_distance: Array
    selective_residual: Array
    selective_integral: Array
    selective_lip: Array
    selective_fraction: Array
    constant_distance: Array
    constant_residual: Array
    constant_integral: Array
    constant_lip: Array
    constant_lam: Array
    linear_distance: Array
    linear_residual: Array
    linear_integral: Array
    linear_lip: Array
    linear_a: Array


@dataclasses.dataclass(frozen=True)
class DistanceSetting:
    """Network instances for Thm 2 plus its linear counterexample family.

    Attributes:
      network: sizes of the network runs.
      linear_instances: linear instances.
      linear_steps: steps of the linear runs (``s = 2μ_max t`` runs to ``0.02·linear_steps``).
    """

    network: NetworkSetting = NetworkSetting()
    linear_instances: int = 50
    linear_steps: int = 100


def _linear_top_mode(key, n: int, r0):
    """``Φ`` ``(n, 4n)``, ``θ_0``, targets with initial residual ``r_0`` along Φ's top
    singular direction, and ``μ_max = ‖Φ‖²``."""
    p = 4 * n
    k_phi, k_theta = jax.random.split(key)
    phi = jax.random.normal(k_phi, (n, p)) / jnp.sqrt(p)
    theta0 = {"w": jax.random.normal(k_theta, (p,))}
    evals, evecs = jnp.linalg.eigh(phi @ phi.T)
    y = phi @ theta0["w"] + r0 * evecs[:, -1]
    return phi, theta0, y, evals[-1]


def simulate_distance(key: PRNGKey, setting: DistanceSetting) -> DistanceRun:
    """Selective, constant-λ and linear runs for Thm 2 (:class:`DistanceRun`)."""
    check_setting_type("simulate_distance", setting, DistanceSetting)
    check_key("simulate_distance", key)
    s = setting.network

    def network(k, selective, zero_fraction):
        inst, run, lam, eta = _constant_run(k, s, selective=selective, zero_fraction=zero_fraction)
        residual = jnp.linalg.norm(run.train - inst.y, axis=1)
        integral = _bounds.thm2_integral(run.strengths, eta)
        return (run.distance, residual, integral, jnp.max(run.jac_norm), lam,
                run.fraction_regularised)  # fmt: skip

    sel = _instances(lambda k: network(k, True, 0.0), key, s.instances)
    const = _instances(lambda k: network(k, False, 0.25), key, s.instances)

    def linear_one(k):
        r0 = jax.random.uniform(jax.random.fold_in(k, 1), minval=0.5, maxval=2.0)
        phi, theta0, y, mu = _linear_top_mode(k, s.n, r0)
        eta = 0.01 / mu
        run = finetune(
            linear().apply, theta0, phi, y, proximal=0.0, learning_rate=eta,
            num_steps=setting.linear_steps,
        )  # fmt: skip
        residual = jnp.linalg.norm(run.train - y, axis=1)
        integral = _bounds.thm2_integral(run.strengths, eta)
        return run.distance, residual, integral, jnp.max(run.jac_norm), 2 * eta * mu

    lin = _instances(linear_one, jax.random.fold_in(key, 7), setting.linear_instances)
    return DistanceRun(*sel[:4], sel[5], *const[:5], *lin)


class PlateauRun(NamedTuple):
    """Constant λ on a grid ``λ = factor·λ_max(K)``, ``η = 0.5/λ``, ``(I, L)`` each (``jac_norm``
    ``(I, L, T + 1)``).

    Attributes:
      distance: ``‖θ_T − θ_0‖``.
      scaled: ``λ‖θ_T − θ_0‖/(2L̂r_0)`` (``L̂`` the path maximum of ``‖J‖_op``).
      lam: the λ values.
      lip: ``L̂``, the ``Lip(f)`` the bound is evaluated with.
      jac_norm: ``‖J_θs‖_op`` at every step of the run (Thm 2's hypothesis: each ``≤ L̂``).
      r0: the ``r_0 = ‖y(0) − y*‖`` that ``scaled`` reads (from the run's first record).
      residual_at_init: ``‖f_θ0(x*) − y*‖`` from the model directly, once per instance (a
        second route to ``r_0``).
    """

    distance: Array
    scaled: Array
    lam: Array
    lip: Array
    jac_norm: Array
    r0: Array
    residual_at_init: Array


#: λ grid (units of λ_max(K)) for Thm 2's plateau.
PLATEAU_FACTORS = (8.0, 16.0, 32.0, 64.0)


def simulate_plateau(key: PRNGKey, setting: NetworkSetting) -> PlateauRun:
    """Thm 2's plateau: constant-λ runs at several large λ (:class:`PlateauRun`)."""
    check_setting_type("simulate_plateau", setting, NetworkSetting)
    check_key("simulate_plateau", key)
    s = setting

    def one(k):
        inst = random_instance(k, n=s.n, d=s.d, width=s.width)
        apply = instance_model(s.width).apply

        def at(factor):
            lam = factor * inst.mu_max
            run = finetune(
                apply, inst.params0, inst.x, inst.y, proximal=lam, learning_rate=0.5 / lam,
                num_steps=s.steps,
            )  # fmt: skip
            r0 = jnp.linalg.norm(run.train[0] - inst.y)
            dist = run.distance[-1]
            lip = jnp.max(run.jac_norm)
            return dist, lam * dist / (2 * lip * r0), lam, lip, run.jac_norm, r0

        residual = jnp.linalg.norm(outputs(apply, inst.params0, inst.x) - inst.y)
        return PlateauRun(*jax.vmap(at)(jnp.asarray(PLATEAU_FACTORS)), residual)

    return _instances(one, key, s.instances)


#: The slides' λ grid (experiments table), from large to small.
TABLE_LAMBDAS = (50.0, 10.0, 5.0, 2.0, 1.0, 0.5, 0.1, 0.0)


class LinearityTableRun(NamedTuple):
    """``(I, L)`` per λ of :data:`TABLE_LAMBDAS`: ``distance`` ``‖θ_T − θ_0‖``,
    ``gap_train`` ``‖f_θT(x*) − f̄_θ̄T(x*)‖`` (network vs linearisation, same GD), and on the
    ``m`` test inputs ``kl_test`` (the table's mean Bernoulli KL of the logits),
    ``test_mean_square`` ``‖f − f̄‖²/m`` and ``logit_max_test`` (largest ``|f|``, ``|f̄|``)."""

    distance: Array
    gap_train: Array
    kl_test: Array
    test_mean_square: Array
    logit_max_test: Array


def simulate_linearity_table(key: PRNGKey, setting: NetworkSetting) -> LinearityTableRun:
    """The slides' linearity-vs-λ table on network instances, ``η = 0.5/(2λ_max(K) + 50)``."""
    check_setting_type("simulate_linearity_table", setting, NetworkSetting)
    check_key("simulate_linearity_table", key)
    s = setting

    def one(k):
        inst = random_instance(k, n=s.n, d=s.d, width=s.width)
        lambdas = jnp.asarray(TABLE_LAMBDAS)
        x_test = jax.random.normal(jax.random.fold_in(k, 61), (4 * s.n, s.d))
        y_test = jnp.sign(jax.random.normal(jax.random.fold_in(k, 62), (4 * s.n,)))
        table = linearity_vs_lambda(
            instance_model(s.width).apply, inst.params0, inst.x, inst.y, x_test, y_test,
            lambdas=lambdas, learning_rate=0.5 / (2 * inst.mu_max + lambdas[0]),
            num_steps=s.steps, record_every=s.steps,
        )  # fmt: skip
        # the table's gap_test is ‖f − f̄‖/√(m/n), so ‖f − f̄‖²/m = gap_test²/n
        return LinearityTableRun(table.distance, table.gap_train, table.kl_test,
                                 table.gap_test**2 / s.n, table.logit_max_test)  # fmt: skip

    return _instances(one, key, s.instances)


# --------------------------------------------------------------- gap and the r-ball (Thms 3, 4)


class GapRun(NamedTuple):
    """Network and linearisation trained by the same constant-λ split-step GD, ``(I, T)``
    or ``(I,)``.

    Attributes:
      gap: ``Δ(t) = ‖f_θt(x*) − f̄_θ̄t(x*)‖``.
      distance: ``‖θ_t − θ_0‖`` of the network.
      times: flow times ``ηk``.
      lip, lip_grad: path maxima of ``‖J_θs‖_op`` and ``‖J_θs − J_θ0‖_op/‖θ_s − θ_0‖``.
      r0: ``‖f_θ0(x*) − y*‖``.
      lam: λ.
    """

    gap: Array
    distance: Array
    times: Array
    lip: Array
    lip_grad: Array
    r0: Array
    lam: Array


def simulate_gap(key: PRNGKey, setting: NetworkSetting) -> GapRun:
    """Thm 3: the network against its linearisation (:class:`GapRun`)."""
    check_setting_type("simulate_gap", setting, NetworkSetting)
    check_key("simulate_gap", key)
    s = setting

    def one(k):
        inst, run, lam, eta = _constant_run(k, s, selective=False)
        lin = finetune(
            instance_model(s.width).apply, inst.params0, inst.x, inst.y, proximal=lam,
            learning_rate=eta, num_steps=s.steps, linearised=True, record_jacobian=False,
        )  # fmt: skip
        return GapRun(
            jnp.linalg.norm(run.train - lin.train, axis=1), run.distance, run.times,
            jnp.max(run.jac_norm), jnp.max(run.grad_lip),
            jnp.linalg.norm(run.train[0] - inst.y), lam,
        )  # fmt: skip

    return _instances(one, key, s.instances)


class ExitRun(NamedTuple):
    """Constant-λ runs and a radius ``r = U[0.2, 0.8]·max_t ‖θ_t − θ_0‖`` they leave.

    Attributes:
      t_exit: first recorded time outside the ``r``-ball.
      lam: λ.
      radius: ``r``.
      r0: ``‖f_θ0(x*) − y*‖``.
      lip: path maximum of ``‖J_θs‖_op`` up to the exit (``Lip(f)`` on the ball).
    """

    t_exit: Array
    lam: Array
    radius: Array
    r0: Array
    lip: Array


def simulate_exit_time(key: PRNGKey, setting: NetworkSetting) -> ExitRun:
    """Thm 4 (``λ < λ_o``): when does a run leave the ``r``-ball (:class:`ExitRun`)."""
    check_setting_type("simulate_exit_time", setting, NetworkSetting)
    check_key("simulate_exit_time", key)
    s = setting

    def one(k):
        inst, run, lam, eta = _constant_run(k, s, selective=False)
        r0 = jnp.linalg.norm(run.train[0] - inst.y)
        frac = jax.random.uniform(jax.random.fold_in(k, 21), minval=0.2, maxval=0.8)
        radius = frac * jnp.max(run.distance)
        first = jnp.argmax(run.distance > radius)
        steps = jnp.arange(run.distance.shape[0])
        lip = jnp.max(jnp.where(steps <= first, run.jac_norm, 0.0))
        return ExitRun(run.times[first], lam, radius, r0, lip)

    return _instances(one, key, s.instances)


class ContainmentRun(NamedTuple):
    """Thm 4 containment, on network and linear instances, ``(I,)`` each.

    Network instances (``network_*``): ``r`` log-uniform on ``[0.03, 1]·‖θ_0‖``, ``Lip(f)``
    by Algorithm 1 (16 samples on the ``r``-sphere), ``λ = λ_o·U[1, 4]`` with the derived
    ``λ_o = 2r_0Lip(f)/r``; ``network_ratio`` ``max_t‖θ_t − θ_0‖/r``; ``network_lam_ratio``
    ``λ/λ_o`` with the path maximum of ``‖J‖`` included in ``Lip(f)``;
    ``network_sphere_error`` Algorithm 1's ``max_i |‖θ_i − θ_0‖/r − 1|`` over its samples;
    ``network_r0`` the ``r_0`` that ``λ_o`` reads and ``network_r0_run`` ``‖y(0) − y*‖`` from
    the run's first record (a second route to it).

    Linear instances (``linear_*``): ``f = Φθ``, initial residual ``r_0 ~ U[0.2, 1.2]``
    along Φ's top singular direction (``Lip(f) = ‖Φ‖`` exact), ``r = r_0²/(10‖Φ‖)`` so that
    the *printed* threshold ``2R̃(θ_0)Lip(f)/r`` is ``20‖Φ‖²``; split-step GD with ``λη =
    0.05`` for ``linear_steps`` steps at the printed threshold (``linear_printed_ratio``) and
    at the derived one (``linear_derived_ratio``), each ``max_t ‖θ_t − θ_0‖/r``.
    """

    network_ratio: Array
    network_lam_ratio: Array
    linear_printed_ratio: Array
    linear_derived_ratio: Array
    linear_r0: Array
    network_sphere_error: Array
    network_r0: Array
    network_r0_run: Array


@dataclasses.dataclass(frozen=True)
class ContainmentSetting:
    """Network instances and the linear family for Thm 4's containment."""

    network: NetworkSetting = NetworkSetting()
    linear_instances: int = 200
    linear_steps: int = 400


def simulate_containment(key: PRNGKey, setting: ContainmentSetting) -> ContainmentRun:
    """Thm 4: does λ at the threshold keep ``θ_t`` in the ``r``-ball (:class:`ContainmentRun`)."""
    check_setting_type("simulate_containment", setting, ContainmentSetting)
    check_key("simulate_containment", key)
    s = setting.network

    def network(k):
        inst = random_instance(k, n=s.n, d=s.d, width=s.width)
        apply = instance_model(s.width).apply
        k_r, k_l, k_s = jax.random.split(jax.random.fold_in(k, 31), 3)
        flat0 = ravel_pytree(inst.params0)[0]
        radius = 10 ** jax.random.uniform(k_r, minval=-1.5, maxval=0.0) * jnp.linalg.norm(flat0)
        est = estimate_lipschitz(k_s, apply, inst.params0, inst.x, radius=radius, num_samples=16)
        r0 = jnp.linalg.norm(outputs(apply, inst.params0, inst.x) - inst.y)
        lam_o = _bounds.thm4_lambda_o(r0, est.lip_f_max, radius)
        lam = lam_o * (1 + 3 * jax.random.uniform(k_l))
        eta = jnp.minimum(0.1 / inst.mu_max, 0.5 / lam)
        run = finetune(
            apply, inst.params0, inst.x, inst.y, proximal=lam, learning_rate=eta,
            num_steps=s.steps,
        )  # fmt: skip
        lip_path = jnp.maximum(jnp.max(run.jac_norm), est.lip_f_max)
        lam_ratio = lam / _bounds.thm4_lambda_o(r0, lip_path, radius)
        r0_run = jnp.linalg.norm(run.train[0] - inst.y)
        return jnp.max(run.distance) / radius, lam_ratio, est.sphere_error, r0, r0_run

    def linear_one(k):
        r0 = jax.random.uniform(jax.random.fold_in(k, 1), minval=0.2, maxval=1.2)
        phi, theta0, y, mu = _linear_top_mode(k, s.n, r0)
        lip = jnp.sqrt(mu)
        radius = r0**2 / (10 * lip)

        def ratio(lam):
            run = finetune(
                linear().apply, theta0, phi, y, proximal=lam, learning_rate=0.05 / lam,
                num_steps=setting.linear_steps, record_jacobian=False,
            )  # fmt: skip
            return jnp.max(run.distance) / radius

        printed = _bounds.thm4_lambda_o_printed(r0**2, lip, radius)
        derived = _bounds.thm4_lambda_o(r0, lip, radius)
        return ratio(printed), ratio(derived), r0

    net = _instances(network, key, s.instances)
    lin = _instances(linear_one, jax.random.fold_in(key, 7), setting.linear_instances)
    return ContainmentRun(net[0], net[1], *lin, network_sphere_error=net[2],
                          network_r0=net[3], network_r0_run=net[4])  # fmt: skip


# ------------------------------------------------------------------------ KRR reduction


@dataclasses.dataclass(frozen=True)
class KrrSetting(Validated):
    """Network instances (targets ``±1 + 0.5``) for the KRR reduction; the linearised model
    is trained by the flow with constant λ log-uniform on ``[0.01, 10]·λ_max(K)`` on
    ``c‖f̄ − y*‖²``, ``c = 1`` (summed loss) or ``1/n`` (mean loss) with probability 1/2.

    ``n`` is the same at both scales (the printed ridge is off by the factor ``n``)."""

    n: int = param(8, "training inputs x*", low=1)
    d: int = param(3, "input dimension", low=1)
    width: int = param(8, "hidden width", low=1)
    instances: int = param(200, "independent instances", low=1)


class KrrRun(NamedTuple):
    """The linearised flow's limit and what the closed forms need, leading axis instances.

    Attributes:
      u: ``(I, p)`` ``θ̄_∞ − θ_0``.
      train: ``(I, n)`` ``f̄_∞(x*)``.
      f0: ``(I, n)`` ``f_θ0(x*)``.
      y: ``(I, n)`` ``y*``.
      jac: ``(I, n, p)`` ``J_0``.
      lam: ``(I,)`` λ.
      mean_loss: ``(I,)`` ``True`` for the mean loss (``c = 1/n``).
    """

    u: Array
    train: Array
    f0: Array
    y: Array
    jac: Array
    lam: Array
    mean_loss: Array


def simulate_krr(key: PRNGKey, setting: KrrSetting) -> KrrRun:
    """The linearised flow to convergence (``t = 40/min(λ, 2cλ_max)``, diffrax rtol = atol =
    1e-10), :class:`KrrRun`."""
    check_setting_type("simulate_krr", setting, KrrSetting)
    check_key("simulate_krr", key)
    s = setting

    def one(k):
        inst = random_instance(k, n=s.n, d=s.d, width=s.width, target_offset=0.5)
        apply = instance_model(s.width).apply
        k_lam, k_conv = jax.random.split(jax.random.fold_in(k, 41))
        lam = 10 ** jax.random.uniform(k_lam, minval=-2.0, maxval=1.0) * inst.mu_max
        mean_loss = jax.random.bernoulli(k_conv)
        c = jnp.where(mean_loss, 1.0 / s.n, 1.0)
        t_end = 40.0 / jnp.minimum(lam, 2 * c * inst.mu_max)
        lin = linearize(apply, inst.params0)
        final = gradient_flow(
            mse_loss(lin, inst.x, inst.y, loss_scale=c), inst.params0, t1=t_end,
            save_times=jnp.stack([t_end]), proximal=lam, rtol=1e-10, atol=1e-10,
        )  # fmt: skip
        final = jax.tree.map(lambda a: a[0], final)
        return KrrRun(
            ravel_pytree(final)[0] - ravel_pytree(inst.params0)[0],
            outputs(lin, final, inst.x),
            outputs(apply, inst.params0, inst.x),
            inst.y,
            flat_jacobian(apply, inst.params0, inst.x),
            lam,
            mean_loss,
        )

    return _instances(one, key, s.instances)


class ResidualRun(NamedTuple):
    """The linearised flow's residual ``f̄_θ̄t(x*) − y*`` at ``t·λ_max ∈ {0, 0.1, 0.5, 2, 10}``
    (``simulated``, diffrax) and the closed form on the same grid (``closed``), ``(I, 5, n)``;
    ``eigen_path``: ``(I, 400, n)`` the closed form's eigen-coordinates on ``t·λ_max ∈ [0,
    20]``; ``r0``: ``(I, n)``."""

    simulated: Array
    closed: Array
    eigen_path: Array
    r0: Array


def simulate_residual_path(key: PRNGKey, setting: NetworkSetting) -> ResidualRun:
    """The linearised flow against :func:`residual_path` (:class:`ResidualRun`)."""
    check_setting_type("simulate_residual_path", setting, NetworkSetting)
    check_key("simulate_residual_path", key)
    s = setting

    def one(k):
        inst = random_instance(k, n=s.n, d=s.d, width=s.width, target_offset=0.5)
        apply = instance_model(s.width).apply
        lam = 10 ** jax.random.uniform(jax.random.fold_in(k, 51), minval=-2.0, maxval=1.0)
        lam = lam * inst.mu_max
        times = jnp.array([0.0, 0.1, 0.5, 2.0, 10.0]) / inst.mu_max
        flow = flow_path(
            apply, inst.params0, inst.x, inst.y, proximal=lam, times=times, linearised=True
        )
        lin = linearize(apply, inst.params0)
        sim = jax.vmap(lambda p: outputs(lin, p, inst.x))(flow) - inst.y
        jac = flat_jacobian(apply, inst.params0, inst.x)
        kernel = jac @ jac.T
        r0 = outputs(apply, inst.params0, inst.x) - inst.y
        closed = residual_path(kernel, r0, lam, times)
        evecs = jnp.linalg.eigh(kernel)[1]
        fine = residual_path(kernel, r0, lam, jnp.linspace(0.0, 20.0, 400) / inst.mu_max)
        return ResidualRun(sim, closed, fine @ evecs, r0)

    return _instances(one, key, s.instances)
