"""Draws for the identities of the stabilising methods of Fu et al. 2023 (Sec 3) and the
printed Tables 2–5, as ``simulate_*(key, setting) -> NamedTuple`` that claims read.

* :func:`simulate_tables` — the AVG discrepancies and repeated cells of Tables 2–5 (data).
* :func:`simulate_mmr_identity` — eq. (8) (``ntsim.core.max_margin_regularizer``) on random
  batches, with and without example weights.
* :func:`simulate_mhloss_identity` — eq. (10) (``ntsim.core.multi_head_loss`` and
  ``multi_head_predict``) on random batches, with its gradient.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._config import Validated, param
from ntsim._validation import check_key, check_setting_type
from ntsim.core import max_margin_regularizer, multi_head_loss, multi_head_predict
from ntsim.theory.stability import _tables

__all__ = [
    "MHLossIdentityRun",
    "MHLossIdentitySetting",
    "MMRIdentityRun",
    "MMRIdentitySetting",
    "TablesRun",
    "TablesSetting",
    "simulate_mhloss_identity",
    "simulate_mmr_identity",
    "simulate_tables",
]


@dataclass(frozen=True)
class TablesSetting:
    """Which printed tables (``"table2"`` … ``"table5"``)."""

    names: tuple[str, ...] = tuple(_tables.TABLES)


class TablesRun(NamedTuple):
    """``discrepancy`` ``(entries,)`` printed AVG − recomputed task mean (means then stds, per
    table and method); ``labels`` the matching ``"table method column"``; ``duplicates``
    the repeated ``mean ± std`` cells ``"table task: a = b"``."""

    discrepancy: np.ndarray
    labels: tuple[str, ...]
    duplicates: tuple[str, ...]


def simulate_tables(key, setting: TablesSetting) -> TablesRun:
    """The tables are data: ``key`` is unused."""
    check_setting_type("simulate_tables", setting, TablesSetting)
    del key
    parts, labels, duplicates = [], [], []
    for name in setting.names:
        table = _tables.stability_table(name)
        d_mean, d_std = _tables.avg_discrepancy(table)
        parts.append(np.concatenate([d_mean, d_std]))
        labels += [f"{name} {m} AVG {c}" for c in ("mean", "std") for m in table.methods]
        duplicates += [f"{name} {t}: {a} = {b}" for t, a, b in _tables.duplicate_cells(table)]
    return TablesRun(np.concatenate(parts), tuple(labels), tuple(duplicates))


@dataclass(frozen=True)
class MMRIdentitySetting:
    """``instances`` random batches of ``n`` features in ``R^k`` with ±1 labels (both classes
    present) and example weights ``U[0.1, 2]``."""

    instances: int = 2000
    n: int = 64
    k: int = 32


class MMRIdentityRun(NamedTuple):
    """Per batch: ``features`` ``(N, n, k)``, ``labels``, ``weights`` ``(N, n)``; ``plain`` and
    ``weighted`` ``(N,)`` eq. (8) without and with the weights."""

    features: jax.Array
    labels: jax.Array
    weights: jax.Array
    plain: jax.Array
    weighted: jax.Array


def simulate_mmr_identity(key, setting: MMRIdentitySetting) -> MMRIdentityRun:
    """Random batches and ``max_margin_regularizer`` on each."""
    check_setting_type("simulate_mmr_identity", setting, MMRIdentitySetting)
    check_key("simulate_mmr_identity", key)
    s = setting

    def one(k):
        k_e, k_y, k_w = jax.random.split(k, 3)
        labels = jnp.where(jax.random.bernoulli(k_y, 0.5, (s.n,)), 1.0, -1.0)
        labels = labels.at[0].set(1.0).at[1].set(-1.0)  # eq. (8) needs both classes
        features = jax.random.normal(k_e, (s.n, s.k))
        weights = jax.random.uniform(k_w, (s.n,), minval=0.1, maxval=2.0)
        return (features, labels, weights, max_margin_regularizer(features, labels),
                max_margin_regularizer(features, labels, weights=weights))  # fmt: skip

    return MMRIdentityRun(*jax.jit(jax.vmap(one))(jax.random.split(key, s.instances)))


@dataclass(frozen=True)
class MHLossIdentitySetting(Validated):
    """``instances`` random batches (``n`` points in ``R^k``, ±1 labels) and ``heads`` heads."""

    instances: int = param(1000, "random batches", low=1)
    n: int = param(64, "points per batch", low=1)
    k: int = param(16, "feature dimension", low=1)
    heads: int = param(50, "heads of eq. (10)'s multi-head loss", low=1)


class MHLossIdentityRun(NamedTuple):
    """Per batch: ``features`` ``(N, n, k)``, ``labels`` ``(N, n)``, ``heads`` ``(N, H, k+1)``;
    eq. (10)'s ``loss`` ``(N,)``, its gradient ``grad`` ``(N, H, k+1)`` and the averaged
    prediction ``pred`` ``(N, n)``."""

    features: jax.Array
    labels: jax.Array
    heads: jax.Array
    loss: jax.Array
    grad: jax.Array
    pred: jax.Array


def simulate_mhloss_identity(key, setting: MHLossIdentitySetting) -> MHLossIdentityRun:
    """Random batches and heads, with ``multi_head_loss``, its gradient and prediction."""
    check_setting_type("simulate_mhloss_identity", setting, MHLossIdentitySetting)
    check_key("simulate_mhloss_identity", key)
    s = setting

    def one(k):
        k_e, k_y, k_h = jax.random.split(k, 3)
        features = jax.random.normal(k_e, (s.n, s.k))
        labels = jnp.where(jax.random.bernoulli(k_y, 0.5, (s.n,)), 1.0, -1.0)
        heads = jax.random.normal(k_h, (s.heads, s.k + 1))
        return (features, labels, heads, multi_head_loss(heads, features, labels),
                jax.grad(multi_head_loss)(heads, features, labels),
                multi_head_predict(heads, features))  # fmt: skip

    return MHLossIdentityRun(*jax.jit(jax.vmap(one))(jax.random.split(key, s.instances)))
