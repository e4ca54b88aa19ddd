"""The MiniLM κ claims' check on hand-built runs: within-dataset rank correlations, averaged
over datasets, with an interval bootstrapped over configurations as clusters.

Oracles: monotone constructions whose Spearman ρ is ±1 by definition, and a planted
Simpson's paradox (datasets that differ in level) where a pooled ρ and the within-dataset ρ
have opposite signs.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ntsim.claims import REGISTRY
from ntsim.claims.linearization._minilm_kappa import _rank_correlation, kappa_loss_association


def _run(log_kappa, loss, log_lambda_max=None, seeds=3, gd_curve=(2.0, 1.0, 0.5)):
    """A run with these seed-mean values (every seed equal) per (dataset, configuration);
    every GD run's loss curve is its final loss plus ``gd_curve``."""
    log_kappa, loss = np.asarray(log_kappa, float), np.asarray(loss, float)
    log_lambda_max = log_kappa + 1.0 if log_lambda_max is None else np.asarray(log_lambda_max)
    tile = lambda a: np.repeat(a[..., None], seeds, axis=-1)  # noqa: E731
    curves = tile(loss)[..., None] + np.asarray(gd_curve, float)
    return SimpleNamespace(kappa_ntk=tile(np.exp(log_kappa)), kappa_sign=tile(np.exp(log_kappa)),
                           train_loss_adamw=tile(loss), train_loss_gd=tile(loss),
                           lambda_max=tile(np.exp(log_lambda_max)),
                           loss_curve_gd=curves)  # fmt: skip


def _check(run, kernel="ntk", regime="adamw"):
    (claim,) = [c for c in REGISTRY if c.id == f"linearization.minilm_kappa.{kernel}_{regime}"]
    return claim.check(run)


CONFIGS = np.arange(8.0)


def test_loss_rising_with_kappa_in_every_dataset_holds_and_falling_is_refuted():
    rising = _run([CONFIGS, CONFIGS + 0.3], [CONFIGS * 0.1, CONFIGS * 0.2 + 1.0])
    rho, (lo, hi), per_dataset = kappa_loss_association(rising, "ntk", "adamw")
    assert rho == 1.0 and per_dataset.tolist() == [1.0, 1.0] and lo > 0.9
    assert _check(rising).outcome == "holds"
    falling = _run([CONFIGS, CONFIGS], [-CONFIGS, -2 * CONFIGS])
    assert _check(falling, "sign", "gd").outcome == "refuted"


def test_pooling_datasets_of_different_levels_cannot_flip_the_sign():
    """Planted Simpson's paradox: within each dataset the loss *falls* with κ, but the
    dataset with the larger κ also has the larger loss, so a pooled ρ over both is positive.
    The check (within datasets) refutes; the old pooled statistic would have held."""
    log_kappa = [CONFIGS, CONFIGS + 20.0]
    loss = [1.0 - 0.01 * CONFIGS, 5.0 - 0.01 * CONFIGS]
    run = _run(log_kappa, loss)
    pooled = _rank_correlation(np.ravel(log_kappa), np.ravel(loss))
    assert pooled > 0.5
    rho, _, per_dataset = kappa_loss_association(run, "ntk", "gd")
    assert rho == -1.0 and per_dataset.tolist() == [-1.0, -1.0]
    assert _check(run, "ntk", "gd").outcome == "refuted"


def test_the_interval_resamples_configurations_not_points():
    """Two datasets that are exact copies carry no more evidence than one: the clustered
    interval is the same with one copy or two (a resampling of points would narrow it)."""
    rng = np.random.default_rng(3)
    log_kappa, loss = rng.normal(size=8), rng.normal(size=8)
    one = kappa_loss_association(_run([log_kappa], [loss]), "ntk", "adamw")
    two = kappa_loss_association(_run([log_kappa, log_kappa], [loss, loss]), "ntk", "adamw")
    assert one[0] == pytest.approx(two[0]) and np.allclose(one[1], two[1])


def test_partial_rank_correlation_removes_what_lambda_max_explains():
    """Loss driven by λ_max alone, κ tied to λ_max: ρ(κ, loss) > 0, but given λ_max nothing
    is left (the partial ρ is ~0 for an independent κ component)."""
    rng = np.random.default_rng(0)
    log_lambda_max = rng.normal(size=200)
    log_kappa = log_lambda_max + 0.5 * rng.normal(size=200)
    loss = log_lambda_max + 0.3 * rng.normal(size=200)  # noise independent of κ
    assert _rank_correlation(log_kappa, loss) > 0.5
    assert abs(_rank_correlation(log_kappa, loss, log_lambda_max)) < 0.15
    # and a κ effect beyond λ_max survives the conditioning
    loss_with_kappa = log_lambda_max + (log_kappa - log_lambda_max)
    assert _rank_correlation(log_kappa, loss_with_kappa, log_lambda_max) > 0.5


def test_the_check_runs_on_the_quick_simulation_shape():
    """Quick scale has 4 configurations per dataset: the claims' minimum."""
    run = _run(np.tile(np.arange(4.0), (2, 1)), np.tile(np.arange(4.0), (2, 1)))
    result = _check(run)
    assert result.num_instances == 4 and result.outcome in ("holds", "inconclusive")


def test_a_gd_run_whose_loss_rises_leaves_the_gd_claims_undecided():
    """The GD regime is the theory's only while GD descends (a step below 2/L): one rising
    curve, e.g. from a step that was never halved, makes the GD claims decide nothing; the
    AdamW claims do not read the GD curves."""
    configs = [CONFIGS, CONFIGS + 0.3]
    losses = [CONFIGS * 0.1, CONFIGS * 0.2 + 1.0]
    assert _check(_run(configs, losses), "ntk", "gd").outcome == "holds"
    rising = _run(configs, losses, gd_curve=(2.0, 1.0, 1.5))
    assert _check(rising, "ntk", "gd").outcome == "inconclusive"
    assert _check(rising, "ntk", "adamw").outcome == "holds"
    # a curve that falls but ends below the final training loss rose in its last steps
    late_rise = _run(configs, losses, gd_curve=(2.0, 1.0, -0.5))
    assert _check(late_rise, "ntk", "gd").outcome == "inconclusive"
