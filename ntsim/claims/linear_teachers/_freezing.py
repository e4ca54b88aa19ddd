"""Claims of Shachaf et al. 2021 on freezing the first layer: Thm 5.5 and Figure 3.

Thm 5.5 claims read :func:`~ntsim.theory.linear_teachers.simulate_frozen_first_layer`
(layer-wise GD on ``W_2..W_L`` with ``W_1`` frozen at the exactly 0-balanced rank-one
construction). The Fig 3 claims read :func:`~ntsim.theory.linear_teachers.simulate_freezing`,
the function the experiment ``linear_teachers/fig3_freezing`` calls (there with GD
training; here the limits the three trained models converge to, over many draws).
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, Simulation, derived, figure, printed
from ntsim.claims._decisions import AtLeast, Tolerance, all_of, compare, estimate_in
from ntsim.claims._premises import given
from ntsim.theory import linear_teachers as lt

__all__ = ["CLAIMS", "FIG3", "FROZEN_FIRST_LAYER"]

_PAPER = "Shachaf et al. 2021"
_EXPERIMENT = "linear_teachers/fig3_freezing"

FROZEN_FIRST_LAYER = Simulation(
    "linear_teachers.thm5_5.frozen_first_layer",
    lt.simulate_frozen_first_layer,
    {
        "quick": lt.FrozenFirstLayerSetting(d=12, n_values=(3, 11), draws=10, steps=3000),
        "full": lt.FrozenFirstLayerSetting(d=20, n_values=(2, 5, 10, 15, 19), draws=40, steps=6000),
    },  # fmt: skip
    x64=True,
)

FIG3 = Simulation(
    "linear_teachers.fig3.freezing",
    lt.simulate_freezing,
    {
        # n ≥ 5 so the frozen-risk ratio 1 + F(1, n)/n has a finite variance; 800 draws so
        # that quick sees what full sees: a frozen risk off by floor/(2(n − 2)) (R =
        # (θ_T − β)ᵀ(θ_T − β) with β halved in one factor) is |z| ≈ 3.3 at n = 10 with 200 draws,
        # under the 4-s.e. threshold, and 4.2–8.8 with 800 (seeds 0–3; the genuine |z| ≤ 1.9)
        "quick": lt.FreezingSetting(d=40, n_values=(5, 10, 20, 35, 39), draws=800),
        "full": lt.FreezingSetting(d=100, n_values=(5, 10, 20, 40, 60, 80, 95, 99), draws=400),
    },
    x64=True,
)

# β(t) = W_1·(W_2⋯W_L) with W_1 = sθ̂_S v_1ᵀ is a multiple of θ̂_S to round-off (the product of
# a rank-one matrix with anything): 1 − |cos| ~ eps = 2e-16 per step.
_TOL_COS = Tolerance("round-off", 1e-12, "1 − |cos(β, θ_S)| of a float64 rank-one product")
_TOL_C = Tolerance(
    "chosen", 1e-5, "|c − c*|/|c*| after finitely many GD steps on what is a scalar "
    "least-squares problem: the contraction is geometric but slow when c* is small",
    observed="quick scale, 3000 steps, seeds 0–5: max 7.3e-7 (seed 4; the others ≤ 1e-14); "
    "with 1000 steps seed 0 gave 3.2e-6, so the v1 tolerance 1e-8 held only by the draw",
)  # fmt: skip
# Mean of a per-draw quantity over draws: decided on mean ± 3 s.e. (CLT; ~99.7%).
_Z_CI = 3.0
_Z_IDENTITY = Tolerance(
    "monte-carlo", 4.0, "|mean − exact expectation| within 4 standard errors of the mean over "
    "draws (two-sided p ≈ 6e-5 per n)"
)  # fmt: skip


def check_frozen_parallel(run: lt.FrozenFirstLayerRun):
    """W_1 frozen: β(t) ∥ θ_S along GD (|cos| = 1) and c → c* = ⟨Xθ_S, y⟩/‖Xθ_S‖² (c* > 0)."""
    if np.any(run.nonfinite):
        raise FloatingPointError("simulate_frozen_first_layer: GD diverged.")
    c_gd, c_star = np.asarray(run.c_gd), np.asarray(run.c_star)
    pos = c_star > 0
    rel = np.abs(c_gd - c_star) / np.abs(c_star)
    parts = [
        compare(run.off_parallel, _TOL_COS.value, relation="upper_bound", tolerance=_TOL_COS),
        compare(rel[pos], _TOL_C.value, relation="upper_bound", tolerance=_TOL_C,
                num_instances=c_gd.size),
    ]  # fmt: skip
    if (~pos).any():  # the balanced rank-one chain cannot carry c through 0: it stalls there
        stall = np.abs(c_gd[~pos]) / np.abs(c_star[~pos])
        parts.append(compare(stall, _TOL_C.value, relation="upper_bound", tolerance=_TOL_C))
    return all_of(
        *parts,
        diagnostics={
            "max_t (1 − |cos(β(t), θ_S)|)": run.off_parallel.max(),
            "max |c − c*|/|c*| (c* > 0)": rel[pos].max() if pos.any() else 0.0,
            "runs with c* ≤ 0": int((~pos).sum()),
            "max |c|/|c*| (c* ≤ 0)": stall.max() if (~pos).any() else 0.0,
        },
        notes="For c* ≤ 0 (small n) the free layers form a balanced rank-one chain whose "
        "scalar c cannot change sign under the flow (W_jᵀW_j − W_{j+1}W_{j+1}ᵀ is conserved), "
        "so GD stalls at c ≈ 0 instead of c*: such runs must end with |c| ≤ 1e-5·|c*| (the "
        "tolerance of the c* > 0 runs). Discrete steps may carry c a round-off-sized step "
        "past 0 (full scale, seed 1: c = −1.6e-8 against c* = −3.2), so c ≥ 0 is not required.",
    )


def check_frozen_floor(run: lt.FrozenFirstLayerRun):
    """Frozen-W_1 GD risk ≥ min_c R(cθ_S): holds for any β ∥ θ_S (sanity)."""
    floor = np.asarray(run.floor)
    tol = Tolerance("round-off", 1e-12, "relative to the largest floor; float64")
    return compare(
        run.risk, floor, relation="lower_bound", atol=1e-12 * floor.max(), tolerance=tol,
        diagnostics={"min (risk − floor)": np.min(run.risk - floor), "mean floor": floor.mean()},
        notes="β ∥ θ_S (claim thm5_5.frozen_parallel) makes this true by the definition of the "
        "floor: a plumbing check, not evidence.",
    )  # fmt: skip


def _mean_ci(values: np.ndarray) -> tuple[float, tuple[float, float], float]:
    mean = float(values.mean())
    se = float(values.std(ddof=1) / np.sqrt(values.size))
    return mean, (mean - _Z_CI * se, mean + _Z_CI * se), se


#: The statement's tasks: θ_T = θ_S + 0.5ξ/√d with ‖θ_S‖ = 1, so E‖θ_T‖² = 1 + 0.5² = 1.25.
_FIG3_NOISE = 0.5
_TOL_NOISE = Tolerance(
    "monte-carlo", 0.05, "|mean ‖θ_T‖² − (1 + s²)| over the draws: the drawn tasks are the "
    "statement's (s = 0.5); per-draw sd = √((4s² + 2s⁴)/d), 0.168 at quick (d = 40, 800 "
    "draws: s.e. 0.0059, so 0.05 is 8.4 s.e.) and 0.106 at full (d = 100, 400 draws: s.e. "
    "0.0053, 9.4 s.e.), while s = 1 gives a mean of 2.0",
)  # fmt: skip


def _statement_noise(run: lt.FreezingRun) -> dict:
    """Fig 3's premise: the drawn tasks have the statement's noise (module constant)."""
    mean = float(np.mean(run.target_norm_sq))
    return {f"mean ‖θ_T‖² = 1 + {_FIG3_NOISE:g}² ± {_TOL_NOISE.value:g} (drawn: {mean:.4f})":
            np.asarray(abs(mean - (1 + _FIG3_NOISE**2)) <= _TOL_NOISE.value)}  # fmt: skip


def check_fig3_ordering(run: lt.FreezingRun):
    """Per n: E R_Vanilla − E R_Finetune > 0 and E R_Frozen − E R_Finetune > 0 (CIs), on tasks
    drawn at the statement's noise (a premise)."""
    parts, diag = [], {}
    draws = run.frozen.shape[0]
    for j, n in enumerate(run.n_values):
        for name, other in (("vanilla", run.vanilla), ("frozen", run.frozen)):
            gap = np.asarray(other[:, j] - run.finetune[:, j])  # paired over draws
            mean, ci, _ = _mean_ci(gap)
            parts.append(estimate_in(mean, ci, AtLeast(0.0), num_instances=draws))
            diag[f"n={n}: E R_{name} − E R_finetune (CI)"] = [mean, *ci]
    return given(
        all_of(
            *parts,
            diagnostics={
                **diag,
                "mean R_vanilla per n": np.asarray(run.vanilla).mean(0),
                "mean R_finetune per n": np.asarray(run.finetune).mean(0),
                "mean R_frozen per n": np.asarray(run.frozen).mean(0),
            },
            notes=f"Each gap decided on its mean ± {_Z_CI:g} s.e. over {draws} paired draws "
            "against the region > 0 (an ordering: the paper gives no size).",
        ),
        _statement_noise(run),
    )


# The ratio is 1 + F(1, n)/n; F(1, n) has a finite fourth moment only for n > 8, and below
# that the sample standard error is unreliable (n = 5: finite variance, infinite third
# moment; a referee found z = −5.7 there at seed 35 with every other n at |z| ≤ 1.9). The
# z-test decides the n with a finite fourth moment; smaller n are shown, not decided.
_Z_TEST_MIN_N = 9


def check_fig3_frozen_expectation(run: lt.FreezingRun):
    """E R_Frozen/floor = (n − 1)/(n − 2) for Gaussian X (derived here), decided at the
    ``n ≥ 9`` of the run (where the z-test's standard error is reliable)."""
    # θ_S ⊥ r := θ_T − c_opt θ_S, so Xθ_S and Xr are independent Gaussians and
    # c* − c_opt = ⟨Xθ_S, Xr⟩/‖Xθ_S‖² has E[(c* − c_opt)²]‖θ_S‖² = ‖r‖²/(n − 2): the frozen
    # risk ‖r‖² + (c* − c_opt)²‖θ_S‖² has mean floor·(n − 1)/(n − 2), flat up to O(1/n).
    ratio = np.asarray(run.frozen / run.floor[:, None])  # (draws, n) = 1 + F(1, n)/n
    ns = np.asarray(run.n_values, dtype=float)
    expected = (ns - 1) / (ns - 2)
    mean, se = ratio.mean(0), ratio.std(0, ddof=1) / np.sqrt(ratio.shape[0])
    z = (mean - expected) / se
    decided = ns >= _Z_TEST_MIN_N
    return compare(
        np.abs(z[decided]), _Z_IDENTITY.value, relation="upper_bound", tolerance=_Z_IDENTITY,
        num_instances=ratio.shape[0],
        diagnostics={"n": ns, "mean R_frozen/floor per n": mean, "(n−1)/(n−2)": expected,
                     "z": z, "mean floor": np.asarray(run.floor).mean()},
        notes=f"Measured: |z| of the mean ratio against its exact expectation, per n ≥ "
        f"{_Z_TEST_MIN_N} (R_frozen/floor = 1 + F(1, n)/n has a finite fourth moment only "
        "for n > 8; smaller n are shown in z, not decided).",
    )  # fmt: skip


CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="linear_teachers.thm5_5.frozen_parallel",
        paper=f"{_PAPER}, Thm 5.5",
        statement="With W_1 frozen, β(t) stays parallel to θ_S along GD; c → "
        "c* = ⟨Xθ_S, y⟩/‖Xθ_S‖² when c* > 0 (else GD stalls at c ≈ 0: the flow cannot change "
        "the sign of c)",
        kind="identity",
        reading=printed(
            "“if we freeze the first layer … the fine-tuned model will be given by "
            "⟨β(t), x⟩ = c⟨x, θ_S⟩, for some constant c” (the value c* is derived here)"
        ),
        uses=FROZEN_FIRST_LAYER,
        check=check_frozen_parallel,
        min_instances=20,
    ),
    Claim(
        id="linear_teachers.thm5_5.frozen_floor",
        paper=f"{_PAPER}, Thm 5.5",
        statement="Frozen-W_1 GD risk ≥ θ_TᵀΣθ_T − (θ_SᵀΣθ_T)²/θ_SᵀΣθ_S (true for any β ∥ θ_S: "
        "a sanity check of the simulation, not evidence)",
        kind="sanity",
        reading=derived("min_c R(cθ_S) bounds the risk of any multiple of θ_S"),
        uses=FROZEN_FIRST_LAYER,
        check=check_frozen_floor,
        min_instances=20,
    ),
    Claim(
        id="linear_teachers.fig3.ordering",
        paper=f"{_PAPER}, Sec 5.5, Fig. 3",
        statement="Σ = I, θ_T = θ_S + 0.5ξ/√d, the limits of the three trained models: for "
        "every n < d, E R_Finetune(L = 2) < E R_Vanilla (min-norm) and E R_Finetune < "
        "E R_Frozen (each gap's 3-s.e. CI above 0)",
        kind="ordering",
        reading=figure(
            "“the ‘frozen’ model's performance is poor, and fine-tuning has better sample "
            "complexity” — read on the limits GD converges to (eq. (5) at L = 2, min-norm "
            "interpolation, c*θ_S), in expectation over draws"
        ),
        uses=FIG3,
        check=check_fig3_ordering,
        min_instances=200,
        experiment=_EXPERIMENT,
    ),
    Claim(
        id="linear_teachers.fig3.frozen_expectation",
        paper=f"{_PAPER}, Sec 5.5, Fig. 3 and Thm 5.5",
        statement="Σ = I, Gaussian X: E R_Frozen = floor·(n − 1)/(n − 2) — flat in n up to "
        "O(1/n) (derived here; the caption says the frozen loss is constant)",
        kind="identity",
        reading=derived(
            "the caption's “a network whose first layer is fixed has a constant "
            "generalization loss”, made exact: R(c*θ_S) = floor·(1 + F(1, n)/n)"
        ),
        uses=FIG3,
        check=check_fig3_frozen_expectation,
        min_instances=200,
        experiment=_EXPERIMENT,
    ),
)
