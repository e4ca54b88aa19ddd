"""Settings that a claim and its figure share (one simulation per figure and claim).

Each ``*_SETTINGS`` maps a scale (``"quick"``, ``"full"``) to the frozen setting of a public
``simulate_*`` function; the claims in :mod:`ntsim.claims.stability` and the experiments in
``experiments/stability`` read the same entry, so a figure draws what a claim decides.
Sizes are ours (the paper has no simulation for these statements).
"""

from __future__ import annotations

from ntsim.theory.stability._full_finetuning_runs import LooGridSetting
from ntsim.theory.stability._head_tuning_runs import LooAnchorSetting
from ntsim.theory.stability._methods_runs import (
    MHLossIdentitySetting,
    MMRIdentitySetting,
    TablesSetting,
)
from ntsim.theory.stability._svm_runs import MMRSetting, StepSizeSetting

__all__ = [
    "SHARED_SCALES",
    "THM2_2_STEPS",
    "THM2_2_SETTINGS",
    "STEP_SIZE_SETTINGS",
    "LOO_ANCHOR_SETTINGS",
    "TABLES_SETTINGS",
    "MMR_IDENTITY_SETTINGS",
    "MHLOSS_IDENTITY_SETTINGS",
    "MMR_MARGIN_SETTINGS",
]

#: The scales every ``*_SETTINGS`` dict has.
SHARED_SCALES = ("quick", "full")

#: GD steps of the Thm 2.2 runs: (1 − μ/β)^T ≤ 0.95^300 ≈ 2e-7, the sup is long past.
THM2_2_STEPS = {"quick": 300, "full": 600}

_GRID = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85, 0.95, 0.99, 1.0)  # μ/β, incl. μ = β
# μ/β grid of the generic printed-bound claim: up to the largest value where the derived
# margin printed_bound_safe_ratio is positive (0.968), not up to observed failures.
_GRID_SAFE = (0.05, 0.1, 0.2, 0.35, 0.5, 0.7, 0.85, 0.95, 0.96)
_NEAR_ONE = (0.9, 0.95, 0.97, 0.98, 0.99, 1.0)  # μ/β where the printed bound fails
_NS_SCALING = (25, 50, 100, 200, 400)


def _loo_grid(quick: dict, full: dict) -> dict[str, LooGridSetting]:
    return {
        "quick": LooGridSetting(**quick, num_steps=THM2_2_STEPS["quick"]),
        "full": LooGridSetting(**full, num_steps=THM2_2_STEPS["full"]),
    }


#: Thm 2.2 (quadratic model, ``simulate_loo_grid``): ``certificate`` (the certificate and the
#: corrected bound over μ/β × n), ``near_one`` (where eq. (3) fails, n = 10), ``generic``
#: (where eq. (3) provably holds, n = 10) and ``over_n`` (μ/β = 0.5, the 1/n rate).
THM2_2_SETTINGS: dict[str, dict[str, LooGridSetting]] = {
    "certificate": _loo_grid(
        dict(mu_over_beta=_GRID, num_samples=(10, 40), instances=10),
        dict(mu_over_beta=_GRID, num_samples=(10, 50, 200), instances=35),
    ),
    "near_one": _loo_grid(
        dict(mu_over_beta=_NEAR_ONE, instances=100), dict(mu_over_beta=_NEAR_ONE, instances=250)
    ),
    "generic": _loo_grid(
        dict(mu_over_beta=_GRID_SAFE, instances=50), dict(mu_over_beta=_GRID_SAFE, instances=125)
    ),
    "over_n": _loo_grid(
        dict(mu_over_beta=(0.5,), num_samples=_NS_SCALING, instances=40),
        dict(mu_over_beta=(0.5,), num_samples=_NS_SCALING, instances=200),
    ),
}

#: Head-tuning GD at η·β_F ∈ {1, 1.9, 2.5, 4, 8} (``simulate_step_sizes``). The spread ratio
#: of ‖Δ̂_T‖ (a ratio of two stds) has a paired 95% CI of about ±0.05 at 400 datasets; 3200
#: (quick) and 2000 (full) bring it to about ±0.02–0.025, enough to decide a 5% effect.
STEP_SIZE_SETTINGS = {
    "quick": StepSizeSetting(datasets=3200, points=60, dim=5, num_steps=100),
    "full": StepSizeSetting(datasets=2000, points=500, dim=10, num_steps=1000),
}

#: The closed-form leave-one-out anchor (``simulate_loo_anchor``).
LOO_ANCHOR_SETTINGS = {
    "quick": LooAnchorSetting(num_steps=10_000, num_records=5),
    "full": LooAnchorSetting(num_steps=100_000, num_records=6),
}

#: The printed Tables 2–5 (``simulate_tables``; data, the same at every scale).
TABLES_SETTINGS = {"quick": TablesSetting(), "full": TablesSetting()}

#: Random batches for eq. (8) (``simulate_mmr_identity``) and eq. (10)
#: (``simulate_mhloss_identity``).
MMR_IDENTITY_SETTINGS = {
    "quick": MMRIdentitySetting(instances=200, n=16, k=5),
    "full": MMRIdentitySetting(),
}
MHLOSS_IDENTITY_SETTINGS = {
    "quick": MHLossIdentitySetting(instances=200, n=12, k=4, heads=7),
    "full": MHLossIdentitySetting(),
}

#: MMR on a linear encoder and the SVM margin it produces (``simulate_mmr_margin``).
MMR_MARGIN_SETTINGS = {
    "quick": MMRSetting(datasets=200, points=60, dim=6, num_steps=100),
    "full": MMRSetting(datasets=500, points=200, dim=10, num_steps=300),
}
