"""Claims of Fu, So & Collier 2023 about the stabilising methods (Sec 3) and Tables 2–5.

* ``stability.tables.avg_consistent`` — every AVG entry of Tables 2–5 is the task mean of
  the printed means (resp. stds) up to rounding to the last printed digit (check 28).
* ``stability.mmr.identity`` — eq. (8) as printed equals ``1/(1 + ‖μ₊ − μ₋‖)`` (check 26).
* ``stability.mhloss.identity`` — eq. (10) is the mean of single-head losses, its gradient
  in ``w_h`` is ``1/H`` times the single-head gradient, and the averaged prediction is
  ``w̄ᵀx̃`` (check 27).

The identities run in float64 inside ``with jax.enable_x64(True):`` over hundreds of random
batches, vmapped (one compilation); the oracles are written out independently (explicit
class means in numpy, a separately coded single-head logistic loss).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, combine_results, compare
from ntsim.core import max_margin_regularizer, multi_head_loss, multi_head_predict
from ntsim.theory.stability import (
    ROUNDING_TOLERANCE,
    TABLES,
    avg_discrepancy,
    duplicate_cells,
    stability_table,
)

__all__ = ["CLAIMS"]

_PAPER = "Fu et al. 2023"
_EXPERIMENT = "stability/table2_methods_small_scale"

# Random batches per scale: (instances, n, k) for MMR; (instances, n, k, H) for MHLoss.
_MMR = {"quick": (200, 16, 5), "full": (2000, 64, 32)}
_MH = {"quick": (200, 12, 4, 7), "full": (1000, 64, 16, 50)}
# float64 round-off: both sides are O(1) sums of ≤ 64·50 terms, error ~1e-14; 1e-10 relative
# leaves ~1e4x slack while catching any formula error (which is O(1)).
_RTOL = 1e-10
# Printed values are integers of 0.01 units; float parsing adds ≤ 1e-12.
_FLOAT_SLACK = 1e-9


# --------------------------------------------------------------------------- Tables 2–5


def check_avg_consistent(key, scale: str) -> ClaimResult:
    """|printed AVG − task mean of printed entries| ≤ 0.01 for every table/method/column."""
    check_choice("check_avg_consistent", "scale", scale, SCALES)
    del key  # the tables are data
    parts, worst_cells, dup = [], [], []
    for name in TABLES:
        table = stability_table(name)
        d_mean, d_std = avg_discrepancy(table)
        parts.append(np.concatenate([d_mean, d_std]))
        for col, diffs in (("mean", d_mean), ("std", d_std)):
            for method, diff in zip(table.methods, diffs, strict=True):
                if abs(diff) > 0.005 + _FLOAT_SLACK:
                    worst_cells.append(f"{name} {method} AVG {col} {diff:+.4f}")
        dup += [f"{name} {task}: {a} = {b}" for task, a, b in duplicate_cells(table)]
    measured = np.abs(np.concatenate(parts))
    return compare(
        measured,
        ROUNDING_TOLERANCE,
        relation="upper_bound",
        atol=_FLOAT_SLACK,
        notes=f"{measured.size} AVG entries (4 tables × 6 methods × mean/std); max "
        f"|printed − recomputed| = {measured.max():.4f} ≤ one last-digit unit 0.01 (rounded "
        f"entries and a rounded AVG each contribute ≤ 0.005). Beyond half a unit (needs both "
        f"roundings): {'; '.join(worst_cells)}. Identical mean±std cells of two methods "
        f"(copy suspects, not an AVG inconsistency): {'; '.join(dup)}.",
    )


# ------------------------------------------------------------------------- MMR, eq. (8)


def _mmr_instance(key, n, k):
    k_e, k_y, k_w = jax.random.split(key, 3)
    labels = jnp.where(jax.random.bernoulli(k_y, 0.5, (n,)), 1.0, -1.0)
    labels = labels.at[0].set(1.0).at[1].set(-1.0)  # eq. (8) needs both classes
    features = jax.random.normal(k_e, (n, k))
    weights = jax.random.uniform(k_w, (n,), minval=0.1, maxval=2.0)
    return features, labels, weights


def check_mmr_identity(key, scale: str) -> ClaimResult:
    """eq. (8) (``max_margin_regularizer``) vs ``1/(1 + ‖μ₊ − μ₋‖)`` from explicit class means."""
    check_choice("check_mmr_identity", "scale", scale, SCALES)
    count, n, k = _MMR[scale]
    with jax.enable_x64(True):
        feats, labels, weights = jax.vmap(lambda kk: _mmr_instance(kk, n, k))(
            jax.random.split(key, count)
        )
        plain = np.asarray(jax.jit(jax.vmap(max_margin_regularizer))(feats, labels))
        weighted = np.asarray(
            jax.jit(jax.vmap(lambda e, y, w: max_margin_regularizer(e, y, weights=w)))(
                feats, labels, weights
            )
        )
        feats, labels, weights = map(np.asarray, (feats, labels, weights))
    oracle_plain, oracle_weighted = [], []
    for e, y, w in zip(feats, labels, weights, strict=True):
        pos, neg = y > 0, y < 0
        oracle_plain.append(1 / (1 + np.linalg.norm(e[pos].mean(0) - e[neg].mean(0))))
        mu_p = np.average(e[pos], axis=0, weights=w[pos])
        mu_n = np.average(e[neg], axis=0, weights=w[neg])
        oracle_weighted.append(1 / (1 + np.linalg.norm(mu_p - mu_n)))
    measured = np.concatenate([plain, weighted])
    reference = np.array(oracle_plain + oracle_weighted)
    rel = np.abs(measured - reference) / reference
    return compare(
        measured,
        reference,
        relation="equal",
        rtol=_RTOL,
        num_instances=count,
        notes=f"{count} random batches (n = {n}, k = {k}, random ±1 labels with both classes), "
        f"unweighted and with example weights U[0.1, 2]; max relative error {rel.max():.1e} "
        f"(tolerance {_RTOL:g}, float64).",
    )


# ---------------------------------------------------------------------- MHLoss, eq. (10)


def _single_head_loss(w, features, labels):
    """Independent oracle: mean_i log(1 + exp(−y_i (vᵀE_i − b))) for ONE head w = [v; b]."""
    margins = labels * (features @ w[:-1] - w[-1])
    return jnp.mean(jnp.logaddexp(0.0, -margins))


def _mh_instance(key, n, k, num_heads):
    k_e, k_y, k_h = jax.random.split(key, 3)
    features = jax.random.normal(k_e, (n, k))
    labels = jnp.where(jax.random.bernoulli(k_y, 0.5, (n,)), 1.0, -1.0)
    heads = jax.random.normal(k_h, (num_heads, k + 1))
    loss = multi_head_loss(heads, features, labels)
    grad = jax.grad(multi_head_loss)(heads, features, labels)
    pred = multi_head_predict(heads, features)
    singles = jax.vmap(_single_head_loss, (0, None, None))(heads, features, labels)
    single_grads = jax.vmap(jax.grad(_single_head_loss), (0, None, None))(heads, features, labels)
    w_bar = jnp.mean(heads, axis=0)
    x_aug = jnp.concatenate([features, -jnp.ones((n, 1))], axis=1)  # x̃ = [E(x); −1]
    return {
        "loss": (loss, jnp.mean(singles)),
        "grad": (grad, single_grads / num_heads),
        "pred": (pred, x_aug @ w_bar),
    }


def check_mhloss_identity(key, scale: str) -> ClaimResult:
    """eq. (10): loss = mean of single-head losses; ∂/∂w_h = (1/H)∇ single; prediction = w̄ᵀx̃."""
    check_choice("check_mhloss_identity", "scale", scale, SCALES)
    count, n, k, num_heads = _MH[scale]
    with jax.enable_x64(True):
        out = jax.jit(jax.vmap(lambda kk: _mh_instance(kk, n, k, num_heads)))(
            jax.random.split(key, count)
        )
        out = jax.tree.map(np.asarray, out)
    results = []
    for got, want in out.values():
        # scale per instance by the largest |reference| so that near-zero entries are fair
        norm = np.max(np.abs(want.reshape(count, -1)), axis=1)
        err = np.max(np.abs((got - want).reshape(count, -1)), axis=1) / norm
        results.append(compare(err, _RTOL, relation="upper_bound", num_instances=count))
    worst = ", ".join(
        f"{name} {r.measured.max():.1e}" for name, r in zip(out, results, strict=True)
    )
    return combine_results(
        *results,
        notes=f"{count} random instances, n = {n}, k = {k}, H = {num_heads} heads; measured = "
        f"max error relative to the largest reference entry for [loss, ∂/∂w_h, prediction]; "
        f"worst: {worst}; tolerance {_RTOL:g} (float64).",
    )


CLAIMS = (
    Claim(
        id="stability.tables.avg_consistent",
        paper=f"{_PAPER}, Tables 2–5, column AVG",
        statement="Each AVG entry is the unweighted task mean of the printed means (resp. stds) "
        "to within one last-digit unit (0.01) of rounding.",
        check=check_avg_consistent,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="stability.mmr.identity",
        paper=f"{_PAPER}, Sec 3.1, eq. (8)",
        statement="R(S) of eq. (8) equals 1/(1 + ‖μ₊ − μ₋‖), μ± the (weighted) class means "
        "of the encoded features.",
        check=check_mmr_identity,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="stability.mhloss.identity",
        paper=f"{_PAPER}, Sec 3.2, eq. (10)",
        statement="L_MH is the mean of the H single-head losses, ∂L_MH/∂w_h = (1/H)∇ℓ_h, and "
        "the averaged prediction is w̄ᵀx̃.",
        check=check_mhloss_identity,
        experiment=_EXPERIMENT,
    ),
)
