"""Claims comparing hold-out early stopping, as users run it, with the data-dependent rule T̂.

Sun & Raskutti 2026 define the stopping time through ``ϱ̂_N`` (eq. (11)) but run hold-out
early stopping in their experiments (Sec 7, "no improvement over several iterations"), and
expect the theoretical rule to outperform hold-out, citing the Sobolev simulation of
Raskutti et al. 2014 (Sec 4, Fig. 3). Both are run on that benchmark
(:func:`ntsim.theory.early_stopping.simulate_sobolev_sweep`: 80/20 split, validation loss
every 10 steps, patience 5, best checkpoint kept, all scored on the ``N`` design points) —
the same simulation the ``early_stopping/sobolev_stopping_rule`` figure draws.

For kernel GD the kernel does not drift (``g ≡ 0`` in eq. (36)), so ``T̂_op = T̂_max = T̂``:
the rule tested is the paper's. Measured: T̂ stops an order of magnitude before the oracle
step, hold-out near or after it, and T̂'s error is larger on average (the comparison is
decided on the confidence interval of the mean paired log error ratio); hold-out stays
inside the rule's own guarantee ``12 C_H² ϱ̂²`` in every draw.
"""

from __future__ import annotations

import math

import numpy as np

from ntsim.claims._contract import Claim, EstimateIn, Simulation, derived
from ntsim.claims._decisions import AtMost, Interval, Tolerance, compare, estimate_in
from ntsim.claims._noise_premises import pooled_z_within
from ntsim.claims._premises import given
from ntsim.core import mean_ci
from ntsim.theory import early_stopping as es

__all__ = ["CLAIMS", "SOBOLEV_HOLDOUT", "sobolev_premises"]

_PAPER = "Sun & Raskutti 2026"
_EXPERIMENT = "early_stopping/sobolev_stopping_rule"

SOBOLEV_HOLDOUT = Simulation(
    "early_stopping.holdout.sobolev",
    es.simulate_sobolev_sweep,
    {
        # σ = 0.5 stated in both settings: the ordering's sign depends on it (claim below).
        # Quick: max_steps ≥ 4× the largest oracle step seen (≈ 210 at N = 200); N ≥ 100
        # (at N ∈ {50, 100} the comparison was inconclusive: 0.04 [−0.09, 0.17]).
        "quick": es.SobolevSweepSetting(
            sizes=(100, 200), draws=30, noise_std=0.5, max_steps=1000
        ),  # fmt: skip
        # Full: 20 draws per N (the figure's): v1 full at 40 draws put T̂/hold-out at
        # 1.03–2.33 per N (pooled log ratio ≈ 0.4, sd ≈ 0.5), so at 100 pairs the CI
        # (≈ ±0.1) stays ≥ 0.25 from both ends of [log 1.05, log 4]; 40 draws cost 375 s.
        "full": es.SobolevSweepSetting(draws=20, noise_std=0.5),
    },
    x64=True,
    key_name="early_stopping.holdout.draws",  # the v1 claims' key id
)

#: f*(x)ᵀ𝕂⁻¹f*(x) from the float64 eigendecomposition of 𝕂/N (λ̂_min ≈ 1e-10 at N = 1600):
#: it agrees with a direct solve 𝕂⁻¹f* to ~1e-11 relative at N ∈ {100, 1600}; 1e-6 is ×10⁵.
RKHS_ROUND_OFF = Tolerance(
    "round-off", 1e-6, "float64 eigh of 𝕂/N agrees with a direct solve to ~1e-11 at N ≤ 1600"
)

#: The rule loses to hold-out, by a factor in [1.05, 4] on average: T̂ = ⌊1/(αϱ̂²)⌋ with
#: eq. (11)'s conservative 2eσ stops about 10× before the oracle step, so its error is
#: bias-dominated and clearly above hold-out's (which stops near the oracle step); both
#: stay within a small factor of the oracle's error, so not by an order of magnitude.
RULE_LOSES = EstimateIn(
    Interval(math.log(1.05), math.log(4.0)),
    "T̂ stops ~10× before the oracle step: its error is 1.05–4× hold-out's on average",
)


#: Raskutti et al. 2014, Thm 1's constant, transcribed here apart from the simulation's.
PRINTED_GUARANTEE_FACTOR = 12.0
#: ‖f*‖²_H of f* = |x − 1/2| − 1/4 for 𝕂 = 1 + min(x, x'): f*(0)² + ∫₀¹ f*'² = 1/16 + 1,
#: written out here apart from the simulation's constant.
C_H_SQUARED = 17 / 16


def sobolev_premises(run: es.SobolevSweep) -> dict:
    """The model of Raskutti et al. 2014, Thm 1, measured on the draws.

    * ``y_i = f*(x_i) + w_i`` with centred Gaussian noise, for the ``f*`` the errors are
      scored against. Each draw's noise along ``f*`` (``noise_z``) is exactly ``N(0, 1)``
      under it; pooled over all draws and ``N`` it must stay within
      :data:`ntsim.claims._noise_premises.PREMISE_Z` (data generated from another function
      than ``f*`` shift every draw's statistic the same way).
    * ``‖f*‖_H ≤ C_H`` in the RKHS of the kernel GD runs with: the minimum-norm interpolant
      of ``f*`` on the design has ``H``-norm ``f*(x)ᵀ𝕂⁻¹f*(x) ≤ ‖f*‖²_H``, so it must not
      exceed ``C_H² = 17/16`` (the norm of ``|x − 1/2| − 1/4`` for ``𝕂 = 1 + min``, derived in
      :mod:`ntsim.theory.early_stopping._sobolev`) beyond round-off. A kernel other than
      ``1 + min`` (another RKHS norm) or a target outside the ball breaks it.
    """
    c_h_sq = C_H_SQUARED
    norm_sq = np.ravel(run.target_rkhs_norm_sq)
    return {
        "y = f*(x) + w: noise centred along f*": pooled_z_within(np.ravel(run.noise_z)),
        "‖f*‖_H ≤ C_H: interpolant norm² ≤ 17/16": norm_sq <= c_h_sq * (1 + RKHS_ROUND_OFF.value),
    }


def guarantee_is_printed(run: es.SobolevSweep) -> dict:
    """The premise that the bound compared is Raskutti et al.'s ``12 C_H² ϱ̂²`` of the recorded
    radius, with ``C_H² = 17/16`` (float64: relative round-off, :data:`RKHS_ROUND_OFF`)."""
    radius, bound = np.ravel(run.critical_radius), np.ravel(run.guarantee)
    printed = PRINTED_GUARANTEE_FACTOR * C_H_SQUARED * radius**2
    return {
        "the bound is 12 C_H² ϱ̂² of the recorded ϱ̂": np.abs(bound / printed - 1)
        <= RKHS_ROUND_OFF.value
    }


def _diagnostics(run: es.SobolevSweep) -> dict:
    return {
        "N": np.asarray(run.sizes),
        "mean error at T̂": np.asarray(run.stopping_rule).mean(axis=1),
        "mean error of hold-out": np.asarray(run.holdout).mean(axis=1),
        "mean error at the oracle step": np.asarray(run.oracle).mean(axis=1),
        "mean T̂": np.asarray(run.stopping_time).mean(axis=1),
        "mean hold-out step": np.asarray(run.holdout_step).mean(axis=1),
        "mean oracle step": np.asarray(run.oracle_step).mean(axis=1),
    }


def check_rule_beats_holdout(run: es.SobolevSweep):
    """E log(error at T̂ / error of hold-out) ≤ 0, on the 95% CI of the paired mean."""
    log_ratio = np.log(np.asarray(run.stopping_rule) / np.asarray(run.holdout)).ravel()
    mean, ci = mean_ci(log_ratio)
    mean = float(mean)
    per_size = np.exp(np.log(np.asarray(run.stopping_rule) / np.asarray(run.holdout)).mean(1))
    conclusion = estimate_in(
        mean,
        ci,
        AtMost(0.0),
        num_instances=log_ratio.size,
        diagnostics={
            **_diagnostics(run),
            "geometric-mean ratio T̂/hold-out per N": per_size,
            "pooled geometric-mean ratio": math.exp(mean),
        },
        notes="Estimate: mean over all draws and N of log(‖f_T̂ − f*‖²_N / ‖f_hold-out − "
        "f*‖²_N) (paired: both methods on the same draw); 95% Student-t CI over draws. The "
        "statement (T̂ at least as accurate on average) claims ≤ 0.",
    )
    return given(conclusion, sobolev_premises(run))


def check_holdout_within_guarantee(run: es.SobolevSweep):
    """Hold-out early stopping satisfies the rule's guarantee 12C_H²ϱ̂² in every draw."""
    error, bound = np.asarray(run.holdout), np.asarray(run.guarantee)
    conclusion = compare(
        error.ravel(),
        bound.ravel(),
        relation="upper_bound",
        diagnostics={
            **_diagnostics(run),
            "largest error / (12C_H²ϱ̂²)": float(np.max(error / bound)),
        },
        notes="Sobolev kernel 1 + min(x, x'), f* = |x − 1/2| − 1/4 (C_H = √(17/16)), σ = 0.5; "
        "one instance per draw and N.",
    )
    return given(conclusion, {**sobolev_premises(run), **guarantee_is_printed(run)})


CLAIMS = (
    Claim(
        id="early_stopping.holdout.rule_beats_holdout",
        paper=f"{_PAPER}, Sec 6.2, citing Raskutti et al. 2014, Sec 4, Fig. 3",
        statement="(Setting-specific: σ = 0.5, this hold-out protocol.) On the first-order "
        "Sobolev benchmark with noise σ = 0.5, the data-dependent rule T̂ (= T̂_op for kernel "
        "GD) is at least as accurate as hold-out early stopping (80/20 split, validation every "
        "10 steps, patience 5, best checkpoint) on average: E log(error_T̂ / error_hold-out) ≤ "
        "0. The refutation is of this setting, not of the paper's hedged sentence: the sign "
        "depends on σ (T̂'s 2eσ threshold stops early, which costs most at moderate noise); "
        "a sensitivity run of the same benchmark found the comparison inconclusive at σ = 1 "
        "and σ = 2 (means 0.07 ± 0.11 and 0.02 ± 0.17) and at σ = 0.1.",
        kind="ordering",
        reading=derived(
            "the paper's sentence is hedged and rests on another paper's figure: “the optimal "
            "stopping rule proposed in the theoretical framework is expected to outperform the "
            "hold-out method, which is supported by simulations (Figure 3) in Raskutti et al. "
            "[2014]” (Sec 6.2); the project makes it a testable ordering at σ = 0.5 with its "
            "own hold-out protocol and step size (neither paper gives them)"
        ),
        uses=SOBOLEV_HOLDOUT,
        check=check_rule_beats_holdout,
        expect="refuted",
        counterexample=RULE_LOSES,
        twin="early_stopping.holdout.within_guarantee",
        min_instances=60,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="early_stopping.holdout.within_guarantee",
        paper=f"{_PAPER}, Secs 6.2, 7 (hold-out in place of T̂_op); Raskutti et al. 2014, Thm 1",
        statement="Hold-out early stopping as users run it stays within the rule's guarantee: "
        "‖f_hold-out − f*‖²_N ≤ 12C_H²ϱ̂² in every draw.",
        kind="bound",
        reading=derived(
            "the paper recommends hold-out in practice (Sec 6.2) and proves its guarantee for "
            "T̂_op; the project checks that hold-out meets the rule's guarantee 12C_H²ϱ̂² "
            "(Raskutti et al. 2014, Thm 1)"
        ),
        uses=SOBOLEV_HOLDOUT,
        check=check_holdout_within_guarantee,
        min_instances=60,
        experiment=_EXPERIMENT,
    ),
)
