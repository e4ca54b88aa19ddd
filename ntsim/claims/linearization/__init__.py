"""Claims of Rahimi Afzal et al. 2025 (linearization explains fine-tuning).

``CLAIMS`` (contract v2) is the explicit concatenation of the submodules' tuples: the
regularised dynamics (:mod:`._dynamics`: split step, Lemma 3, Thm 1), distances to ``θ_0``
(:mod:`._distance`: Lemma 1, Thm 2, the λ table), the linearisation gap and the r-ball
(:mod:`._gap`: Thms 3, 4; :mod:`._thm4_composition`: Thm 4's bound from Thm 3's;
:mod:`._quadratic_gap`: Thm 3 on a quadratic model where its
constant is attained), the KRR reduction and spectral bounds (:mod:`._spectral`:
Thms 5–6; :mod:`._thm7`: Thm 7), kernel structure (:mod:`._kernels`: NTK additivity, LoRA
NTK at init), the
condition-number experiment (:mod:`._kappa`), the λ table on MiniLM (:mod:`._minilm`, its
absolute anchors in :mod:`._minilm_anchors`) and the condition-number experiment on MiniLM
(:mod:`._minilm_kappa`). The
simulations they read are ``simulate_*`` functions of :mod:`ntsim.theory.linearization`.
"""

from __future__ import annotations

from ntsim.claims.linearization import (
    _distance,
    _dynamics,
    _gap,
    _kappa,
    _kernels,
    _minilm,
    _minilm_anchors,
    _minilm_kappa,
    _quadratic_gap,
    _spectral,
    _thm4_composition,
    _thm7,
)

__all__ = ["CLAIMS", "QUICK_SMOKE"]

#: Claims whose quick scale is a smoke run (see :data:`ntsim.claims.QUICK_SMOKE_CLAIMS`).
QUICK_SMOKE = _minilm_kappa.QUICK_SMOKE

CLAIMS = (
    *_dynamics.CLAIMS,
    *_distance.CLAIMS,
    *_gap.CLAIMS,
    *_thm4_composition.CLAIMS,
    *_quadratic_gap.CLAIMS,
    *_spectral.CLAIMS,
    *_thm7.CLAIMS,
    *_kernels.CLAIMS,
    *_kappa.CLAIMS,
    *_minilm.CLAIMS,
    *_minilm_anchors.CLAIMS,
    *_minilm_kappa.CLAIMS,
)
