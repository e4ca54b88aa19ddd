"""Single-/multi-head self-attention model on one token sequence, with a scalar head.

The model of Sun & Raskutti 2026 (eqs. 3, 4, 67–70), reduced to one block:

.. math::

   h &= x W_E / \\sqrt{d_{in}} \\\\
   A_i &= \\mathrm{softmax}\\big(s \\, (h W^Q_i)(h W^K_i)^\\top\\big) \\, h W^V_i
          \\quad (\\text{projections scaled by } 1/\\sqrt{D}) \\\\
   z &= h + [A_1, \\dots, A_H] W^O / \\sqrt{H D_h} \\\\
   z &\\leftarrow z + φ(z W_1 / \\sqrt{D}) W_2 / \\sqrt{F} \\quad (\\text{optional FFN}) \\\\
   y &= \\mathrm{mean}_t \\, \\mathrm{LN}(z)_t \\; W_{head} / \\sqrt{D}

with logit scale ``s = 1/D_h`` (``logit_scaling="1/d"``, the μP-style scaling the paper's
proofs need; Yang 2019) or ``s = 1/sqrt(D_h)`` (``"1/sqrt(d)"``, Vaswani et al. 2017).
Weights are N(0, 1) with the ``1/sqrt(fan_in)`` factors in the forward pass under
``parameterization="ntk"``; under ``"standard"`` the factors move into the initial
variance and the forward pass has none. LayerNorm (eq. 68–70) uses the biased variance
and ``ε = 1e-5`` (PyTorch's default, which the paper's GPT-Neo experiments inherit).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import check_choice, check_ndim, check_positive_int
from ntsim.core._models import ACTIVATIONS, PARAMETERIZATIONS, Model

__all__ = ["LOGIT_SCALINGS", "attention_model", "layer_norm"]

#: Accepted attention-logit scalings (see module doc).
LOGIT_SCALINGS = ("1/d", "1/sqrt(d)")
#: LayerNorm epsilon (PyTorch default; Sun & Raskutti eq. 69 leave ε unspecified).
LAYER_NORM_EPS = 1e-5


def layer_norm(x: Array, scale: Array, bias: Array, *, eps: float = LAYER_NORM_EPS) -> Array:
    """LayerNorm over the last axis: ``γ ⊙ (x − μ)/sqrt(σ² + ε) + β`` (Sun & Raskutti eq. 68–70).

    Examples:
      >>> import jax.numpy as jnp
      >>> y = layer_norm(jnp.array([1.0, 3.0]), jnp.ones(2), jnp.zeros(2), eps=0.0)
      >>> y.tolist()
      [-1.0, 1.0]
    """
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return scale * (x - mean) * jax.lax.rsqrt(var + eps) + bias


def attention_model(
    *,
    width: int,
    num_heads: int = 1,
    head_dim: int | None = None,
    ffn_width: int | None = None,
    activation: str = "gelu",
    logit_scaling: str = "1/d",
    out_dim: int = 1,
    parameterization: str,
) -> Model:
    """One self-attention block + optional FFN + LayerNorm + mean pooling + linear head.

    Args:
      width: model width ``D`` (the paper's ``n``).
      num_heads: number of heads ``H`` (finite, as the paper assumes).
      head_dim: per-head width ``D_h`` (default ``width``, the paper's ``d^{l,G} = n``).
      ffn_width: hidden width ``F`` of the feed-forward sublayer; ``None`` drops it.
      activation: FFN nonlinearity φ, one of :data:`ntsim.core.ACTIVATIONS` (smooth ones
        satisfy the paper's Assumption 4.6).
      logit_scaling: ``"1/d"`` or ``"1/sqrt(d)"`` (see module doc).
      out_dim: output dimension of the head.
      parameterization: ``"ntk"`` or ``"standard"``.

    Returns:
      A :class:`~ntsim.core.Model` on one sequence ``x`` of shape ``(T, d_in)`` with params
      ``{"embed": {"w"}, "attention": {"query", "key", "value", "out"},
      ["ffn": {"w1", "w2"}], "layer_norm": {"scale", "bias"}, "head": {"w"}}``.
    """
    where = "attention_model"
    width = check_positive_int(where, "width", width)
    num_heads = check_positive_int(where, "num_heads", num_heads)
    head_dim = width if head_dim is None else check_positive_int(where, "head_dim", head_dim)
    if ffn_width is not None:
        ffn_width = check_positive_int(where, "ffn_width", ffn_width)
    out_dim = check_positive_int(where, "out_dim", out_dim)
    check_choice(where, "activation", activation, tuple(ACTIVATIONS))
    check_choice(where, "logit_scaling", logit_scaling, LOGIT_SCALINGS)
    check_choice(where, "parameterization", parameterization, PARAMETERIZATIONS)
    phi = ACTIVATIONS[activation]
    logit_scale = 1.0 / head_dim if logit_scaling == "1/d" else 1.0 / math.sqrt(head_dim)
    ntk = parameterization == "ntk"

    def weight(key: PRNGKey, shape: tuple[int, ...], fan_in: int) -> Array:
        w = jax.random.normal(key, shape)
        return w if ntk else w / math.sqrt(fan_in)

    def project(x: Array, w: Array, fan_in: int) -> Array:
        y = x @ w
        return y / math.sqrt(fan_in) if ntk else y

    def init(key: PRNGKey, x_example: ArrayLike) -> Params:
        check_ndim(f"{where}.init", "x_example", x_example, 2)
        d_in = int(jnp.shape(x_example)[1])
        keys = jax.random.split(key, 8)
        qkv_shape = (num_heads, width, head_dim)
        params: dict[str, Any] = {
            "embed": {"w": weight(keys[0], (d_in, width), d_in)},
            "attention": {
                "query": weight(keys[1], qkv_shape, width),
                "key": weight(keys[2], qkv_shape, width),
                "value": weight(keys[3], qkv_shape, width),
                "out": weight(keys[4], (num_heads * head_dim, width), num_heads * head_dim),
            },
            "layer_norm": {"scale": jnp.ones((width,)), "bias": jnp.zeros((width,))},
            "head": {"w": weight(keys[7], (width, out_dim), width)},
        }
        if ffn_width is not None:
            params["ffn"] = {
                "w1": weight(keys[5], (width, ffn_width), width),
                "w2": weight(keys[6], (ffn_width, width), ffn_width),
            }
        return params

    def attend(params: Params, h: Array) -> Array:
        attn = params["attention"]
        q = jnp.einsum("td,hde->hte", h, attn["query"])
        k = jnp.einsum("td,hde->hte", h, attn["key"])
        v = jnp.einsum("td,hde->hte", h, attn["value"])
        if ntk:
            q, k, v = (a / math.sqrt(width) for a in (q, k, v))
        logits = logit_scale * jnp.einsum("hte,hse->hts", q, k)
        heads = jnp.einsum("hts,hse->the", jax.nn.softmax(logits, axis=-1), v)
        return project(
            heads.reshape(h.shape[0], num_heads * head_dim), attn["out"], num_heads * head_dim
        )

    def apply(params: Params, x: Array) -> Array:
        d_in = params["embed"]["w"].shape[0]
        if x.ndim != 2 or x.shape[1] != d_in:
            raise ValueError(
                f"{where}.apply: acts on one sequence of shape (T, {d_in}), got x.shape="
                f"{x.shape}. For a batch use ntsim.core.batched(apply) or jax.vmap."
            )
        h = project(x, params["embed"]["w"], d_in)
        z = h + attend(params, h)
        if "ffn" in params:
            ffn = params["ffn"]
            hidden = phi(project(z, ffn["w1"], width))
            z = z + project(hidden, ffn["w2"], ffn["w1"].shape[1])
        ln = params["layer_norm"]
        pooled = jnp.mean(layer_norm(z, ln["scale"], ln["bias"]), axis=0)
        return project(pooled, params["head"]["w"], width)

    return Model(init, apply)
