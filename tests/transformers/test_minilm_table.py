"""The MiniLM stability experiment's comparison with the paper's Table 2 AVG."""

from __future__ import annotations

import numpy as np

from experiments.stability import minilm_stability
from ntsim.theory.stability import stability_table


def test_comparison_table_puts_each_std_beside_the_papers():
    paper = stability_table("table2")
    accuracy = {"finetune": [70.0, 72.0, 74.0], "lnsr": [71.0, 71.5, 72.0]}
    results = {
        "methods": list(accuracy),
        "accuracy_mean": {m: float(np.mean(a)) for m, a in accuracy.items()},
        "accuracy_std": {m: float(np.std(a, ddof=1)) for m, a in accuracy.items()},
        "paper_table2_avg": {"methods": list(paper.methods), "mean": paper.avg_mean.tolist(),
                             "std": paper.avg_std.tolist()},
    }  # fmt: skip
    rows = minilm_stability.comparison_table(results).splitlines()
    assert len(rows) == 2 + len(accuracy)
    lnsr = [cell.strip() for cell in rows[3].strip("|").split("|")]
    # sample stds 2 and 0.5: ratio 0.25; the paper's LNSR/FineTune std ratio from its table
    assert lnsr[:3] == ["LNSR", "71.50 ± 0.50", "0.25"]
    i, j = paper.methods.index("LNSR"), paper.methods.index("FineTune")
    assert lnsr[3] == f"{paper.avg_mean[i]:.2f} ± {paper.avg_std[i]:.2f}"
    assert float(lnsr[4]) == round(paper.avg_std[i] / paper.avg_std[j], 2)
