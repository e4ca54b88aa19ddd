"""Claims of Springer et al. 2025 (overtraining): two-layer linear theory and the budget analogue.

``CLAIMS`` is the explicit concatenation of the submodules' ``CLAIMS`` tuples.
"""

from __future__ import annotations

from ntsim.claims.overtraining import (
    _batch_concentration,
    _budget,
    _budget_distance,
    _contraction,
    _finetuning,
    _finite_batch,
    _hypotheses,
    _perturbation,
    _post_finetuning,
    _pretraining,
    _thm_a24,
)

__all__ = ["CLAIMS"]

CLAIMS = (
    *_pretraining.CLAIMS,
    *_perturbation.CLAIMS,
    *_finetuning.CLAIMS,
    *_contraction.CLAIMS,
    *_finite_batch.CLAIMS,
    *_batch_concentration.CLAIMS,
    *_post_finetuning.CLAIMS,
    *_thm_a24.CLAIMS,
    *_hypotheses.CLAIMS,
    *_budget.CLAIMS,
    *_budget_distance.CLAIMS,
)
