"""Claims about the project's own interval procedures (no paper): each tail misses as often
as its level says, on data whose truth is known.

Every verdict of the five papers' claims is decided on one of these intervals, so a wrong
quantile, a shifted end or a biased estimate there would move verdicts everywhere while
the claims, deciding far from their regions' boundaries, stay green. These claims read
:mod:`ntsim.theory.intervals` (one simulation per procedure) and decide each tail's miss
rate on its Wilson interval. ``ntsim mutate`` runs them for the mutants of every topic whose
functions lie on their paths (``SHARED_TOPICS`` in :mod:`ntsim.claims`).
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived
from ntsim.claims._decisions import Interval, Tolerance, all_of, estimate_in
from ntsim.theory import intervals as iv

__all__ = [
    "BOOTSTRAP_COVERAGE",
    "CLAIMS",
    "SMALL_SPEARMAN_COVERAGE",
    "SPEARMAN_COVERAGE",
    "T_COVERAGE",
]

T_COVERAGE, SPEARMAN_COVERAGE, BOOTSTRAP_COVERAGE = (
    Simulation(f"intervals.{name}_coverage", fn, iv.COVERAGE_SCALES, x64=True)
    for name, fn in (("t", iv.simulate_t_coverage), ("spearman", iv.simulate_spearman_coverage),
                     ("bootstrap", iv.simulate_bootstrap_coverage))
)  # fmt: skip
#: The Spearman simulation at N = 5 (Moran's mean only; its tails are not claimed there).
SMALL_SPEARMAN_COVERAGE = Simulation(
    "intervals.spearman_small_n_coverage", iv.simulate_spearman_coverage,
    iv.SMALL_SPEARMAN_SCALES, x64=True,
)  # fmt: skip

#: The t interval is exact for normal data: only Monte Carlo error separates each tail's miss
#: rate from (1 − level)/2. At 200,000 replications a tail's standard error is 3.5e-4, so
#: ±0.003 is ~8.6 standard errors, and the Wilson interval (±7e-4) fits inside it.
_EXACT = Tolerance(
    "monte-carlo", 0.003,
    "±0.003 around (1 − level)/2: ~8.6 standard errors of a tail rate at 200,000 replications",
)  # fmt: skip
#: Fisher's z (with 1.06/(N − 3)) and the percentile bootstrap are approximate at finite N.
_APPROXIMATE = Tolerance(
    "chosen", 0.0125,
    "each tail's miss rate within ±half of its nominal (1 − level)/2 = 0.025: calibration, "
    "not the procedure's constants (Fisher's 1/(N − 3) for Spearman passes too)",
    observed="when chosen, tail rates 0.020–0.037 over Spearman at N = 10–30, r = 0–0.8 and "
    "the bootstrap at N = 50; at this setting's quick scale, seeds 0–3, Spearman (r = 0.5) "
    "0.021–0.033 and bootstrap (N = 100) 0.025–0.030, the true Spearman tails being 0.0283 "
    "and 0.0225 (200,000 replications), so N = 400 now for the bootstrap (~0.026)",
)  # fmt: skip


def _tails(run: iv.CoverageRun, tolerance: Tolerance):
    nominal = (1.0 - run.level) / 2.0
    region = Interval(nominal - tolerance.value, nominal + tolerance.value)
    parts, rates = [], {}
    for row in range(len(run.procedures)):
        total = int(run.replications[row])
        for side, counts in (("below", run.below), ("above", run.above)):
            rate, interval = iv.wilson_ci(int(counts[row]), total)
            rates[f"{run.procedures[row]}: misses {side}"] = round(rate, 5)
            parts.append(estimate_in(
                rate, interval, region, num_instances=total, tolerance=tolerance,
                notes=f"{run.procedures[row]}: fraction of replications whose interval lies "
                f"wholly {'above' if side == 'below' else 'below'} the truth, 95% Wilson CI.",
            ))  # fmt: skip
    return all_of(*parts, diagnostics={"nominal tail": nominal, **rates})


#: The Monte Carlo mean of Spearman's estimator against its exact expectation. Its standard
#: error is sd/√R ≈ 0.188/√R (0.0013 at quick's 20,000 replications, 0.0008 at 50,000): the
#: normal 95% interval (±0.0026 at quick) fits inside ±0.008 with ≥ 4 standard errors to
#: spare. Drawing the pairs at r = 0.47 instead of 0.5 moves E[ρ̂] by 0.027.
_MEAN_ANCHOR = Tolerance(
    "monte-carlo", 0.008,
    "±0.008 around Moran's E[ρ̂]: the 95% interval of a mean over ≥ 20,000 replications "
    "(sd ≈ 0.19) is ±0.0026 wide, leaving ≥ 4 standard errors",
)  # fmt: skip


#: At N = 5 the estimator's spread is larger (sd ≈ 0.435): the mean's 95% interval over
#: ≥ 60,000 replications is ±0.0035 wide, and ±0.015 leaves ≥ 6 standard errors.
_SMALL_N_MEAN_ANCHOR = Tolerance(
    "monte-carlo", 0.015,
    "±0.015 around Moran's E[ρ̂] at N = 5: the 95% interval of a mean over ≥ 60,000 "
    "replications (sd ≈ 0.435) is ±0.0035 wide, leaving ≥ 6 standard errors",
)  # fmt: skip


def check_spearman_estimate_mean(run: iv.CoverageRun):
    """The mean of Spearman's estimator per ``r`` within ±0.008 of Moran's exact ``E[ρ̂]``,
    decided on the mean's normal 95% interval over the replications. Each row's ``r`` is
    read back from its truth, ``r = 2 sin(π ρ_S / 6)`` (Pearson's relation inverted)."""
    return _estimate_mean(run, _MEAN_ANCHOR)


def check_small_n_spearman_estimate_mean(run: iv.CoverageRun):
    """As :func:`check_spearman_estimate_mean` at ``N = 5``, within ±0.015."""
    return _estimate_mean(run, _SMALL_N_MEAN_ANCHOR)


def _estimate_mean(run: iv.CoverageRun, tolerance: Tolerance):
    parts, means = [], {}
    for row, name in enumerate(run.procedures):
        correlation = 2.0 * np.sin(np.pi * float(run.truth[row]) / 6.0)
        expected = iv.spearman_estimate_mean(correlation, int(run.sizes[row]))
        mean, total = float(run.estimate_mean[row]), int(run.replications[row])
        half = 1.959964 * float(run.estimate_sd[row]) / total**0.5
        means[f"{name}: mean ρ̂ (exact {expected:.5f})"] = round(mean, 5)
        region = Interval(expected - tolerance.value, expected + tolerance.value)
        parts.append(estimate_in(
            mean, (mean - half, mean + half), region, num_instances=total,
            tolerance=tolerance,
            notes=f"{name}: mean of ρ̂ over replications, normal 95% CI (sd/√R).",
        ))  # fmt: skip
    return all_of(*parts, diagnostics=means)


def check_t_interval_tails(run: iv.CoverageRun):
    """Both tails of the t interval at every ``N``: ``(1 − level)/2 ± 0.003``."""
    return _tails(run, _EXACT)


def check_spearman_interval_tails(run: iv.CoverageRun):
    """Both tails of Fisher's z interval for Spearman's ρ at every ``r``: ``0.025 ± 0.0125``."""
    return _tails(run, _APPROXIMATE)


def check_bootstrap_interval_tails(run: iv.CoverageRun):
    """Both tails of the percentile bootstrap interval of a mean: ``0.025 ± 0.0125``."""
    return _tails(run, _APPROXIMATE)


_NOMINAL = "each tail misses in (1 − level)/2 = 2.5% of replications"

CLAIMS = (
    Claim(
        id="intervals.mean_ci.equal_tails",
        paper="Student 1908, the t interval for a mean (ntsim.core.mean_ci)",
        statement="For N(0, 1) data at N = 3 and N = 10, mean_ci's 95% interval lies wholly "
        "above 0 in 2.5% of replications and wholly below 0 in 2.5%, within ±0.003.",
        kind="identity",
        reading=derived(
            "Student's distribution of the mean's deviation over its estimated spread (in "
            "Fisher's form, t with N − 1 degrees of freedom for normal data) is symmetric, so "
            "x̄ ∓ t_{N−1}·s/√N misses μ equally often from each side, in (1 − level)/2 of draws"
        ),  # fmt: skip
        uses=T_COVERAGE,
        check=check_t_interval_tails,
        min_instances=1000,
    ),
    Claim(
        id="intervals.spearman_ci.equal_tails",
        paper="Fieller–Hartley–Pearson 1957, Fisher's z interval for Spearman's ρ "
        "(ntsim.core.spearman_ci)",
        statement="For 20 pairs from a bivariate normal with r = 0.5 and with r = −0.5 "
        "(population Spearman ρ_S = (6/π)·arcsin(r/2)), spearman_ci's 95% interval misses ρ_S "
        "from each side in 0.025 ± 0.0125 of replications (calibration to half the nominal "
        "tail; it does not pin the constant 1.06).",
        kind="identity",
        reading=derived(
            "the procedure's variance 1.06/(N − 3) is an approximation: the project reads it "
            "as calibrated to within half the nominal tail at N = 20 — " + _NOMINAL
        ),  # fmt: skip
        uses=SPEARMAN_COVERAGE,
        check=check_spearman_interval_tails,
        min_instances=1000,
    ),
    Claim(
        id="intervals.spearman_ci.estimate_mean",
        paper="Moran 1948, the exact mean of Spearman's ρ̂ under a bivariate normal "
        "(ntsim.core.spearman_ci's point estimate)",
        statement="For 20 pairs from a bivariate normal with r = 0.5 and with r = −0.5, the "
        "mean of spearman_ci's estimate over replications is within ±0.008 of "
        "6/(π(N + 1))·[arcsin r + (N − 2)·arcsin(r/2)] (±0.4613).",
        kind="identity",
        reading=derived(
            "Moran's exact E[ρ̂] as an anchor on the data the Spearman interval is checked "
            "on: the estimator and the draw of pairs at the stated r are both on its path"
        ),  # fmt: skip
        uses=SPEARMAN_COVERAGE,
        check=check_spearman_estimate_mean,
        min_instances=1000,
    ),
    Claim(
        id="intervals.spearman_ci.estimate_mean_small_n",
        paper="Moran 1948, the exact mean of Spearman's ρ̂ under a bivariate normal "
        "(ntsim.core.spearman_ci's point estimate)",
        statement="For 5 pairs from a bivariate normal with r = 0.5 and with r = −0.5, the "
        "mean of spearman_ci's estimate over replications is within ±0.015 of "
        "6/(π(N + 1))·[arcsin r + (N − 2)·arcsin(r/2)] (±0.4080; ρ_S = ±0.4826).",
        kind="identity",
        reading=derived(
            "Moran's mean is exact at every N ≥ 2; at N = 5 its finite-N term is largest, so "
            "the estimator's own arithmetic (its ranks and their normalisation, whose errors "
            "shrink like 1/N³ and are invisible at the interval claims' N = 20) is anchored "
            "where such an error moves the mean by several tolerances"
        ),  # fmt: skip
        uses=SMALL_SPEARMAN_COVERAGE,
        check=check_small_n_spearman_estimate_mean,
        min_instances=1000,
    ),
    Claim(
        id="intervals.bootstrap_ci.equal_tails",
        paper="Efron 1979, the percentile bootstrap interval (ntsim.core.bootstrap_ci)",
        statement="For the mean of 400 N(0, 1) observations, bootstrap_ci's 95% percentile "
        "interval (1,000 resamples; 500 at quick scale) misses 0 from each side in "
        "0.025 ± 0.0125 of replications.",
        kind="identity",
        reading=derived(
            "the percentile interval is first-order accurate: the project reads it as "
            "calibrated to within half the nominal tail at N = 400 — " + _NOMINAL
        ),  # fmt: skip
        uses=BOOTSTRAP_COVERAGE,
        check=check_bootstrap_interval_tails,
        min_instances=1000,
    ),
)
