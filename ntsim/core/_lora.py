r"""LoRA: low-rank adapters on dense weights of any ``apply(params, x)``.

For a frozen weight ``W_0`` used as ``x W_0`` (shape ``(fan_in, fan_out)``, possibly with
leading axes such as attention heads ``(H, fan_in, fan_out)``), LoRA trains

.. math:: W = W_0 + \frac{α}{r} A B, \qquad A ∈ ℝ^{fan_{in} × r},\; B ∈ ℝ^{r × fan_{out}},

with ``A`` Gaussian and ``B = 0`` at initialisation, so ``W = W_0`` and the model is
unchanged (Hu et al. 2021 write ``W_0 + (α/r)BA`` for ``W`` acting on the left; this is the
same map transposed to ntsim's ``x W`` convention). The trainable parameters are the
factors only; everything else stays frozen at ``params0``.

**NTK at initialisation.** Since ``∂(AB)/∂A = (·)B = 0`` at ``B = 0``, the Jacobian of the
model with respect to every ``A`` vanishes at init: the LoRA NTK is the sum of the
``B``-blocks, ``K = Σ_targets J_B J_Bᵀ`` with ``∂f/∂B = (α/r) Aᵀ ∂f/∂W``. The model is
*bilinear* in ``(A, B)``, so the linearisation at init misses the ``ΔA·ΔB`` term.

References:
  Hu et al. (2021), *LoRA: Low-Rank Adaptation of Large Language Models*, arXiv:2106.09685,
  Sec 4.1 (eq. (3), zero init of ``B``, scaling ``α/r``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, Params, PRNGKey
from ntsim._validation import check_positive, check_positive_int

__all__ = ["LoRA", "get_path", "lora", "set_path"]

Path = tuple[Any, ...]


def get_path(tree: Params, path: Sequence[Any]) -> Any:
    """The subtree at ``path`` (a sequence of dict keys / list indices).

    Examples:
      >>> get_path({"layers": [{"w": 1}, {"w": 2}]}, ("layers", 1, "w"))
      2
    """
    node = tree
    for i, part in enumerate(path):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            raise ValueError(
                f"get_path: path {tuple(path)!r} does not exist (failed at entry {i}, {part!r})."
            ) from None
    return node


def set_path(tree: Params, path: Sequence[Any], value: Any) -> Params:
    """A copy of ``tree`` (dicts/lists/tuples rebuilt along ``path``) with ``value`` at ``path``.

    Examples:
      >>> set_path({"a": [1, 2]}, ("a", 0), 5)
      {'a': [5, 2]}
    """
    if not path:
        return value
    head, rest = path[0], tuple(path[1:])
    child = set_path(get_path(tree, (head,)), rest, value)
    if isinstance(tree, dict):
        return {**tree, head: child}
    if isinstance(tree, (list, tuple)):
        items = list(tree)
        items[head] = child
        return type(tree)(items)
    raise ValueError(f"set_path: cannot index a {type(tree).__name__} with {head!r}.")


class LoRA(NamedTuple):
    """A LoRA-wrapped model.

    Attributes:
      init: ``init(key) -> lora_params``, a tuple with one ``{"a", "b"}`` per target
        (``B = 0``).
      apply: ``apply(lora_params, x) = apply_0(merge(lora_params), x)``.
      merge: ``merge(lora_params) -> params`` with ``W_0 + (α/r) A B`` at every target.
      targets: the target paths, in the order of ``lora_params``.
      scale: ``α/r``.
    """

    init: Callable[[PRNGKey], tuple[dict[str, Array], ...]]
    apply: Callable[[Any, Array], Array]
    merge: Callable[[Any], Params]
    targets: tuple[Path, ...]
    scale: float


def lora(
    apply: Callable[[Params, Array], Array],
    params0: Params,
    *,
    targets: Sequence[Sequence[Any]],
    rank: int,
    alpha: float | None = None,
    a_std: float = 1.0,
) -> LoRA:
    """Wrap dense weights of ``apply`` at ``targets`` with rank-``r`` adapters (module doc).

    Args:
      apply: ``apply(params, x) -> y`` on one example (e.g. ``ntsim.core.mlp(...).apply``).
      params0: the frozen (pretrained) parameters ``θ_0``.
      targets: paths into ``params0`` of weights of shape ``(..., fan_in, fan_out)`` used as
        ``x W`` (e.g. ``("layers", 0, "w")``, ``("attention", "query")``).
      rank: ``r ≥ 1`` (at most ``min(fan_in, fan_out)`` of every target).
      alpha: ``α > 0``; ``None`` means ``α = r`` (scale 1).
      a_std: standard deviation of the Gaussian entries of ``A`` at init.

    Returns:
      A :class:`LoRA`.

    Raises:
      ValueError: a missing path, a target with ``ndim < 2``, or a rank above a target's
        ``min(fan_in, fan_out)``.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from ntsim.core import mlp
      >>> model = mlp((4,), parameterization="ntk")
      >>> p0 = model.init(jax.random.PRNGKey(0), jnp.zeros(3))
      >>> wrapped = lora(model.apply, p0, targets=[("layers", 0, "w")], rank=2)
      >>> lp = wrapped.init(jax.random.PRNGKey(1))
      >>> lp[0]["a"].shape, lp[0]["b"].shape
      ((3, 2), (2, 4))
      >>> bool(jnp.allclose(wrapped.apply(lp, jnp.ones(3)), model.apply(p0, jnp.ones(3))))
      True
    """
    where = "lora"
    rank = check_positive_int(where, "rank", rank)
    check_positive(where, "a_std", a_std)
    if alpha is not None:
        check_positive(where, "alpha", alpha)
    scale = 1.0 if alpha is None else float(alpha) / rank
    targets = tuple(tuple(t) for t in targets)
    if not targets:
        raise ValueError(f"{where}: targets must name at least one weight, got ().")
    shapes = []
    for path in targets:
        w = jnp.asarray(get_path(params0, path))
        if w.ndim < 2:
            raise ValueError(
                f"{where}: target {path!r} must be a weight of shape (..., fan_in, fan_out), "
                f"got shape {w.shape}."
            )
        if rank > min(w.shape[-2:]):
            raise ValueError(
                f"{where}: rank must be at most min(fan_in, fan_out) = {min(w.shape[-2:])} for "
                f"target {path!r} of shape {w.shape}, got {rank=}."
            )
        shapes.append(w.shape)

    def init(key: PRNGKey) -> tuple[dict[str, Array], ...]:
        keys = jax.random.split(key, len(targets))
        out = []
        for k, shape in zip(keys, shapes, strict=True):
            lead, (fan_in, fan_out) = shape[:-2], shape[-2:]
            a = a_std * jax.random.normal(k, (*lead, fan_in, rank))
            out.append({"a": a, "b": jnp.zeros((*lead, rank, fan_out))})
        return tuple(out)

    def merge(lora_params) -> Params:
        if len(lora_params) != len(targets):
            raise ValueError(
                f"{where}.merge: expected {len(targets)} adapters (one per target), got "
                f"{len(lora_params)}."
            )
        params = params0
        for path, factors in zip(targets, lora_params, strict=True):
            w0 = get_path(params0, path)
            delta = scale * jnp.matmul(factors["a"], factors["b"])
            params = set_path(params, path, w0 + delta.astype(jnp.result_type(w0)))
        return params

    def lora_apply(lora_params, x: Array) -> Array:
        return apply(merge(lora_params), x)

    return LoRA(init, lora_apply, merge, targets, scale)
