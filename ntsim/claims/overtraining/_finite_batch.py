"""Claims of Springer et al. 2025, App A.3: finite-batch and real-checkpoint fine-tuning.

All four read one :func:`~ntsim.theory.overtraining.simulate_finite_batch` run: three
fine-tuning dynamics (real checkpoint with minibatches, ideal checkpoint with the same
minibatches, ideal checkpoint with ``m = ∞``) stepped together, and the bounds of Lemmas
A.15–A.20 (:func:`~ntsim.theory.overtraining.lemma_a15_bound` …) evaluated with the
quantities their proofs use, measured on the run (``ε``, ``exp(−Cτ)``, ``Γ``).

The hypotheses (A.8 ``4η(λ + 2)Γ < 1``; ``ε < 1/(4(1 + 32ηΓ)^K)``) are met by
``η = 1/(320Γ)``, ``K`` ≤ 20 steps and large batches; the diagnostics report how often the
``ε`` condition held, and the bounds are checked on every instance (where it fails, that is
more than the lemmas claim). Every dynamics claim has one premise: the real checkpoint
the lemmas start from is the pretrained network itself, re-based by the hidden-unit rotation
``Q`` of the Procrustes fit (``W1Q, QᵀW2`` computes ``W1W2``, to round-off); a wrong
rotation would start the "real" dynamics from another network, which the loose bounds alone
do not notice. Lemma A.22 is not checked: Assumption A.21(4) asks
``m ≳ (1 + 32ηΓ)^{2K}d/ε²`` with ``ε < min_n|σ^pre_n − σ^ft_n|²/(4000dΓ²)``, i.e.
``m ≳ 10¹¹`` at ``d = 4``; its conclusion follows from A.20 and the fixed point
(``overtraining.lemma_a11.fixed_point``).
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived, printed, proof
from ntsim.claims._decisions import Tolerance, all_of, compare
from ntsim.claims._premises import given
from ntsim.theory import overtraining as ot

__all__ = ["CLAIMS"]

PAPER = "Springer et al. 2025"

RUNS = Simulation(
    "overtraining.finite_batch.three_dynamics",
    ot.simulate_finite_batch,
    {"quick": ot.FiniteBatchSetting(d=3, instances=32, tau=(12.0, 13.0), points=160,
                                    batch=4000, steps=10),
     "full": ot.FiniteBatchSetting(d=4, instances=200, tau=(15.0, 16.0), points=240,
                                   batch=16_000, steps=20)},
    x64=True,
    key_name="overtraining.lemma_a20.finite_batch_runs",
)  # fmt: skip


def _context(run: ot.FiniteBatchRun):
    steps = run.batch_error.shape[1]
    eta, gamma = np.asarray(run.eta)[:, None], np.asarray(run.gamma)[:, None]
    eps = np.maximum.accumulate(np.asarray(run.batch_error), axis=1)  # the event up to step k
    hypothesis = eps[:, -1] < 1 / (4 * (1 + 32 * eta[:, 0] * gamma[:, 0]) ** steps)
    return eta, gamma, eps, np.arange(1, steps + 1)[None, :], hypothesis


def _diagnostics(run, hypothesis, ratio):
    return {
        "max ratio to the bound": ratio.max(),
        "median over instances of the max ratio": np.median(ratio.max(axis=1)),
        "fraction meeting ε < 1/(4(1 + 32ηΓ)^K)": hypothesis.mean(),
        "checkpoint gap exp(−Cτ) range": [float(np.min(run.gap0)), float(np.max(run.gap0))],
    }


#: The re-based real checkpoint ``(W1Q, QᵀW2)`` against ``(W1, W2)``, end to end.
REBASE = Tolerance(
    "round-off", 1e-9,
    "‖W1Q·QᵀW2 − W1W2‖_op/‖W1W2‖_op for an orthogonal Q from a float64 SVD of a d ≤ 4 "
    "matrix: ~1e-15",
)  # fmt: skip


def _same_network(run: ot.FiniteBatchRun) -> dict:
    """The premise every dynamics claim reads: the real checkpoint the lemmas start from is
    the pretraining checkpoint, re-based by the hidden-unit rotation ``Q`` of the Procrustes
    fit (``W1Q, QᵀW2``), which leaves the network ``W1W2`` unchanged."""
    error = np.asarray(run.rebase_error)
    return {"the re-based real checkpoint computes W1W2 (to round-off)": error <= REBASE.value}


def _bounded(run, measured, bound, hypothesis):
    measured, bound = np.asarray(measured), np.asarray(bound)
    ratio = measured / bound
    return given(compare(
        ratio.max(axis=1), 1.0,
        relation="upper_bound", num_instances=ratio.shape[0],
        diagnostics=_diagnostics(run, hypothesis, ratio),
        notes="max over steps k of the operator-norm gap over its bound, per instance (≤ 1).",
    ), _same_network(run))  # fmt: skip


def check_one_step(run: ot.FiniteBatchRun):
    """Lemma A.15: one step from the same ``W``, finite vs infinite batch, ≤ 32ηε_kΓ^{3/2}."""
    eta, gamma, _, _, hypothesis = _context(run)
    bound = ot.lemma_a15_bound(eta, gamma, np.asarray(run.batch_error))
    return _bounded(run, run.one_step, bound, hypothesis)


def check_finite_vs_infinite(run: ot.FiniteBatchRun):
    """Lemma A.17: ``‖Ŵ(k) − W̄(k)‖_op ≤ ((1 + 16ηΓ)^k − 1)·2εΓ^{1/2}`` (ideal init)."""
    eta, gamma, eps, k, hypothesis = _context(run)
    return _bounded(run, run.finite_vs_infinite, ot.lemma_a17_bound(eta, gamma, eps, k), hypothesis)


def check_real_vs_ideal(run: ot.FiniteBatchRun):
    """Lemma A.19: ``‖W^n(k) − W̄^n(k)‖_op ≤ (1 + 32ηΓ)^k·‖W^n(0) − W̄^n(0)‖_op``."""
    eta, gamma, _, k, hypothesis = _context(run)
    gap0 = np.asarray(run.gap0)[:, None]
    return _bounded(run, run.real_vs_ideal, ot.lemma_a19_bound(eta, gamma, gap0, k), hypothesis)


def check_three_dynamics(run: ot.FiniteBatchRun):
    """Lemma A.20: real finite-batch vs ideal infinite-batch, and all stay well-conditioned."""
    eta, gamma, eps, k, hypothesis = _context(run)
    gap0 = np.asarray(run.gap0)[:, None]
    bound = ot.lemma_a20_bound(eta, gamma, gap0, eps, k)
    conditioning = np.asarray(run.max_norm).max(axis=1) / (2 * np.sqrt(gamma[:, 0]))
    return all_of(
        _bounded(run, run.real_vs_infinite, bound, hypothesis),
        compare(conditioning, 1.0, relation="upper_bound"),
        diagnostics={"max ‖W‖_op/(2√Γ)": conditioning.max()},
        notes="the A.20 gap over its bound (≤ 1), and max_k ‖W‖_op/(2√Γ) of all three dynamics "
        "('well-conditioned', ≤ 1).",
    )


def _from_zero(gaps, start):
    """Prepend the gap at ``k = 0`` to a per-step ``(instances, K)`` record."""
    return np.concatenate([np.asarray(start)[:, None], np.asarray(gaps)], axis=1)


def check_per_step_growth(run: ot.FiniteBatchRun):
    """Lemma A.16: one ``m = ∞`` step from ``W̄(k)`` and ``Ŵ(k)`` grows their gap by at most
    ``1 + 16ηΓ``; Lemma A.18: one step on a shared minibatch grows the real-vs-ideal gap by at
    most ``1 + 32ηΓ``. Both on every measured step (A.16 from the second step on, where the
    two ideal-init dynamics first differ)."""
    eta, gamma, _, _, hypothesis = _context(run)
    before_a16 = np.asarray(run.finite_vs_infinite)[:, :-1]  # ε_k at k = 1..K−1
    after_a16 = np.asarray(run.infinite_step)[:, 1:]
    moved = before_a16 > 0
    a16_ratio = np.where(moved, after_a16 / np.where(moved, before_a16, 1.0), 0.0) / np.asarray(
        ot.lemma_a16_growth(eta, gamma)
    )
    real = _from_zero(run.real_vs_ideal, run.gap0)
    a18_ratio = real[:, 1:] / (np.asarray(ot.lemma_a18_growth(eta, gamma)) * real[:, :-1])
    return given(
        all_of(
            compare(a16_ratio.max(axis=1), 1.0, relation="upper_bound"),
            compare(a18_ratio.max(axis=1), 1.0, relation="upper_bound"),
            diagnostics={
                "max one-step growth/(1 + 16ηΓ), m = ∞ (A.16)": a16_ratio.max(),
                "max one-step growth/(1 + 32ηΓ), real vs ideal (A.18)": a18_ratio.max(),
                "fraction meeting ε < 1/(4(1 + 32ηΓ)^K)": hypothesis.mean(),
            },
            notes="part 0: A.16, ‖step(W̄(k)) − step(Ŵ(k))‖/‖W̄(k) − Ŵ(k)‖ (m = ∞ steps) over "
            "1 + 16ηΓ; part 1: A.18, the real-vs-ideal gap's one-step growth over 1 + 32ηΓ; the "
            "worst step per instance (≤ 1). λ = 0, so the shared-anchor condition of both lemmas "
            "is empty.",
        ),
        _same_network(run),
    )


PROOF_ALGEBRA = Tolerance("round-off", 1e-10, "float64 sums of ≤ 20 positive terms: ~1e-15")


def check_proof_algebra(run: ot.FiniteBatchRun):
    """The closed forms against the recursions they solve, unrolled step by step from the
    one-step lemmas: A.17 (proof form) from A.15 + A.16 started at 0, A.19 from A.18 started
    at the checkpoint gap, and A.20 = A.19 + the printed A.17 ``2(1 + 16ηΓ)^k ϵΓ^{1/2}``."""
    eta, gamma, eps, k, _ = _context(run)
    eps = eps[:, -1:]  # one ϵ for all steps, as the closed forms take it
    gap0 = np.asarray(run.gap0)[:, None]
    grow16, grow32 = (
        np.asarray(ot.lemma_a16_growth(eta, gamma)),
        np.asarray(ot.lemma_a18_growth(eta, gamma)),
    )
    one_step = np.asarray(ot.lemma_a15_bound(eta, gamma, eps))
    a17_unrolled, a19_unrolled = [np.zeros_like(gap0)], [gap0]
    for _ in range(k.shape[1]):
        a17_unrolled.append(grow16 * a17_unrolled[-1] + one_step)
        a19_unrolled.append(grow32 * a19_unrolled[-1])
    a17_unrolled = np.concatenate(a17_unrolled[1:], axis=1)
    a19_unrolled = np.concatenate(a19_unrolled[1:], axis=1)
    a17_printed = a17_unrolled + 2 * eps * np.sqrt(gamma)
    routes = [
        (np.asarray(ot.lemma_a17_bound(eta, gamma, eps, k)), a17_unrolled),
        (np.asarray(ot.lemma_a19_bound(eta, gamma, gap0, k)), a19_unrolled),
        (np.asarray(ot.lemma_a20_bound(eta, gamma, gap0, eps, k)), a19_unrolled + a17_printed),
    ]
    tol = dict(rtol=PROOF_ALGEBRA.value, tolerance=PROOF_ALGEBRA)
    return all_of(
        *(
            compare(closed, unrolled, relation="equal", num_instances=closed.shape[0], **tol)
            for closed, unrolled in routes
        ),
        diagnostics={
            f"max relative gap, {name}": float(np.max(np.abs(c / u - 1)))
            for name, (c, u) in zip(("A.17", "A.19", "A.20"), routes, strict=True)
        },
        notes="parts 0–2: the A.17, A.19 and A.20 closed forms against the unrolled one-step "
        "recursions (relative round-off).",
    )


_PRINTED_NOTE = "; ε, exp(−Cτ) and Γ as the proof uses them, measured on the run"

CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="overtraining.lemma_a15.one_step_batch_gap",
        paper=f"{PAPER}, Lemma A.15 (App A.3)",
        statement="At λ = 0, one fine-tuning step from the same W with a minibatch vs m = ∞ "
        "differs by ≤ 32ηεΓ^(3/2) in operator norm",
        kind="bound",
        reading=printed("Lemma A.15: “‖Ŵ1(k+1) − W̄1(k+1)‖_op ≤ 32ηϵΓ^(3/2)”" + _PRINTED_NOTE),
        uses=RUNS,
        check=check_one_step,
        min_instances=32,
    ),
    Claim(
        id="overtraining.lemma_a17.finite_vs_infinite_batch",
        paper=f"{PAPER}, Lemma A.17 (App A.3)",
        statement="At λ = 0, from the ideal checkpoint, minibatch and m = ∞ fine-tuning stay "
        "within ((1 + 16ηΓ)^k − 1)·2εΓ^(1/2) (tighter than the printed 2(1 + 16ηΓ)^k εΓ^(1/2))",
        kind="bound",
        reading=derived(
            "Lemma A.17 prints “ε_k ≤ 2(1 + 16ηΓ)^k ϵΓ^(1/2)”; the project checks the proof's "
            "recursion, which starts at 0 and is smaller by 2ϵΓ^(1/2)" + _PRINTED_NOTE
        ),
        uses=RUNS,
        check=check_finite_vs_infinite,
        min_instances=32,
    ),
    Claim(
        id="overtraining.lemma_a19.real_vs_ideal_growth",
        paper=f"{PAPER}, Lemma A.19 (App A.3)",
        statement="At λ = 0, fine-tuning from the real and the ideal checkpoint on the same "
        "batches: the gap grows at most like (1 + 32ηΓ)^k times the checkpoint gap",
        kind="bound",
        reading=printed(
            "Lemma A.19: “‖W1^n(k) − W̄1^n(k)‖_op ≤ (1 + 32ηΓ)^k …” times the checkpoint gap"
            + _PRINTED_NOTE
        ),
        uses=RUNS,
        check=check_real_vs_ideal,
        min_instances=32,
    ),
    Claim(
        id="overtraining.lemma_a20.three_dynamics",
        paper=f"{PAPER}, Lemma A.20 (App A.3)",
        statement="At λ = 0, real minibatch vs ideal m = ∞ fine-tuning: ≤ (1 + 32ηΓ)^k e^(−Cτ) + "
        "2(1 + 16ηΓ)^k Γ^(1/2)ε, all dynamics well-conditioned (‖W‖_op ≤ 2√Γ)",
        kind="bound",
        reading=printed(
            "Lemma A.20: “‖W1^n(k) − Ŵ1^n(k)‖_op ≤ (1 + 32ηΓ)^k e^(−Cτ) + 2(1 + 16ηΓ)^k "
            "Γ^(1/2)ϵ”, both well-conditioned" + _PRINTED_NOTE
        ),
        uses=RUNS,
        check=check_three_dynamics,
        min_instances=32,
    ),
    Claim(
        id="overtraining.lemma_a16_a18.per_step_growth",
        paper=f"{PAPER}, Lemmas A.16 and A.18 (App A.3)",
        statement="At λ = 0, one m = ∞ step grows the gap of two ideal-init dynamics by at most "
        "1 + 16ηΓ, and one step on a shared minibatch grows the real-vs-ideal gap by at most "
        "1 + 32ηΓ",
        kind="bound",
        reading=printed(
            "Lemma A.16: “ϵ_{k+1} ≤ (1 + 16ηΓ)ϵ_k” (m = ∞); Lemma A.18: “ϵ_{k+1} ≤ "
            "(1 + 32ηΓ)ϵ_k” (finite batch), each applied to the measured step" + _PRINTED_NOTE
        ),
        uses=RUNS,
        check=check_per_step_growth,
        min_instances=32,
    ),
    Claim(
        id="overtraining.lemma_a20.proof_algebra",
        paper=f"{PAPER}, Lemmas A.17, A.19, A.20 (App A.3)",
        statement="The closed-form bounds of Lemmas A.17, A.19 and A.20 are the one-step "
        "recursions of Lemmas A.15, A.16 and A.18 unrolled (A.20 = A.19 + the printed A.17)",
        kind="identity",
        reading=proof(
            "the inductions in the proofs of Lemmas A.17 and A.19 and “a direct consequence "
            "of Lemmas A.17, A.19 and A.14” for A.20, with ε, Γ, η and the checkpoint gap of "
            "the run; it checks the closed forms' algebra, not the dynamics"
        ),
        uses=RUNS,
        check=check_proof_algebra,
        min_instances=32,
    ),
)
