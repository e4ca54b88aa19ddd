"""Eq. 12's ``Γ`` and Assumption A.8's margin (Springer et al. 2025), written once from their
definitions for the claims that decide under them (:mod:`._hypotheses`,
:mod:`._post_finetuning`), independent of the simulations' own ``Γ``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["assumption_a8_margin", "eq12_gamma"]


def eq12_gamma(sigma_pre, sigma_ft) -> np.ndarray:
    """``Γ = max{σ^pre_1, max_i σ^ft_i}`` (eq. 12), per instance (last axis: modes).

    Written from the definition, independent of the simulations' own ``Γ``: the largest
    entry of both spectra, whatever their order.

    Examples:
      >>> float(eq12_gamma(np.array([2.0, 1.0]), np.array([0.5, 3.0])))
      3.0
    """
    pre, ft = np.asarray(sigma_pre, np.float64), np.asarray(sigma_ft, np.float64)
    return np.maximum(pre.max(axis=-1), ft.max(axis=-1))


def assumption_a8_margin(learning_rate, reg, gamma) -> np.ndarray:
    """``4η(λ + 2)Γ``, which Assumption A.8 asks to be below 1.

    Examples:
      >>> float(assumption_a8_margin(0.8 / 24, 1.0, 2.0))
      0.8
    """
    return 4 * np.asarray(learning_rate) * (np.asarray(reg) + 2) * np.asarray(gamma)
