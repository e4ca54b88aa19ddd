"""Claims on Lemma A.28 (Springer et al. 2025, App A.6): the per-mode map contracts.

One float64 run of :func:`~ntsim.theory.overtraining.simulate_contraction` (the scalar map
``f`` of the learned modes, at 0.95× the largest step the lemma's hypothesis allows, on
random ``σ^pre, σ^ft ~ U[0.05, 3]``, ``λ ~ U[0, 3]``) serves three claims:

* the contraction ``|x_k − σ*| ≤ ρ^k|x_0 − σ*|``, ``ρ = 1 − 2η min{σ^pre, σ^ft}``, toward the
  corrected fixed point ``σ*² = (σ^ft + λσ^pre)/(1 + λ)``, with the iterates between
  ``√σ^pre`` and ``√σ^ft``;
* the same toward the printed (pre/ft swapped) fixed point, refuted;
* the proof's one-step factor. The proof writes ``f(x) − σ* = (x − σ*)(1 − 2ηc(x))`` and
  bounds ``c(x) ≥ min{σ^pre, σ^ft}`` to get ``ρ``. It prints ``c(x) = x(x + (λ + 1)σ*)``;
  the algebra of ``f(x) = x − 2η[x(x² − σ^ft) + λx(x² − σ^pre)]`` gives
  ``c(x) = (1 + λ)x(x + σ*)`` (the two agree at ``λ = 0``). The claim measures
  ``1 − r_k`` with ``r_k = (x_(k+1) − σ*)/(x_k − σ*)`` on the run and holds it against
  ``(1 − ρ)·c(x_k)/min{σ^pre, σ^ft}``: an identity that pins ``ρ`` itself (a rate too slow
  or too fast changes it), where the contraction bound only sees rates that are too fast.
  Its second part is the slack this exposes: ``x_k, σ* ≥ √min`` make ``c ≥ 2(1 + λ)min``,
  so ``(1 − r_k)/(1 − ρ) ≥ 2`` — the printed rate's gap is at most half the true one.

Every check is decided only where the run meets the lemma's hypothesis
``(λ + 2)η(2max{σ^ft, σ^pre} + λ + λ√(σ^pre/σ^ft)) < 1``, measured on the recorded ``η``
(:func:`~ntsim.claims._premises.given`): a step drawn too large decides nothing. The
contraction bound's "holds" also needs the step at the hypothesis' edge (≥ 0.9 of the
limit, :func:`~ntsim.claims._design.sharply_tested`): the lemma says the hypothesis is
sufficient, which a step far below the cap hardly tests (a refutation stands at any step).
"""

from __future__ import annotations

import math

import numpy as np

from ntsim.claims._contract import Claim, Simulation, ViolationFraction, derived, printed, proof
from ntsim.claims._decisions import Tolerance, all_of, compare
from ntsim.claims._design import sharply_tested
from ntsim.claims._premises import given
from ntsim.theory import overtraining as ot

__all__ = ["CLAIMS"]

PAPER = "Springer et al. 2025"

CONTRACTION = Simulation(
    "overtraining.finetuning.contraction",
    ot.simulate_contraction,
    {"quick": ot.ContractionSetting(instances=2000, steps=400),
     "full": ot.ContractionSetting(instances=5000, steps=2000)},
    x64=True,
    key_name="overtraining.lemma_a28.contraction",
)  # fmt: skip

SCALAR_ROUND_OFF = Tolerance("round-off", 1e-13, "float64, ≤ 2000 scalar steps on O(1) values")
#: The one-step factor is read where ``|x_k − σ*| ≥ 1e-6·σ*``: ``x_(k+1)`` carries a few ulps
#: (≈ 1e-15·σ*), so ``r_k`` is exact to ≈ 1e-9, and ``1 − r_k = 2ηc ≥ 4η·min ≥ 1e-3`` here
#: (η ≥ 0.95/161.2, min ≥ 0.05) leaves a relative error ≤ 1e-6.
FACTOR_FLOOR = 1e-6
FACTOR_ROUND_OFF = Tolerance(
    "round-off", 1e-5,
    "float64: |x_k − σ*| ≥ 1e-6·σ* makes r_k exact to ≈ 1e-9 and 1 − r_k ≥ 1e-3 (η ≥ 0.95/161.2, "
    "min σ ≥ 0.05), so (1 − r_k) is exact to ≤ 1e-6 relative; 10× headroom",
)  # fmt: skip


#: How close to the hypothesis' limit the step must be for the contraction bound's "holds"
#: (chosen): ``(λ+2)η(…) ≥ 0.9`` on every instance; the run steps at 0.95 of the limit.
EDGE_OF_HYPOTHESIS = 0.9


def _hypothesis(run: ot.ContractionRun) -> dict:
    held = np.asarray(ot.contraction_condition(run.pre, run.ft, run.learning_rate, run.reg))
    return {"(λ+2)η(2max{σ^ft, σ^pre} + λ + λ√(σ^pre/σ^ft)) < 1 (Lemma A.28)": held}


def _at_the_edge(run: ot.ContractionRun) -> dict:
    """That the step sits at the edge of the hypothesis (:data:`EDGE_OF_HYPOTHESIS`): the
    bound claims that the hypothesis is *sufficient*, which a step far below the cap (no
    overshoot possible) hardly tests. The product is computed here apart from the theory's
    :func:`~ntsim.theory.overtraining.contraction_condition`."""
    pre, ft, eta, reg = (np.asarray(v) for v in (run.pre, run.ft, run.learning_rate, run.reg))
    used = (reg + 2) * eta * (2 * np.maximum(ft, pre) + reg + reg * np.sqrt(pre / ft))
    return {
        f"the step at ≥ {EDGE_OF_HYPOTHESIS} of the hypothesis' limit": used >= EDGE_OF_HYPOTHESIS
    }


def _target_and_rate(run: ot.ContractionRun, fixed_point):
    """``√(fixed_point)`` and the lemma's rate ``ρ``, per instance."""
    star = np.sqrt(np.asarray(fixed_point(run.pre, run.ft, run.reg)))
    return star, np.asarray(ot.contraction_rate(run.pre, run.ft, run.learning_rate))


def _excess(run: ot.ContractionRun, fixed_point):
    """``max_k |x_k − x*| − ρ^k|x_0 − x*|`` per instance (≤ 0 under the lemma)."""
    x = np.asarray(run.x)
    star, rate = _target_and_rate(run, fixed_point)
    k = np.arange(x.shape[0])[:, None]
    return np.max(np.abs(x - star) - rate**k * np.abs(x[0] - star), axis=0)


def check_contraction(run: ot.ContractionRun):
    """Lemma A.28 (corrected σ*): x_k between √σ^pre and √σ^ft, |x_k − σ*| ≤ ρ^k|x_0 − σ*|."""
    excess = _excess(run, ot.fixed_point)
    pre, ft, x = (np.asarray(v) for v in (run.pre, run.ft, run.x))
    lo, hi = np.sqrt(np.minimum(pre, ft)), np.sqrt(np.maximum(pre, ft))
    outside = np.max(np.maximum(lo - x, x - hi), axis=0)
    tol = dict(atol=SCALAR_ROUND_OFF.value, tolerance=SCALAR_ROUND_OFF)
    conclusion = all_of(
        compare(excess, 0.0, relation="upper_bound", **tol),
        compare(outside, 0.0, relation="upper_bound", **tol),
        diagnostics={"max excess": excess.max(), "max distance outside [√min, √max]":
                     outside.max()},
        notes="max_k |x_k − σ*| − (1 − 2η min{σ^pre, σ^ft})^k|x_0 − σ*| with σ*² = (σ^ft + "
        "λσ^pre)/(1+λ) (≤ 0) and the distance of x_k outside [√min, √max] (≤ 0); η is 0.95× "
        "the largest step the hypothesis allows.",
    )  # fmt: skip
    return sharply_tested(given(conclusion, _hypothesis(run)), _at_the_edge(run))


def check_contraction_printed(run: ot.ContractionRun):
    """Lemma A.28 as printed: contraction toward ``σ* = √((σ^pre + λσ^ft)/(1 + λ))``."""
    excess = _excess(run, ot.fixed_point_printed)
    conclusion = compare(
        excess, 0.0, relation="upper_bound", atol=SCALAR_ROUND_OFF.value,
        tolerance=SCALAR_ROUND_OFF,
        diagnostics={"max excess": excess.max(), "fraction positive": np.mean(excess > 0)},
        notes="as lemma_a28.contraction toward the printed σ*.",
    )  # fmt: skip
    return given(conclusion, _hypothesis(run))


def check_one_step_factor(run: ot.ContractionRun):
    """Proof of Lemma A.28: ``(1 − r_k)/(1 − ρ) = (1 + λ)x_k(x_k + σ*)/min{σ^pre, σ^ft} ≥ 2``."""
    pre, ft, reg = (np.asarray(v) for v in (run.pre, run.ft, run.reg))
    x = np.asarray(run.x)
    star, rate = _target_and_rate(run, ot.fixed_point)
    gap = x - star
    readable = np.abs(gap[:-1]) >= FACTOR_FLOOR * star  # (steps, instances)
    ratio = gap[1:] / np.where(readable, gap[:-1], 1.0)  # r_k
    smallest = np.minimum(pre, ft)
    measured = ((1 - ratio) / (1 - rate))[readable]
    corrected = ((1 + reg) * x[:-1] * (x[:-1] + star) / smallest)[readable]
    printed_c = (x[:-1] * (x[:-1] + (1 + reg) * star) / smallest)[readable]
    error = np.abs(measured / corrected - 1)
    conclusion = all_of(
        compare(error, FACTOR_ROUND_OFF.value, relation="upper_bound",
                tolerance=FACTOR_ROUND_OFF, num_instances=pre.size),
        compare(measured, 2.0, relation="lower_bound", rtol=FACTOR_ROUND_OFF.value,
                tolerance=FACTOR_ROUND_OFF, num_instances=pre.size),
        diagnostics={"steps read (|x_k − σ*| ≥ 1e-6σ*)": int(readable.sum()),
                     "max |measured/corrected − 1|": error.max(),
                     "max |measured/printed c − 1| (printed factorisation)":
                         np.abs(measured / printed_c - 1).max(),
                     "min (1 − r_k)/(1 − ρ)": measured.min(),
                     "median (1 − r_k)/(1 − ρ)": np.median(measured)},
        notes="part 0: (1 − r_k)/(1 − ρ), r_k = (x_(k+1) − σ*)/(x_k − σ*) measured on the run "
        "and ρ from the lemma, against (1 + λ)x_k(x_k + σ*)/min{σ^pre, σ^ft} (relative error); "
        "part 1: the same ratio ≥ 2 (the printed rate's gap is at most half the true one).",
    )  # fmt: skip
    return given(conclusion, _hypothesis(run))


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="overtraining.lemma_a28.contraction",
        paper=f"{PAPER}, Lemma A.28 (corrected σ*)",
        statement="Under (λ+2)η(2max{σ^ft, σ^pre} + λ + λ√(σ^pre/σ^ft)) < 1 the iterates stay "
        "between √σ^pre and √σ^ft and |x_k − σ*| ≤ (1 − 2η min{σ^pre, σ^ft})^k|x_0 − σ*|, "
        "σ*² = (σ^ft + λσ^pre)/(1+λ)",
        kind="bound",
        reading=derived(
            "Lemma A.28's contraction with the fixed point corrected to (σ^ft + λσ^pre)/(1+λ) "
            "(the printed lemma contracts toward the swapped one: twin below)"
        ),
        uses=CONTRACTION,
        check=check_contraction,
        min_instances=2000,
    ),
    Claim(
        id="overtraining.lemma_a28.contraction_printed",
        paper=f"{PAPER}, Lemma A.28 (as printed)",
        statement="The same contraction toward σ* = √((σ^pre + λσ^ft)/(1+λ))",
        kind="bound",
        reading=printed("Lemma A.28: contraction toward “σ* = √((σ_0² + λσ²)/(1 + λ))”"),
        uses=CONTRACTION,
        check=check_contraction_printed,
        expect="refuted",
        # Mechanism: x_k → the corrected σ* while ρ^k → 0, so the excess tends to
        # |σ*_corrected − σ*_printed| > 0 unless λ = 1 or σ^pre = σ^ft: most instances violate
        # (those with a slow contraction may not reach it within K steps); both σ* and x_k lie
        # in [√0.05, √3], so no violation exceeds √3.
        counterexample=ViolationFraction(
            between=(0.5, 1.0), min_violation=0.1, max_violation=math.sqrt(3.0)
        ),  # fmt: skip
        twin="overtraining.lemma_a28.contraction",
        min_instances=2000,
    ),
    Claim(
        id="overtraining.lemma_a28.one_step_factor",
        paper=f"{PAPER}, proof of Lemma A.28 (corrected factorisation)",
        statement="Each step multiplies x − σ* by 1 − 2η(1 + λ)x(x + σ*), so (1 − r_k)/(1 − ρ) "
        "= (1 + λ)x_k(x_k + σ*)/min{σ^pre, σ^ft} with ρ = 1 − 2η min{σ^pre, σ^ft}, and this "
        "ratio is ≥ 2",
        kind="identity",
        reading=proof(
            "“f(x) − σ* = (x − σ*)(1 − 2ηx(x + (λ + 1)σ*))” and “x(x + (λ + 1)σ*) ≥ "
            "min{σ², σ_0²}”, whence the rate 1 − 2η min{σ², σ_0²}; the factor is corrected to "
            "(1 + λ)x(x + σ*) (the printed one agrees only at λ = 0), and the factor 2 of "
            "slack is derived (x_k, σ* ≥ √min)"
        ),
        uses=CONTRACTION,
        check=check_one_step_factor,
        min_instances=2000,
    ),
)
