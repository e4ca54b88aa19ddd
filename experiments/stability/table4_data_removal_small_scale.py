"""Small-scale analogue of Fu et al. 2023 Table 4: 10% of the training points removed.

The Table 2 experiment (:mod:`experiments.stability.table2_methods_small_scale`, which
documents what is computed and plotted) with ``drop_fraction=0.1``: a random 10% of the
labelled target points get weight 0 before fine-tuning (and before SURT's re-training), the
paper's data-perturbation setting, and its Table 4 (RoBERTa-base) is shown beside the result.

Run: ``ntsim run stability/table4_data_removal_small_scale [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import replace

from experiments.stability.table2_methods_small_scale import SCALES as _TABLE2_SCALES
from experiments.stability.table2_methods_small_scale import Config, plot, run

__all__ = ["SCALES", "Config", "plot", "run"]

SCALES = {
    name: replace(config, drop_fraction=0.1, paper_table="table4")
    for name, config in _TABLE2_SCALES.items()
}

if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
