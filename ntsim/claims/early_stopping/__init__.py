"""Claims of Sun & Raskutti 2026 (early stopping from a pretrained initialisation), kernel part.

``CLAIMS`` is the explicit concatenation of the submodules' tuples: kernel GD closed forms
and bias/variance (:mod:`._kernel_gd`), the stopping rule and its rates (:mod:`._stopping_rule`),
and the early stopping ↔ ridge correspondence (:mod:`._ridge`).
"""

from __future__ import annotations

from ntsim.claims.early_stopping import _kernel_gd, _ridge, _stopping_rule

__all__ = ["CLAIMS"]

CLAIMS = (*_kernel_gd.CLAIMS, *_stopping_rule.CLAIMS, *_ridge.CLAIMS)
