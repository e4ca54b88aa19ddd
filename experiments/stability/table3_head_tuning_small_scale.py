"""Small-scale analogue of Fu et al. 2023 Table 3: head tuning (the encoder stays frozen).

The Table 2 experiment (:mod:`experiments.stability.table2_methods_small_scale`, which
documents what is computed and plotted) with ``tune_encoder=False``: every method trains
only the linear head(s) on the frozen pretrained features — the setting of the paper's
Sec 2.3 theory — and the paper's Table 3 (RoBERTa-base, encoder frozen) is shown beside
the result. SURT still re-trains the encoder on the target inputs before it is frozen.

Run: ``ntsim run stability/table3_head_tuning_small_scale [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import replace

from experiments.stability.table2_methods_small_scale import SCALES as _TABLE2_SCALES
from experiments.stability.table2_methods_small_scale import Config, plot, run

__all__ = ["SCALES", "Config", "plot", "run"]

SCALES = {
    name: replace(config, tune_encoder=False, paper_table="table3")
    for name, config in _TABLE2_SCALES.items()
}

if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
