"""The project's interval procedures, checked where their truth is known (no paper).

Every claim of the five papers is decided on a confidence interval (``ntsim.core``'s
``mean_ci``, ``spearman_ci``, ``bootstrap_ci``). :mod:`._coverage` replicates data whose
truth is known in closed form and counts how often each tail of each interval misses it
(one simulation per procedure), the simulations the claims ``intervals.*`` read; they
decide each miss rate on Wilson's binomial interval (:mod:`._wilson`), which shares no
code with the intervals it checks.

References:
  .. code-block:: bibtex

    @article{student1908,
      title = {The Probable Error of a Mean}, author = {Student}, journal = {Biometrika},
      volume = {6}, number = {1}, pages = {1--25}, year = {1908}}
    @article{fieller1957,
      title = {Tests for Rank Correlation Coefficients. {I}},
      author = {Fieller, E. C. and Hartley, H. O. and Pearson, E. S.},
      journal = {Biometrika}, volume = {44}, pages = {470--481}, year = {1957}}
    @article{efron1979,
      title = {Bootstrap Methods: Another Look at the Jackknife}, author = {Efron, B.},
      journal = {The Annals of Statistics}, volume = {7}, number = {1}, pages = {1--26},
      year = {1979}}
    @article{moran1948,
      title = {Rank Correlation and Product-Moment Correlation}, author = {Moran, P. A. P.},
      journal = {Biometrika}, volume = {35}, number = {1/2}, pages = {203--206},
      year = {1948}}
    @article{kruskal1958,
      title = {Ordinal Measures of Association}, author = {Kruskal, William H.},
      journal = {Journal of the American Statistical Association}, volume = {53},
      pages = {814--861}, year = {1958}}
"""

from ntsim.theory.intervals._coverage import (
    COVERAGE_SCALES,
    SMALL_SPEARMAN_SCALES,
    CoverageRun,
    CoverageSetting,
    simulate_bootstrap_coverage,
    simulate_spearman_coverage,
    simulate_t_coverage,
    spearman_estimate_mean,
    spearman_of_bivariate_normal,
)
from ntsim.theory.intervals._wilson import wilson_ci

__all__ = [
    "COVERAGE_SCALES",
    "SMALL_SPEARMAN_SCALES",
    "CoverageRun",
    "CoverageSetting",
    "simulate_bootstrap_coverage",
    "simulate_spearman_coverage",
    "simulate_t_coverage",
    "spearman_estimate_mean",
    "spearman_of_bivariate_normal",
    "wilson_ci",
]
