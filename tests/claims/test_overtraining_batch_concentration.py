"""The Gaussian batch-error bound of ``overtraining.lemma_a12.batch_concentration`` against
a Monte Carlo oracle (numpy draws, independent of the JAX simulation)."""

from __future__ import annotations

import numpy as np
import pytest

from ntsim.claims.overtraining._batch_concentration import gaussian_batch_error_bound


def _batch_errors(rng, batch: int, d: int, draws: int) -> np.ndarray:
    x = rng.standard_normal((draws, batch, d))
    cov = np.einsum("bmi,bmj->bij", x, x) / batch
    return np.abs(np.linalg.eigvalsh(cov - np.eye(d))).max(axis=-1)


@pytest.mark.parametrize(("batch", "d"), [(30, 3), (400, 4)])
@pytest.mark.parametrize("delta", [0.05, 0.5])
def test_the_bound_fails_at_most_as_often_as_delta(batch, d, delta):
    """Exceedances over 20 000 batches: at most δ (one batch, N = 1), and the bound is within
    4× of the batch error's (1 − δ) quantile — it is a bound of the right size, not a
    vacuous one (chosen headroom: the ratio seen is 2.2–3.4, the larger at small m)."""
    errors = _batch_errors(np.random.default_rng(batch + d), batch, d, 20_000)
    bound = gaussian_batch_error_bound(d, batch, batches=1, delta=delta)
    assert np.mean(errors > bound) <= delta
    assert bound <= 4 * np.quantile(errors, 1 - delta)


@pytest.mark.parametrize(
    "kwargs", [dict(d=0, batch=10, batches=1, delta=0.1), dict(d=2, batch=10, batches=1, delta=1)]
)
def test_bad_sizes_are_refused(kwargs):
    with pytest.raises(ValueError, match="gaussian_batch_error_bound"):
        gaussian_batch_error_bound(**kwargs)


def test_the_check_reads_d_and_the_batch_size_from_the_run():
    """A run of another setting is judged against its own bound (the referee's case: d = 8,
    m = 500 was refuted against the quick setting's bound while the check guessed the
    setting from the run's shape)."""
    import jax

    from ntsim.claims.overtraining._batch_concentration import (
        FAILURE_PROBABILITY,
        check_batch_concentration,
    )
    from ntsim.theory import overtraining as ot

    setting = ot.FiniteBatchSetting(d=8, batch=500, instances=8, steps=4, points=40)
    with jax.enable_x64(True):
        run = ot.simulate_finite_batch(jax.random.PRNGKey(0), setting)
    result = check_batch_concentration(run)
    bound = gaussian_batch_error_bound(8, 500, 8 * 4, FAILURE_PROBABILITY)
    assert result.diagnostics["bound (1 + √(d/m) + t)² − 1"] == pytest.approx(bound)
    assert result.outcome == "holds"
