"""Claims on kernel structure: NTK additivity, the LoRA NTK at init (Rahimi Afzal et al. 2025).

Float64 (``jax.enable_x64`` context), 200 random 2-hidden-layer tanh MLPs per claim, vmapped.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, combine_results, compare, vmap_instances
from ntsim.claims.linearization._common import INSTANCES, PAPER
from ntsim.claims.linearization._spectral import _SIZES, _TOL_IDENTITY
from ntsim.core import empirical_ntk_fn, lora, mlp
from ntsim.theory import linearization as lz

__all__ = ["CLAIMS"]

# ------------------------------------------------------------- NTK additivity and LoRA


def _additivity(key, scale):
    n, d, width = _SIZES[scale]
    net = mlp((width, width), activation="tanh", parameterization="ntk", b_std=0.3)
    x = jax.random.normal(key, (n, d))
    params = net.init(jax.random.fold_in(key, 1), x[0])
    full = empirical_ntk_fn(net.apply)(x, None, params)
    blocks = empirical_ntk_fn(net.apply, per_block=True)(x, None, params)
    first = lz.peft_model(net.apply, params, "layer0")
    head = lz.peft_model(net.apply, params, "head")
    union_apply, union0 = lz.subset_model(net.apply, params, [("layers", 0), ("layers", 2)])
    union = empirical_ntk_fn(union_apply)(x, None, union0)
    k_first = empirical_ntk_fn(first.apply)(x, None, first.params0)
    k_head = empirical_ntk_fn(head.apply)(x, None, head.params0)
    scale_ = jnp.max(jnp.abs(full))
    return (
        jnp.maximum(
            jnp.max(jnp.abs(sum(jax.tree.leaves(blocks)) - full)),
            jnp.max(jnp.abs(union - k_first - k_head)),
        )
        / scale_
    )


def check_ntk_additivity(key, scale: str) -> ClaimResult:
    """K_{θ∪θ̂} = K + S for disjoint parameter blocks; the per-block NTKs sum to the full NTK."""
    check_choice("check_ntk_additivity", "scale", scale, SCALES)
    with jax.enable_x64(True):
        err = np.asarray(
            vmap_instances(lambda k: _additivity(k, scale), jax.random.split(key, INSTANCES))
        )
    return compare(
        err,
        _TOL_IDENTITY,
        relation="upper_bound",
        notes="2-hidden-layer tanh MLPs; NTK of (first layer ∪ head) vs the sum of their NTKs, and "
        f"Σ per-leaf NTKs vs the full NTK. Worst relative error {err.max():.1e}.",
    )


def _lora_init(key, scale):
    n, d, width = _SIZES[scale]
    net = mlp((width, width), activation="tanh", parameterization="ntk", b_std=0.3)
    x = jax.random.normal(key, (n, d))
    params = net.init(jax.random.fold_in(key, 1), x[0])
    wrapped = lora(net.apply, params, targets=[("layers", 0, "w"), ("layers", 1, "w")], rank=2)
    lp = wrapped.init(jax.random.fold_in(key, 2))
    blocks = empirical_ntk_fn(wrapped.apply, per_block=True)(x, None, lp)
    full = empirical_ntk_fn(wrapped.apply)(x, None, lp)
    a_block = jnp.max(jnp.stack([jnp.max(jnp.abs(b["a"])) for b in blocks]))
    b_sum = sum(b["b"] for b in blocks)
    return a_block, jnp.max(jnp.abs(full - b_sum)) / jnp.max(jnp.abs(full))


def check_lora_ntk_at_init(key, scale: str) -> ClaimResult:
    """B = 0 ⇒ the NTK w.r.t. every A is exactly 0 at θ0; the LoRA NTK is Σ_layers J_B J_Bᵀ."""
    check_choice("check_lora_ntk_at_init", "scale", scale, SCALES)
    with jax.enable_x64(True):
        a_block, err = (
            np.asarray(a)
            for a in vmap_instances(
                lambda k: _lora_init(k, scale), jax.random.split(key, INSTANCES)
            )
        )
    return combine_results(
        compare(a_block, 0.0, relation="upper_bound"),
        compare(err, _TOL_IDENTITY, relation="upper_bound"),
        notes="Rank-2 LoRA on both hidden weights of 2-hidden-layer tanh MLPs. Measured: max "
        "|A-block "
        f"NTK| = {a_block.max():.1e} (exactly 0 required) and |K − Σ B-blocks|/max|K| ≤ "
        f"{err.max():.1e}.",
    )


CLAIMS = (
    Claim(
        id="linearization.ntk.additivity",
        paper=f"{PAPER}, layer kernels S_l; notes check 23",
        statement="For disjoint parameter blocks K_{θ∪θ̂} = K + S; per-block NTKs sum to the full "
        "NTK.",
        check=check_ntk_additivity,
    ),
    Claim(
        id="linearization.lora.ntk_at_init",
        paper=f"{PAPER}, LoRA experiments; Hu et al. 2021; notes check 24",
        statement="With B = 0 at init, ∂f/∂A = 0 and the LoRA NTK is Σ_layers J_B J_Bᵀ.",
        check=check_lora_ntk_at_init,
    ),
)
