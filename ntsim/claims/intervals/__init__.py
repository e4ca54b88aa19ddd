"""Claims about the project's own interval procedures (no paper): each tail misses as often
as its level says, on data whose truth is known.

Every verdict of the five papers' claims is decided on one of these intervals, so a wrong
quantile, a shifted end or a biased estimate there would move verdicts everywhere while
the claims, deciding far from their regions' boundaries, stay green. These claims read
:func:`ntsim.theory.intervals.simulate_interval_coverage` and decide each tail's miss rate
on its Wilson interval. ``ntsim mutate`` runs them for the mutants of every topic whose
functions lie on their paths (``SHARED_TOPICS`` in :mod:`ntsim.claims`).
"""

from __future__ import annotations

from ntsim.claims._contract import Claim, Simulation, derived, printed
from ntsim.claims._decisions import Interval, Tolerance, all_of, estimate_in
from ntsim.theory import intervals as iv

__all__ = ["CLAIMS", "COVERAGE"]

COVERAGE = Simulation(
    "intervals.coverage", iv.simulate_interval_coverage, iv.COVERAGE_SCALES, x64=True
)

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
    "each tail's miss rate within ±half of its nominal (1 − level)/2 = 0.025",
    observed="tail miss rates 0.020–0.037 when chosen: 12,000 Spearman replications at N = "
    "10–30, r = 0–0.8, and 1,000 bootstrap replications at N = 50 (quick seed 0 of this "
    "setting: 0.028/0.022 Spearman, 0.024/0.031 bootstrap)",
)  # fmt: skip


def _tails(run: iv.CoverageRun, rows, tolerance: Tolerance):
    nominal = (1.0 - run.level) / 2.0
    region = Interval(nominal - tolerance.value, nominal + tolerance.value)
    parts, rates = [], {}
    for row in rows:
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


def check_t_interval_tails(run: iv.CoverageRun):
    """Both tails of the t interval at every ``N``: ``(1 − level)/2 ± 0.003``."""
    rows = [i for i, name in enumerate(run.procedures) if name.startswith("t interval")]
    return _tails(run, rows, _EXACT)


def check_spearman_interval_tails(run: iv.CoverageRun):
    """Both tails of Fisher's z interval for Spearman's ρ: ``0.025 ± 0.0125``."""
    rows = [i for i, name in enumerate(run.procedures) if name.startswith("Fisher-z")]
    return _tails(run, rows, _APPROXIMATE)


def check_bootstrap_interval_tails(run: iv.CoverageRun):
    """Both tails of the percentile bootstrap interval of a mean: ``0.025 ± 0.0125``."""
    rows = [i for i, name in enumerate(run.procedures) if name.startswith("percentile")]
    return _tails(run, rows, _APPROXIMATE)


_NOMINAL = "each tail misses in (1 − level)/2 = 2.5% of replications"

CLAIMS = (
    Claim(
        id="intervals.mean_ci.equal_tails",
        paper="Student 1908, the t interval for a mean (ntsim.core.mean_ci)",
        statement="For N(0, 1) data at N = 3 and N = 10, mean_ci's 95% interval lies wholly "
        "above 0 in 2.5% of replications and wholly below 0 in 2.5%, within ±0.003.",
        kind="identity",
        reading=printed(
            "(x̄ − μ)√N/s has Student's t distribution with N − 1 degrees of freedom for "
            "normal data, so x̄ ∓ t_{N−1}·s/√N covers μ with the stated probability, "
            "equally from each side"
        ),  # fmt: skip
        uses=COVERAGE,
        check=check_t_interval_tails,
        min_instances=1000,
    ),
    Claim(
        id="intervals.spearman_ci.equal_tails",
        paper="Fieller–Hartley–Pearson 1957, Fisher's z interval for Spearman's ρ "
        "(ntsim.core.spearman_ci)",
        statement="For 20 pairs from a bivariate normal with r = 0.5 (population Spearman "
        "ρ_S = (6/π)·arcsin(r/2)), spearman_ci's 95% interval misses ρ_S from each side in "
        "0.025 ± 0.0125 of replications.",
        kind="identity",
        reading=derived(
            "the procedure's variance 1.06/(N − 3) is an approximation: the project reads it "
            "as calibrated to within half the nominal tail at N = 20 — " + _NOMINAL
        ),  # fmt: skip
        uses=COVERAGE,
        check=check_spearman_interval_tails,
        min_instances=1000,
    ),
    Claim(
        id="intervals.bootstrap_ci.equal_tails",
        paper="Efron 1979, the percentile bootstrap interval (ntsim.core.bootstrap_ci)",
        statement="For the mean of 100 N(0, 1) observations, bootstrap_ci's 95% percentile "
        "interval misses 0 from each side in 0.025 ± 0.0125 of replications.",
        kind="identity",
        reading=derived(
            "the percentile interval is first-order accurate: the project reads it as "
            "calibrated to within half the nominal tail at N = 100 — " + _NOMINAL
        ),  # fmt: skip
        uses=COVERAGE,
        check=check_bootstrap_interval_tails,
        min_instances=1000,
    ),
)
