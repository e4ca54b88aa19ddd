"""Claims on Thm 7, the ratio of KRR risks under a kernel perturbation (Rahimi Afzal et al.
2025), and its proof step.

The random kernels are those of :mod:`._spectral` (Gram matrices of Gaussian features,
float64); the checks share its bound and equality-case helpers and add a second route to
each printed formula by numpy (eigenvalues, a Cholesky route to η).
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, printed, proof
from ntsim.claims._decisions import all_of, compare
from ntsim.claims.linearization._common import PAPER
from ntsim.claims.linearization._spectral import (
    _KERNELS_FULL,
    _SPECTRAL,
    EQUALITY_CASE,
    _log_bounds,
)
from ntsim.theory import linearization as lz

__all__ = ["CLAIMS", "THM7"]

THM7 = Simulation(
    "linearization.thm7",
    lz.simulate_thm7,
    {"quick": lz.KernelSpectraSetting(), "full": _KERNELS_FULL},
    x64=True,
    key_name="linearization.thm7.ratio_bound",
)


def _krr_risk_numpy(kernel, targets, sigma):
    """``‖σ(K + σI)^{-1}ỹ‖²`` per instance by a numpy solve (an independent route to
    :func:`~ntsim.theory.linearization.krr_train_risk`, which goes through ``eigh``)."""
    kernel, targets = np.asarray(kernel), np.asarray(targets)
    sigma = np.asarray(sigma)[:, None]
    shifted = kernel + sigma[:, :, None] * np.eye(kernel.shape[-1])
    return np.sum((sigma * np.linalg.solve(shifted, targets[..., None])[..., 0]) ** 2, axis=-1)


def _eta_numpy(kernel, extra) -> np.ndarray:
    """``η = ‖K^{-1/2}SK^{-1/2}‖`` per instance by a Cholesky route (numpy), independent of
    :func:`~ntsim.theory.linearization.perturbation_size` (``eigh`` and ``K^{-1/2}``): with
    ``K = LLᵀ``, ``L^{-1}SL^{-T}`` and ``K^{-1/2}SK^{-1/2}`` are both symmetric and similar to
    ``K^{-1}S``, so they have the same eigenvalues and the same spectral norm."""
    kernel, extra = np.asarray(kernel), np.asarray(extra)
    chol = np.linalg.cholesky(kernel)
    left = np.linalg.solve(chol, extra)  # L^{-1}S
    whitened = np.linalg.solve(chol, np.swapaxes(left, -1, -2))  # L^{-1}SL^{-T} (S = Sᵀ)
    whitened = (whitened + np.swapaxes(whitened, -1, -2)) / 2
    return np.max(np.abs(np.linalg.eigvalsh(whitened)), axis=-1)


def _thm7_numpy(kernel, extra, sigma):
    """``(λ_max(K) + σ, λ_min(K) + σ, η)`` from numpy's eigenvalues and :func:`_eta_numpy`:
    the ingredients of Thm 7's printed formulas by a route that shares no code with
    :mod:`ntsim.theory.linearization`."""
    evals = np.linalg.eigvalsh(np.asarray(kernel))
    sigma = np.asarray(sigma)
    return evals[:, -1] + sigma, np.maximum(evals[:, 0], 0) + sigma, _eta_numpy(kernel, extra)


def check_thm7(run: lz.Thm7Run):
    """κ(K + σI) ≤ c, η < 1: q/a ≤ (R(K+S)/R(K))^{1/2} ≤ aq, a = c/(1 − η)²; implementation
    anchors (derived): the ratio by a second route, q = √(lower·upper) against numpy's
    eigenvalues, a = √(upper/lower) against c/(1 − η)² from numpy's eigenvalues and a
    Cholesky route to η, and 1 ≤ q ≤ 1 + η (Weyl; Thm 6 at i = max, the proof's step)."""
    import jax

    bounds, eta = jax.vmap(lz.thm7_bounds)(run.kernel, run.extra, run.y, run.sigma)
    upper, lower = _log_bounds(bounds.lower, bounds.value, bounds.upper)
    kernel, extra = np.asarray(run.kernel), np.asarray(run.extra)
    ratio = np.sqrt(_krr_risk_numpy(kernel + extra, run.y, run.sigma)
                    / _krr_risk_numpy(kernel, run.y, run.sigma))  # fmt: skip
    second_route = compare(
        np.log(np.asarray(bounds.value)), np.log(ratio), relation="equal",
        atol=EQUALITY_CASE.value, tolerance=EQUALITY_CASE,
    )  # fmt: skip
    # q/a · aq = q²: the q the bounds were built from, whatever a is
    log_q = 0.5 * (np.log(np.asarray(bounds.lower)) + np.log(np.asarray(bounds.upper)))
    sigma = np.asarray(run.sigma)
    top = [np.linalg.eigvalsh(m)[:, -1] for m in (kernel + extra, kernel)]
    q_numpy = np.log(top[0] + sigma) - np.log(top[1] + sigma)
    eta = np.asarray(eta)
    # aq / (q/a) = a²: the a the bounds were built from, whatever q is, against the printed
    # a = c/(1 − η)² with c = κ(K + σI) and η by numpy
    log_a = 0.5 * (np.log(np.asarray(bounds.upper)) - np.log(np.asarray(bounds.lower)))
    top_np, bottom_np, eta_np = _thm7_numpy(kernel, extra, sigma)
    a_numpy = np.log(top_np) - np.log(bottom_np) - 2 * np.log1p(-eta_np)
    q_checks = (
        compare(log_q, q_numpy, relation="equal", atol=EQUALITY_CASE.value,
                tolerance=EQUALITY_CASE),
        compare(log_a, a_numpy, relation="equal", atol=EQUALITY_CASE.value,
                tolerance=EQUALITY_CASE),
        compare(log_q, np.log1p(eta), relation="upper_bound", atol=_SPECTRAL.value,
                tolerance=_SPECTRAL),
        compare(log_q, 0.0, relation="lower_bound", atol=_SPECTRAL.value, tolerance=_SPECTRAL),
    )  # fmt: skip
    return all_of(
        upper, lower, second_route, *q_checks,
        diagnostics={"max ratio/upper": float(np.max(bounds.value / bounds.upper)),
                     "min ratio/lower": float(np.min(bounds.value / bounds.lower)),
                     "η range": [float(np.min(eta)), float(np.max(eta))],
                     "q range": [float(np.exp(log_q.min())), float(np.exp(log_q.max()))],
                     "max |log a − log(c/(1 − η)²)| (numpy)": float(
                         np.max(np.abs(log_a - a_numpy))),
                     "max |log ratio − log numpy ratio|": float(
                         np.max(np.abs(np.log(np.asarray(bounds.value)) - np.log(ratio))))},
        notes="K = ΦΦᵀ + 0.05I, S = BBᵀ (rank 3) rescaled to η ~ U[0.05, 0.95], σ log-uniform "
        "on [0.01, 10], c = κ(K + σI); both bounds are loose by a = κ/(1 − η)². Anchors the "
        "loose bounds cannot give (derived, implementation checks): the ratio against a numpy "
        "solve of ‖σ(K + σI)^{-1}ỹ‖²; q = √(lower·upper) against (λ_max(K + S) + σ)/(λ_max(K) "
        "+ σ) from numpy's eigenvalues, and inside the proof's step (Thm 6 at i = max: q ≤ 1 + "
        "η) and Weyl (S ⪰ 0: q ≥ 1); a = √(upper/lower) against the printed c/(1 − η)², c = "
        "(λ_max(K) + σ)/(λ_min(K) + σ) from numpy's eigenvalues, η = ‖L^{-1}SL^{-T}‖ (K = LLᵀ, "
        "a Cholesky route).",
    )  # fmt: skip


def _thm7_step_equality_cases(kernel, norms, sigma, scales):
    """log R(θ∪θ̂)^{1/2} − log(corrected bound) where the proof's steps are exact, eigenvectors
    by numpy, ‖targets‖ = ``norms``:

    * S = 0 (η = 0), targets along K's eigenvector of λ_min (the upper bound is attained) and
      of λ_max (the lower one is);
    * S = ηK (η = ``scales``), targets along K's eigenvector of λ_max: K + S = (1 + η)K, so
      R^{1/2} = σ‖ỹ‖/((1 + η)λ_max + σ) and the lower bound σ‖ỹ‖/((1 + η)(λ_max + σ)) sits
      below it by exactly 1 + ησ/((1 + η)λ_max + σ), which is subtracted here.
    """
    import jax

    kernel = np.asarray(kernel)
    evals, vectors = np.linalg.eigh(kernel)
    eta, sigma = np.asarray(scales), np.asarray(sigma)

    def gap(extra, column, side):
        targets = vectors[:, :, column] * np.asarray(norms)[:, None]
        b = jax.vmap(lambda k, s, y, sig: lz.thm7_step_bounds(k, s, y, sig, printed=False))(
            kernel, extra, targets, sigma
        )
        return np.log(np.asarray(b.value)) - np.log(np.asarray(getattr(b, side)))

    no_extra = np.zeros_like(kernel)
    top = evals[:, -1]
    factor = np.log1p(eta * sigma / ((1 + eta) * top + sigma))
    return np.concatenate([gap(no_extra, 0, "upper"), gap(no_extra, -1, "lower"),
                           gap(eta[:, None, None] * kernel, -1, "lower") - factor])  # fmt: skip


def check_thm7_step_printed(run: lz.Thm7Run):
    """The proof's bound on R(θ∪θ̂)^{1/2} with the slide's λ_min (and with λ_max) in the last
    denominator; the corrected bounds' equality cases as an anchor.

    The proof's steps are exact at S = 0 (η = 0): R(θ)^{1/2} = ‖σ(K + σI)^{-1}ỹ‖ equals
    σ‖ỹ‖/(λ_min(K) + σ) = σ‖ỹ‖κ(K + σI)/λ_max(K + σI) when ỹ lies along K's eigenvector of
    λ_min, and σ‖ỹ‖/λ_max(K + σI) along that of λ_max (the Thm 5 equality cases). A bound
    that holds but has lost a term of κ or of λ_max(K + σI) is no longer attained there. At
    S = ηK the lower bound's 1 + η is tested too: there R^{1/2} over the lower bound is
    exactly 1 + ησ/((1 + η)λ_max(K) + σ). The upper bounds' 1 − η, which no equality case
    reaches (S ⪰ 0 gives λ_min(K + S) ≥ λ_min(K), so the bound without it still holds), is
    pinned by evaluating the printed formulas a second way (numpy, :func:`_thm7_numpy`).
    """
    import jax

    def steps(k, s, y, sig):
        return (lz.thm7_step_bounds(k, s, y, sig, printed=True),
                lz.thm7_step_bounds(k, s, y, sig, printed=False))  # fmt: skip

    step, corrected = jax.vmap(steps)(run.kernel, run.extra, run.y, run.sigma)
    upper, lower = _log_bounds(step.lower, step.value, step.upper)
    upper_corr, _ = _log_bounds(corrected.lower, corrected.value, corrected.upper)
    norms = np.linalg.norm(np.asarray(run.y), axis=1)
    scales = np.asarray(jax.vmap(lz.perturbation_size)(run.kernel, run.extra))
    equality = _thm7_step_equality_cases(run.kernel, norms, run.sigma, scales)
    attained = compare(
        equality, 0.0, relation="equal", atol=EQUALITY_CASE.value, tolerance=EQUALITY_CASE,
        num_instances=norms.shape[0],
    )  # fmt: skip
    # the printed formulas evaluated by numpy (eigenvalues, a Cholesky route to η): each side
    # of both steps, where the equality cases (η = 0 or S = ηK) do not reach the upper
    # bound's 1 − η
    top, bottom, eta = _thm7_numpy(run.kernel, run.extra, run.sigma)
    sigma_norm = np.asarray(run.sigma) * norms  # σ‖y*‖
    kappa = top / bottom  # κ(K + σI)
    formulas = np.log(np.concatenate([
        np.asarray(step.lower) * (1 + eta) * top / sigma_norm,
        np.asarray(corrected.lower) * (1 + eta) * top / sigma_norm,
        np.asarray(step.upper) * (1 - eta) * bottom / (sigma_norm * kappa),
        np.asarray(corrected.upper) * (1 - eta) * top / (sigma_norm * kappa),
    ]))  # fmt: skip
    as_printed = compare(
        formulas, 0.0, relation="equal", atol=EQUALITY_CASE.value, tolerance=EQUALITY_CASE,
        num_instances=norms.shape[0],
    )  # fmt: skip
    return all_of(
        upper, upper_corr, lower, attained, as_printed,
        diagnostics={"printed/corrected upper bound, max": float(
            np.max(step.upper / corrected.upper)),
                     "max |log R^{1/2} − log bound| in the equality cases": float(
                         np.max(np.abs(equality))),
                     "max |log bound − log formula| (numpy)": float(np.max(np.abs(formulas)))},
        notes="Same instances as thm7.ratio_bound. The slide's λ_min gives a weaker upper bound "
        "(larger by κ(K + σI)), so the printed step holds whenever the corrected one does. "
        "Last part: the corrected bounds at S = 0 with ‖ỹ‖ = ‖y*‖ along numpy's eigenvectors "
        "of K (λ_min: upper, λ_max: lower) are attained to round-off, and at S = ηK (each "
        "instance's η) with ỹ along λ_max the lower bound is off by exactly its closed factor "
        "1 + ησ/((1 + η)λ_max + σ) (so a dropped 1 + η shows). Implementation anchor: both "
        "sides of both steps against the printed formulas evaluated by numpy (eigenvalues of "
        "K, η = ‖L^{-1}SL^{-T}‖ with K = LLᵀ), which pins the upper bounds' 1 − η.",
    )  # fmt: skip


CLAIMS = (
    Claim(
        id="linearization.thm7.ratio_bound",
        paper=f"{PAPER}, Thm 7",
        statement="κ(K + σI) ≤ c, η < 1, a = c/(1 − η)²: q/a ≤ (R(K+S)/R(K))^{1/2} ≤ aq with q = "
        "λ_max(K+S+σI)/λ_max(K+σI); derived anchors: the ratio, q and a = c/(1 − η)² (c = "
        "κ(K + σI)) agree with a second route (numpy) and 1 ≤ q ≤ 1 + η (Weyl, and Thm 6 at "
        "i = max as the proof uses it).",
        kind="bound",
        reading=printed(
            "“λ_max(K + S + σI)/(aλ_max(K + σI)) ≤ (R(θ ∪ θ̂)/R(θ))^{1/2} ≤ "
            "aλ_max(K + S + σI)/λ_max(K + σI) where a = c/(1 − η)²”"
        ),  # fmt: skip
        uses=THM7,
        check=check_thm7,
        min_instances=200,
    ),
    Claim(
        id="linearization.thm7.step_printed",
        paper=f"{PAPER}, Thm 7 proof step as printed (λ_min denominator)",
        statement="σ‖y*‖/((1+η)λ_max(K+σI)) ≤ R(θ∪θ̂)^{1/2} ≤ σ‖y*‖κ/((1−η)λ_min(K+σI)), and "
        "the same with λ_max in the last denominator; that corrected pair is attained at S = 0 "
        "with y* along K's eigenvector of λ_min (upper) or λ_max (lower), and at S = ηK with y* "
        "along λ_max the lower bound is below R^{1/2} by exactly 1 + ησ/((1+η)λ_max(K)+σ) "
        "(equality cases: derived); each bound agrees with its formula evaluated a second way "
        "(numpy).",
        kind="bound",
        reading=proof(
            "“σ‖y*‖/((1 + η)λ_max(K + σI)) ≤ R(θ ∪ θ̂)^{1/2} ≤ σ‖y*‖κ(K + σI)/((1 − "
            "η)λ_min(K + σI))”"
        ),  # fmt: skip
        uses=THM7,
        check=check_thm7_step_printed,
        min_instances=200,
    ),
)
