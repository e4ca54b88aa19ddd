"""Every experiment under ``experiments/`` runs at quick scale and writes a real figure.

The numbers inside each figure are checked by the claims and theory tests; this test
guards the experiment contract itself (``Config``/``SCALES``/``run``/``plot``), that the
quick scale stays runnable, and that results are finite JSON.
"""

from __future__ import annotations

import json
import math

import pytest

from ntsim.experiment import list_experiments, run_experiment


def _finite_numbers(value) -> bool:
    """Every float in a JSON document is finite (NaN would mean a broken run)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_numbers(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite_numbers(v) for v in value)
    return True


# Quick scale of these took >= 20 s on 2 shared cores (mostly compilation); they run in
# `make test-full`, not in CI (fig1 is also exercised end to end by tests/test_cli.py).
SLOW_AT_QUICK = {
    "early_stopping/sobolev_stopping_rule",
    "early_stopping/ntk_eigen_decay",
    "early_stopping/learning_curves",
    "early_stopping/task_vectors",
    # MiniLM-L3: one NTK and one GD compilation each (~25–80 s on 2 shared cores)
    "early_stopping/minilm_ntk_decay",
    "early_stopping/minilm_stopping_rule",
    "early_stopping/minilm_task_vectors",
    "linear_teachers/fig1_covariance_alignment",
    "linear_teachers/fig2_depth_and_scale",
    "linear_teachers/fig3_freezing",
    "linear_teachers/relu_kernel_vs_network",
    "linear_teachers/table1_digits_bound_correlation",
    "linearization/minilm_kappa",  # BERT compilations; its pieces: tests/theory, transformers
    "linearization/minilm_lambda_table",
    "stability/methods_std_sweeps",
    "stability/minilm_stability",  # six BERT compilations; its losses: tests/transformers
    "stability/synthetic_loo_stability",
    "stability/table2_methods_small_scale",
    "stability/table3_head_tuning_small_scale",  # table2's code with other settings
    "stability/table4_data_removal_small_scale",
    "overtraining/fig_pretraining_budget",  # its loops are tested in tests/theory
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name in SLOW_AT_QUICK else name
        for name in list_experiments()
    ],
)
def test_experiment_runs_at_quick_scale(name, tmp_path):
    output = run_experiment(name, scale="quick", out_dir=tmp_path)
    assert output.png.stat().st_size > 10_000, "the figure is empty"
    record = json.loads(output.json.read_text())
    assert record["experiment"] == name and record["scale"] == "quick"
    assert _finite_numbers(record["results"]), f"{name}: non-finite numbers in the results"
