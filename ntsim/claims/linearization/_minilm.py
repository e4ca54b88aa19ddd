"""Claims of the linearization paper on a real checkpoint (MiniLM + PEFT configurations).

The κ claims read :func:`ntsim.theory.linearization.minilm.simulate_minilm_kappa` with the settings
the figure ``linearization/minilm_kappa`` draws; the λ claims read
:func:`ntsim.theory.linearization.minilm.simulate_minilm_lambda` with those of
``linearization/minilm_lambda_table``.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived, figure
from ntsim.claims._decisions import AtLeast, Tolerance, compare, estimate_in
from ntsim.claims._kept_units import keeping_units
from ntsim.claims.linearization._common import PAPER
from ntsim.theory.linearization import minilm as lz

__all__ = ["CLAIMS", "MINILM_KAPPA", "MINILM_LAMBDA", "PENDING_FULL_SCALE"]

# Up to two hours per master seed at full scale on 2 CPU cores: `ntsim verify --keep-units
# DIR` keeps each finished unit at the current code, so a stopped verify resumes.
MINILM_KAPPA = Simulation(
    "linearization.minilm_kappa",
    keeping_units(lz.simulate_minilm_kappa, "linearization.minilm_kappa"),
    lz.MINILM_KAPPA_SCALES,
)
MINILM_LAMBDA = Simulation(
    "linearization.minilm_lambda",
    keeping_units(lz.simulate_minilm_lambda, "linearization.minilm_lambda"),
    lz.MINILM_LAMBDA_SCALES,
)

#: "Higher condition number → higher train loss" claims the sign of the association only.
_SIGN = Tolerance(
    "none", 0.0, "the figure's words claim the sign of the association (ρ ≥ 0), not a size"
)
_KERNEL_WORDS = {"ntk": "the NTK JJᵀ", "sign": "the sign kernel J sign(J)ᵀ"}
_REGIME_WORDS = {"adamw": "AdamW + cross-entropy (the paper's training)",
                 "gd": "full-batch GD + MSE from η = n/(2λ_max), halved where the MSE rises "
                       "(the theory's)"}  # fmt: skip


def _kappa_check(kernel: str, regime: str):
    def check(run: lz.MiniLMKappaRun):
        rho, interval, log_kappa, loss = lz.minilm_kappa_loss_correlation(run, kernel, regime)
        return estimate_in(
            rho, interval, AtLeast(0.0), num_instances=log_kappa.size, tolerance=_SIGN,
            diagnostics={"ρ": rho, "95% bootstrap CI": list(interval),
                         "log κ per (dataset, config)": np.round(log_kappa, 3),
                         "final loss per (dataset, config)": np.round(loss, 4)},
            notes=f"Spearman ρ(log κ, final training loss) over (dataset, configuration) points "
            f"(seed means), {kernel} kernel, {regime}; 95% percentile bootstrap over points.",
        )  # fmt: skip

    check.__name__ = f"check_minilm_kappa_{kernel}_{regime}"
    return check


def _kappa_claim(kernel: str, regime: str) -> Claim:
    return Claim(
        id=f"linearization.minilm_kappa.{kernel}_{regime}",
        paper=f"{PAPER}, condition-number experiment (panels a–c), on MiniLM",
        statement=f"On MiniLM fine-tuned with {_REGIME_WORDS[regime]}, across PEFT "
        f"configurations (head, LoRA q/v ranks, LoRA FFN, last block) and two datasets, a higher "
        f"κ(K + σI) of {_KERNEL_WORDS[kernel]} at θ_0 goes with a higher final training loss: "
        "Spearman ρ(log κ, loss) ≥ 0 (refuted only if the 95% interval lies below 0).",
        kind="trend",
        reading=figure(
            "“Higher condition number → Higher train loss” (condition-number "
            "experiment, panels (a)–(c))"
        ),  # fmt: skip
        uses=MINILM_KAPPA,
        check=_kappa_check(kernel, regime),
        min_instances=8,
        slow_at_quick=True,
        experiment="linearization/minilm_kappa",
    )


#: "Strictly decreasing" beyond float32 round-off: a norm of ~1e5 float32 entries carries
#: ~1e-6 relative error, so a relative decrease below 1e-5 is not resolved (the quick runs
#: decrease by 20–70% per step of the grid).
_STRICT = 1e-5


def check_distance_decreasing(run: lz.MiniLMLambdaRun):
    """‖θ_T − θ_0‖ strictly decreasing in λ, every (dataset, seed)."""
    distance = np.asarray(run.distance)  # (D, L, S), λ increasing
    relative = np.diff(distance, axis=1) / distance[:, :-1]  # must be < −_STRICT
    return compare(
        relative.max(axis=1).ravel(), -_STRICT, relation="upper_bound",
        num_instances=relative[:, 0].size,
        diagnostics={"λ": np.asarray(run.lambdas), "mean ‖θ_T − θ_0‖ per λ":
                     np.round(distance.mean(axis=(0, 2)), 4)},
        notes="largest relative change of ‖θ_T − θ_0‖ between consecutive λ, per (dataset, "
        f"seed); strictly decreasing means below −{_STRICT:g} (float32 round-off).",
    )  # fmt: skip


def check_gap_below_unregularised(run: lz.MiniLMLambdaRun):
    """The train linearisation gap at the largest λ is below the gap at λ = 0."""
    gap = np.asarray(run.gap_train)  # (D, L, S)
    return compare(
        (gap[:, -1] / gap[:, 0]).ravel(), 1.0, relation="upper_bound",
        diagnostics={"λ": np.asarray(run.lambdas),
                     "mean train gap per λ": np.round(gap.mean(axis=(0, 2)), 6)},
        notes="‖f(θ_T) − f̄(θ_T)‖ on the training sentences at the largest λ over the same at "
        "λ = 0, per (dataset, seed) (a gap identically 0 — no fine-tuning, or a linearisation "
        "that returns the model — is 0/0: an error, not a verdict).",
    )  # fmt: skip


#: The κ claims, one per kernel × regime, not registered yet: at quick scale (8 points) every
#: 95% bootstrap interval straddles 0 through the runner (seeds 0, 1: NTK/GD ρ = +0.45
#: [−0.54, 1], +0.62 [−0.22, 1]; NTK/AdamW +0.31, +0.24; sign/AdamW −0.07, −0.12; sign/GD
#: +0.60, +0.57), and a direct run with another key gave NTK/GD +0.86 [+0.32, 1] — so no
#: expected verdict can be registered from the quick scale. Their ``expect`` is set, and they join
#: ``CLAIMS``, once the full-scale run (16 points) is recorded.
PENDING_FULL_SCALE = tuple(_kappa_claim(k, r) for k in lz.MINILM_KERNELS
                           for r in lz.MINILM_REGIMES)  # fmt: skip

CLAIMS = (
    Claim(
        id="linearization.minilm_lambda.distance_decreasing",
        paper=f"{PAPER}, table 'Does the regularizer in fact make the model linear?', on MiniLM",
        statement="On MiniLM + LoRA (AdamW + cross-entropy), ‖θ_T − θ_0‖ decreases strictly "
        "along the λ grid for every dataset and seed, as both rows of the slides' table do.",
        kind="ordering",
        reading=derived(
            "the slides' distance row decreases strictly in λ on CoLA and SST-2; "
            "the project asks it of every run, not of a mean"
        ),  # fmt: skip
        uses=MINILM_LAMBDA,
        check=check_distance_decreasing,
        min_instances=2,
        slow_at_quick=True,
        experiment="linearization/minilm_lambda_table",
    ),
    Claim(
        id="linearization.minilm_lambda.gap_shrinks",
        paper=f"{PAPER}, table 'Does the regularizer in fact make the model linear?', on MiniLM",
        statement="On MiniLM + LoRA, the gap ‖f(θ_T) − f̄(θ_T)‖ on the training sentences at the "
        "largest λ is below the gap without the regulariser (λ = 0), for every dataset and seed.",
        kind="ordering",
        reading=figure(
            "“As the regularization strength increases, the model behaves more like "
            "a linear model.”"
        ),  # fmt: skip
        uses=MINILM_LAMBDA,
        check=check_gap_below_unregularised,
        min_instances=2,
        slow_at_quick=True,
        experiment="linearization/minilm_lambda_table",
    ),
)
