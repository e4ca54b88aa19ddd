"""Simulations behind Thms 5.2 and 5.3 of Shachaf et al. 2021 (deep linear networks).

Each ``simulate_*(key, setting)`` draws random task instances and returns the raw
measurements a claim decides on; nothing here decides. Instances (:func:`_tasks`):
``Σ = V diag(λ) Vᵀ`` (Haar ``V``, ``λ ~ U[range]``), ``X ~ N(0, Σ)^n``, ``‖θ_S‖ = 1`` and
``θ_T = αθ_S + ξ`` with ``α`` log-uniform in ``[0.2, 5]`` and ``ξ ~ N(0, 0.25 I/d)``, so
``c_∞ = ‖P_∥θ_T‖/‖P_∥θ_S‖`` falls on both sides of 1.

* :func:`simulate_root_equation` — the norm ``b = ‖β_L‖`` of eq. (5) as the root of
  ``h(b) = b² − (b/S)^{2(L−1)/L}A² − B²`` (``A = ‖P_⊥θ_S‖``, ``B = ‖P_∥θ_T‖``,
  ``S = ‖θ_S‖``), which follows from eq. (5) by taking norms (``P_⊥`` and ``P_∥`` are
  orthogonal): residual, bracket, uniqueness, ``L = 1, 2`` and ``L → ∞``.
* :func:`simulate_deep_gd` — layer-wise GD from exactly 0-balanced rank-one weights
  (:func:`ntsim.core.balanced_deep_linear_params`, ``β(0) = θ_S``) against eq. (5), at
  several step sizes ``η`` and one flow time.
* :func:`simulate_end_to_end` — layer-wise GD against end-to-end preconditioned GD
  (:func:`~ntsim.theory.linear_teachers.end_to_end_preconditioner`).
* :func:`simulate_null_space_drift` — ``max_t ‖P_⊥(W_1(t) − W_1(0))‖_F`` along layer-wise GD.
* :func:`simulate_approximately_balanced` — pretraining from ``N(0, σ₀²)`` weights, then
  fine-tuning; error to eq. (5) per ``σ₀``.
* Thm 5.3's aligned tasks ``θ_T = αθ_S``: :func:`~._deep_aligned.simulate_aligned`.

Layer-wise GD is :func:`ntsim.core.gradient_descent` on
``mse_loss(deep_linear(widths).apply, x, y, loss_scale=1/n)`` (the paper's ``(1/n)‖·‖²``),
hidden widths ``d``. Call inside ``with jax.enable_x64(True):`` for float64 (the claims do).
A diverged GD run raises :class:`ntsim.core.DivergenceError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import (
    Record,
    balanced_deep_linear_params,
    check_finite,
    covariance,
    deep_linear,
    end_to_end_vector,
    gaussian_inputs,
    gradient_descent,
    mse_loss,
    random_orthogonal,
)
from ntsim.theory.linear_teachers import _common, _deep, _regression

__all__ = [
    "ApproxBalancedRun",
    "ApproxBalancedSetting",
    "DeepGDRun",
    "DeepGDSetting",
    "EndToEndRun",
    "NullSpaceRun",
    "NullSpaceSetting",
    "RootEquationRun",
    "RootEquationSetting",
    "simulate_approximately_balanced",
    "simulate_deep_gd",
    "simulate_end_to_end",
    "simulate_null_space_drift",
    "simulate_root_equation",
]


def _tasks(key, n: int, d: int, *, spectrum_range=(0.2, 2.0)) -> dict:
    """``Σ = V diag(λ) Vᵀ`` (Haar ``V``, ``λ ~ U[range]``), ``X ~ N(0, Σ)^n``, ``‖θ_S‖ = 1``,
    ``θ_T = αθ_S + ξ`` (module doc)."""
    k_spec, k_basis, k_x, k_s, k_a, k_t = jax.random.split(key, 6)
    spectrum = jax.random.uniform(k_spec, (d,), minval=spectrum_range[0], maxval=spectrum_range[1])
    spectrum = jnp.sort(spectrum)[::-1]
    basis = random_orthogonal(k_basis, d)
    theta_s = jax.random.normal(k_s, (d,))
    theta_s = theta_s / jnp.linalg.norm(theta_s)
    alpha = jnp.exp(jax.random.uniform(k_a, (), minval=jnp.log(0.2), maxval=jnp.log(5.0)))
    noise = 0.5 * jax.random.normal(k_t, (d,)) / jnp.sqrt(d)
    return {
        "sigma": covariance(spectrum, basis),
        "x": gaussian_inputs(k_x, n, spectrum, basis),
        "theta_s": theta_s,
        "theta_t": alpha * theta_s + noise,
        "alpha": alpha,
    }


def _norms(x, theta_s, theta_t):
    """``(A, C, B, S)`` = ``(‖P_⊥θ_S‖, ‖P_∥θ_S‖, ‖P_∥θ_T‖, ‖θ_S‖)`` by an SVD route
    (independent of the QR projectors of :mod:`._deep`)."""
    vt = jnp.linalg.svd(x, full_matrices=False)[2]
    c, b = jnp.linalg.norm(vt @ theta_s), jnp.linalg.norm(vt @ theta_t)
    return jnp.linalg.norm(theta_s - vt.T @ (vt @ theta_s)), c, b, jnp.linalg.norm(theta_s)


# ------------------------------------------------------------------ Thm 5.2: root equation


@dataclass(frozen=True)
class RootEquationSetting:
    """Sizes of :func:`simulate_root_equation` (ours; the paper gives none).

    Attributes:
      d: input dimension.
      n_values: sample sizes ``n < d``.
      draws_per_n: instances per ``n``.
      depths: depths ``L``; must start with ``1.0, 2.0`` and end with a large ``L``.
      grid: points of the log grid on which sign changes of ``h`` are counted.
    """

    d: int = 20
    n_values: tuple[int, ...] = (2, 5, 10, 15)
    draws_per_n: int = 50
    depths: tuple[float, ...] = (1.0, 2.0, 3.0, 5.0, 10.0, 1000.0)
    grid: int = 2000

    def __post_init__(self):
        if not all(1 <= n < self.d for n in self.n_values) or self.draws_per_n < 1:
            raise ValueError("RootEquationSetting: need 1 <= n < d and draws_per_n >= 1.")
        if self.depths[:2] != (1.0, 2.0) or len(self.depths) < 3:
            raise ValueError("RootEquationSetting: depths must start with (1.0, 2.0, ...).")


class RootEquationRun(NamedTuple):
    """Per instance (``len(n_values)·draws_per_n``), float64 under x64.

    Attributes:
      residual: ``max_L |h(b_L)|/S²`` over the depths.
      bracket: ``max_L`` excess of ``b_L`` over ``[S·min(1, c_∞), S·max(1, c_∞)]``, over
        ``S`` (``≤ 0`` inside).
      sign_changes: ``(instances, depths)`` sign changes of ``h`` on a log grid over
        ``[lo/4, 4·hi]``.
      between: ``min_{L ≥ 2} min(f, 1 − f)``, ``f = (c_L − 1)/(c_∞ − 1)`` (``> 0``: ``c_L``
        strictly between 1 and ``c_∞``).
      large_depth_gap: ``|c_L − c_∞|`` at the largest depth.
      first_order: ``(S/C)²|log c_∞|c_∞/L`` at the largest depth, the first-order term of
        ``c_L − c_∞`` in ``1/L`` (derived by expanding ``h`` around ``c_∞``).
      l2_error: relative error of ``b_2`` against ``(A²/S + √(A⁴/S² + 4B²))/2``.
      l1_error: relative error of ``β_1`` (eq. (5), ``L = 1``) against ``γ`` of Thm 4.1.
    """

    residual: Array
    bracket: Array
    sign_changes: Array
    between: Array
    large_depth_gap: Array
    first_order: Array
    l2_error: Array
    l1_error: Array


def _root_terms(inst, setting: RootEquationSetting) -> dict:
    x, ts, tt = inst["x"], inst["theta_s"], inst["theta_t"]
    a, c, b_row, s = _norms(x, ts, tt)
    c_inf = b_row / c
    depths = jnp.asarray(setting.depths)
    sol = jax.vmap(lambda L: _deep.deep_limit_scale(a, c, b_row, L))(depths)
    p = 2.0 * (depths - 1.0) / depths
    b = sol.norm
    resid = jnp.abs(b**2 - (b / s) ** p * a**2 - b_row**2) / s**2
    lo, hi = s * jnp.minimum(1.0, c_inf), s * jnp.maximum(1.0, c_inf)
    bracket = jnp.maximum(lo - b, b - hi) / s
    grid = jnp.exp(jnp.linspace(jnp.log(lo / 4), jnp.log(4 * hi), setting.grid))
    h = grid[None, :] ** 2 - (grid[None, :] / s) ** p[:, None] * a**2 - b_row**2
    changes = jnp.sum(jnp.sign(h[:, 1:]) != jnp.sign(h[:, :-1]), axis=1)
    frac = (sol.coefficient[1:] - 1.0) / (c_inf - 1.0)
    closed_l2 = (a**2 / s + jnp.sqrt(a**4 / s**2 + 4 * b_row**2)) / 2
    gamma = _regression.fine_tuned_linear(x, ts, tt)
    beta1 = _deep.deep_fine_tuned_limit(x, ts, tt, 1.0)
    return {
        "residual": jnp.max(resid),
        "bracket": jnp.max(bracket),
        "sign_changes": changes,
        "between": jnp.min(jnp.minimum(frac, 1.0 - frac)),
        "large_depth_gap": jnp.abs(sol.coefficient[-1] - c_inf),
        "first_order": (s / c) ** 2 * jnp.abs(jnp.log(c_inf)) * c_inf / setting.depths[-1],
        "l2_error": jnp.abs(b[1] - closed_l2) / closed_l2,
        "l1_error": jnp.linalg.norm(beta1 - gamma) / jnp.linalg.norm(gamma),
    }


def simulate_root_equation(key: PRNGKey, setting: RootEquationSetting) -> RootEquationRun:
    """The root ``b_L`` of ``h`` (module doc) for random instances; per ``n`` (index ``j``)
    the instances use ``jax.random.split(fold_in(key, j), draws_per_n)``.

    Examples:
      >>> import jax
      >>> with jax.enable_x64(True):
      ...     run = simulate_root_equation(jax.random.PRNGKey(0),
      ...                                  RootEquationSetting(d=6, n_values=(3,), draws_per_n=2))
      >>> run.residual.shape, bool(run.residual.max() < 1e-12)
      ((2,), True)
    """
    check_setting_type("simulate_root_equation", setting, RootEquationSetting)
    check_key("simulate_root_equation", key)
    d = setting.d
    outs = []
    for j, n in enumerate(setting.n_values):  # static shapes
        keys = jax.random.split(jax.random.fold_in(key, j), setting.draws_per_n)
        one = lambda k, n=n: _root_terms(_tasks(k, n, d), setting)  # noqa: E731
        outs.append(jax.jit(jax.vmap(one))(keys))
    return RootEquationRun(**{k: jnp.concatenate([o[k] for o in outs]) for k in outs[0]})


# ---------------------------------------------------------------- Thm 5.2: layer-wise GD


def _gd_instance(key, d: int, n: int, depth: int, alpha: float) -> dict:
    """``Σ = I`` task with ``θ_T = αθ_S + ξ`` (fixed ``α``) plus the unit directions ``v_j`` of
    the balanced rank-one construction. A fixed ``α`` keeps ``‖β‖`` bounded, so the GD
    stability limit (Hessian ∝ ``L‖β‖^{2−2/L}``) is the same for every instance."""
    inst = _tasks(key, n, d, spectrum_range=(1.0, 1.0))
    inst["theta_t"] = inst["theta_t"] + (alpha - inst["alpha"]) * inst["theta_s"]
    keys = jax.random.split(jax.random.fold_in(key, 1), depth - 1)
    inst["v"] = [jax.random.normal(k, (d,)) for k in keys]
    return inst


def _gd_setup(inst, depth: int):
    d, n = inst["x"].shape[1], inst["x"].shape[0]
    widths = (d,) * (depth - 1) + (1,)
    params0 = balanced_deep_linear_params(inst["theta_s"], widths, inst["v"])
    loss = mse_loss(deep_linear(widths).apply, inst["x"], inst["x"] @ inst["theta_t"],
                    loss_scale=1.0 / n)  # fmt: skip
    return params0, loss


@dataclass(frozen=True)
class DeepGDSetting:
    """Sizes of :func:`simulate_deep_gd` (ours; the paper states Thm 5.2 for gradient flow).

    Attributes:
      d, n: input dimension and sample size (``Σ = I``).
      draws: instances per depth.
      depths: integer depths ``L ≥ 2``.
      etas: step sizes (below the GD stability limit for ``‖β‖ ≲ 2``).
      flow_time: every ``η`` runs ``round(flow_time/min(etas))`` steps (≥ this flow time).
      alpha: ``θ_T = αθ_S + ξ``.
    """

    d: int = 12
    n: int = 4
    draws: int = 4
    depths: tuple[int, ...] = (2, 3, 5)
    etas: tuple[float, ...] = (0.02, 0.01, 0.005)
    flow_time: float = 30.0
    alpha: float = 1.7

    def __post_init__(self):
        if not (1 <= self.n < self.d and self.draws >= 1 and min(self.depths) >= 2):
            raise ValueError("DeepGDSetting: need 1 <= n < d, draws >= 1 and depths >= 2.")

    @property
    def steps(self) -> int:
        return round(self.flow_time / min(self.etas))


class DeepGDRun(NamedTuple):
    """Shapes ``(len(depths), draws, len(etas))``.

    Attributes:
      error: ``‖β_GD − β_(5)‖/‖β_(5)‖`` after ``steps`` steps.
      loss_ratio: final/initial train loss.
      etas, depths: the grid.
    """

    error: Array
    loss_ratio: Array
    etas: tuple[float, ...]
    depths: tuple[int, ...]


def simulate_deep_gd(key: PRNGKey, setting: DeepGDSetting) -> DeepGDRun:
    """Layer-wise GD from exactly 0-balanced weights (``β(0) = θ_S``) against eq. (5).

    Per depth ``L`` the instances use ``jax.random.split(fold_in(key, L), draws)``; every
    ``η`` runs the same number of steps (one program per depth).
    """
    check_setting_type("simulate_deep_gd", setting, DeepGDSetting)
    check_key("simulate_deep_gd", key)
    s = setting
    errors, losses = [], []
    for depth in s.depths:  # static widths
        keys = jax.random.split(jax.random.fold_in(key, depth), s.draws)

        def one(k, depth=depth):
            inst = _gd_instance(k, s.d, s.n, depth, s.alpha)
            params0, loss = _gd_setup(inst, depth)
            ref = _deep.deep_fine_tuned_limit(inst["x"], inst["theta_s"], inst["theta_t"],
                                              float(depth))  # fmt: skip

            def at(eta):
                run = gradient_descent(loss, params0, learning_rate=eta, num_steps=s.steps,
                                       throw=False)  # fmt: skip
                err = jnp.linalg.norm(end_to_end_vector(run.params) - ref) / jnp.linalg.norm(ref)
                return run, err, loss(run.params) / loss(params0)

            return jax.vmap(at)(jnp.asarray(s.etas))

        run, err, ratio = jax.jit(jax.vmap(one))(keys)
        check_finite(run, where="simulate_deep_gd")
        errors.append(err)
        losses.append(ratio)
    return DeepGDRun(jnp.stack(errors), jnp.stack(losses), tuple(s.etas), tuple(s.depths))


# ----------------------------------------------- Thm 5.2: end-to-end preconditioned GD


class EndToEndRun(NamedTuple):
    """Shapes ``(len(depths)·draws, len(etas))``.

    Attributes:
      gap: ``max_t ‖β_layers(t) − β_e2e(t)‖/‖β_(5)‖`` over ``records`` common flow times.
      error: ``‖β_e2e − β_(5)‖/‖β_(5)‖`` at the end.
      loss_ratio: final/initial train loss of end-to-end GD.
      etas: the step sizes.
    """

    gap: Array
    error: Array
    loss_ratio: Array
    etas: tuple[float, ...]


def _e2e_terms(inst, depth: int, eta: float, steps: int, records: int):
    params0, loss = _gd_setup(inst, depth)
    x, y, n = inst["x"], inst["x"] @ inst["theta_t"], inst["x"].shape[0]
    beta_loss = lambda beta: jnp.sum((x @ beta - y) ** 2) / n  # noqa: E731  same (1/n)‖·‖²
    every = max(steps // records, 1)
    layers = gradient_descent(loss, params0, learning_rate=eta, num_steps=steps, throw=False,
                              record=Record(every, lambda p, _: end_to_end_vector(p)))  # fmt: skip
    optimizer = optax.chain(_deep.end_to_end_preconditioner(depth), optax.sgd(eta))
    e2e = gradient_descent(beta_loss, inst["theta_s"], optimizer=optimizer, num_steps=steps,
                           record=Record(every, lambda b, _: b), throw=False)  # fmt: skip
    ref = _deep.deep_fine_tuned_limit(x, inst["theta_s"], inst["theta_t"], float(depth))
    scale = jnp.linalg.norm(ref)
    return (layers, e2e), {
        "gap": jnp.max(jnp.linalg.norm(layers.records - e2e.records, axis=-1)) / scale,
        "error": jnp.linalg.norm(e2e.params - ref) / scale,
        "loss_ratio": beta_loss(e2e.params) / beta_loss(inst["theta_s"]),
    }


def simulate_end_to_end(key: PRNGKey, setting: DeepGDSetting, *, records: int = 40) -> EndToEndRun:
    """Layer-wise GD from balanced weights vs end-to-end preconditioned GD
    ``β ← β − η‖β‖^{2−2/L}(∇ + (L−1)⟨∇, β̂⟩β̂)`` from ``β(0) = θ_S`` (same ``η``, same loss).

    Each ``η`` runs ``round(flow_time/η)`` steps, recorded at ``records`` common flow times;
    the instances are those of :func:`simulate_deep_gd` (same keys per depth).
    """
    check_setting_type("simulate_end_to_end", setting, DeepGDSetting)
    check_key("simulate_end_to_end", key)
    s = setting
    terms = []
    for depth in s.depths:
        keys = jax.random.split(jax.random.fold_in(key, depth), s.draws)
        insts = jax.vmap(lambda k, depth=depth: _gd_instance(k, s.d, s.n, depth, s.alpha))(keys)
        per_eta = []
        for eta in s.etas:  # steps ∝ 1/η: static
            steps = round(s.flow_time / eta)
            fn = lambda i, depth=depth, eta=eta, steps=steps: _e2e_terms(  # noqa: E731
                i, depth, eta, steps, records
            )
            runs, out = jax.jit(jax.vmap(fn))(insts)
            for run in runs:
                check_finite(run, where="simulate_end_to_end")
            per_eta.append(out)
        terms.append({k: jnp.stack([o[k] for o in per_eta], 1) for k in per_eta[0]})
    cat = {k: jnp.concatenate([t[k] for t in terms]) for k in terms[0]}
    return EndToEndRun(etas=tuple(s.etas), **cat)


# ------------------------------------------------------------- Thm 5.2: P_⊥W_1 invariance


@dataclass(frozen=True)
class NullSpaceSetting:
    """Sizes of :func:`simulate_null_space_drift` (ours).

    Attributes:
      d, n: input dimension and sample size (``Σ = I``).
      draws: instances per (depth, ``η``).
      depths: integer depths ``L ≥ 2``.
      etas: step sizes (any: the invariance holds step by step).
      steps: GD steps, every one recorded.
    """

    d: int = 12
    n: int = 4
    draws: int = 8
    depths: tuple[int, ...] = (2, 3, 5)
    etas: tuple[float, ...] = (0.005, 0.02, 0.05)
    steps: int = 200

    def __post_init__(self):
        if not (1 <= self.n < self.d and self.draws >= 1 and min(self.depths) >= 2):
            raise ValueError("NullSpaceSetting: need 1 <= n < d, draws >= 1 and depths >= 2.")


class NullSpaceRun(NamedTuple):
    """``drift``: ``max_t ‖P_⊥(W_1(t) − W_1(0))‖_F/‖W_1(0)‖_F``, shape
    ``(len(depths), draws, len(etas))``."""

    drift: Array


def simulate_null_space_drift(key: PRNGKey, setting: NullSpaceSetting) -> NullSpaceRun:
    """Layer-wise GD from balanced weights, recording ``‖P_⊥(W_1(t) − W_1(0))‖_F`` at every
    step; instances per depth from ``jax.random.split(fold_in(key, L), draws)``."""
    check_setting_type("simulate_null_space_drift", setting, NullSpaceSetting)
    check_key("simulate_null_space_drift", key)
    s = setting
    drifts = []
    for depth in s.depths:
        keys = jax.random.split(jax.random.fold_in(key, depth), s.draws)

        def one(k, depth=depth):
            inst = _gd_instance(k, s.d, s.n, depth, 1.7)
            params0, loss = _gd_setup(inst, depth)
            p_perp = _common.null_space_projector(inst["x"])
            w0 = params0["layers"][0]
            rec = lambda p, t: jnp.linalg.norm(p_perp @ (p["layers"][0] - w0))  # noqa: E731

            def at(eta):
                run = gradient_descent(loss, params0, learning_rate=eta, num_steps=s.steps,
                                       record=Record(1, rec), throw=False)  # fmt: skip
                return run, jnp.max(run.records) / jnp.linalg.norm(w0)

            return jax.vmap(at)(jnp.asarray(s.etas))

        run, drift = jax.jit(jax.vmap(one))(keys)
        check_finite(run, where="simulate_null_space_drift")
        drifts.append(drift)
    return NullSpaceRun(jnp.stack(drifts))


# -------------------------------------------------- Thm 5.2: approximately balanced init


@dataclass(frozen=True)
class ApproxBalancedSetting:
    """Sizes of :func:`simulate_approximately_balanced` (ours).

    Attributes:
      d, n: input dimension and target sample size (``Σ = I``); ``n_S = 3d`` source samples.
      draws: instances (the same tasks and init directions for every ``σ₀``).
      sigmas: init scales ``σ₀`` (decreasing).
      depth: ``L``.
      pretrain_steps, pretrain_lr, fine_tune_steps, fine_tune_lr: GD.
      alpha: ``θ_T = αθ_S + ξ`` (fixed ``α`` keeps GD below its stability limit).
    """

    d: int = 8
    n: int = 2
    draws: int = 8
    sigmas: tuple[float, ...] = (0.1, 0.03, 0.01)
    depth: int = 3
    pretrain_steps: int = 2500
    pretrain_lr: float = 0.05
    fine_tune_steps: int = 2500
    fine_tune_lr: float = 0.0125
    alpha: float = 1.7

    def __post_init__(self):
        if not (1 <= self.n < self.d and self.draws >= 2 and self.depth >= 2):
            raise ValueError("ApproxBalancedSetting: need 1 <= n < d, draws >= 2, depth >= 2.")
        if list(self.sigmas) != sorted(self.sigmas, reverse=True) or min(self.sigmas) <= 0:
            raise ValueError("ApproxBalancedSetting: sigmas must be positive and decreasing.")


class ApproxBalancedRun(NamedTuple):
    """Shapes ``(len(sigmas), draws)``.

    Attributes:
      error: ``‖β_FT − β_(5)‖/‖β_(5)‖``, eq. (5) evaluated at the pretrained ``β(0)``.
      loss: the larger of the two phases' final train losses.
      sigmas: the init scales.
    """

    error: Array
    loss: Array
    sigmas: tuple[float, ...]


def _approx_error(key, sigma0, s: ApproxBalancedSetting):
    k_task, k_src, k_init = jax.random.split(key, 3)
    inst = _tasks(k_task, s.n, s.d, spectrum_range=(1.0, 1.0))
    inst["theta_t"] = inst["theta_t"] + (s.alpha - inst["alpha"]) * inst["theta_s"]
    x_src = jax.random.normal(k_src, (3 * s.d, s.d))
    widths = (s.d,) * (s.depth - 1) + (1,)
    model = deep_linear(widths)  # unit init, scaled by σ₀ (traced: one program for all σ₀)
    params = jax.tree.map(lambda w: sigma0 * w, model.init(k_init, x_src[0]))
    pre_loss = mse_loss(model.apply, x_src, x_src @ inst["theta_s"], loss_scale=1 / (3 * s.d))
    pre = gradient_descent(pre_loss, params, learning_rate=s.pretrain_lr,
                           num_steps=s.pretrain_steps, throw=False)  # fmt: skip
    beta_s = end_to_end_vector(pre.params)
    ft_loss = mse_loss(model.apply, inst["x"], inst["x"] @ inst["theta_t"], loss_scale=1 / s.n)
    ft = gradient_descent(ft_loss, pre.params, learning_rate=s.fine_tune_lr,
                          num_steps=s.fine_tune_steps, throw=False)  # fmt: skip
    ref = _deep.deep_fine_tuned_limit(inst["x"], beta_s, inst["theta_t"], float(s.depth))
    err = jnp.linalg.norm(end_to_end_vector(ft.params) - ref) / jnp.linalg.norm(ref)
    return (pre, ft), err, jnp.maximum(pre_loss(pre.params), ft_loss(ft.params))


def simulate_approximately_balanced(
    key: PRNGKey, setting: ApproxBalancedSetting
) -> ApproxBalancedRun:
    """Pretrain a depth-``L`` net from ``N(0, σ₀²)`` weights on ``n_S = 3d`` samples of
    ``θ_S``, fine-tune on ``n`` samples of ``θ_T``, and compare with eq. (5) at the
    pretrained ``β(0)``; the same ``draws`` keys (tasks and init directions) for every
    ``σ₀``."""
    check_setting_type("simulate_approximately_balanced", setting, ApproxBalancedSetting)
    check_key("simulate_approximately_balanced", key)
    keys = jax.random.split(key, setting.draws)
    sigmas = jnp.asarray(setting.sigmas)
    per_key = lambda k: jax.vmap(lambda s0: _approx_error(k, s0, setting))(sigmas)  # noqa: E731
    runs, err, loss = jax.jit(jax.vmap(per_key))(keys)
    for run in runs:
        check_finite(run, where="simulate_approximately_balanced")
    return ApproxBalancedRun(err.T, loss.T, tuple(setting.sigmas))
