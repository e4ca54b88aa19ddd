r"""Which parameters to tune: PEFT configurations, their kernels at ``θ_0``, κ, Spearman's ρ.

Rahimi Afzal et al. (2025) use ``κ(K + σI)`` of the empirical NTK at ``θ_0`` w.r.t. the
*trainable* parameters as an at-initialisation predictor of fine-tuning (Thm 5: the KRR
risk is squeezed between ``(σ‖ỹ‖/(σ + λ_max))²`` and ``(σ‖ỹ‖/(σ + λ_min))²``). This module
builds the trainable subsets (a layer, the head, LoRA factors of a weight), their NTK
``K = JJᵀ`` and sign kernel ``J sign(J)ᵀ`` (Adam-style; :mod:`ntsim.core._sign_kernel`),
condition numbers, rank correlations, binary KL, and a synthetic pretrain/fine-tune setup.

NTK additivity over disjoint parameter blocks, ``K_{θ∪θ̂} = K + S``, is what Thms 6–7 use;
:func:`block_kernels` returns the per-block kernels, which sum to the full NTK.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import check_positive_int
from ntsim.core import (
    attention_model,
    empirical_ntk_fn,
    get_path,
    gradient_descent,
    lora,
    mlp,
    mse_loss,
    set_path,
    sign_kernel_fn,
    spearman,
)

__all__ = [
    "PeftModel",
    "SyntheticTasks",
    "bernoulli_kl",
    "block_kernels",
    "kernel_condition_number",
    "peft_kernels",
    "peft_model",
    "pretrained_attention",
    "pretrained_mlp",
    "pretrained_setup",
    "spearman",
    "subset_model",
    "synthetic_tasks",
]


class PeftModel(NamedTuple):
    """A fine-tuning configuration: trainable parameters and the model as their function.

    Attributes:
      apply: ``apply(trainable, x)`` on one example (frozen parameters closed over).
      params0: the trainable parameters at ``θ_0`` (LoRA: ``A`` random, ``B = 0``).
      name: the configuration's name (``"head"``, ``"layer0"``, ``"lora4"``, ``"full"``).
    """

    apply: Callable[[Any, Array], Array]
    params0: Any
    name: str


def subset_model(
    apply: Callable[[Params, Array], Array], params0: Params, paths: Sequence[Sequence[Any]]
) -> tuple[Callable[[Any, Array], Array], tuple]:
    """``apply`` as a function of the leaves at ``paths`` only (everything else frozen).

    Returns:
      ``(sub_apply, sub_params0)`` with ``sub_params0`` a tuple of the subtrees at ``paths``.
    """
    paths = tuple(tuple(p) for p in paths)
    if not paths:
        raise ValueError("subset_model: paths must name at least one parameter subtree.")
    sub0 = tuple(get_path(params0, p) for p in paths)

    def sub_apply(sub, x):
        params = params0
        for path, value in zip(paths, sub, strict=True):
            params = set_path(params, path, value)
        return apply(params, x)

    return sub_apply, sub0


def peft_model(
    apply: Callable[[Params, Array], Array],
    params0: Params,
    name: str,
    *,
    key: PRNGKey | None = None,
    lora_targets: Sequence[Sequence[Any]] = (),
    layer_paths: Sequence[Sequence[Any]] = (),
) -> PeftModel:
    """Build a configuration by name.

    Names: ``"full"`` (all parameters), ``"head"`` (the last layer, or ``params["head"]``),
    ``"layer<i>"`` (layer ``i``), ``"lora<r>"`` (rank-``r`` LoRA on ``lora_targets``; needs
    ``key``). Layers are ``("layers", i)`` for ``ntsim.core.mlp`` params and the top-level
    entries otherwise (``ntsim.core.attention_model``: embed, attention, layer_norm, head);
    ``layer_paths`` overrides them.
    """
    if name == "full":
        return PeftModel(apply, params0, name)
    if name == "head" and not layer_paths and "layers" not in params0 and "head" in params0:
        sub_apply, sub0 = subset_model(apply, params0, [("head",)])  # attention_model's head
        return PeftModel(sub_apply, sub0, name)
    if name == "head" or name.startswith("layer"):
        default = (
            [("layers", i) for i in range(len(params0["layers"]))]
            if "layers" in params0
            else [(k,) for k in params0]  # e.g. attention_model: embed, attention, ...
        )
        layers = list(layer_paths) or default
        index = len(layers) - 1 if name == "head" else int(name[len("layer") :])
        if not 0 <= index < len(layers):
            raise ValueError(f"peft_model: name {name!r} names no layer (have {len(layers)}).")
        sub_apply, sub0 = subset_model(apply, params0, [layers[index]])
        return PeftModel(sub_apply, sub0, name)
    if name.startswith("lora"):
        if key is None or not lora_targets:
            raise ValueError("peft_model: a 'lora<r>' configuration needs key and lora_targets.")
        wrapped = lora(apply, params0, targets=lora_targets, rank=int(name[len("lora") :]))
        return PeftModel(wrapped.apply, wrapped.init(key), name)
    raise ValueError(
        f"peft_model: name must be 'full', 'head', 'layer<i>' or 'lora<r>', got {name!r}."
    )


def _scalar(apply):
    return lambda p, x: jnp.reshape(apply(p, x), ())


def peft_kernels(model: PeftModel, x: ArrayLike) -> tuple[Array, Array]:
    """The NTK ``JJᵀ`` and the sign kernel ``J sign(J)ᵀ`` of the trainable parameters on ``x``."""
    x = jnp.asarray(x)
    ntk = empirical_ntk_fn(model.apply)(x, None, model.params0)
    sign = sign_kernel_fn(model.apply)(x, None, model.params0)
    return ntk, sign


def block_kernels(apply: Callable[[Params, Array], Array], params: Params, x: ArrayLike) -> Params:
    """Per-leaf NTKs (a pytree like ``params``); they sum to the full NTK (additivity)."""
    return empirical_ntk_fn(apply, per_block=True)(jnp.asarray(x), None, params)


def kernel_condition_number(kernel: ArrayLike, sigma: ArrayLike = 0.0) -> Array:
    """``κ(K + σI) = s_max/s_min`` by singular values (equals the eigenvalue ratio for PSD ``K``).

    Singular values also give a condition number for the asymmetric sign kernel.

    Examples:
      >>> import jax.numpy as jnp
      >>> round(float(kernel_condition_number(jnp.diag(jnp.array([4.0, 1.0])), 1.0)), 5)
      2.5
    """
    k = jnp.asarray(kernel)
    s = jnp.linalg.svd(k + jnp.asarray(sigma, k.dtype) * jnp.eye(k.shape[0], dtype=k.dtype))[1]
    return s[0] / s[-1]


def bernoulli_kl(logits_p: ArrayLike, logits_q: ArrayLike) -> Array:
    r"""Mean over examples of ``KL(Ber(σ(p)) ‖ Ber(σ(q)))`` (predictive distributions, logits).

    The slides' table reports a KL between the fine-tuned model and its linearisation
    without a direction; this is KL(network ‖ linearisation) with ``p`` the network.
    """
    p, q = jnp.asarray(logits_p), jnp.asarray(logits_q)
    log_p1, log_p0 = jax.nn.log_sigmoid(p), jax.nn.log_sigmoid(-p)
    log_q1, log_q0 = jax.nn.log_sigmoid(q), jax.nn.log_sigmoid(-q)
    kl = jnp.exp(log_p1) * (log_p1 - log_q1) + jnp.exp(log_p0) * (log_p0 - log_q0)
    return jnp.mean(kl)


class SyntheticTasks(NamedTuple):
    """A pretraining task and related downstream tasks on Gaussian inputs.

    Attributes:
      x_pre, y_pre: pretraining data (regression on ``tanh(x·w_0)``).
      x_train, x_test: downstream inputs (shared by all tasks).
      y_train, y_test: ``(num_tasks, n)`` / ``(num_tasks, m)`` labels in ``{−1, +1}``.
      angles: the angle (radians) between each task's direction and ``w_0``.
    """

    x_pre: Array
    y_pre: Array
    x_train: Array
    x_test: Array
    y_train: Array
    y_test: Array
    angles: Array


def synthetic_tasks(
    key: PRNGKey,
    *,
    dim: int,
    num_pretrain: int,
    num_train: int,
    num_test: int,
    angles: Sequence[float],
) -> SyntheticTasks:
    """Pretraining on ``tanh(x·w_0)``; task ``k`` labels ``sign(x·w_k + 0.5 sin(2 x·v))`` with
    ``w_k`` at angle ``angles[k]`` from ``w_0`` (larger angle: less related to pretraining).
    """
    dim = check_positive_int("synthetic_tasks", "dim", dim)
    if dim < 2:
        raise ValueError(f"synthetic_tasks: dim must be at least 2, got {dim}.")
    k_pre, k_tr, k_te, k_w, k_v = jax.random.split(key, 5)
    basis = jnp.linalg.qr(jax.random.normal(k_w, (dim, dim)))[0]
    w0, w_perp = basis[:, 0], basis[:, 1]
    v = jax.random.normal(k_v, (dim,)) / jnp.sqrt(dim)
    x_pre = jax.random.normal(k_pre, (num_pretrain, dim))
    x_train = jax.random.normal(k_tr, (num_train, dim))
    x_test = jax.random.normal(k_te, (num_test, dim))
    angles = jnp.asarray(angles, x_pre.dtype)
    ws = jnp.cos(angles)[:, None] * w0 + jnp.sin(angles)[:, None] * w_perp

    def label(x, w):
        return jnp.where(x @ w + 0.5 * jnp.sin(2 * x @ v) >= 0, 1.0, -1.0)

    y_train = jax.vmap(lambda w: label(x_train, w))(ws)
    y_test = jax.vmap(lambda w: label(x_test, w))(ws)
    return SyntheticTasks(x_pre, jnp.tanh(x_pre @ w0), x_train, x_test, y_train, y_test, angles)


def pretrained_mlp(
    key: PRNGKey,
    tasks: SyntheticTasks,
    *,
    hidden: Sequence[int],
    steps: int,
    learning_rate: float,
) -> tuple[Callable[[Params, Array], Array], Params]:
    """A tanh MLP (NTK parameterisation) pretrained by GD on ``(1/2n)Σ(f − y_pre)²``.

    Returns:
      ``(apply, θ_0)``.
    """
    model = mlp(tuple(hidden), activation="tanh", parameterization="ntk", b_std=0.1)
    params = model.init(key, tasks.x_pre[0])
    loss = mse_loss(model.apply, tasks.x_pre, tasks.y_pre, loss_scale=0.5 / len(tasks.y_pre))
    result = gradient_descent(
        loss, params, learning_rate=learning_rate, num_steps=steps, throw=False
    )
    return model.apply, result.params


def pretrained_attention(
    key: PRNGKey,
    tasks: SyntheticTasks,
    *,
    width: int,
    seq_len: int,
    num_heads: int = 2,
    steps: int,
    learning_rate: float,
) -> tuple[Callable[[Params, Array], Array], Params]:
    """A one-block attention model pretrained like :func:`pretrained_mlp`.

    Each input ``x ∈ ℝ^d`` is read as ``seq_len`` tokens of ``d/seq_len`` features, each
    followed by a one-hot position (the model is otherwise permutation invariant)
    (``ntsim.core.attention_model``, NTK parameterisation, 1/d logit scaling, mean pooling).
    Top-level parameter entries, hence ``"layer<i>"`` of :func:`peft_model`, are in sorted
    key order: attention, embed, head, layer_norm.

    Returns:
      ``(apply, θ_0)`` with ``apply`` acting on flat inputs of shape ``(d,)``.
    """
    dim = tasks.x_pre.shape[1]
    seq_len = check_positive_int("pretrained_attention", "seq_len", seq_len)
    if dim % seq_len:
        raise ValueError(
            f"pretrained_attention: seq_len must divide the input dimension {dim}, got {seq_len}."
        )
    model = attention_model(
        width=width,
        num_heads=num_heads,
        head_dim=max(width // num_heads, 1),
        parameterization="ntk",
    )

    def tokens(x):
        chunks = jnp.reshape(x, (seq_len, dim // seq_len))
        return jnp.concatenate([chunks, jnp.eye(seq_len, dtype=chunks.dtype)], axis=1)

    def apply(params, x):
        return model.apply(params, tokens(x))

    params = jax.tree.map(jnp.asarray, model.init(key, tokens(tasks.x_pre[0])))
    params = {k: params[k] for k in sorted(params)}
    loss = mse_loss(apply, tasks.x_pre, tasks.y_pre, loss_scale=0.5 / len(tasks.y_pre))
    result = gradient_descent(
        loss, params, learning_rate=learning_rate, num_steps=steps, throw=False
    )
    return apply, result.params


def pretrained_setup(
    data_key: PRNGKey, model_key: PRNGKey, config
) -> tuple[SyntheticTasks, Callable[[Params, Array], Array], Params]:
    """:func:`synthetic_tasks` then the pretrained model, both at the sizes of ``config``.

    ``config`` is any experiment configuration with the fields ``dim, num_pretrain,
    num_train, num_test, angles, hidden, pretrain_steps, pretrain_lr`` and optionally
    ``model`` (``"mlp"``, the default, or ``"attention"``, which reads ``hidden[0]`` as the
    width and ``seq_len``): the linearization experiments share this setup, spelled out once.

    Returns:
      ``(tasks, apply, θ_0)``.
    """
    tasks = synthetic_tasks(
        data_key,
        dim=config.dim,
        num_pretrain=config.num_pretrain,
        num_train=config.num_train,
        num_test=config.num_test,
        angles=config.angles,
    )
    model = getattr(config, "model", "mlp")
    if model == "attention":
        apply, theta0 = pretrained_attention(
            model_key,
            tasks,
            width=config.hidden[0],
            seq_len=config.seq_len,
            steps=config.pretrain_steps,
            learning_rate=config.pretrain_lr,
        )
    elif model == "mlp":
        apply, theta0 = pretrained_mlp(
            model_key,
            tasks,
            hidden=config.hidden,
            steps=config.pretrain_steps,
            learning_rate=config.pretrain_lr,
        )
    else:
        raise ValueError(f"pretrained_setup: model must be 'mlp' or 'attention', got {model!r}.")
    return tasks, apply, theta0
