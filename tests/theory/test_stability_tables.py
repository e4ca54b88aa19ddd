"""Fu et al. 2023 Tables 2–5: transcription sanity and the AVG columns recomputed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from ntsim.theory.stability._tables import (
    METHODS,
    ROUNDING_TOLERANCE,
    TABLES,
    avg_discrepancy,
    duplicate_cells,
    recomputed_avg,
    stability_table,
)


def test_tables_have_the_paper_shapes_and_plausible_values():
    shapes = {"table2": 11, "table3": 5, "table4": 5, "table5": 5}
    for name in TABLES:
        t = stability_table(name)
        assert t.methods == METHODS
        assert t.means.shape == t.stds.shape == (6, shapes[name])
        assert np.all((t.means > 0) & (t.means < 100)) and np.all(t.stds > 0)
        assert np.all(t.stds < 10)  # the largest printed std is 9.12 (Table 2, SURT, QQP)


def test_spot_cells_as_printed():
    t2 = stability_table("table2")
    assert t2.means[METHODS.index("MMR"), t2.tasks.index("WiC")] == 67.74  # printed "67.74± 0.37"
    assert t2.stds[METHODS.index("SURT"), t2.tasks.index("QQP")] == 9.12
    t5 = stability_table("table5")
    assert t5.avg_mean[METHODS.index("SURT")] == 78.37


def test_recomputed_avg_matches_hand_sums():
    t3 = stability_table("table3")
    mean, std = recomputed_avg(t3)
    mmr = METHODS.index("MMR")
    # (39.11 + 77.63 + 56.68 + 78.57 + 61.63)/5 = 313.62/5; (2.08+0.56+0.75+6.13+1.90)/5
    assert mean[mmr] == pytest.approx(62.724, abs=1e-12)
    assert std[mmr] == pytest.approx(2.284, abs=1e-12)
    # a rounding case: printed 62.73, while the printed entries average to 62.724
    assert avg_discrepancy(t3)[0][mmr] == pytest.approx(0.006, abs=1e-9)


def test_every_avg_is_within_one_last_digit_unit():
    worst = max(np.abs(np.concatenate(avg_discrepancy(stability_table(n)))).max() for n in TABLES)
    assert worst <= ROUNDING_TOLERANCE
    assert worst > 0.005  # some entries need the full one-digit budget (e.g. Table 3 MMR)


def test_duplicate_cells_found():
    assert duplicate_cells(stability_table("table2")) == [
        ("QQP", "FineTune", "MixOut"),
        ("SST-2", "MixOut", "MHLoss"),
    ]
    assert duplicate_cells(stability_table("table3")) == [("WSC", "FineTune", "MixOut")]
    assert duplicate_cells(stability_table("table4")) == []


def test_unknown_table_raises():
    with pytest.raises(ValueError, match="name must be one of"):
        stability_table("table1")
