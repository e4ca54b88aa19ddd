"""Fu, So & Collier 2023, "A Stability Analysis of Fine-Tuning a Pre-Trained Model".

One private submodule per section; the public names are re-exported here.

* :mod:`._full_finetuning` — Sec 2.2: the quadratic (Taylor) model, leave-one-out GD, the
  Thm 2.2 bounds (printed, proof, corrected) and Lemmas A.1.1–A.1.3, A.5.1.
* :mod:`._tables` — the paper's Tables 2–5 as data and their AVG columns.
* :mod:`._small_scale` — the small-scale analogue of Table 2: synthetic source/target
  tasks, an MLP encoder, pretraining, SURT re-training and fine-tuning with each method.

References:
  .. code-block:: bibtex

    @misc{fu2023stability,
      title   = {A Stability Analysis of Fine-Tuning a Pre-Trained Model},
      author  = {Fu, Zihao and So, Anthony Man-Cho and Collier, Nigel},
      year    = {2023},
      eprint  = {2301.09820},
      url     = {https://arxiv.org/abs/2301.09820},
    }
"""

from ntsim.theory.stability._full_finetuning import (
    LemmaSides,
    LooTrajectory,
    QuadraticInstance,
    lemma_a1_1_rate,
    lemma_a1_2_sides,
    lemma_a1_3_sides,
    lemma_a5_1_sides,
    logistic_sample_loss,
    logistic_smoothness,
    loo_distance_isotropic,
    loo_trajectory,
    path_lipschitz_constant,
    quadratic_instance,
    quadratic_loss,
    simulate_loo_stability,
    simulate_loo_stability_grid,
    thm2_2_bound_corrected,
    thm2_2_bound_printed,
    thm2_2_bound_proof,
)
from ntsim.theory.stability._small_scale import (
    FinetuneResult,
    LooResult,
    MethodHyper,
    Pretrained,
    TransferData,
    TransferSetting,
    finetune,
    finetune_loo,
    method_hyper,
    pretrain,
    surt_retrain,
    transfer_task_data,
)
from ntsim.theory.stability._tables import (
    METHODS,
    ROUNDING_TOLERANCE,
    TABLES,
    StabilityTable,
    avg_discrepancy,
    duplicate_cells,
    recomputed_avg,
    stability_table,
)

__all__ = [
    "LemmaSides",
    "LooTrajectory",
    "QuadraticInstance",
    "lemma_a1_1_rate",
    "lemma_a1_2_sides",
    "lemma_a1_3_sides",
    "lemma_a5_1_sides",
    "logistic_sample_loss",
    "logistic_smoothness",
    "loo_distance_isotropic",
    "loo_trajectory",
    "path_lipschitz_constant",
    "quadratic_instance",
    "quadratic_loss",
    "simulate_loo_stability",
    "simulate_loo_stability_grid",
    "thm2_2_bound_corrected",
    "thm2_2_bound_printed",
    "thm2_2_bound_proof",
    "METHODS",
    "ROUNDING_TOLERANCE",
    "TABLES",
    "FinetuneResult",
    "LooResult",
    "MethodHyper",
    "Pretrained",
    "StabilityTable",
    "TransferData",
    "TransferSetting",
    "avg_discrepancy",
    "duplicate_cells",
    "finetune",
    "finetune_loo",
    "method_hyper",
    "pretrain",
    "recomputed_avg",
    "stability_table",
    "surt_retrain",
    "transfer_task_data",
]
