"""Claims of Sun & Raskutti 2026 (early stopping from a pretrained initialisation).

``CLAIMS`` is the explicit concatenation of the submodules' tuples: kernel GD closed forms
and bias/variance (:mod:`._kernel_gd`), the stopping rule and its rates (:mod:`._stopping_rule`),
the early stopping ↔ ridge correspondence (:mod:`._ridge`), hold-out early stopping vs T̂
(:mod:`._holdout`), task vectors and the mixed-init NTK blocks (:mod:`._task_vectors`),
the width scaling of the attention model (:mod:`._width_scaling`), Lemma 1's first-order
remainder along the network's own path (:mod:`._taylor_remainder`), the logits' second
moment at small widths (:mod:`._logit_moments`), and the attention model's
trained task vectors, Lemma 5's random-init expansion and learning-curve rate
(:mod:`._finite_width`), and Sec 7 on a real checkpoint, MiniLM (:mod:`._minilm`; task
vectors: :mod:`._minilm_task_vectors`).
"""

from __future__ import annotations

from ntsim.claims.early_stopping import (
    _finite_width,
    _holdout,
    _kernel_gd,
    _logit_moments,
    _minilm,
    _minilm_task_vectors,
    _ridge,
    _stopping_rule,
    _task_vectors,
    _taylor_remainder,
    _width_scaling,
)

__all__ = ["CLAIMS", "QUICK_SMOKE"]

CLAIMS = (
    *_kernel_gd.CLAIMS,
    *_stopping_rule.CLAIMS,
    *_ridge.CLAIMS,
    *_holdout.CLAIMS,
    *_task_vectors.CLAIMS,
    *_width_scaling.CLAIMS,
    *_taylor_remainder.CLAIMS,
    *_logit_moments.CLAIMS,
    *_finite_width.CLAIMS,
    *_minilm.CLAIMS,
    *_minilm_task_vectors.CLAIMS,
)

#: Claims whose quick scale is a smoke run (see :data:`ntsim.claims.QUICK_SMOKE_CLAIMS`).
QUICK_SMOKE = _minilm_task_vectors.QUICK_SMOKE
