"""Claims of Fu, So & Collier 2023 (stability of fine-tuning), one submodule per section.

``CLAIMS`` is the explicit concatenation of the submodules' ``CLAIMS`` tuples.
"""

from __future__ import annotations

from ntsim.claims.stability import (
    _full_finetuning,
    _full_finetuning_lemmas,
    _head_tuning,
    _learning_rate,
    _methods,
    _printed_bound_region,
    _synthetic_trends,
    _two_point_svm,
)

__all__ = ["CLAIMS"]

CLAIMS = (
    *_full_finetuning.CLAIMS,
    *_full_finetuning_lemmas.CLAIMS,
    *_head_tuning.CLAIMS,
    *_synthetic_trends.CLAIMS,
    *_methods.CLAIMS,
    *_learning_rate.CLAIMS,
    *_two_point_svm.CLAIMS,
    *_printed_bound_region.CLAIMS,
)
