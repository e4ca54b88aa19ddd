"""Claims of Sun & Raskutti 2026's Sec 7 read on a real checkpoint (MiniLM; the paper: GPT-Neo).

Each reads a MiniLM simulation of :mod:`ntsim.theory.early_stopping` (a pretrained encoder
with a scalar head, GD on the squared loss; ``minilm-l3`` at quick scale, ``minilm-l6`` at
full scale), the same ones the ``early_stopping/minilm_*`` figures draw:

* eq. (29)'s condition ``β > 1/2`` on the decay of the NTK at ``θ_PT`` (Sec 7.1's fit);
* Sec 6.1's "stop early": the plug-in kernel rule ``T̂`` stops no later than the step the
  test set prefers for linearised GD;
* a sanity check of the spectrum the β claims fit: its sum is ``tr Θ/N``, which per-sentence
  gradients give by a second route (``Θ_ii = ‖∇_θ f(x_i)‖²``), and its largest value is
  ``λ_1``, which power iteration on Jacobian products gives by a third.

Each is decided on a 95% Student-t interval over independent draws (sentences and head).
Cor 2 on the real network (the ``early_stopping/minilm_task_vectors`` figure) is claimed in
:mod:`._minilm_task_vectors`.
"""

from __future__ import annotations

import numpy as np

from ntsim.claims._contract import Claim, EstimateIn, Simulation, derived, printed
from ntsim.claims._decisions import (
    AtLeast,
    AtMost,
    Interval,
    Tolerance,
    all_of,
    compare,
    estimate_in,
)
from ntsim.claims._premises import given
from ntsim.core import mean_ci
from ntsim.theory.early_stopping import minilm

__all__ = ["CLAIMS", "MINILM_DECAY", "MINILM_STOPPING"]

_PAPER = "Sun & Raskutti 2026"

MINILM_DECAY = Simulation(
    "early_stopping.minilm.ntk_decay",
    minilm.simulate_minilm_ntk_decay,
    {
        # the experiment's quick scale: 3 draws of 20 sentences, L3
        "quick": minilm.MiniLMDecaySetting(
            checkpoint="minilm-l3", num_points=20, draws=3, max_length=16, ntk_batch=10
        ),
        "full": minilm.MiniLMDecaySetting(),  # L6, 100 sentences (the paper's), 5 draws
    },
)
MINILM_STOPPING = Simulation(
    "early_stopping.minilm.stopping_rule",
    minilm.simulate_minilm_stopping_rule,
    {
        # linearised GD only (the claim reads no fine-tuning), so seeds are cheap: 8 seeds × 3
        # sizes = 24 pairs (at 4 seeds, master seed 1 was inconclusive: its CI straddled 0)
        "quick": minilm.MiniLMStoppingSetting(
            checkpoint="minilm-l3",
            sizes=(8, 16, 32),
            validation_size=16,
            test_size=32,
            max_length=16,
            seeds=8,
            max_steps=200,
            eval_every=10,
            ntk_batch=8,
            finetune=False,
        ),  # fmt: skip
        # the experiment's full scale without its fine-tuning curves, which the claim does not
        # read (they cost most of a seed's time: GD on all 22.6M parameters)
        "full": minilm.MiniLMStoppingSetting(finetune=False),
    },
)


def _beta_check(fit: str):
    """Per dataset: the mean β of one fit of eq. (32) over draws, decided on its t CI against
    ``β ≥ 1/2``; every dataset must hold (``fit``: ``"origin"`` or ``"intercept"``)."""

    def check(run: minilm.MiniLMDecay):
        betas = np.asarray(getattr(run, f"beta_{fit}"))
        parts, diagnostics = [], {}
        for d in range(betas.shape[0]):
            mean, (lo, hi) = mean_ci(betas[d])
            parts.append(
                estimate_in(
                    float(mean), (float(lo), float(hi)), AtLeast(0.5), num_instances=betas.shape[1]
                )  # fmt: skip
            )
            diagnostics[f"dataset {d}: β origin fit, mean"] = float(run.beta_origin[d].mean())
            diagnostics[f"dataset {d}: β with intercept, mean"] = float(
                run.beta_intercept[d].mean()
            )
        diagnostics["N (sentences per NTK)"] = run.eigenvalues.shape[-1]
        diagnostics["parameters"] = run.num_params
        how = ("through the origin (log(λ_k/λ_1) on log k: the line forced through the top "
               "eigenvalue)" if fit == "origin" else "with an intercept (an ordinary "
               "least-squares line through the log-log curve)")  # fmt: skip
        return all_of(
            *parts,
            diagnostics=diagnostics,
            notes=f"β from the least-squares slope of the log-log eigenvalue curve {how}, per "
            "draw of sentences and head; 95% Student-t CI over draws; each dataset must hold. "
            "The paper does not say which fit (Sec 7.1: 'fit a least-squares line'); a top "
            "eigenvalue far above the bulk makes the two differ.",
        )

    check.__name__ = f"check_beta_above_half_{fit}"
    return check


check_beta_above_half = _beta_check("origin")
check_beta_above_half_intercept = _beta_check("intercept")


#: Two float32 routes to ``tr Θ`` and ``λ_1(Θ)`` over all parameters (22.6M at full scale).
#: Chosen.
TRACE_ROUND_OFF = Tolerance(
    "chosen",
    1e-5,
    "relative: the structured, tiled NTK accumulates JJᵀ in float32, the gradient routes sum "
    "their squares in float64 (power iteration must reach a relative residual of 1e-6, "
    "POWER_RESIDUAL, which bounds its own error); one 25 × 25 tile of Θ transposed moved λ_1 by "
    "4e-5 in a referee's stand-in (1e-4 let it pass)",
    observed="worst relative gap 1e-7 at quick scale (MiniLM-L3, 2 × 3 draws of 20 sentences, "
    "master seeds 0 and 1) and 2e-7 on 4 sentences; 9e-8 for the trace at full scale (L6, 100 "
    "sentences, seeds 0–2); a jitted float32 squared norm of the gradients was 1% off, which "
    "is why the gradient routes sum in float64. λ_1 by power iteration at quick scale: ≤ 6e-8",
)

#: The power iteration's relative residual ``‖Θu − λu‖/λ`` it must reach before its λ_1 is
#: compared (it stops there; a run that hit its iteration cap is rejected).
POWER_RESIDUAL = 1e-6


def check_ntk_matches_gradient_routes(run: minilm.MiniLMDecay):
    """Per dataset and draw, the spectrum against two routes through plain derivatives of f:
    ``Σ_k λ_k(Θ/N) = Σ_i ‖∇_θ f(θ_PT, x_i)‖²/N`` (part 0, the diagonal) and
    ``λ_1(Θ/N) = max_{‖u‖=1} ‖Jᵀu‖²/N`` by power iteration (part 1, off the diagonal too).

    Raises:
      ValueError: the power iteration did not reach :data:`POWER_RESIDUAL`.
    """
    residual = np.asarray(run.power_residual)
    if not np.all(residual <= POWER_RESIDUAL):
        raise ValueError(
            f"check_ntk_matches_gradient_routes: power iteration stopped at a relative residual "
            f"{residual.max():.1e} > {POWER_RESIDUAL:.0e}: its λ_1 is not converged."
        )
    spectrum = np.asarray(run.eigenvalues)
    trace, gradients = spectrum.sum(axis=-1), np.asarray(run.gradient_trace)  # (D, draws)
    top, power = spectrum[..., 0], np.asarray(run.power_top_eigenvalue)
    parts = [
        compare(observed / route, 1.0, relation="equal", rtol=TRACE_ROUND_OFF.value,
                tolerance=TRACE_ROUND_OFF, num_instances=route.size)
        for observed, route in ((trace, gradients), (top, power))
    ]  # fmt: skip
    return all_of(
        *parts,
        diagnostics={
            "worst |Σλ − Σ‖∇f‖²/N| / (Σ‖∇f‖²/N)": np.max(np.abs(trace / gradients - 1)),
            "worst |λ_1 − λ_1 by power iteration| / λ_1": np.max(np.abs(top / power - 1)),
            "largest relative residual of the power iteration": np.max(run.power_residual),
            "tr(Θ/N) per dataset, mean over draws": trace.mean(axis=1),
            "λ_1(Θ/N) per dataset, mean over draws": top.mean(axis=1),
        },
        notes="The sum and the largest of the eigenvalues the β claims fit, against the mean "
        "squared norm of the per-sentence gradients and against power iteration u ← J(Jᵀu) on "
        "reverse- and forward-mode products (routes that do not use the NTK code); per "
        "dataset and draw.",
    )


#: ``Ĉ_H`` by two routes on MiniLM's kernel. Chosen.
C_H_ROUTES = Tolerance(
    "chosen",
    1e-3,
    "relative, plus 1e-12 absolute (Ĉ_H's floor √tiny when s* = 0, where the spectral sum is "
    "0): the plug-in computes Ĉ_H = (cᵀ𝕂c)^{1/2} in float32 (MiniLM's kernel and scores), "
    "the second route sums (1 − (1 − αg_i/N)^s)²⟨q_i, r_0⟩²/g_i in float64 on the same "
    "numbers; float32 eigenvectors of a kernel whose spectrum spans several decades carry "
    "errors well above ε₃₂ ≈ 6e-8 into the quadratic form, and 1e-3 leaves room for the "
    "full scale's larger kernels (N = 64). A wrong residual or step moves Ĉ_H by O(1/N) or more",
    observed="largest relative gap off the floor 7.6e-7 at quick scale (MiniLM-L3, master seed "
    "0, 10 of 24 (seed, N) off the floor)",
)


#: The linearised test curve by two routes (closed form in float32, iterated in float64). Chosen.
CURVE_ROUTES = Tolerance(
    "chosen",
    1e-3,
    "relative, at every evaluated step: the curve τ* is read from is eq. (7)'s closed form "
    "(one float32 eigendecomposition of MiniLM's kernel), the second route iterates eq. (7)'s "
    "steps in float64 on the same numbers; as for C_H_ROUTES, float32 eigenvectors of a "
    "kernel whose spectrum spans several decades carry errors well above ε₃₂ ≈ 6e-8, and "
    "1e-3 leaves room for the full scale's larger kernels. A wrong target, prediction, "
    "residual or step on the curve's path (½Y, a dropped f_PT on either side) moves the "
    "curve by percents and τ* in most (seed, N)",
    observed="largest relative gap 1.5e-6 at quick scale (MiniLM-L3, master seeds 0 and 1, "
    "24 (seed, N) × 21 steps each; median 1e-7)",
)


def check_rule_stops_early(run: minilm.MiniLMStopping):
    """E log((T̂ + 1)/(τ*_lin + 1)) ≤ 0, the seed the unit: the sizes of one seed are nested
    prefixes of one draw (one head, one validation and one test set), so they are averaged
    within the seed before the t interval over seeds.

    Premise, by a second route: the plug-in Ĉ_H that sets T̂ (the RKHS norm of kernel GD's
    increment at the validation step s*, cᵀ𝕂c) must equal the spectral sum Σ_i (1 − (1 −
    αg_i/N)^{s*})²⟨q_i, f_PT − Y⟩²/g_i of the same increment
    (:func:`minilm.increment_rkhs_norm`, float64) within :data:`C_H_ROUTES` on every
    (seed, N); else T̂ is not the rule with the plug-in the statement names, and the run
    decides nothing (inconclusive). Likewise the test curve τ* is read from must equal, at
    every evaluated step, eq. (7)'s steps iterated in float64 on the same kernel, scores and
    targets (:func:`minilm.heldout_mse_by_iteration`), within :data:`CURVE_ROUTES`.

    Raises:
      ValueError: the run's evaluated steps are not the grid its test curves were taken on
        (τ* and the horizon are read from that grid).
    """
    steps, curve = np.asarray(run.evaluated_steps), np.asarray(run.linearised_curve)
    if steps.shape != curve.shape[-1:]:
        raise ValueError(
            f"check_rule_stops_early: {steps.size} evaluated steps for test curves of "
            f"{curve.shape[-1]} points: the run's step grid is not its curves' grid."
        )
    rule = np.asarray(run.stopping_time, float)
    best = np.asarray(run.linearised_step, float)
    log_ratio = np.log((rule + 1) / (best + 1))  # (seeds, sizes)
    per_seed = log_ratio.reshape(log_ratio.shape[0], -1).mean(axis=1)
    mean, ci = mean_ci(per_seed)
    rkhs, spectral = np.asarray(run.rkhs_distance), np.asarray(run.rkhs_distance_spectral)
    at_floor = rkhs <= 1e-12  # Ĉ_H at its floor: T̂ = 0 by construction
    same_c_h = np.abs(rkhs - spectral) <= 1e-12 + C_H_ROUTES.value * np.abs(spectral)
    with np.errstate(divide="ignore", invalid="ignore"):
        route_gap = np.abs(rkhs / spectral - 1)
    # Premise, by a second route: τ* is read off the test curve, which must be eq. (7)'s
    # steps iterated in float64 (a wrong target, prediction or step on the curve's path moves
    # the whole curve, and with it τ*)
    iterated = np.asarray(run.linearised_curve_iterated)
    with np.errstate(divide="ignore", invalid="ignore"):
        curve_gap = np.abs(curve / iterated - 1)
    same_curve = np.all(curve_gap <= CURVE_ROUTES.value, axis=-1)
    ordering = estimate_in(
        float(mean),
        ci,
        AtMost(0.0),
        num_instances=per_seed.size,
        diagnostics={
            "N": run.sizes,
            "mean log ratio per seed": np.round(per_seed, 3),
            "median T̂ per N": np.median(rule, axis=0),
            "median test-optimal step per N": np.median(best, axis=0),
            "horizon": int(run.evaluated_steps[-1]),
            "mean σ̂": float(np.mean(run.noise_std)),
            "mean Ĉ_H": float(np.mean(run.rkhs_distance)),
            "(seed, N) with Ĉ_H at its floor (T̂ = 0 by construction)": int(at_floor.sum()),
            "of (seed, N)": int(at_floor.size),
            "test MSE at T̂, median": float(np.median(run.linearised_mse_at_rule)),
            "test MSE of f_PT, median": float(np.median(run.pretrained_mse)),
            "largest |Ĉ_H/Ĉ_H(spectral sum) − 1| off the floor": float(
                np.max(route_gap[~at_floor], initial=0.0)
            ),
            "largest |curve/curve(iterated) − 1|": float(np.max(curve_gap)),
        },
        tolerance=C_H_ROUTES,
        notes="log((T̂ + 1)/(τ* + 1)), τ* the step with the least test MSE of linearised GD on "
        "the grid (capped at the horizon, which only makes the ratio larger), averaged over the "
        "sizes of a seed; 95% Student-t CI over seeds. (Until 2026-11-28 the (seed, size) "
        "pairs counted as independent; an independent referee showed they share one draw.) "
        "Premises: the plug-in Ĉ_H equal to the spectral sum of the same increment, and the "
        "test curve equal to eq. (7)'s steps iterated in float64, on every (seed, N).",
    )
    return given(ordering, {
        "Ĉ_H = the increment's RKHS norm by the spectral sum": same_c_h,
        "the test curve = eq. (7)'s steps iterated in float64, every step": same_curve,
    })  # fmt: skip


CLAIMS = (
    Claim(
        id="early_stopping.minilm.beta_above_half",
        paper=f"{_PAPER}, Sec 6.3, eq. (29); Sec 7.1, App. A.3, eq. (32)",
        statement="The NTK of a pretrained transformer (MiniLM, all parameters, at θ_PT) "
        "on sentences of each dataset decays polynomially with β > 1/2: the eq. (32) fit "
        "of β (through the origin), averaged over draws of sentences, has its 95% CI "
        "above 1/2.",
        kind="bound",
        reading=printed(
            "“for neural networks one typically expects a polynomial eigenvalue decay, that "
            "is, λ_k ≤ C(1/k)^{2β} for some β > 1/2” (Sec 6.3, eq. (29)); the paper fits "
            "β = 0.51–0.62 on GPT-Neo (Sec 7.1)"
        ),
        uses=MINILM_DECAY,
        check=check_beta_above_half,
        min_instances=3,
        slow_at_quick=True,
        experiment="early_stopping/minilm_ntk_decay",
    ),
    Claim(
        id="early_stopping.minilm.beta_above_half_intercept",
        paper=f"{_PAPER}, Sec 6.3, eq. (29); Sec 7.1, App. A.3, eq. (32)",
        statement="The same β > 1/2 as `beta_above_half`, with β from an ordinary "
        "least-squares line (with an intercept) through the log-log eigenvalue curve of "
        "MiniLM's NTK: the mean β over draws has its 95% CI above 1/2 on each dataset.",
        kind="bound",
        reading=derived(
            "the same printed β > 1/2 (Sec 6.3, eq. (29)), fitted as Sec 7.1's words allow: "
            "“fit a least-squares line to the log–log eigenvalue curve”, here with an intercept. "
            "App. A.3 prints the fit through the top eigenvalue (eq. (31) λ_k ≈ λ_1 k^(−2β), "
            "eq. (32) log(λ_k/λ_1) ≈ −2β log k), which `beta_above_half` tests; an independent "
            "referee found the verdict turns on this choice (a top eigenvalue 8–16 times the "
            "second pulls the origin fit up)"
        ),
        uses=MINILM_DECAY,
        check=check_beta_above_half_intercept,
        min_instances=3,
        slow_at_quick=True,
        experiment="early_stopping/minilm_ntk_decay",
        expect="refuted",
        twin="early_stopping.minilm.beta_above_half",
        counterexample=EstimateIn(
            Interval(0.0, 0.5),
            part=0,
            why="on Rotten Tomatoes (the first dataset) the intercept fit's mean β has its CI "
            "below 1/2 (the experiment's draw: 0.418 [0.400, 0.435])",
        ),
    ),
    Claim(
        id="early_stopping.minilm.ntk_trace_matches_gradients",
        paper=f"{_PAPER}, Sec 3.4, eqs. (6)–(7); Sec 7.1, App. A.3, eq. (32)",
        statement="(Sanity: two quantities of the spectrum the β claims fit, its sum and its "
        "largest value, recomputed by routes that share no code with the NTK.) On every "
        "dataset and draw of MiniLM at θ_PT, Σ_k λ_k(Θ/N) equals Σ_i ‖∇_θ f(θ_PT, x_i)‖²/N "
        "from per-sentence gradients of all parameters, and λ_1(Θ/N) equals the top "
        "eigenvalue found by power iteration u ← J(Jᵀu) from a Gaussian start, both to a "
        "relative 1e-5.",
        kind="sanity",
        reading=derived(
            "eqs. (6)–(7) define the NTK as ⟨∇f(x), ∇f(x')⟩ and its matrix as JJᵀ/N, whose "
            "diagonal is the squared gradient norms over N, and Sec 7.1 fits β to its "
            "eigenvalues normalised by the top one (App. A.3, "
            "eq. (32): log(λ_k/λ_1)); tr 𝕂 = Σ_i ‖∇f(x_i)‖² checks the computed spectrum's "
            "scale (which β cannot see) on the diagonal, and λ_1 = max ‖Jᵀu‖² checks it off "
            "the diagonal. A check of the project's code, not of the paper: it holds for any "
            "network whose NTK is computed correctly"
        ),
        uses=MINILM_DECAY,
        check=check_ntk_matches_gradient_routes,
        min_instances=6,
        slow_at_quick=True,
        experiment="early_stopping/minilm_ntk_decay",
    ),
    Claim(
        id="early_stopping.minilm.rule_stops_early",
        paper=f"{_PAPER}, Sec 6.1; Sec 3.5, eq. (11)",
        statement="On MiniLM's empirical NTK, the kernel stopping rule T̂ (eq. (11), "
        "corrected exponent, with plug-in σ̂ and Ĉ_H from a validation split) stops no later "
        "than the step with the least test MSE of linearised GD, on average: "
        "E log((T̂ + 1)/(τ* + 1)) ≤ 0 (and the plug-in Ĉ_H, cᵀ𝕂c of kernel GD's increment at "
        "the validation step, equals the increment's RKHS norm by the spectral sum).",
        kind="ordering",
        reading=derived(
            "“The theoretical framework encourages stopping early” (Sec 6.1, title), with "
            "“C_H constrains T̂_max from being a large number, reflecting the expectation that "
            "f_PT is already reasonably close to f_tgt”; the project makes it an ordering "
            "against the test-optimal step on a real kernel, with its own plug-ins for σ and "
            "C_H (the paper computes no T̂ on a real model)"
        ),
        uses=MINILM_STOPPING,
        check=check_rule_stops_early,
        min_instances=5,
        slow_at_quick=True,
        experiment="early_stopping/minilm_stopping_rule",
    ),
)
