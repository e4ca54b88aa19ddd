r"""Lemma 1's first line along the network's own path (Sun & Raskutti 2026, eq. (14)).

Eq. (14) writes the fine-tuned network as ``f_FT = f_PT + Δθ ∇f_PT(θ) + e`` with
``‖e‖_{L2} = Õ(n^{−1/2})``. With ``Δθ = θ_τ − θ_PT`` the network's own fine-tuning
displacement, ``e`` is the remainder of the first-order Taylor expansion at ``θ_PT``
evaluated on the GD path,

.. math:: e_τ(x) = f(θ_τ; x) − f(θ_PT; x) − J_PT(x)(θ_τ − θ_PT),
   \qquad |e_τ(x)| ≤ ½ \sup_{θ ∈ [θ_PT, θ_τ]} ‖∇²_θ f(θ; x)‖ ‖θ_τ − θ_PT‖²,

so its size is set by the curvature of the wide network and the displacement, and is
second order in the step size; Thm 5's eq. (98) bounds the path length
``Σ_j ‖θ_j − θ_{j−1}‖`` by ``C n^{−1/2}``. (:func:`~ntsim.theory.early_stopping.width_scaling_run`
measures the other reading of Lemma 1: the network against a *separately trained*
linearisation; GD on ``f_PT − J_PT Δθ`` runs the mirrored path to the same predictions, so
that gap cannot see the sign of the linear term, while ``e`` evaluates the linearisation
at the network's own ``θ_τ`` and can.)

For the same key and setting the runs repeat those of
:func:`~ntsim.theory.early_stopping.width_scaling_run` (recomputed, not shared): the same
data, ``θ_0``, ``θ_PT`` (:func:`pretrain_source`) and fine-tuning GD (step ``η_0/n`` on
``(1/2N)Σ(f − y)²``), recorded every ``record_every`` steps from step 0; "``sup_τ``" below
is the maximum over the recorded steps.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import Record, gradient_descent, linearize, mse_loss, tree_distance
from ntsim.theory.early_stopping._width_scaling import WidthScalingSetting, pretrain_source

__all__ = [
    "TaylorRemainderRun",
    "TaylorRemainderSweep",
    "simulate_taylor_remainder",
    "taylor_remainder_run",
]


class TaylorRemainderRun(NamedTuple):
    """One fine-tuning run's first-order expansion at ``θ_PT`` (all scalars; sups are maxima
    over the recorded steps ``τ``; ``‖·‖`` on functions is the root mean square over the test
    inputs, the empirical ``L2`` norm).

    Attributes:
      remainder: ``sup_τ ‖e_τ‖``, ``e_τ = f(θ_τ) − f_PT − J_PT(θ_τ − θ_PT)`` (eq. (14)).
      remainder_at_start: ``‖e_0‖`` at step 0 (``θ_0 = θ_PT`` of the path): zero when the
        expansion is taken at the path's start, as eq. (14) takes it.
      linear_term: ``sup_τ ‖J_PT(θ_τ − θ_PT)‖``: what the expansion's linear term carries.
      displacement: ``sup_τ ‖θ_τ − θ_PT‖_2``.
      target_loss_start, target_loss_end: the fine-tuning loss at ``θ_PT`` and at the end.
    """

    remainder: Array
    remainder_at_start: Array
    linear_term: Array
    displacement: Array
    target_loss_start: Array
    target_loss_end: Array


class TaylorRemainderSweep(NamedTuple):
    """:class:`TaylorRemainderRun` over widths × seeds: every field ``(W, S)``, plus
    ``widths``. Seed ``s`` uses the same keys at every width (one curve per seed)."""

    widths: Array
    remainder: Array
    remainder_at_start: Array
    linear_term: Array
    displacement: Array
    target_loss_start: Array
    target_loss_end: Array


def _root_mean_square(values: Array) -> Array:
    return jnp.sqrt(jnp.mean(values.reshape(-1) ** 2))


def taylor_remainder_run(
    key: PRNGKey, width: int, setting: WidthScalingSetting
) -> TaylorRemainderRun:
    """Fine-tune from ``θ_PT`` by GD and measure eq. (14)'s remainder along the path.

    ``f_PT + J_PT Δθ`` is :func:`ntsim.core.linearize` of the model at ``θ_PT``, evaluated at
    each recorded ``θ_τ`` of the network's own GD. ``vmap``-compatible over ``key``
    (``width`` and ``setting`` are static).
    """
    check_setting_type("taylor_remainder_run", setting, WidthScalingSetting)
    check_key("taylor_remainder_run", key)
    model, data, _, params_pt = pretrain_source(key, width, setting)
    target_loss = mse_loss(
        model.apply, data.x_target, data.y_target, loss_scale=0.5 / data.y_target.shape[0]
    )
    path = gradient_descent(
        target_loss,
        params_pt,
        num_steps=setting.finetune_steps,
        learning_rate=setting.eta0 / width,
        record=Record(every=setting.record_every, fn=lambda p, step: p),
        throw=False,
    )
    predict = jax.vmap(model.apply, in_axes=(None, 0))
    predict_linear = jax.vmap(linearize(model.apply, params_pt), in_axes=(None, 0))
    start = predict(params_pt, data.x_test)

    def measure(params):
        linear = predict_linear(params, data.x_test)
        return (
            _root_mean_square(predict(params, data.x_test) - linear),
            _root_mean_square(linear - start),
            tree_distance(params, params_pt),
        )

    remainders, linear_terms, displacements = jax.vmap(measure)(path.records)
    return TaylorRemainderRun(
        remainder=jnp.max(remainders),
        remainder_at_start=remainders[0],
        linear_term=jnp.max(linear_terms),
        displacement=jnp.max(displacements),
        target_loss_start=target_loss(params_pt),
        target_loss_end=target_loss(path.params),
    )


def simulate_taylor_remainder(key: PRNGKey, setting: WidthScalingSetting) -> TaylorRemainderSweep:
    """:func:`taylor_remainder_run` at every width of ``setting.widths`` for ``num_seeds``
    seeds (keys ``jax.random.split(key, num_seeds)``, shared across widths; one compiled,
    seed-vmapped program per width). The claims fit ``log(remainder)`` on ``log n`` per seed.
    """
    check_setting_type("simulate_taylor_remainder", setting, WidthScalingSetting)
    check_key("simulate_taylor_remainder", key)
    keys = jax.random.split(key, setting.num_seeds)
    per_width = [
        jax.jit(jax.vmap(lambda k, w=width: taylor_remainder_run(k, w, setting)))(keys)
        for width in setting.widths
    ]
    stacked = jax.tree.map(lambda *values: jnp.stack(values), *per_width)
    return TaylorRemainderSweep(jnp.asarray(setting.widths), *stacked)
