"""Tables 2–5 of Fu, So & Collier (2023) as data, and the recomputed AVG columns.

Each table reports, per method and task, the mean ± std of the task score over 10 random
seeds, and an ``AVG`` column (Sec 4.2). The numbers below are transcribed as printed
(Table 4/5's "MHLLoss" is the paper's typo for MHLoss). ``AVG`` is, by all evidence, the
unweighted mean over tasks of the printed means and, separately, of the printed stds;
:func:`recomputed_avg` recomputes it and :func:`avg_discrepancy` measures the difference in
units of the last printed digit (0.01).

Rounding budget: every printed entry is rounded to 0.01, so the mean of printed entries
differs from the mean of the unrounded ones by at most 0.005, and the printed AVG differs
from that unrounded mean by at most 0.005. A consistent AVG is therefore within **0.01**
(one last-digit unit) of the recomputed mean; anything further is an inconsistency.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = [
    "METHODS",
    "ROUNDING_TOLERANCE",
    "TABLES",
    "StabilityTable",
    "avg_discrepancy",
    "duplicate_cells",
    "recomputed_avg",
    "stability_table",
]

#: Methods, in the paper's row order (Tables 2–5).
METHODS = ("FineTune", "MixOut", "LNSR", "MHLoss", "MMR", "SURT")

#: Largest |printed AVG − mean of printed entries| explained by rounding to 0.01 (module doc).
ROUNDING_TOLERANCE = 0.01


class StabilityTable(NamedTuple):
    """One results table: ``means[m, t] ± stds[m, t]`` for method ``m`` on task ``t``.

    Attributes:
      name: ``"table2"`` … ``"table5"``.
      caption: what the table reports (paper's caption, shortened).
      tasks: task names (columns, AVG excluded).
      methods: method names (rows), :data:`METHODS`.
      means: printed means, shape ``(methods, tasks)``.
      stds: printed standard deviations over 10 seeds, same shape.
      avg_mean: printed AVG means, shape ``(methods,)``.
      avg_std: printed AVG stds, shape ``(methods,)``.
    """

    name: str
    caption: str
    tasks: tuple[str, ...]
    methods: tuple[str, ...]
    means: np.ndarray
    stds: np.ndarray
    avg_mean: np.ndarray
    avg_std: np.ndarray


_GLUE11 = (
    "CoLA", "MRPC", "RTE", "CB", "WSC", "QQP", "SST-2", "WNLI", "BoolQ", "MultiRC", "WiC",
)  # fmt: skip
_GLUE5 = ("CoLA", "MRPC", "RTE", "CB", "WSC")

# Rows: (mean, std) per task, then the printed AVG (mean, std). Fu et al. 2023, Tables 2–5.
_RAW = {
    "table2": (
        "Table 2: full fine-tuning of RoBERTa-base (main experiment)",
        _GLUE11,
        (
            (
                "59.21 2.32 88.84 0.97 76.21 2.04 79.11 2.77 54.33 5.48 39.67 8.13 93.04 0.48 "
                "54.65 3.44 78.70 1.10 44.22 0.85 68.07 1.19",
                "66.91 2.61",
            ),
            (
                "59.85 1.94 89.42 0.66 75.63 1.52 78.57 3.29 51.92 6.88 39.67 8.13 93.13 0.42 "
                "54.75 2.45 78.54 0.78 44.81 0.82 68.67 1.12",
                "66.82 2.55",
            ),
            (
                "60.69 1.65 89.21 0.65 74.26 0.97 80.71 2.74 52.79 4.68 39.61 8.07 93.31 0.38 "
                "55.62 1.47 78.36 0.57 41.66 1.06 68.68 1.34",
                "66.81 2.14",
            ),
            (
                "59.64 2.37 88.43 0.78 77.11 0.93 79.64 2.79 61.35 4.75 40.17 7.03 93.13 0.42 "
                "55.92 1.27 79.59 0.53 43.77 1.24 67.51 0.96",
                "67.84 2.10",
            ),
            (
                "60.96 1.75 89.58 0.59 75.59 0.55 80.00 3.81 54.13 3.57 38.83 7.26 93.18 0.31 "
                "54.79 2.31 76.96 1.23 44.73 0.66 67.74 0.37",
                "66.95 2.04",
            ),
            (
                "60.64 1.46 89.35 0.91 76.03 1.00 78.21 1.56 52.88 2.47 40.42 9.12 93.18 0.36 "
                "53.80 4.22 78.86 0.81 43.38 0.62 68.09 1.30",
                "66.80 2.17",
            ),
        ),
    ),
    "table3": (
        "Table 3: head tuning (encoder frozen), RoBERTa-base",
        _GLUE5,
        (
            ("40.03 1.69 77.77 0.73 56.72 1.16 75.52 6.31 58.75 3.86", "61.76 2.75"),
            ("39.64 2.09 77.09 0.65 56.28 1.19 76.43 5.58 58.75 3.86", "61.64 2.67"),
            ("39.43 1.92 77.48 0.35 57.44 0.92 76.96 6.05 58.85 3.43", "62.03 2.53"),
            ("39.91 0.67 77.42 1.09 56.41 0.90 78.75 5.50 63.46 1.14", "63.19 1.86"),
            ("39.11 2.08 77.63 0.56 56.68 0.75 78.57 6.13 61.63 1.90", "62.73 2.28"),
            ("39.25 1.12 77.44 0.55 55.11 1.74 78.75 5.67 62.21 2.55", "62.55 2.33"),
        ),
    ),
    "table4": (
        "Table 4: data perturbation (10% of training samples removed), RoBERTa-base",
        _GLUE5,
        (
            ("60.17 1.84 88.61 1.01 75.02 1.56 83.04 3.93 57.88 5.42", "72.94 2.75"),
            ("60.24 1.51 88.59 0.84 74.91 1.79 83.75 2.93 58.75 5.43", "73.25 2.50"),
            ("60.11 1.26 88.88 0.84 72.27 2.31 84.46 3.20 55.29 4.81", "72.20 2.48"),
            ("60.35 1.20 88.41 0.85 74.77 1.22 85.00 3.01 61.92 4.30", "74.09 2.12"),
            ("60.84 1.39 89.66 0.89 71.05 1.25 85.54 3.43 56.73 4.26", "72.76 2.24"),
            ("60.04 1.68 88.67 0.70 75.16 1.29 86.79 2.42 54.13 5.47", "72.96 2.31"),
        ),
    ),
    "table5": (
        "Table 5: full fine-tuning of RoBERTa-large",
        _GLUE5,
        (
            ("64.63 2.19 90.41 0.84 83.42 2.05 84.95 5.13 67.60 3.25", "78.20 2.69"),
            ("65.19 1.87 90.48 0.88 84.04 2.33 85.54 4.48 66.35 2.43", "78.32 2.40"),
            ("64.80 1.07 90.57 0.71 82.95 1.07 84.13 4.79 66.06 3.77", "77.70 2.28"),
            ("65.48 1.24 90.44 0.45 84.26 0.97 86.61 4.87 64.33 2.90", "78.22 2.09"),
            ("63.45 1.75 90.54 0.56 84.51 1.49 85.36 4.06 68.17 2.49", "78.41 2.07"),
            ("60.75 1.04 90.09 0.70 84.30 1.57 87.76 5.18 68.94 4.10", "78.37 2.52"),
        ),
    ),
}


def _build(name: str) -> StabilityTable:
    caption, tasks, rows = _RAW[name]
    cells = np.array([[float(v) for v in row.split()] for row, _ in rows])
    avg = np.array([[float(v) for v in a.split()] for _, a in rows])
    if cells.shape != (len(METHODS), 2 * len(tasks)):  # transcription self-check
        raise AssertionError(f"{name}: expected {len(METHODS)}×{2 * len(tasks)} cells")
    return StabilityTable(
        name, caption, tasks, METHODS, cells[:, 0::2], cells[:, 1::2], avg[:, 0], avg[:, 1]
    )


#: Table names, in the paper's order.
TABLES = tuple(_RAW)


def stability_table(name: str) -> StabilityTable:
    """Fu et al. (2023) Table ``name`` (``"table2"`` … ``"table5"``) as printed.

    Examples:
      >>> t = stability_table("table3")
      >>> t.tasks, t.means.shape
      (('CoLA', 'MRPC', 'RTE', 'CB', 'WSC'), (6, 5))
    """
    if name not in _RAW:
        raise ValueError(f"stability_table: name must be one of {TABLES}, got {name!r}.")
    return _build(name)


def recomputed_avg(table: StabilityTable) -> tuple[np.ndarray, np.ndarray]:
    """The AVG columns recomputed: unweighted task means of the printed means and stds.

    Fu et al. (2023), Tables 2–5, column AVG (the paper does not define it; this is the
    definition every row matches to rounding, see :func:`avg_discrepancy`).

    Returns:
      ``(mean of means, mean of stds)``, each of shape ``(methods,)``.
    """
    return table.means.mean(axis=1), table.stds.mean(axis=1)


def avg_discrepancy(table: StabilityTable) -> tuple[np.ndarray, np.ndarray]:
    """Printed AVG minus :func:`recomputed_avg`, for the mean and the std columns.

    A value within ``±ROUNDING_TOLERANCE`` is explained by rounding (module doc).

    Examples:
      >>> d_mean, d_std = avg_discrepancy(stability_table("table2"))
      >>> bool(abs(d_mean).max() <= ROUNDING_TOLERANCE)
      True
    """
    mean, std = recomputed_avg(table)
    return table.avg_mean - mean, table.avg_std - std


def duplicate_cells(table: StabilityTable) -> list[tuple[str, str, str]]:
    """Cells where two methods print the identical ``mean ± std`` on the same task.

    With 10 independent seeds per method an exact repeat of both numbers is unlikely, so a
    repeat hints at a copied entry, e.g. Table 2 QQP (MixOut = FineTune).

    Returns:
      ``(task, method_a, method_b)`` triples, in table order.

    Examples:
      >>> ("QQP", "FineTune", "MixOut") in duplicate_cells(stability_table("table2"))
      True
    """
    found = []
    for t, task in enumerate(table.tasks):
        for a in range(len(table.methods)):
            for b in range(a + 1, len(table.methods)):
                same_mean = table.means[a, t] == table.means[b, t]
                if same_mean and table.stds[a, t] == table.stds[b, t]:
                    found.append((task, table.methods[a], table.methods[b]))
    return found
