"""Simulations of the kernel-structure statements of Rahimi Afzal et al. (2025): the NTK's
blocks per layer and per trainable subset, and the spectral sandwiches of Thms 5 and 7 on
random kernels. Conventions as in :mod:`._simulations` (one ``vmap`` over
``jax.random.split(key, instances)``, a NamedTuple with a leading instance axis).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import (
    empirical_ntk_fn,
    lora,
    mlp,
)
from ntsim.theory.linearization import _peft
from ntsim.theory.linearization._dynamics import flat_jacobian
from ntsim.theory.linearization._simulations import _instances
from ntsim.theory.linearization._spectral import perturbation_size

__all__ = [
    "KernelBlocksRun",
    "KernelSpectraSetting",
    "LayerKernelsRun",
    "Thm5Run",
    "Thm7Run",
    "simulate_kernel_blocks",
    "simulate_layer_kernels",
    "simulate_thm5",
    "simulate_thm7",
]


@dataclasses.dataclass(frozen=True)
class KernelSpectraSetting:
    """Sizes of the kernel-structure checks (2-hidden-layer tanh MLPs) and random kernels.

    Attributes:
      n, d, width: inputs, input dimension and hidden width of the MLPs.
      lora_rank: rank of the LoRA factors on both hidden weights.
      kernel_n, features: size of the random kernels ``ΦΦᵀ`` (Thms 5, 7).
      instances: independent instances.
    """

    n: int = 5
    d: int = 3
    width: int = 8
    lora_rank: int = 2
    kernel_n: int = 8
    features: int = 16
    instances: int = 200


def _two_layer_net(width: int):
    return mlp((width, width), activation="tanh", parameterization="ntk", b_std=0.3)


class KernelBlocksRun(NamedTuple):
    """NTKs of a 2-hidden-layer tanh MLP by several routes, ``(instances, n, n)`` each.

    Attributes:
      full: NTK of all parameters (``empirical_ntk_fn``).
      jacobian: ``JJᵀ`` from the explicit flat Jacobian (an independent route to ``full``).
      block_sum: the per-leaf NTKs summed.
      union: NTK of (first layer ∪ head) as one parameter subset.
      first, head: NTKs of the first layer and of the head alone.
      lora_full: NTK of the rank-``r`` LoRA model at init (``B = 0``).
      lora_a_max: ``max |·|`` of every ``A``-factor block of the LoRA NTK, ``(instances,)``.
      lora_b_sum: the ``B``-factor blocks summed.
    """

    full: Array
    jacobian: Array
    block_sum: Array
    union: Array
    first: Array
    head: Array
    lora_full: Array
    lora_a_max: Array
    lora_b_sum: Array


def simulate_kernel_blocks(key: PRNGKey, setting: KernelSpectraSetting) -> KernelBlocksRun:
    """NTK additivity over parameter blocks and the LoRA NTK at init, on random MLPs."""
    check_setting_type("simulate_kernel_blocks", setting, KernelSpectraSetting)
    check_key("simulate_kernel_blocks", key)
    s = setting

    def one(k):
        net = _two_layer_net(s.width)
        x = jax.random.normal(k, (s.n, s.d))
        params = net.init(jax.random.fold_in(k, 1), x[0])
        full = empirical_ntk_fn(net.apply)(x, None, params)
        jac = flat_jacobian(net.apply, params, x)
        blocks = empirical_ntk_fn(net.apply, per_block=True)(x, None, params)
        first = _peft.peft_model(net.apply, params, "layer0")
        head = _peft.peft_model(net.apply, params, "head")
        union_apply, union0 = _peft.subset_model(net.apply, params, [("layers", 0), ("layers", 2)])
        wrapped = lora(
            net.apply, params, targets=[("layers", 0, "w"), ("layers", 1, "w")], rank=s.lora_rank
        )
        lp = wrapped.init(jax.random.fold_in(k, 2))
        lora_blocks = empirical_ntk_fn(wrapped.apply, per_block=True)(x, None, lp)
        return KernelBlocksRun(
            full=full,
            jacobian=jac @ jac.T,
            block_sum=sum(jax.tree.leaves(blocks)),
            union=empirical_ntk_fn(union_apply)(x, None, union0),
            first=empirical_ntk_fn(first.apply)(x, None, first.params0),
            head=empirical_ntk_fn(head.apply)(x, None, head.params0),
            lora_full=empirical_ntk_fn(wrapped.apply)(x, None, lp),
            lora_a_max=jnp.max(jnp.stack([jnp.max(jnp.abs(b["a"])) for b in lora_blocks])),
            lora_b_sum=sum(b["b"] for b in lora_blocks),
        )

    return _instances(one, key, s.instances)


class LayerKernelsRun(NamedTuple):
    """Per-layer NTKs (weights + biases) of 2-hidden-layer tanh MLPs, ``(instances, n, n)``,
    and a scale ``c ~ U[0.05, 1]`` for the tightness instance ``S = cK``.

    Attributes:
      head: the head-layer block (``K``, the current selection).
      first, middle: the first- and middle-layer blocks (candidates ``S``).
      scale: ``(instances,)`` the ``c`` of ``S = cK``.
    """

    head: Array
    first: Array
    middle: Array
    scale: Array


def simulate_layer_kernels(key: PRNGKey, setting: KernelSpectraSetting) -> LayerKernelsRun:
    """Per-layer NTKs ``K`` (head) and ``S`` (first, middle layer) for Thm 6."""
    check_setting_type("simulate_layer_kernels", setting, KernelSpectraSetting)
    check_key("simulate_layer_kernels", key)
    s = setting

    def one(k):
        net = _two_layer_net(s.width)
        x = jax.random.normal(k, (s.n, s.d))
        params = net.init(jax.random.fold_in(k, 1), x[0])
        blocks = empirical_ntk_fn(net.apply, per_block=True)(x, None, params)
        layer = [b["w"] + b["b"] for b in blocks["layers"]]
        scale = jax.random.uniform(jax.random.fold_in(k, 7), minval=0.05, maxval=1.0)
        return LayerKernelsRun(layer[2], layer[0], layer[1], scale)

    return _instances(one, key, s.instances)


def _random_kernel(key, n, features):
    scale = jnp.arange(1, features + 1) ** -1.0
    phi = jax.random.normal(key, (n, features)) * scale
    return phi @ phi.T


class Thm5Run(NamedTuple):
    """Random kernels and targets for Thm 5.

    Attributes:
      kernel: ``(I, n, n)`` ``K = ΦΦᵀ`` with column scales ``j^{-1}`` (full rank, spread
        spectrum).
      y: ``(I, n)`` targets ``y*``.
      f0: ``(I, n)`` pretrained outputs ``f_θ0(x*) = y* − ε‖y*‖w`` (``w`` a random unit
        vector): a good pretrained model, ``‖y* − f_θ0‖ = ε‖y*‖`` exactly.
      sigma: ``(I,)`` ridge, log-uniform on ``[1e-3, 1e3]``.
      epsilon: the ``ε`` above (scalar).
    """

    kernel: Array
    y: Array
    f0: Array
    sigma: Array
    epsilon: Array


#: ``‖y* − f_θ0‖/‖y*‖`` of the Thm 5 instances.
THM5_EPSILON = 0.1


def simulate_thm5(key: PRNGKey, setting: KernelSpectraSetting) -> Thm5Run:
    """Random kernels, targets and a good pretrained model (:class:`Thm5Run`)."""
    check_setting_type("simulate_thm5", setting, KernelSpectraSetting)
    check_key("simulate_thm5", key)
    s = setting

    def one(k):
        k_k, k_y, k_f, k_s = jax.random.split(k, 4)
        kernel = _random_kernel(k_k, s.kernel_n, s.features)
        y = jax.random.normal(k_y, (s.kernel_n,))
        w = jax.random.normal(k_f, (s.kernel_n,))
        f0 = y - THM5_EPSILON * jnp.linalg.norm(y) * w / jnp.linalg.norm(w)
        sigma = 10 ** jax.random.uniform(k_s, minval=-3.0, maxval=3.0)
        return kernel, y, f0, sigma

    kernel, y, f0, sigma = _instances(one, key, s.instances)
    return Thm5Run(kernel, y, f0, sigma, jnp.asarray(THM5_EPSILON, kernel.dtype))


class Thm7Run(NamedTuple):
    """Random ``K = ΦΦᵀ + 0.05I``, rank-3 ``S = BBᵀ`` rescaled to ``η ~ U[0.05, 0.95]``,
    targets ``y`` and ridge ``σ`` log-uniform on ``[0.01, 10]``, leading axis instances."""

    kernel: Array
    extra: Array
    y: Array
    sigma: Array


def simulate_thm7(key: PRNGKey, setting: KernelSpectraSetting) -> Thm7Run:
    """Instances for Thm 7 and its proof step (:class:`Thm7Run`)."""
    check_setting_type("simulate_thm7", setting, KernelSpectraSetting)
    check_key("simulate_thm7", key)
    s = setting

    def one(k):
        k_k, k_s, k_y, k_sig, k_eps = jax.random.split(k, 5)
        kernel = _random_kernel(k_k, s.kernel_n, s.features) + 0.05 * jnp.eye(s.kernel_n)
        b = jax.random.normal(k_s, (s.kernel_n, 3))
        extra = b @ b.T
        eta = perturbation_size(kernel, extra)
        extra = extra * jax.random.uniform(k_eps, minval=0.05, maxval=0.95) / eta
        y = jax.random.normal(k_y, (s.kernel_n,))
        sigma = 10 ** jax.random.uniform(k_sig, minval=-2.0, maxval=1.0)
        return Thm7Run(kernel, extra, y, sigma)

    return _instances(one, key, s.instances)
