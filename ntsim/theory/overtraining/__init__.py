r"""Catastrophic overtraining in two-layer linear networks (Springer et al. 2025, Sec 4, App A, D).

Setting (Sec 4.1): ``y = A^pre x``, ``x ~ N(0, I_d)``, ``A^pre = U Σ^pre Vᵀ``; model
``θ = W1 W2`` pretrained by gradient flow from a small init, which learns the singular
values one at a time (Thm 4.1, Saxe et al.; :mod:`._pretraining`). Checkpoint ``n`` has the
top ``n`` features learned. Two post-training modifications of checkpoint ``n`` are studied:
Gaussian perturbation of the factors (Sec 4.2; :mod:`._perturbation`) and fine-tuning on
``A^ft = U Σ^ft Vᵀ`` with a pull ``λ`` toward the checkpoint (Sec 4.3; :mod:`._finetuning`).
The pretraining-budget analogue with a small byte-level decoder (Figs 3–5, 8 in miniature)
is in :mod:`._budget` (its pieces) and :mod:`._budget_sweep` (the whole protocol). The
inflection point (Def 4.2, :func:`inflection_point`) is the
checkpoint after which the modified model's pretraining loss grows.

Errata of the paper are implemented as printed /
corrected pairs: the fixed point of A.11/A.28 (:func:`fixed_point_printed` vs
:func:`fixed_point`), eq. (18) without its factor ``x`` (``mode_step(printed=True)``), eq. (11)
which is not the minibatch gradient (``finetune(eq11="printed")``). Thm 4.7 part 2's printed
direction (larger λ ⇒ earlier inflection) is refuted in ``ntsim.claims.overtraining``.

Conventions: functions are pure, keep the input dtype and are ``jit``/``vmap``-compatible;
checkpoint-indexed curves have ``d + 1`` entries, ``n = 0..d``. Nothing here touches
``jax_enable_x64``.

References:
  .. code-block:: bibtex

    @misc{springer2025overtrained,
      title   = {Overtrained Language Models Are Harder to Fine-Tune},
      author  = {Springer, Jacob Mitchell and Goyal, Sachin and Wen, Kaiyue and Kumar, Tanishq
                 and Yue, Xiang and Malladi, Sadhika and Neubig, Graham and
                 Raghunathan, Aditi},
      year    = {2025},
    }
"""

from ntsim.theory.overtraining._budget import (
    cosine_to_zero,
    finetune_at_learning_rates,
    perturbation_loss_increase,
    pretrain_for_budget,
)
from ntsim.theory.overtraining._budget_sweep import (
    QUICK_BUDGET_SETTING,
    BudgetSetting,
    BudgetSweepRun,
    budget_sweep,
    simulate_budget_sweep,
)
from ntsim.theory.overtraining._finetuning import (
    FinetuneResult,
    assumption_a8_holds,
    contraction_condition,
    contraction_rate,
    finetune,
    finetune_ideal_checkpoints,
    finetune_step,
    finetuning_increments,
    fixed_point,
    fixed_point_printed,
    mode_step,
    mode_trajectory,
    post_finetuning_losses,
)
from ntsim.theory.overtraining._finetuning_runs import (
    A8_FRACTION,
    ContractionRun,
    ContractionSetting,
    DeadUnitsRun,
    DeadUnitsSetting,
    FixedPointRun,
    FixedPointSetting,
    MinibatchGradientRun,
    MinibatchGradientSetting,
    RecursionRun,
    RecursionSetting,
    a8_learning_rate,
    simulate_contraction,
    simulate_dead_units,
    simulate_fixed_point,
    simulate_minibatch_gradient,
    simulate_recursion,
)
from ntsim.theory.overtraining._finite_batch import (
    FiniteBatchRun,
    FiniteBatchSetting,
    lemma_a15_bound,
    lemma_a17_bound,
    lemma_a19_bound,
    lemma_a20_bound,
    simulate_finite_batch,
)
from ntsim.theory.overtraining._instances import (
    haar_pair,
    ideal_checkpoints,
    procrustes_distance,
    random_geometric_spectrum,
    sorted_uniform,
)
from ntsim.theory.overtraining._perturbation import (
    HessianTraceRun,
    HessianTraceSetting,
    IdealPerturbationRun,
    IdealPerturbationSetting,
    PerturbedLossMonteCarloRun,
    PerturbedLossMonteCarloSetting,
    assumption_a2_bound,
    expected_perturbed_loss,
    gaussian_inflection,
    hessian_trace,
    ideal_hessian_traces,
    ideal_perturbed_losses,
    inflection_point,
    lemma_a6_gap_bound,
    monte_carlo_perturbed_loss,
    perturbed_increments,
    simulate_hessian_traces,
    simulate_ideal_perturbation,
    simulate_perturbed_loss_monte_carlo,
)
from ntsim.theory.overtraining._post_finetuning_runs import (
    ConvergedModelRun,
    ConvergedModelSetting,
    LongFinetuningRun,
    LongFinetuningSetting,
    RegularisationRun,
    RegularisationSetting,
    SensitivityRun,
    SensitivitySetting,
    ThresholdRun,
    ThresholdSetting,
    a24_increment_bound,
    simulate_converged_model,
    simulate_long_finetuning,
    simulate_misalignment_threshold,
    simulate_progressive_sensitivity,
    simulate_regularisation,
)
from ntsim.theory.overtraining._pretraining import (
    aligned_init,
    checkpoint_times,
    closest_checkpoints,
    geometric_spectrum,
    ideal_checkpoint,
    identity_init,
    logistic_modes,
    mode_matrix,
    pretrain_gradient_flow,
    pretraining_loss,
    task_matrix,
)
from ntsim.theory.overtraining._pretraining_runs import (
    AlignedFlowRun,
    AlignedFlowSetting,
    RealCheckpointRun,
    RealCheckpointSetting,
    RealVsIdealGapRun,
    RealVsIdealGapSetting,
    simulate_aligned_flow,
    simulate_real_checkpoints,
    simulate_real_vs_ideal_gap,
)

__all__ = [
    "ConvergedModelRun",
    "ConvergedModelSetting",
    "LongFinetuningRun",
    "LongFinetuningSetting",
    "RegularisationRun",
    "RegularisationSetting",
    "SensitivityRun",
    "SensitivitySetting",
    "ThresholdRun",
    "ThresholdSetting",
    "a24_increment_bound",
    "simulate_converged_model",
    "simulate_long_finetuning",
    "simulate_misalignment_threshold",
    "simulate_progressive_sensitivity",
    "simulate_regularisation",
    "FiniteBatchRun",
    "FiniteBatchSetting",
    "lemma_a15_bound",
    "lemma_a17_bound",
    "lemma_a19_bound",
    "lemma_a20_bound",
    "simulate_finite_batch",
    "A8_FRACTION",
    "ContractionRun",
    "ContractionSetting",
    "DeadUnitsRun",
    "DeadUnitsSetting",
    "FixedPointRun",
    "FixedPointSetting",
    "MinibatchGradientRun",
    "MinibatchGradientSetting",
    "RecursionRun",
    "RecursionSetting",
    "a8_learning_rate",
    "simulate_contraction",
    "simulate_dead_units",
    "simulate_fixed_point",
    "simulate_minibatch_gradient",
    "simulate_recursion",
    "AlignedFlowRun",
    "AlignedFlowSetting",
    "RealCheckpointRun",
    "RealCheckpointSetting",
    "simulate_aligned_flow",
    "simulate_real_checkpoints",
    "RealVsIdealGapRun",
    "RealVsIdealGapSetting",
    "simulate_real_vs_ideal_gap",
    "haar_pair",
    "ideal_checkpoints",
    "procrustes_distance",
    "random_geometric_spectrum",
    "sorted_uniform",
    "HessianTraceRun",
    "HessianTraceSetting",
    "IdealPerturbationRun",
    "IdealPerturbationSetting",
    "PerturbedLossMonteCarloRun",
    "PerturbedLossMonteCarloSetting",
    "simulate_hessian_traces",
    "simulate_ideal_perturbation",
    "simulate_perturbed_loss_monte_carlo",
    "aligned_init",
    "assumption_a2_bound",
    "assumption_a8_holds",
    "budget_sweep",
    "BudgetSetting",
    "BudgetSweepRun",
    "simulate_budget_sweep",
    "QUICK_BUDGET_SETTING",
    "checkpoint_times",
    "closest_checkpoints",
    "contraction_condition",
    "contraction_rate",
    "expected_perturbed_loss",
    "finetune",
    "finetune_at_learning_rates",
    "cosine_to_zero",
    "perturbation_loss_increase",
    "pretrain_for_budget",
    "finetune_ideal_checkpoints",
    "finetune_step",
    "FinetuneResult",
    "finetuning_increments",
    "fixed_point",
    "fixed_point_printed",
    "gaussian_inflection",
    "geometric_spectrum",
    "hessian_trace",
    "ideal_checkpoint",
    "ideal_hessian_traces",
    "ideal_perturbed_losses",
    "identity_init",
    "inflection_point",
    "lemma_a6_gap_bound",
    "logistic_modes",
    "mode_matrix",
    "mode_step",
    "mode_trajectory",
    "monte_carlo_perturbed_loss",
    "perturbed_increments",
    "post_finetuning_losses",
    "pretrain_gradient_flow",
    "pretraining_loss",
    "task_matrix",
]
