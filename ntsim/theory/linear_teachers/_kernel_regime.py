"""Thm 6.1 of Shachaf et al. 2021: fine-tuning a wide two-layer ReLU net in the kernel regime.

:func:`simulate_kernel_regime` pretrains a two-layer ReLU net (fixed ±1 output layer,
first layer ``N(0, κ²I)``) by GD on ``n_S`` source points labelled by a linear teacher
``θ_S``, then fine-tunes it on ``n`` target points labelled by ``θ_T``, at several widths
``m`` (nested networks: the width-``m`` net is the first ``m`` neurons of the widest one,
so one key gives the same data, teachers and neurons at every width). Per (width, repeat)
it measures how far the trained network is from the kernel picture of Thm 6.1's proof:

* ``prediction``: ``‖f_net − f_ker‖/‖f_ker − f_S‖`` on test points, ``f_ker`` the kernel
  predictor ``f_S + H^∞(·, X)(H^∞)⁻¹ỹ`` (:func:`kernel_predictor`);
* ``distance``: ``|‖W_FT − W_S‖_F/√(ỹᵀ(H^∞)⁻¹ỹ) − 1|``;
* ``gram_drift``: ``max_t ‖H(t) − H^∞‖₂/‖H^∞‖₂`` over both phases (recorded every
  ``record_every`` steps);
* ``log_loss``: ``log10`` of the final/initial train loss (the worse phase).

Inputs are uniform on the unit sphere (Sec 6 assumes ``‖x‖ = 1``); GD uses
``η = 0.9·n/λ_max(H^∞)``. The claims and the experiment
``linear_teachers/relu_kernel_vs_network`` run :func:`simulate_kernel_regime` and
:func:`simulate_relu_risk_runs` with :data:`KERNEL_REGIME_SETTINGS` and
:data:`RELU_RISK_SETTINGS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.core import Record, random_signs, two_layer_relu, two_layer_relu_hinf
from ntsim.theory.linear_teachers import _relu as relu

__all__ = [
    "KERNEL_REGIME_SETTINGS",
    "RELU_RISK_SETTINGS",
    "KernelRegimeRun",
    "KernelRegimeSetting",
    "ReluRiskSetting",
    "simulate_kernel_regime",
    "simulate_relu_risk_runs",
]


@dataclass(frozen=True)
class KernelRegimeSetting:
    """Thm 6.1 with linear teachers (sizes are ours; the paper gives none).

    Attributes:
      d: input dimension.
      n: target sample size.
      n_source: source sample size ``n_S``.
      kappa: first-layer init scale ``κ``.
      gap: ``‖θ_T − θ_S‖`` (``‖θ_S‖ = 1``).
      num_test: test points for the prediction deviation.
      widths: network widths ``m`` (nested).
      repeats: independent draws (data, teachers, neurons) per width.
      pretrain_steps: GD iterations on the source task.
      fine_tune_steps: GD iterations on the target task.
      record_every: steps between records of the Gram drift.
      batch_size: repeats computed together (bounds memory at large ``m``).
    """

    d: int = 10
    n: int = 20
    n_source: int = 40
    kappa: float = 0.1
    gap: float = 1.0
    num_test: int = 500
    widths: tuple[int, ...] = (512, 1024, 2048)
    repeats: int = 4
    pretrain_steps: int = 150
    fine_tune_steps: int = 100
    record_every: int = 25
    batch_size: int = 16

    def __post_init__(self):
        if not self.widths or list(self.widths) != sorted(set(self.widths)) or self.repeats < 1:
            raise ValueError("KernelRegimeSetting: widths must increase strictly; repeats >= 1.")
        if not self.kappa > 0:
            raise ValueError(f"KernelRegimeSetting: kappa must be > 0, got {self.kappa}.")


class KernelRegimeRun(NamedTuple):
    """Per (width, repeat) deviations from the kernel picture (module doc), float32.

    Attributes:
      widths: the widths ``m``.
      prediction: ``‖f_net − f_ker‖/‖f_ker − f_S‖`` on the test points, ``(len(widths),
        repeats)``.
      distance: ``|‖W_FT − W_S‖_F/√(ỹᵀ(H^∞)⁻¹ỹ) − 1|``, the same shape.
      gram_drift: ``max_t ‖H(t) − H^∞‖₂/‖H^∞‖₂`` over both phases, the same shape.
      log_loss: ``log10`` of the final/initial train loss (the worse phase), the same shape.
      first_nonfinite: first step at which GD produced a non-finite value (−1: none).
    """

    widths: tuple[int, ...]
    prediction: Array
    distance: Array
    gram_drift: Array
    log_loss: Array
    first_nonfinite: Array


def _symmetric_spectral_norm(a: Array) -> Array:
    """``‖A‖₂ = max|λ_i(A)|`` of a symmetric ``A``, from ``eigvalsh`` rather than an SVD.

    Not ``jnp.linalg.norm(A, 2)``: jaxlib's CPU SVD spreads a batch over XLA's intra-op
    thread pool and blocks until it is done, so under ``lax.map`` two SVDs running at once
    (the drift's numerator and denominator were two) can each hold one of a 2-core
    machine's two pool threads while waiting for the other: a deadlock, seen in the traced
    mutation baseline. ``eigvalsh`` does not use the pool.
    """
    eigenvalues = jnp.linalg.eigvalsh(a)
    return jnp.maximum(-eigenvalues[..., 0], eigenvalues[..., -1])


def _instance(key, width: int, setting: KernelRegimeSetting) -> dict:
    s = setting
    max_width = max(s.widths)
    k_src, k_tgt, k_test, k_theta, k_dir, k_net = jax.random.split(key, 6)
    x_s = relu.unit_norm_inputs(k_src, s.n_source, s.d)
    x = relu.unit_norm_inputs(k_tgt, s.n, s.d)
    x_test = relu.unit_norm_inputs(k_test, s.num_test, s.d)
    theta_s = relu.unit_norm_inputs(k_theta, 1, s.d)[0]
    theta_t = theta_s + s.gap * relu.unit_norm_inputs(k_dir, 1, s.d)[0]
    hinf_s, hinf = two_layer_relu_hinf(x_s), two_layer_relu_hinf(x)
    k_signs, k_init = jax.random.split(k_net)
    all_signs = random_signs(k_signs, max_width)
    params0 = two_layer_relu(all_signs, init_scale=s.kappa).init(k_init, x[0])
    signs, params0 = all_signs[:width], {"w": params0["w"][:width]}
    net = lambda p, xs: jax.vmap(two_layer_relu(signs).apply, in_axes=(None, 0))(p, xs)[:, 0]  # noqa: E731
    drift = lambda h, xs: lambda p, _: _symmetric_spectral_norm(  # noqa: E731
        relu.first_layer_gram(signs, p, xs) - h) / jnp.linalg.eigvalsh(h)[-1]  # fmt: skip
    pre = relu.train_two_layer_relu(
        signs, params0, x_s, x_s @ theta_s,
        learning_rate=0.9 * s.n_source / jnp.linalg.eigvalsh(hinf_s)[-1],
        num_steps=s.pretrain_steps, record=Record(s.record_every, drift(hinf_s, x_s)),
        throw=False,
    )  # fmt: skip
    y = x @ theta_t
    residual = y - net(pre.params, x)
    ft = relu.train_two_layer_relu(
        signs, pre.params, x, y, learning_rate=0.9 * s.n / jnp.linalg.eigvalsh(hinf)[-1],
        num_steps=s.fine_tune_steps, record=Record(s.record_every, drift(hinf, x)), throw=False,
    )  # fmt: skip
    f_s_test = net(pre.params, x_test)
    f_kernel = relu.kernel_predictor(x_test, x, f_s_test, residual)
    f_net = net(ft.params, x_test)
    norm = relu.hinf_norm(hinf, residual)
    loss = jnp.mean((net(ft.params, x) - y) ** 2) / jnp.mean(residual**2)
    source_loss = jnp.mean((net(pre.params, x_s) - x_s @ theta_s) ** 2) / jnp.mean(
        (net(params0, x_s) - x_s @ theta_s) ** 2
    )
    return {
        "log_loss": jnp.log10(jnp.maximum(loss, source_loss)),
        "prediction": jnp.linalg.norm(f_net - f_kernel) / jnp.linalg.norm(f_kernel - f_s_test),
        "distance": jnp.abs(jnp.linalg.norm(ft.params["w"] - pre.params["w"]) / norm - 1),
        "gram_drift": jnp.maximum(jnp.max(pre.records), jnp.max(ft.records)),
        "first_nonfinite": jnp.maximum(pre.first_nonfinite_step, ft.first_nonfinite_step),
    }


def simulate_kernel_regime(key: PRNGKey, setting: KernelRegimeSetting) -> KernelRegimeRun:
    """Pretrain + fine-tune at every width (module doc); the same ``repeats`` keys
    (``jax.random.split(key, repeats)``) at every width, one program per width."""
    check_setting_type("simulate_kernel_regime", setting, KernelRegimeSetting)
    check_key("simulate_kernel_regime", key)
    keys = jax.random.split(key, setting.repeats)
    per_width = []
    for width in setting.widths:  # static shapes
        fn = lambda k, w=width: _instance(k, w, setting)  # noqa: E731
        out = jax.jit(lambda ks, fn=fn: jax.lax.map(fn, ks, batch_size=setting.batch_size))(keys)
        per_width.append(out)
    stacked = {name: jnp.stack([o[name] for o in per_width]) for name in per_width[0]}
    return KernelRegimeRun(widths=tuple(setting.widths), **stacked)


# ----------------------------------------------------------- Thm 6.1 / Cor. 6.3: risk runs


@dataclass(frozen=True)
class ReluRiskSetting:
    """Sizes of the risk runs (ours): :func:`simulate_relu_fine_tuning` per repeat.

    Attributes:
      d: input dimension.
      n_source: source sample size ``n_S``.
      n_values: target sample sizes ``n``, one fine-tuning per value.
      gap_norms: teacher gaps ``‖θ_T − θ_S‖``, one fine-tuning per value.
      width: hidden width ``m``.
      init_scale: ``κ`` of the first-layer initialisation ``w_r ~ N(0, κ²I)``.
      pretrain_steps: GD iterations on the source task.
      fine_tune_steps: GD iterations on each target task.
      num_test: fresh test inputs per draw.
      repeats: independent draws.
      batch_size: draws computed together (bounds memory at large ``width``).
    """

    d: int = 10
    n_source: int = 40
    n_values: tuple[int, ...] = (10, 20, 40)
    gap_norms: tuple[float, ...] = (0.1, 0.3, 1.0)
    width: int = 1024
    init_scale: float = 0.1
    pretrain_steps: int = 150
    fine_tune_steps: int = 100
    num_test: int = 1000
    repeats: int = 4
    batch_size: int = 8

    def __post_init__(self):
        check_int_fields(self, ("d", "n_source", "width", "pretrain_steps", "fine_tune_steps",
                                "num_test", "repeats", "batch_size"))  # fmt: skip


def simulate_relu_risk_runs(key: PRNGKey, setting: ReluRiskSetting) -> dict:
    """:func:`simulate_relu_fine_tuning` for ``setting.repeats`` keys
    (``jax.random.split(key, repeats)``): each array gains a leading ``repeats`` axis."""
    check_setting_type("simulate_relu_risk_runs", setting, ReluRiskSetting)
    check_key("simulate_relu_risk_runs", key)
    s = setting

    def one(k):
        return relu.simulate_relu_fine_tuning(
            k, d=s.d, n_source=s.n_source, n_values=s.n_values, gap_norms=s.gap_norms,
            width=s.width, init_scale=s.init_scale, pretrain_steps=s.pretrain_steps,
            fine_tune_steps=s.fine_tune_steps, num_test=s.num_test,
        )  # fmt: skip

    keys = jax.random.split(key, s.repeats)
    return jax.jit(lambda ks: jax.lax.map(one, ks, batch_size=s.batch_size))(keys)


# 16 repeats at quick: the per-repeat slopes have s.e. ≈ 0.03 with 8 repeats; 300/200 GD
# steps: with 150/100 one repeat of 16 (seed 3) stopped at a loss ratio 3e-6.
KERNEL_REGIME_SETTINGS = {
    "quick": KernelRegimeSetting(
        widths=(256, 512, 1024), repeats=16, pretrain_steps=300, fine_tune_steps=200,
        record_every=50,
    ),
    "full": KernelRegimeSetting(
        widths=(2500, 5000, 10000), repeats=67, pretrain_steps=200, fine_tune_steps=120,
        record_every=40,
    ),
}  # fmt: skip
"""Thm 6.1's kernel regime per scale (the claim and ``relu_kernel_vs_network``)."""
# Full uses m = 10⁴ to fit the CPU budget (at m = 2·10⁴, 8 repeats, the worst risk/bound
# ratio was 0.43 for Thm 6.1 — same picture).
RELU_RISK_SETTINGS = {
    "quick": ReluRiskSetting(width=1024, repeats=4, pretrain_steps=150, fine_tune_steps=100,
                             num_test=1000),
    "full": ReluRiskSetting(width=10000, repeats=23, pretrain_steps=200, fine_tune_steps=120,
                            num_test=2000),
}  # fmt: skip
"""The Thm 6.1 / Cor 6.3 risk runs per scale (the claims and ``relu_kernel_vs_network``)."""
