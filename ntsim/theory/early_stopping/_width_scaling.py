r"""Width scaling of the paper's attention model (Sun & Raskutti 2026, Thms 3, 5; Lemmas 1, 2, 5).

Sun & Raskutti 2026 analyse a transformer block (eqs. (3), (4), (67)–(70): attention with
``1/d`` logit scaling, LayerNorm, pooling, smooth activation, scalar head) in standard
parameterisation (SP), trained by full-batch GD with step ``ε = η_0/n`` (``n`` the width):

* **Thm 3 / Step 1** — pretraining from the Gaussian ``θ_0`` stays in
  ``B(θ_0, C_1 n^{−1/2})``: ``‖θ_PT − θ_0‖√n`` is ``O(1)`` (Fig. 1);
* **Thm 5, eq. (17)/(99)** — fine-tuning from ``θ_PT``: ``sup_τ ‖K_τ − K_PT‖_F = O(n^{−1/2})``;
* **Lemma 1, eq. (14)** — the network stays within ``Õ(n^{−1/2})`` of its linearisation at
  ``θ_PT`` trained by the same GD;
* **Lemma 2, eq. (51)** — with ``1/d`` scaling the attention logits are ``O(n^{−1/2})`` at
  init (``q·k = O(√n)`` divided by ``n``); with ``1/√d`` they stay ``O(1)``;
* **Lemma 5, eqs. (93), (95)** — mixed init (pretrained backbone, fresh Gaussian head
  ``W``): the head block of the width-normalised NTK is exactly ``f_BB f_BBᵀ/n`` and the
  backbone block is ``(1/n) Wᵀ J_BB J_BBᵀ W`` (:func:`head_kernel_block`,
  :func:`backbone_kernel_block`).

This module holds the setting (:class:`WidthScalingSetting`), the model
(:func:`paper_attention_model`, ``ntsim.core.attention_model`` in SP), the synthetic source
and target tasks (:func:`source_target_data`), one pure run per width and seed
(:func:`width_scaling_run`, ``vmap``-able over keys) and the sweep over widths × seeds that
the claims read (:func:`simulate_width_scaling`; widths change shapes, so widths are a
Python loop and seeds are vmapped); the logits at init over widths × seeds, under both
logit scalings, are :func:`simulate_init_logits`. Rates are fitted by
:func:`ntsim.theory.early_stopping.fit_log_log_rate`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import check_choice, check_int_fields, check_key, check_setting_type
from ntsim.core import (
    LOGIT_SCALINGS,
    Model,
    Record,
    attention_model,
    empirical_ntk_fn,
    gradient_descent,
    linearize,
    mse_loss,
    tree_distance,
)

__all__ = [
    "InitLogits",
    "InitLogitSetting",
    "TaskData",
    "WidthScalingRun",
    "WidthScalingSetting",
    "WidthScalingSweep",
    "attention_logits",
    "backbone_features",
    "backbone_kernel_block",
    "head_kernel_block",
    "paper_attention_model",
    "pretrain_source",
    "relative_kernel_drift",
    "simulate_init_logits",
    "simulate_width_scaling",
    "source_target_data",
    "width_scaling_run",
]


def paper_attention_model(
    width: int, *, num_heads: int = 1, activation: str = "gelu", logit_scaling: str = "1/d"
) -> Model:
    """The paper's block in SP: attention (``head_dim = n``), GELU FFN of width ``n``, LN, pooling.

    ``ntsim.core.attention_model(width=n, head_dim=n, ffn_width=n, parameterization=
    "standard")``: Sun & Raskutti 2026, eqs. (3)–(4), (67)–(70), with ``d^l = d^{l,G} = n``
    (App. B.2) and a smooth activation (Assumption 4.6; GELU, as in GPT-Neo).
    """
    return attention_model(
        width=width,
        num_heads=num_heads,
        head_dim=width,
        ffn_width=width,
        activation=activation,
        logit_scaling=logit_scaling,
        parameterization="standard",
    )


def attention_logits(params: Params, x: ArrayLike, *, logit_scaling: str = "1/d") -> Array:
    r"""Attention logits ``S_h = s · (hW^Q_h)(hW^K_h)ᵀ`` of eq. (3), ``(H, T, T)``, one sequence.

    For the SP model of :func:`paper_attention_model`: ``h = xW_E``, ``s = 1/d`` or
    ``1/√d`` with ``d`` the head width.
    """
    check_choice("attention_logits", "logit_scaling", logit_scaling, LOGIT_SCALINGS)
    attn = params["attention"]
    h = jnp.asarray(x) @ params["embed"]["w"]
    q = jnp.einsum("td,hde->hte", h, attn["query"])
    k = jnp.einsum("td,hde->hte", h, attn["key"])
    d = attn["query"].shape[-1]
    scale = 1.0 / d if logit_scaling == "1/d" else 1.0 / math.sqrt(d)
    return scale * jnp.einsum("hte,hse->hts", q, k)


def backbone_features(model: Model, params: Params, x: ArrayLike) -> Array:
    """``f_BB(x)``: the pooled LayerNorm output that the head reads, ``(N, n)`` for a batch.

    For the SP head ``y = f_BB W`` this is ``apply`` with ``W = I_n`` (exact: the head is
    linear), so no model internals are duplicated.
    """
    width = params["head"]["w"].shape[0]
    identity_head = {**params, "head": {"w": jnp.eye(width, dtype=params["head"]["w"].dtype)}}
    return jax.vmap(model.apply, in_axes=(None, 0))(identity_head, jnp.asarray(x))


def head_kernel_block(features: ArrayLike) -> Array:
    r"""Head block of the width-normalised NTK, ``f_BB f_BBᵀ / n`` (Lemma 5, eq. (93))."""
    f = jnp.asarray(features)
    return f @ f.T / f.shape[1]


def backbone_kernel_block(backbone_ntk: ArrayLike, head: ArrayLike) -> Array:
    r"""Backbone block ``(1/n) Wᵀ J_BB J_BBᵀ W`` of the normalised NTK (Lemma 5, eq. (95)).

    Args:
      backbone_ntk: ``⟨∂f_BB,a(x_i)/∂θ_BB, ∂f_BB,b(x_j)/∂θ_BB⟩``, ``(N, N, n, n)`` (the
        multi-output NTK of the backbone, unnormalised).
      head: ``W``, ``(n,)`` or ``(n, 1)``.
    """
    w = jnp.asarray(head).reshape(-1)
    return jnp.einsum("ijab,a,b->ij", jnp.asarray(backbone_ntk), w, w) / w.shape[0]


def relative_kernel_drift(kernel: ArrayLike, reference: ArrayLike) -> Array:
    """``‖K − K_ref‖_F / ‖K_ref‖_F`` (Thm 5, eq. (17), made scale-free)."""
    k, ref = jnp.asarray(kernel), jnp.asarray(reference)
    return jnp.linalg.norm(k - ref) / jnp.linalg.norm(ref)


@dataclasses.dataclass(frozen=True)
class WidthScalingSetting:
    """Synthetic source → target setting for the width-scaling checks (sizes are ours).

    The paper states no sizes for these statements; tokens ``T``, input dimension, sample
    sizes and step counts below are small-CPU choices, fixed across widths.

    Attributes:
      seq_len: tokens per sequence ``T`` (no positional encoding, as in the paper).
      input_dim: token dimension ``d⁰``.
      num_source: source sample size ``N_1``.
      num_target: target sample size ``N_2``.
      num_test: test points for the linearisation error.
      pretrain_steps: GD steps of pretraining.
      finetune_steps: GD steps of fine-tuning.
      eta0: ``η_0``; the step is ``ε = η_0/n`` on ``(1/2N)Σ(f − y)²``.
      record_every: fine-tuning steps between kernel/linearisation records.
      num_heads: attention heads ``H`` (finite).
      logit_scaling: ``"1/d"`` (the paper's) or ``"1/sqrt(d)"``.
      widths: the widths ``n`` of a sweep (:func:`simulate_width_scaling`).
      num_seeds: seeds per width of a sweep; data and init keys are shared across widths.
    """

    seq_len: int = 4
    input_dim: int = 8
    num_source: int = 16
    num_target: int = 16
    num_test: int = 16
    pretrain_steps: int = 200
    finetune_steps: int = 200
    eta0: float = 1.0
    record_every: int = 50
    num_heads: int = 1
    logit_scaling: str = "1/d"
    widths: tuple[int, ...] = (32, 64, 128, 256, 512)
    num_seeds: int = 8

    def __post_init__(self):
        check_int_fields(
            self,
            (
                "seq_len",
                "input_dim",
                "num_source",
                "num_target",
                "num_test",
                "pretrain_steps",
                "finetune_steps",
                "record_every",
                "num_heads",
                "num_seeds",
            ),
        )
        _check_widths("WidthScalingSetting", self.widths)
        if not self.eta0 > 0:
            raise ValueError(f"WidthScalingSetting.eta0 must be positive, got {self.eta0}.")
        if self.logit_scaling not in LOGIT_SCALINGS:
            raise ValueError(
                f"WidthScalingSetting.logit_scaling must be one of {LOGIT_SCALINGS}, got "
                f"{self.logit_scaling!r}."
            )


def _check_widths(where: str, widths) -> None:
    if (
        not isinstance(widths, tuple)
        or len(widths) < 2
        or any(not isinstance(w, int) or w < 1 for w in widths)
        or list(widths) != sorted(set(widths))
    ):
        raise ValueError(
            f"{where}.widths must be a tuple of at least 2 increasing positive ints, got "
            f"{widths!r}."
        )


def _teacher(key: PRNGKey, x: Array, hidden: int = 8) -> Array:
    """A fixed width-independent target: mean over tokens of ``Σ_k a_k tanh(x_t·u_k)``."""
    k_u, k_a = jax.random.split(key)
    u = jax.random.normal(k_u, (x.shape[-1], hidden)) / math.sqrt(x.shape[-1])
    a = jax.random.normal(k_a, (hidden,)) / math.sqrt(hidden)
    return jnp.mean(jnp.tanh(x @ u) @ a, axis=-1)


class TaskData(NamedTuple):
    """Source and target samples: inputs ``(N, T, d⁰)`` and targets ``(N,)``."""

    x_source: Array
    y_source: Array
    x_target: Array
    y_target: Array
    x_test: Array


def source_target_data(key: PRNGKey, setting: WidthScalingSetting) -> TaskData:
    """Gaussian token sequences; ``f_src`` a random tanh teacher, ``f_tgt = f_src + Δ``.

    ``Δ`` is a second, independent teacher at half the scale: the target task is related to
    the source task (Sec 3.1) but not equal to it. Noise-free (the width statements are
    about optimisation, not statistics).
    """
    check_setting_type("source_target_data", setting, WidthScalingSetting)
    check_key("source_target_data", key)
    ks = jax.random.split(key, 5)
    shape = (setting.seq_len, setting.input_dim)
    x_src = jax.random.normal(ks[0], (setting.num_source, *shape))
    x_tgt = jax.random.normal(ks[1], (setting.num_target, *shape))
    x_test = jax.random.normal(ks[2], (setting.num_test, *shape))

    def f_src(x):
        return _teacher(ks[3], x)

    def f_tgt(x):
        return f_src(x) + 0.5 * _teacher(ks[4], x)

    return TaskData(x_src, f_src(x_src), x_tgt, f_tgt(x_tgt), x_test)


class WidthScalingRun(NamedTuple):
    """One pretrain → fine-tune run at one width (all scalars).

    Attributes:
      pretrain_distance: ``‖θ_PT − θ_0‖_2`` (Thm 3: ``O(n^{−1/2})``).
      kernel_drift: ``sup_τ ‖K_τ − K_PT‖_F / ‖K_PT‖_F`` on the target inputs (Thm 5).
      linearisation_error: ``sup_τ (mean_x (f_τ(x) − f^lin_τ(x))²)^{1/2}`` on test inputs
        (Lemma 1's ``L2`` norm; a root mean square is less noisy than a max).
      max_logit_init: ``max |S_h|`` at ``θ_0`` over heads, token pairs and source inputs.
      source_loss: pretraining loss at ``θ_PT`` (``(1/2N)Σ(f − y)²``).
      target_loss_start, target_loss_end: fine-tuning loss at ``θ_PT`` and at the end.
    """

    pretrain_distance: Array
    kernel_drift: Array
    linearisation_error: Array
    max_logit_init: Array
    source_loss: Array
    target_loss_start: Array
    target_loss_end: Array


def pretrain_source(
    key: PRNGKey, width: int, setting: WidthScalingSetting
) -> tuple[Model, TaskData, Params, Params]:
    """Data, ``θ_0`` and ``θ_PT``: GD with step ``η_0/n`` on the source task from the SP init.

    The first stage of :func:`width_scaling_run` (Thm 3, Assumption 4.7): loss
    ``(1/2N_1)Σ(f − y)²``, ``pretrain_steps`` full-batch steps. Returns
    ``(model, data, θ_0, θ_PT)``; ``vmap``-compatible over ``key`` inside a caller.
    """
    check_setting_type("pretrain_source", setting, WidthScalingSetting)
    check_key("pretrain_source", key)
    k_data, k_init = jax.random.split(key)
    data = source_target_data(k_data, setting)
    model = paper_attention_model(
        width, num_heads=setting.num_heads, logit_scaling=setting.logit_scaling
    )
    params0 = model.init(k_init, data.x_source[0])
    loss = mse_loss(
        model.apply, data.x_source, data.y_source, loss_scale=0.5 / data.y_source.shape[0]
    )
    params_pt = gradient_descent(
        loss,
        params0,
        num_steps=setting.pretrain_steps,
        learning_rate=setting.eta0 / width,
        throw=False,
    ).params
    return model, data, params0, params_pt


def width_scaling_run(key: PRNGKey, width: int, setting: WidthScalingSetting) -> WidthScalingRun:
    """Pretrain on the source task, fine-tune on the target task, measure the width statements.

    Both stages are full-batch GD with step ``η_0/n`` on ``(1/2N)Σ(f − y)²`` from the SP
    Gaussian init (Thm 3, Thm 5). The linearised model ``f(θ_PT) + J(θ_PT)(θ − θ_PT)``
    (:func:`ntsim.core.linearize`) is fine-tuned by the same GD; records every
    ``record_every`` steps give the ``sup_τ`` of the kernel drift (empirical NTK on the
    target inputs, ``ntsim.core.empirical_ntk_fn``) and of the linearisation gap.
    ``vmap``-compatible over ``key`` (``width`` and ``setting`` are static).
    """
    check_setting_type("width_scaling_run", setting, WidthScalingSetting)
    check_key("width_scaling_run", key)
    model, data, params0, params_pt = pretrain_source(key, width, setting)
    lr = setting.eta0 / width

    def loss(apply, x, y):
        return mse_loss(apply, x, y, loss_scale=0.5 / y.shape[0])

    source_loss = loss(model.apply, data.x_source, data.y_source)

    predict_test = jax.vmap(model.apply, in_axes=(None, 0))
    apply_lin = linearize(model.apply, params_pt)
    record = Record(every=setting.record_every, fn=lambda p, step: p)
    target_loss = loss(model.apply, data.x_target, data.y_target)
    ft = gradient_descent(
        target_loss,
        params_pt,
        num_steps=setting.finetune_steps,
        learning_rate=lr,
        record=record,
        throw=False,
    )
    ft_lin = gradient_descent(
        loss(apply_lin, data.x_target, data.y_target),
        params_pt,
        num_steps=setting.finetune_steps,
        learning_rate=lr,
        record=Record(
            every=setting.record_every,
            fn=lambda p, step: jax.vmap(apply_lin, in_axes=(None, 0))(p, data.x_test),
        ),
        throw=False,
    )
    ntk = empirical_ntk_fn(model.apply)

    def drift_and_gap(carry, inputs):
        params, lin_pred = inputs
        kernel = ntk(data.x_target, None, params)
        diff = predict_test(params, data.x_test).reshape(-1) - lin_pred.reshape(-1)
        gap = jnp.sqrt(jnp.mean(diff**2))  # ‖f_τ − f_τ^lin‖ in L2 of the test inputs
        return carry, (kernel, gap)

    k_pt = ntk(data.x_target, None, params_pt)
    _, (kernels, gaps) = jax.lax.scan(drift_and_gap, None, (ft.records, ft_lin.records))
    drifts = jax.vmap(relative_kernel_drift, in_axes=(0, None))(kernels, k_pt)
    logits = jax.vmap(lambda x: attention_logits(params0, x, logit_scaling=setting.logit_scaling))(
        data.x_source
    )
    return WidthScalingRun(
        pretrain_distance=tree_distance(params_pt, params0),
        kernel_drift=jnp.max(drifts),
        linearisation_error=jnp.max(gaps),
        max_logit_init=jnp.max(jnp.abs(logits)),
        source_loss=source_loss(params_pt),
        target_loss_start=target_loss(params_pt),
        target_loss_end=target_loss(ft.params),
    )


class WidthScalingSweep(NamedTuple):
    """:class:`WidthScalingRun` over widths × seeds: every field ``(W, S)``, plus ``widths``.

    Seed ``s`` uses the same data and init key at every width, so each column is one curve.
    """

    widths: Array
    pretrain_distance: Array
    kernel_drift: Array
    linearisation_error: Array
    max_logit_init: Array
    source_loss: Array
    target_loss_start: Array
    target_loss_end: Array


def simulate_width_scaling(key: PRNGKey, setting: WidthScalingSetting) -> WidthScalingSweep:
    """:func:`width_scaling_run` at every width of ``setting.widths`` for ``num_seeds`` seeds.

    The seed keys are ``jax.random.split(key, num_seeds)``, the same at every width (one
    curve per seed); each width is one compiled, seed-vmapped program (shapes change with
    the width). Sun & Raskutti 2026, Thms 3, 5 and Lemma 1: the claims fit
    ``log(field)`` on ``log n`` per seed (:func:`fit_log_log_rate`).
    """
    check_setting_type("simulate_width_scaling", setting, WidthScalingSetting)
    check_key("simulate_width_scaling", key)
    keys = jax.random.split(key, setting.num_seeds)
    per_width = [
        jax.jit(jax.vmap(lambda k, w=width: width_scaling_run(k, w, setting)))(keys)
        for width in setting.widths
    ]
    stacked = jax.tree.map(lambda *values: jnp.stack(values), *per_width)
    return WidthScalingSweep(jnp.asarray(setting.widths), *stacked)


@dataclasses.dataclass(frozen=True)
class InitLogitSetting:
    """Attention logits at the SP init over widths × seeds (Lemma 2, eq. (51); sizes ours).

    Attributes:
      widths: widths ``n`` (``head_dim = n``).
      num_seeds: seeds per width (data and init keys shared across widths).
      num_heads: attention heads; the maximum is over heads, token pairs and inputs.
      data: the source inputs are those of :func:`source_target_data` under this setting.
    """

    widths: tuple[int, ...] = (32, 64, 128, 256, 512, 1024)
    num_seeds: int = 50
    num_heads: int = 2
    data: WidthScalingSetting = WidthScalingSetting()

    def __post_init__(self):
        check_int_fields(self, ("num_seeds", "num_heads"))
        _check_widths("InitLogitSetting", self.widths)


class InitLogits(NamedTuple):
    """``max |S_h|`` at init, ``(W, S)``, under ``1/d`` and ``1/√d`` logit scaling, and the
    mean over heads, token pairs and inputs of ``S_h,ts² / E[S_h,ts² | h]`` under each
    (``inverse_moment``, ``inverse_sqrt_moment``, ``(W, S)``): with ``W^Q, W^K ~ N(0, 1/n)``
    (App. B.2, σ = 1) and ``d = n``, ``q_t·k_s`` given ``h`` has variance ``‖h_t‖²‖h_s‖²/n``,
    so ``E[S² | h] = s²‖h_t‖²‖h_s‖²/n`` for eq. (3)'s scale ``s`` and each ratio has mean 1."""

    widths: Array
    inverse: Array
    inverse_sqrt: Array
    inverse_moment: Array
    inverse_sqrt_moment: Array


def simulate_init_logits(key: PRNGKey, setting: InitLogitSetting) -> InitLogits:
    """``max |S_h|`` over heads, token pairs and the source inputs at ``θ_0``, per width and seed.

    Per seed key: ``k_data, k_init = split(key)``; inputs from :func:`source_target_data`,
    ``θ_0`` from :func:`paper_attention_model` (SP), logits by :func:`attention_logits`
    under both scalings (the init does not depend on the scaling). Lemma 2, eq. (51):
    ``q·k = O(√n)``, so ``1/d`` logits are ``O(n^{−1/2})`` and ``1/√d`` logits ``O(1)``. The
    second moments (:class:`InitLogits`) normalise by ``h = xW_E`` read from ``θ_0`` and by
    the scale ``s`` of eq. (3), not by :func:`attention_logits`'s own.
    """
    check_setting_type("simulate_init_logits", setting, InitLogitSetting)
    check_key("simulate_init_logits", key)
    keys = jax.random.split(key, setting.num_seeds)

    def at_width(width: int):
        model = paper_attention_model(width, num_heads=setting.num_heads)

        def max_logits(k):
            k_data, k_init = jax.random.split(k)
            x = source_target_data(k_data, setting.data).x_source
            params = model.init(k_init, x[0])
            h_sq = jnp.sum((x @ params["embed"]["w"]) ** 2, axis=-1)  # ‖h_t‖², (inputs, T)
            pair = h_sq[:, None, :, None] * h_sq[:, None, None, :] / width  # E[(q·k)² | h]
            maxima, moments = [], []
            for name, s in (("1/d", 1 / width), ("1/sqrt(d)", 1 / math.sqrt(width))):
                logits = jax.vmap(lambda xi, n=name: attention_logits(params, xi, logit_scaling=n))(
                    x
                )  # (inputs, H, T, T)
                maxima.append(jnp.max(jnp.abs(logits)))
                moments.append(jnp.mean(logits**2 / (s**2 * pair)))
            return (*maxima, *moments)

        return jax.jit(jax.vmap(max_logits))(keys)

    per_width = [at_width(w) for w in setting.widths]
    return InitLogits(
        jnp.asarray(setting.widths), *(jnp.stack([p[i] for p in per_width]) for i in range(4))
    )
