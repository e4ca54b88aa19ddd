"""Claims of Fu, So & Collier 2023 about the lemmas behind Thm 2.2 (App. A.1, A.5), v2.

Lemma A.1.1 (GD contracts on a strongly convex quadratic), A.1.2 (non-expansive steps),
A.1.3 (‖∇f‖² ≤ 2βf) and A.5.1 (the descent lemma, its equality case and its step-size
condition), on the quadratic model of :mod:`._full_finetuning` and on the logistic loss. The
simulations are ``simulate_contraction``, ``simulate_pointwise_lemma``,
``simulate_quadratic_divergence`` (:mod:`ntsim.theory.stability`) and
:func:`ntsim.theory.stability.descent_attained.simulate_descent_attained` (float64).
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived, printed
from ntsim.claims._decisions import Tolerance, all_of, compare
from ntsim.claims.stability._full_finetuning import _STEPS, ROUND_OFF, _claim
from ntsim.theory import stability as ff
from ntsim.theory.stability import descent_attained as da

__all__ = ["CLAIMS"]

CONTRACTION = Simulation(
    "stability.lemma_a1_1.contraction", ff.simulate_contraction,
    {"quick": ff.ContractionSetting(instances=200, num_steps=_STEPS["quick"] // 3),
     "full": ff.ContractionSetting(instances=1000, num_steps=_STEPS["full"] // 3)},
    x64=True, key_name="stability.lemma_a1_1.quadratic",
)  # fmt: skip
DIVERGENCE = Simulation(
    "stability.lemma_a5_1.divergence", ff.simulate_quadratic_divergence,
    {"quick": ff.DivergenceSetting(instances=200), "full": ff.DivergenceSetting(instances=1000)},
    x64=True, key_name="stability.lemma_a5_1.step_size",
)  # fmt: skip


def _pointwise(lemma: str, family: str) -> Simulation:
    return Simulation(
        f"stability.lemma_{lemma}.{family}_draws", ff.simulate_pointwise_lemma,
        {"quick": ff.PointwiseLemmaSetting(lemma, family, instances=200),
         "full": ff.PointwiseLemmaSetting(lemma, family, instances=1000)},
        x64=True, key_name=f"stability.lemma_{lemma}.{family}",
    )  # fmt: skip


# ---------------------------------------------------------------------------- lemmas


_SLOW_MODE = Tolerance(
    "round-off",
    1e-10,
    "absolute, R = 1: each of ≤ 200 GD steps on d = 5 adds ~1e-15 relative error to "
    "w_t − w_*, and the other eigendirections contract at least as fast: ≤ 1e-12, 100x",
)


def check_lemma_a1_1(run: ff.ContractionRun):
    """Lemma A.1.1 on random starts, and its anchor: started along the slowest eigenvector of
    the mean Hessian, ``‖w_t − w_*‖ = (1 − ημ)^t R`` exactly, the square of the lemma's
    ``(1 − ημ)^{t/2}R`` (R = 1). The bound alone is loose (quadratics contract at the square
    of its rate) and equal at t = 0, so on its own it cannot see a wrong rate."""
    gap = np.asarray(run.gap)
    bound = compare(gap, 0.0, relation="upper_bound", atol=ROUND_OFF.value, tolerance=ROUND_OFF,
                    diagnostics={"worst relative excess": float(gap.max())},
                    notes="GD on the mean quadratic, η = frac/β; measured = max_t (‖w_t − w_*‖ − "
                    "bound_t)/bound_t (quadratics contract by (1 − ημ)^t, the lemma's square "
                    "root).")  # fmt: skip
    slow = compare(np.asarray(run.slow_bound) ** 2, np.asarray(run.slow_error), relation="equal",
                   atol=_SLOW_MODE.value, tolerance=_SLOW_MODE,
                   num_instances=gap.shape[0])  # fmt: skip
    return all_of(bound, slow, notes="bound on random starts; along the slowest eigenvector the "
                  "squared bound (1 − ημ)^t equals the measured ‖w_t − w_*‖/R.")  # fmt: skip


def check_pointwise(run: ff.PointwiseLemmaRun):
    gap = (np.asarray(run.lhs) - np.asarray(run.rhs)) / np.asarray(run.scale)
    return compare(gap, 0.0, relation="upper_bound", atol=ROUND_OFF.value, tolerance=ROUND_OFF,
                   diagnostics={"worst (lhs − rhs)/scale": float(gap.max()),
                                "median slack": float(np.median(-gap))})  # fmt: skip


def check_descent_attained(run: da.DescentAttainedRun):
    """Lemma A.5.1's two sides on ``f = (β/2)‖w − w_*‖² + c`` against their closed forms
    ``c + (β/2)(1 − ηβ)²r²`` and ``c + (β/2)(1 − ηβ)r²`` (written here), and equal at
    ``η = 1/β`` (relative to ``c + (β/2)r²``)."""
    lhs, rhs, beta, step, distance, offset = (np.asarray(v) for v in run)
    curvature = beta / 2 * distance**2
    scale = offset + curvature
    shrink = 1 - step * beta
    largest = np.isclose(step * beta, 1.0, rtol=0, atol=1e-12)
    if not largest.any() or largest.all():
        raise ValueError("the run needs losses at η = 1/β and below it")
    return all_of(
        compare((lhs - offset - curvature * shrink**2) / scale, 0.0, relation="equal",
                atol=ROUND_OFF.value, tolerance=ROUND_OFF),
        compare((rhs - offset - curvature * shrink) / scale, 0.0, relation="equal",
                atol=ROUND_OFF.value, tolerance=ROUND_OFF),
        compare(((rhs - lhs) / scale)[largest], 0.0, relation="equal", atol=ROUND_OFF.value,
                tolerance=ROUND_OFF),
        diagnostics={"instances at η = 1/β": int(largest.sum()),
                     "worst |rhs − lhs|/scale there": float(np.abs((rhs - lhs) / scale)[
                         largest].max()),
                     "median (rhs − lhs)/scale below it": float(np.median(((rhs - lhs) / scale)[
                         ~largest]))},
        notes="isotropic quadratics, β log-uniform on [0.1, 10], c ~ Exp(1); half at η = 1/β, "
        "where the lemma holds with equality (so its factor 1/2 cannot be raised).",
    )  # fmt: skip


def check_step_size_condition(run: ff.DivergenceRun):
    growth = np.asarray(run.log_growth)
    return compare(
        growth, 0.0, relation="lower_bound",
        diagnostics={"min log growth": float(growth.min()),
                     "median log growth": float(np.median(growth))},
        notes="η = 2.2/β_F on the mean quadratic: |1 − ηβ_F| = 1.2 along the top eigenvector, "
        "so any initial error with a component along it grows (cannot fail for a random "
        "direction). Complements Lemma A.5.1: its step-size condition is needed.",
    )  # fmt: skip


DESCENT_ATTAINED = Simulation(
    "stability.lemma_a5_1.attained", da.simulate_descent_attained,
    {"quick": da.DescentAttainedSetting(instances=200),
     "full": da.DescentAttainedSetting(instances=1000)},
    x64=True,
)  # fmt: skip


def _lemma(lemma, family, statement, text):
    name = f"Lemma A.{lemma[1]}.{lemma[3]}"
    return _claim(f"lemma_{lemma}.{family}", name, statement, "bound", printed(text),
                  _pointwise(lemma, family), check_pointwise)  # fmt: skip


CLAIMS: tuple[Claim, ...] = (
    _claim("lemma_a1_1.quadratic", "Lemma A.1.1", "GD with 0 < η ≤ 1/β on a μ-strongly convex "
           "β-smooth quadratic: ‖w_t − w_*‖² ≤ (1 − ημ)^t‖w_0 − w_*‖²", "bound",
           printed("‖w_t − w_*‖² ≤ (1 − ημ)^t ‖w_0 − w_*‖² (Lemma A.1.1)"), CONTRACTION,
           check_lemma_a1_1),
    _lemma("a1_2", "quadratic", "GD steps on a convex β-smooth quadratic are non-expansive for "
           "0 < η ≤ 2/β", "GD steps are non-expansive for η ≤ 2/β (Lemma A.1.2)"),
    _lemma("a1_2", "logistic", "GD steps on the logistic loss (β = ‖x‖²/4) are non-expansive "
           "for 0 < η ≤ 2/β", "GD steps are non-expansive for η ≤ 2/β (Lemma A.1.2)"),
    _lemma("a1_3", "quadratic", "‖∇f‖² ≤ 2βf for non-negative quadratics",
           "‖∇f(w)‖² ≤ 2βf(w) for non-negative β-smooth f (Lemma A.1.3)"),
    _lemma("a1_3", "logistic", "‖∇f‖² ≤ 2βf for the logistic loss, β = ‖x‖²/4",
           "‖∇f(w)‖² ≤ 2βf(w) for non-negative β-smooth f (Lemma A.1.3)"),
    _lemma("a5_1", "quadratic", "f(w − η∇f) ≤ f(w) − (η/2)‖∇f‖² for quadratics, 0 < η ≤ 1/β",
           "f(w − η∇f(w)) ≤ f(w) − (η/2)‖∇f(w)‖² for η < 1/β (Lemma A.5.1)"),
    _lemma("a5_1", "logistic", "f(w − η∇f) ≤ f(w) − (η/2)‖∇f‖² for the mean logistic loss, "
           "β = σ_max(X)²/(4n), 0 < η ≤ 1/β",
           "f(w − η∇f(w)) ≤ f(w) − (η/2)‖∇f(w)‖² for η < 1/β (Lemma A.5.1)"),
    _claim("lemma_a5_1.attained", "Lemma A.5.1", "on f = (β/2)‖w − w_*‖² + c both sides of "
           "f(w − η∇f) ≤ f(w) − (η/2)‖∇f‖² equal their closed forms c + (β/2)(1 − ηβ)²r² and "
           "c + (β/2)(1 − ηβ)r², and they are equal at η = 1/β: the lemma is attained there",
           "identity",
           derived("the equality case of the descent lemma (the project's derivation): at the "
                   "largest step it allows, the bound cannot be tightened"),
           DESCENT_ATTAINED, check_descent_attained),
    _claim("lemma_a5_1.step_size", "Lemma A.5.1; Sec 2.3 discussion", "η = 2.2/β_F > 2/β_F: GD "
           "on the mean quadratic diverges (‖w_T − w_*‖ grows) on every instance (a sanity "
           "check: |1 − ηβ_F| > 1 along the top eigenvector)", "sanity",
           derived("the converse of the descent lemma's step-size condition, which the paper "
                   "uses (Sec 2.3) but does not state"), DIVERGENCE, check_step_size_condition),
)  # fmt: skip
