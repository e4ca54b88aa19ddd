"""Pure ``(init, apply)`` models on pytrees: linear, deep linear, two-layer ReLU, MLP.

Every model is a :class:`Model` NamedTuple of two pure functions, in the style of optax's
``GradientTransformation`` and neural-tangents' ``(init_fn, apply_fn)``:

* ``init(key, x_example) -> params`` draws parameters for inputs shaped like ONE example;
* ``apply(params, x) -> y`` maps ONE example to an output vector of shape ``(out_dim,)``.

Batching is the caller's ``jax.vmap`` (as in equinox), so batch coupling can never
silently break an empirical NTK. :func:`batched` is the one-line helper.

Parameterizations (a required keyword where it matters):

* ``"ntk"`` — weights ``W ~ N(0, 1)``, forward ``y = (w_std / sqrt(fan_in)) x W + b_std b``
  (Jacot et al. 2018; neural-tangents ``Dense(parameterization='ntk')``).
* ``"standard"`` — weights ``W ~ N(0, w_std^2 / fan_in)``, ``b ~ N(0, b_std^2)``, forward
  ``y = x W + b``. Same function distribution at init; the NTK differs by the
  per-layer factor ``w_std^2 / fan_in`` on the weight blocks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import (
    check_choice,
    check_ndim,
    check_params_keys,
    check_positive,
    check_positive_int,
)

__all__ = [
    "ACTIVATIONS",
    "PARAMETERIZATIONS",
    "Model",
    "balanced_deep_linear_params",
    "batched",
    "deep_linear",
    "end_to_end_vector",
    "linear",
    "mlp",
    "random_signs",
    "two_layer_relu",
]

PARAMETERIZATIONS = ("ntk", "standard")


def _gelu_exact(x: Array) -> Array:
    """GELU with the exact Gaussian CDF, ``x Φ(x)`` (Hendrycks & Gimpel 2016)."""
    return jax.nn.gelu(x, approximate=False)


#: Elementwise activations accepted by :func:`mlp` and the attention model.
ACTIVATIONS: dict[str, Callable[[Array], Array]] = {
    "relu": jax.nn.relu,
    "erf": jax.scipy.special.erf,
    "tanh": jnp.tanh,
    "gelu": _gelu_exact,
    "identity": lambda x: x,
}


class Model(NamedTuple):
    """A model as a pair of pure functions.

    Attributes:
      init: ``init(key, x_example) -> params`` for inputs shaped like one example.
      apply: ``apply(params, x) -> y`` on one example, ``y.shape == (out_dim,)``.
    """

    init: Callable[[PRNGKey, ArrayLike], Params]
    apply: Callable[[Params, Array], Array]


def batched(apply: Callable[[Params, Array], Array]) -> Callable[[Params, Array], Array]:
    """``apply`` mapped over a leading batch axis of ``x`` (parameters shared).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> model = linear()
      >>> params = {"w": jnp.array([1.0, 2.0])}
      >>> batched(model.apply)(params, jnp.eye(2)).tolist()
      [[1.0], [2.0]]
    """
    return jax.vmap(apply, in_axes=(None, 0))


def _input_dim(where: str, x_example: ArrayLike) -> int:
    check_ndim(where, "x_example", x_example, 1)
    return int(jnp.shape(x_example)[0])


def _check_input(where: str, x: Array, expected_dim: int) -> None:
    """Trace-time check that ONE example has the feature size the params expect."""
    if x.ndim != 1 or x.shape[0] != expected_dim:
        raise ValueError(
            f"{where}: apply acts on one example of shape ({expected_dim},), got x.shape="
            f"{x.shape}. For a batch use ntsim.core.batched(apply) or jax.vmap."
        )


def linear(*, out_dim: int = 1, init_scale: float = 0.0) -> Model:
    """Linear model ``f(x) = x W`` with ``W`` of shape ``(d, out_dim)`` stored as ``params["w"]``.

    With ``out_dim=1`` the weight is stored as a vector ``w`` of shape ``(d,)`` so that
    ``f(x) = <x, w>`` (the linear-regression model of Shachaf et al. 2021, Sec 3).

    Args:
      out_dim: number of outputs.
      init_scale: standard deviation of the initial weights (0 gives ``w = 0``).
    """
    out_dim = check_positive_int("linear", "out_dim", out_dim)

    def init(key: PRNGKey, x_example: ArrayLike) -> Params:
        d = _input_dim("linear.init", x_example)
        shape = (d,) if out_dim == 1 else (d, out_dim)
        return {"w": init_scale * jax.random.normal(key, shape)}

    def apply(params: Params, x: Array) -> Array:
        check_params_keys("linear.apply", params, ("w",), init="linear.init")
        w = params["w"]
        _check_input("linear.apply", x, w.shape[0])
        return jnp.atleast_1d(x @ w)

    return Model(init, apply)


def deep_linear(widths: Sequence[int], *, init_scale: float = 1.0) -> Model:
    """Deep linear network ``f(x) = x W_1 W_2 ... W_L`` (Shachaf et al. 2021, Sec 5).

    ``params = {"layers": [W_1, ..., W_L]}`` with ``W_j`` of shape ``(d_{j-1}, d_j)``,
    ``d_0 = d`` (the input dimension) and ``(d_1, ..., d_L) = widths``; the end-to-end
    vector/matrix is :func:`end_to_end_vector`. No scaling factors: the theory works with
    raw weights.

    Args:
      widths: ``(d_1, ..., d_L)``; ``d_L`` is the output dimension.
      init_scale: standard deviation of the i.i.d. Gaussian initial entries.
    """
    widths = tuple(check_positive_int("deep_linear", "widths[i]", w) for w in widths)
    if not widths:
        raise ValueError("deep_linear: widths must name at least one layer, got ().")

    def init(key: PRNGKey, x_example: ArrayLike) -> Params:
        dims = (_input_dim("deep_linear.init", x_example), *widths)
        keys = jax.random.split(key, len(widths))
        return {
            "layers": [
                init_scale * jax.random.normal(k, (a, b))
                for k, a, b in zip(keys, dims[:-1], dims[1:], strict=True)
            ]
        }

    def apply(params: Params, x: Array) -> Array:
        check_params_keys("deep_linear.apply", params, ("layers",), init="deep_linear.init")
        _check_input("deep_linear.apply", x, params["layers"][0].shape[0])
        for w in params["layers"]:
            x = x @ w
        return x

    return Model(init, apply)


def end_to_end_vector(params: Params) -> Array:
    """The end-to-end map ``β = W_1 W_2 ... W_L`` of a :func:`deep_linear` network.

    For scalar output (``d_L = 1``) this is a vector of shape ``(d,)``.
    """
    product = params["layers"][0]
    for w in params["layers"][1:]:
        product = product @ w
    return product[:, 0] if product.shape[1] == 1 else product


def balanced_deep_linear_params(
    theta: ArrayLike, widths: Sequence[int], unit_vectors: Sequence[ArrayLike]
) -> Params:
    """Exactly 0-balanced rank-one deep linear weights with end-to-end vector ``theta``.

    A rank-one construction for the deep linear setting of Shachaf et al. 2021 (Sec 5):
    ``s = ||θ||^{1/L}``, ``W_1 = s θ̂ v_1ᵀ``, ``W_j = s v_{j-1} v_jᵀ`` (1 < j < L),
    ``W_L = s v_{L-1}``, with unit vectors ``v_j ∈ R^{d_j}``. Then
    ``W_jᵀ W_j = W_{j+1} W_{j+1}ᵀ = s² v_j v_jᵀ`` for every ``j`` (Def. 5.1, 0-balanced)
    and ``W_1 ⋯ W_L = θ`` (Assumption 3.2, perfect pretraining).

    Args:
      theta: end-to-end vector, shape ``(d,)``, non-zero.
      widths: ``(d_1, ..., d_{L-1}, 1)``; the last width must be 1 (scalar output).
      unit_vectors: ``L-1`` vectors ``v_j`` of shapes ``(d_j,)``; they are normalised here.

    Returns:
      ``{"layers": [W_1, ..., W_L]}`` as for :func:`deep_linear`.

    Examples:
      >>> import jax.numpy as jnp
      >>> theta = jnp.array([3.0, 4.0])
      >>> p = balanced_deep_linear_params(theta, (2, 1), [jnp.array([1.0, 0.0])])
      >>> end_to_end_vector(p).round(5).tolist()
      [3.0, 4.0]
    """
    where = "balanced_deep_linear_params"
    theta = jnp.asarray(theta)
    check_ndim(where, "theta", theta, 1)
    widths = tuple(widths)
    if not widths or widths[-1] != 1:
        raise ValueError(f"{where}: widths must end with output width 1, got {widths}.")
    depth = len(widths)
    if len(unit_vectors) != depth - 1:
        raise ValueError(
            f"{where}: need {depth - 1} unit vectors for depth {depth}, got {len(unit_vectors)}."
        )
    vs = []
    for j, (v, width) in enumerate(zip(unit_vectors, widths[:-1], strict=True)):
        v = jnp.asarray(v, dtype=theta.dtype)
        if v.shape != (width,):
            raise ValueError(
                f"{where}: unit_vectors[{j}] must have shape ({width},), got {v.shape}."
            )
        vs.append(v / jnp.linalg.norm(v))
    norm = jnp.linalg.norm(theta)
    check_positive(where, "||theta||", norm)
    scale = norm ** (1.0 / depth)
    direction = theta / norm
    if depth == 1:
        return {"layers": [theta[:, None]]}
    layers = [scale * jnp.outer(direction, vs[0])]
    layers += [scale * jnp.outer(a, b) for a, b in zip(vs[:-1], vs[1:], strict=True)]
    layers.append(scale * vs[-1][:, None])
    return {"layers": layers}


def random_signs(key: PRNGKey, width: int) -> Array:
    """Uniform i.i.d. ``±1`` output weights ``a_r`` (Shachaf et al. 2021, Sec 6)."""
    width = check_positive_int("random_signs", "width", width)
    return jnp.where(jax.random.bernoulli(key, 0.5, (width,)), 1.0, -1.0)


def two_layer_relu(output_signs: ArrayLike, *, init_scale: float = 1.0) -> Model:
    """Two-layer ReLU network with fixed ``±1`` output layer (Du et al. 2019; Shachaf Sec 6).

    .. math:: f(x; W) = \\frac{1}{\\sqrt{m}} \\sum_{r=1}^m a_r \\, \\mathrm{relu}(w_r^\\top x)

    Only ``W`` (``params["w"]``, shape ``(m, d)``) is trained; the signs ``a = output_signs``
    are fixed and closed over. The NTK of this model w.r.t. ``W`` at ``m → ∞`` is
    ``H^∞`` (:func:`ntsim.core.two_layer_relu_hinf`).

    Args:
      output_signs: the fixed output weights ``a ∈ {−1, 1}^m`` (see :func:`random_signs`).
      init_scale: ``κ``, the standard deviation of the initial ``w_r ~ N(0, κ² I)``.
    """
    signs = jnp.asarray(output_signs)
    check_ndim("two_layer_relu", "output_signs", signs, 1)
    width = signs.shape[0]

    def init(key: PRNGKey, x_example: ArrayLike) -> Params:
        d = _input_dim("two_layer_relu.init", x_example)
        return {"w": init_scale * jax.random.normal(key, (width, d))}

    def apply(params: Params, x: Array) -> Array:
        check_params_keys("two_layer_relu.apply", params, ("w",), init="two_layer_relu.init")
        w = params["w"]
        if w.shape[0] != width:
            raise ValueError(
                f"two_layer_relu.apply: params['w'] has {w.shape[0]} rows but the model has "
                f"{width} output signs."
            )
        _check_input("two_layer_relu.apply", x, w.shape[1])
        # relu(x Wᵀ) a rather than aᵀ relu(W x): the same numbers, but under vmap over
        # examples XLA then sees one (n, d) × (d, m) matmul in row-major order, 1.5x faster
        # end to end for GD at m = 10⁴ on CPU (the Sec 6 claims are memory bound).
        return jnp.atleast_1d(jax.nn.relu(x @ w.T) @ signs.astype(x.dtype) / math.sqrt(width))

    return Model(init, apply)


def dense_init(
    key: PRNGKey, fan_in: int, fan_out: int, *, parameterization: str, w_std: float, b_std: float
) -> dict[str, Array]:
    """Initial ``{"w", "b"}`` of one dense layer under ``parameterization`` (module doc)."""
    w_key, b_key = jax.random.split(key)
    w = jax.random.normal(w_key, (fan_in, fan_out))
    b = jax.random.normal(b_key, (fan_out,))
    if parameterization == "standard":
        return {"w": w * (w_std / math.sqrt(fan_in)), "b": b * b_std}
    return {"w": w, "b": b}


def dense_apply(
    layer: dict[str, Array], x: Array, *, parameterization: str, w_std: float, b_std: float
) -> Array:
    """Forward of one dense layer under ``parameterization`` (module doc)."""
    if parameterization == "standard":
        return x @ layer["w"] + layer["b"]
    fan_in = layer["w"].shape[0]
    return (w_std / math.sqrt(fan_in)) * (x @ layer["w"]) + b_std * layer["b"]


def mlp(
    hidden: Sequence[int],
    out_dim: int = 1,
    *,
    activation: str = "relu",
    parameterization: str,
    w_std: float = 1.0,
    b_std: float = 0.0,
) -> Model:
    """Fully connected network ``Dense → φ → ... → Dense`` on one example.

    Layer ``l`` computes ``h_l = φ(Dense_l(h_{l-1}))`` with ``Dense`` as in the module doc
    (identical to neural-tangents ``stax.serial(Dense(n, W_std, b_std), φ, ..., Dense(o))``
    under ``parameterization="ntk"``); the last layer has no activation.

    Args:
      hidden: hidden widths ``(n_1, ..., n_{L})``; may be empty (a linear map).
      out_dim: output dimension.
      activation: one of :data:`ACTIVATIONS`.
      parameterization: ``"ntk"`` or ``"standard"`` (required; see module doc).
      w_std: weight standard deviation ``σ_w`` (e.g. ``sqrt(2)`` for He scaling of ReLU).
      b_std: bias standard deviation ``σ_b``.

    Returns:
      A :class:`Model` with ``params = {"layers": [{"w", "b"}, ...]}``.
    """
    where = "mlp"
    check_choice(where, "activation", activation, tuple(ACTIVATIONS))
    check_choice(where, "parameterization", parameterization, PARAMETERIZATIONS)
    hidden = tuple(check_positive_int(where, "hidden[i]", n) for n in hidden)
    out_dim = check_positive_int(where, "out_dim", out_dim)
    check_positive(where, "w_std", w_std)
    if b_std < 0:
        raise ValueError(f"{where}: b_std must be non-negative, got {b_std!r}.")
    phi = ACTIVATIONS[activation]
    kw: dict[str, Any] = dict(parameterization=parameterization, w_std=w_std, b_std=b_std)

    def init(key: PRNGKey, x_example: ArrayLike) -> Params:
        dims = (_input_dim("mlp.init", x_example), *hidden, out_dim)
        keys = jax.random.split(key, len(dims) - 1)
        return {
            "layers": [
                dense_init(k, a, b, **kw) for k, a, b in zip(keys, dims[:-1], dims[1:], strict=True)
            ]
        }

    def apply(params: Params, x: Array) -> Array:
        check_params_keys("mlp.apply", params, ("layers",), init="mlp.init")
        layers = params["layers"]
        if len(layers) != len(hidden) + 1:
            raise ValueError(
                f"mlp.apply: params['layers'] must hold {len(hidden) + 1} layers (the pytree "
                f"mlp.init returns), got {len(layers)}."
            )
        for i, layer in enumerate(layers):
            check_params_keys(f"mlp.apply layer {i}", layer, ("w", "b"), init="mlp.init")
        _check_input("mlp.apply", x, layers[0]["w"].shape[0])
        for layer in layers[:-1]:
            x = phi(dense_apply(layer, x, **kw))
        return dense_apply(layers[-1], x, **kw)

    return Model(init, apply)
