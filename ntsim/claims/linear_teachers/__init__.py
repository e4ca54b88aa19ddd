"""Claims of Shachaf, Brutzkus & Globerson 2021 (linear teachers), one submodule per section.

``CLAIMS`` is the explicit concatenation of the submodules' ``CLAIMS`` tuples.
"""

from __future__ import annotations

from ntsim.claims.linear_teachers import (
    _bounds,
    _cor6_2_pairs,
    _deep,
    _exact_ingredients,
    _freezing,
    _random_projection,
    _regression,
    _relu,
    _scale_and_depth,
)

__all__ = ["CLAIMS"]

CLAIMS = (
    *_regression.CLAIMS,
    *_bounds.CLAIMS,
    *_exact_ingredients.CLAIMS,
    *_deep.CLAIMS,
    *_scale_and_depth.CLAIMS,
    *_random_projection.CLAIMS,
    *_freezing.CLAIMS,
    *_relu.CLAIMS,
    *_cor6_2_pairs.CLAIMS,
)
