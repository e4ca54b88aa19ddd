"""Freezing the first layer (Shachaf et al. 2021, Thm 5.5 and Fig 3): the simulations.

* :func:`simulate_freezing` — the Fig 3 task (``Σ = I``, ``‖θ_S‖ = 1``,
  ``θ_T = θ_S + task_noise·ξ/√d``, nested target sets ``X[:n]``) and, per draw and ``n``,
  the limits of the three models the figure compares: Vanilla (min-norm interpolation,
  ``‖P_⊥θ_T‖²``), Finetune (eq. (5), ``L = 2``) and Frozen (``R(c*β_S)``, Thm 5.5), with the
  ``n``-independent floor ``min_c R(cβ_S)``. With ``training`` set it also pretrains a
  two-layer linear net from ``N(0, σ₀²)`` and trains the three models by GD (what the figure
  plots; ``β_S`` is then the pretrained vector, else ``θ_S``). The experiment
  ``linear_teachers/fig3_freezing`` and the Fig 3 claims both call it.
* :func:`simulate_frozen_first_layer` — Thm 5.5 on trained networks: layer-wise GD on
  ``W_2..W_L`` with ``W_1`` frozen at the exactly 0-balanced rank-one construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import (
    Record,
    balanced_deep_linear_params,
    deep_linear,
    end_to_end_vector,
    gradient_descent,
    mse_loss,
    sweep_keys,
)
from ntsim.theory.linear_teachers import _deep
from ntsim.theory.linear_teachers._common import null_space_projector

__all__ = [
    "FreezingRun",
    "FreezingSetting",
    "FreezingTraining",
    "FrozenFirstLayerRun",
    "FrozenFirstLayerSetting",
    "simulate_freezing",
    "simulate_frozen_first_layer",
]


@dataclass(frozen=True)
class FreezingTraining:
    """GD of Fig 3 (the paper gives no sizes; these are ours).

    Attributes:
      source_ratio: ``n_S = source_ratio·d`` pretraining samples.
      init_scale: ``σ₀``, entries of the random inits ``~ N(0, σ₀²)``.
      eta_scale: ``η = eta_scale/λ_max(XᵀX/n)`` (pretraining: of the source ``X``).
      pretrain_steps, fine_tune_steps: GD steps (fine-tuning: for each of the three models).
    """

    source_ratio: int = 3
    init_scale: float = 0.01
    eta_scale: float = 0.15
    pretrain_steps: int = 3000
    fine_tune_steps: int = 10_000


@dataclass(frozen=True)
class FreezingSetting:
    """Fig 3 of Shachaf et al. 2021 (Sec 5.5). Sizes the paper leaves open are ours.

    Attributes:
      d: input dimension (= hidden width when training).
      n_values: target sample sizes, strictly increasing, in ``[1, d − 1]``.
      task_noise: ``θ_T = θ_S + task_noise·ξ/√d``, ``ξ ~ N(0, I)``, ``‖θ_S‖ = 1``.
      draws: independent tasks (vmapped).
      training: GD of the three networks, or ``None`` for the limits only.
    """

    d: int = 100
    n_values: tuple[int, ...] = tuple(range(5, 100, 5))
    task_noise: float = 0.5
    draws: int = 200
    training: FreezingTraining | None = None

    def __post_init__(self):
        ns = self.n_values
        if not ns or min(ns) < 1 or max(ns) >= self.d or list(ns) != sorted(set(ns)):
            raise ValueError(f"FreezingSetting: n_values must increase strictly within "
                             f"[1, d − 1] = [1, {self.d - 1}], got {ns}.")  # fmt: skip
        if not self.task_noise > 0 or self.draws < 1:
            raise ValueError("FreezingSetting: task_noise and draws must be positive.")


class FreezingRun(NamedTuple):
    """Per (draw, n) risks ``R(β) = ‖θ_T − β‖²`` of :func:`simulate_freezing`.

    Attributes:
      n_values: the sample sizes.
      vanilla: min-norm interpolation ``‖P_⊥θ_T‖²``, ``(draws, n)``.
      finetune: eq. (5) at ``L = 2`` from ``β_S``, ``(draws, n)``.
      frozen: ``R(c*β_S)``, ``c* = ⟨Xβ_S, y⟩/‖Xβ_S‖²``, ``(draws, n)``.
      floor: ``min_c R(cβ_S)``, ``(draws,)``.
      target_norm_sq: ``‖θ_T‖²``, ``(draws,)``.
      gd: with ``training``: a dict of GD results (``{frozen,vanilla,finetune}_risk`` and
        ``_train_loss`` ``(draws, n)``, ``pretrain_loss``, ``pretrain_error`` ``‖β_S − θ_S‖``,
        ``w1_off_rank_one`` (share of ``‖W_1‖²_F`` off its top singular direction),
        ``nonfinite`` (any GD run diverged)); else ``None``.
    """

    n_values: tuple[int, ...]
    vanilla: Array
    finetune: Array
    frozen: Array
    floor: Array
    target_norm_sq: Array
    gd: dict | None


def _apply(params, x_i):
    """One example through ``β = W_1 w_2``."""
    return x_i @ end_to_end_vector(params)


def _limits(x_all, y_all, beta_s, theta_t, n_values):
    eye = jnp.eye(theta_t.shape[0])
    out = {"vanilla": [], "finetune": [], "frozen": []}
    for n in n_values:  # static prefix sizes of one shared design
        x, y = x_all[:n], y_all[:n]
        null_t = null_space_projector(x) @ theta_t
        out["vanilla"].append(null_t @ null_t)
        out["finetune"].append(_deep.deep_risk(x, beta_s, theta_t, eye, 2.0))
        c_star = _deep.frozen_first_layer_coefficient(x, y, beta_s)
        beta = c_star * beta_s
        out["frozen"].append((theta_t - beta) @ (theta_t - beta))
    return {k: jnp.stack(v) for k, v in out.items()}


def _gd(key, x_all, y_all, theta_s, theta_t, setting: FreezingSetting):
    """Pretrain from N(0, σ₀²) on the source, then fine-tune Frozen/Vanilla/Finetune."""
    tr, d, n_max = setting.training, setting.d, max(setting.n_values)
    n_source = tr.source_ratio * d
    k_xs, k_pre, k_van = jax.random.split(key, 3)
    model = deep_linear((d, 1), init_scale=tr.init_scale)
    x_src = jax.random.normal(k_xs, (n_source, d))
    pre_loss = mse_loss(_apply, x_src, x_src @ theta_s, loss_scale=1.0 / n_source)
    eta_pre = tr.eta_scale / (jnp.linalg.norm(x_src, 2) ** 2 / n_source)
    pre = gradient_descent(pre_loss, model.init(k_pre, x_src[0]), learning_rate=eta_pre,
                           num_steps=tr.pretrain_steps, throw=False)  # fmt: skip
    w1_pre, w2_pre = pre.params["layers"]
    vanilla0 = model.init(k_van, x_src[0])

    def fine_tune(n):
        mask = (jnp.arange(n_max) < n).astype(x_all.dtype)  # rows beyond n add nothing
        x, y = x_all * mask[:, None], y_all * mask
        loss = mse_loss(_apply, x, y, loss_scale=1.0 / n)
        eta = tr.eta_scale / (jnp.linalg.norm(x, 2) ** 2 / n)
        steps = tr.fine_tune_steps
        frozen_loss = lambda w2: loss({"layers": [w1_pre, w2]})  # noqa: E731
        runs = {
            "frozen": gradient_descent(frozen_loss, w2_pre, learning_rate=eta, num_steps=steps,
                                       throw=False),
            "vanilla": gradient_descent(loss, vanilla0, learning_rate=eta, num_steps=steps,
                                        throw=False),
            "finetune": gradient_descent(loss, pre.params, learning_rate=eta, num_steps=steps,
                                         throw=False),
        }  # fmt: skip
        params = {"frozen": {"layers": [w1_pre, runs["frozen"].params]},
                  **{k: runs[k].params for k in ("vanilla", "finetune")}}  # fmt: skip
        out, bad = {}, jnp.asarray(False)
        for name, p in params.items():
            error = theta_t - end_to_end_vector(p)
            out[f"{name}_risk"] = error @ error
            out[f"{name}_train_loss"] = loss(p)
            bad = bad | (runs[name].first_nonfinite_step >= 0)
        out["nonfinite"] = bad
        return out

    sim = jax.vmap(fine_tune)(jnp.asarray(setting.n_values))
    beta_s = end_to_end_vector(pre.params)
    sim["nonfinite"] = jnp.any(sim["nonfinite"]) | (pre.first_nonfinite_step >= 0)
    return beta_s, {
        **sim,
        "pretrain_loss": pre_loss(pre.params),
        "pretrain_error": jnp.linalg.norm(beta_s - theta_s),
        "w1_off_rank_one": 1.0 - jnp.linalg.norm(w1_pre, 2) ** 2 / jnp.sum(w1_pre**2),
    }


def _freezing_draw(key, setting: FreezingSetting) -> dict:
    d, n_max = setting.d, max(setting.n_values)
    k_s, k_xi, k_xt, k_gd = jax.random.split(key, 4)
    theta_s = jax.random.normal(k_s, (d,))
    theta_s = theta_s / jnp.linalg.norm(theta_s)
    theta_t = theta_s + setting.task_noise * jax.random.normal(k_xi, (d,)) / jnp.sqrt(d)
    x_all = jax.random.normal(k_xt, (n_max, d))  # nested target sets: x_all[:n]
    y_all = x_all @ theta_t
    gd = None
    beta_s = theta_s
    if setting.training is not None:
        beta_s, gd = _gd(k_gd, x_all, y_all, theta_s, theta_t, setting)
    limits = _limits(x_all, y_all, beta_s, theta_t, setting.n_values)
    floor = _deep.frozen_risk_floor(beta_s, theta_t, jnp.eye(d))
    return {**limits, "floor": floor, "target_norm_sq": theta_t @ theta_t, "gd": gd}


def simulate_freezing(
    key: PRNGKey, setting: FreezingSetting, *, progress: bool = False
) -> FreezingRun:
    """Fig 3 draws (module doc): ``setting.draws`` tasks, swept over keys (chunked,
    sharded over local devices by :func:`ntsim.core.sweep_keys`).

    Examples:
      >>> import jax
      >>> run = simulate_freezing(jax.random.PRNGKey(0), FreezingSetting(d=8, n_values=(3, 6),
      ...                                                                 draws=4))
      >>> run.frozen.shape, bool((run.frozen >= run.floor[:, None] - 1e-6).all())
      ((4, 2), True)
    """
    check_setting_type("simulate_freezing", setting, FreezingSetting)
    check_key("simulate_freezing", key)
    out = sweep_keys(_freezing_draw, key, setting.draws, progress=progress,
                     description="fig3 draws", setting=setting)  # fmt: skip
    return FreezingRun(
        n_values=tuple(setting.n_values),
        vanilla=out["vanilla"],
        finetune=out["finetune"],
        frozen=out["frozen"],
        floor=out["floor"],
        target_norm_sq=out["target_norm_sq"],
        gd=out["gd"],
    )


# ------------------------------------------------------------------------------- Thm 5.5


@dataclass(frozen=True)
class FrozenFirstLayerSetting:
    """Thm 5.5 on trained networks (sizes and the task are ours: ``Σ = I``, ``‖θ_S‖ = 1``,
    ``θ_T = alpha·θ_S + 0.5·ξ/√d``; a fixed ``alpha`` keeps ``‖β‖`` bounded so one step size
    fits every draw).

    Attributes:
      d: input dimension = hidden width.
      n_values: target sample sizes (each its own draws).
      draws: draws per ``n``.
      depth: ``L ≥ 2``.
      steps, learning_rate: GD on ``W_2..W_L``.
      alpha: the target's multiple of ``θ_S``.
      records: how many points of the trajectory are recorded.
    """

    d: int = 12
    n_values: tuple[int, ...] = (3, 11)
    draws: int = 10
    depth: int = 3
    steps: int = 1000
    learning_rate: float = 0.05
    alpha: float = 1.7
    records: int = 50

    def __post_init__(self):
        if self.depth < 2 or not all(1 <= n < self.d for n in self.n_values):
            raise ValueError("FrozenFirstLayerSetting: need depth >= 2 and 1 <= n < d.")


class FrozenFirstLayerRun(NamedTuple):
    """Per run (``n`` major, draws minor; shape ``(len(n_values)·draws,)``).

    Attributes:
      n: the sample size of each run.
      off_parallel: ``max_t (1 − |cos(β(t), θ_S)|)`` over the recorded trajectory.
      c_gd: final ``c = ⟨β, θ_S⟩/‖θ_S‖²``.
      c_star: ``⟨Xθ_S, y⟩/‖Xθ_S‖²``.
      risk: final ``‖θ_T − β‖²``; floor: ``min_c R(cθ_S)``.
      nonfinite: GD diverged.
    """

    n: Array
    off_parallel: Array
    c_gd: Array
    c_star: Array
    risk: Array
    floor: Array
    nonfinite: Array


def _frozen_draw(key, n: int, setting: FrozenFirstLayerSetting) -> dict:
    d, depth = setting.d, setting.depth
    k_x, k_s, k_t, k_v = jax.random.split(key, 4)
    x = jax.random.normal(k_x, (n, d))
    theta_s = jax.random.normal(k_s, (d,))
    theta_s = theta_s / jnp.linalg.norm(theta_s)
    theta_t = setting.alpha * theta_s + 0.5 * jax.random.normal(k_t, (d,)) / jnp.sqrt(d)
    widths = (d,) * (depth - 1) + (1,)
    unit = [jax.random.normal(k, (d,)) for k in jax.random.split(k_v, depth - 1)]
    params0 = balanced_deep_linear_params(theta_s, widths, unit)
    loss = mse_loss(deep_linear(widths).apply, x, x @ theta_t, loss_scale=1.0 / n)
    w1, rest0 = params0["layers"][0], params0["layers"][1:]
    frozen_loss = lambda rest: loss({"layers": [w1, *rest]})  # noqa: E731

    def cos(rest, _):
        beta = end_to_end_vector({"layers": [w1, *rest]})
        return jnp.abs(beta @ theta_s) / (jnp.linalg.norm(beta) * jnp.linalg.norm(theta_s))

    every = max(setting.steps // setting.records, 1)
    run = gradient_descent(
        frozen_loss, rest0, learning_rate=setting.learning_rate, num_steps=setting.steps,
        record=Record(every, cos), throw=False,
    )  # fmt: skip
    beta = end_to_end_vector({"layers": [w1, *run.params]})
    return {
        "off_parallel": 1.0 - jnp.min(run.records),
        "c_gd": (beta @ theta_s) / (theta_s @ theta_s),
        "c_star": _deep.frozen_first_layer_coefficient(x, x @ theta_t, theta_s),
        "risk": (theta_t - beta) @ (theta_t - beta),
        "floor": _deep.frozen_risk_floor(theta_s, theta_t, jnp.eye(d)),
        "nonfinite": run.first_nonfinite_step >= 0,
    }


def simulate_frozen_first_layer(
    key: PRNGKey, setting: FrozenFirstLayerSetting
) -> FrozenFirstLayerRun:
    """Thm 5.5: GD with ``W_1`` frozen at the exactly 0-balanced rank-one construction
    (:func:`ntsim.core.balanced_deep_linear_params`, ``β(0) = θ_S``), per ``n`` and draw."""
    check_setting_type("simulate_frozen_first_layer", setting, FrozenFirstLayerSetting)
    check_key("simulate_frozen_first_layer", key)
    parts = []
    for j, n in enumerate(setting.n_values):  # static n: one program per n
        keys = jax.random.split(jax.random.fold_in(key, j), setting.draws)
        out = jax.jit(jax.vmap(lambda k, n=n: _frozen_draw(k, n, setting)))(keys)
        parts.append({**out, "n": jnp.full((setting.draws,), n)})
    cat = {k: jnp.concatenate([p[k] for p in parts]) for k in parts[0]}
    return FrozenFirstLayerRun(**cat)
