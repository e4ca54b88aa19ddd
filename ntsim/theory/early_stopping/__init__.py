r"""Early stopping from a pretrained initialisation (Sun & Raskutti 2026): the kernel theory.

Setting (Secs 3.3–3.5, 6, App. B): fine-tuning a wide network from ``f_PT`` by full-batch
GD is kernel GD on ``K = JJᵀ/(N n)`` (:func:`empirical_kernel_matrix`); the train residual
is ``(I − αK)^τ r_0`` and the error splits into bias and variance
(:mod:`._kernel_gd`). The data-dependent stopping rule of Raskutti, Wainwright & Yu 2014 —
local empirical Rademacher complexity (eq. (10)), critical radius (eq. (11)), stopping time
``T̂`` and its ``12ϱ̂²`` guarantee — and ``T̂_op`` (eq. (36)) and hold-out early stopping are in
:mod:`._stopping` (the generic spectral pieces live in ``ntsim.core``). The early stopping ↔
ridge correspondence (Sec 6.2) is in :mod:`._ridge`, the Sobolev benchmark in
:mod:`._sobolev`. Task vectors in the linearised model (Cors 1–2) are in
:mod:`._task_vectors`, the trained attention model's task vectors against that prediction
(Cor 2 at finite width) in :mod:`._trained_task_vectors`; the attention model's width
scaling (Thms 3, 5; Lemmas 1, 2, 5) in :mod:`._width_scaling`, Lemma 1's first-order
remainder along the network's own fine-tuning path in :mod:`._taylor_remainder`, Lemma 5's
random-init expansion (eq. (97)) in :mod:`._mixed_init`; the synthetic tasks of the Sec 7 analogues
(NTK eigen-decay, learning curves, task vectors) in :mod:`._synthetic_tasks`, one seed of
the hold-out learning curves (Thm 1's rate, Fig. 2) in :mod:`._learning_curves`.

Errata of the paper, implemented as printed /
corrected pairs:

* eq. (11) prints ``C_H²``; the rescaled Raskutti rule has ``C_H``
  (:func:`empirical_critical_radius_printed` / :func:`empirical_critical_radius_corrected`,
  ``c_h_exponent`` everywhere);
* eq. (26) says "maximizing"; eq. (36) is an argmin (:func:`optimal_stopping_time_printed`
  / :func:`optimal_stopping_time`);
* below eq. (27), ``λ = εT̂``; the matching ridge is ``1/(εT̂)``
  (:func:`ridge_for_steps_printed` / :func:`ridge_for_steps_corrected`).

Conventions: functions are pure, keep the input dtype and are ``jit``/``vmap``-compatible;
value checks run only on concrete inputs. Nothing here touches ``jax_enable_x64``.

References:
  .. code-block:: bibtex

    @misc{sun2026earlystopping,
      title  = {A Theoretical Framework for {LLM} Fine-Tuning Using Early Stopping for
                Non-Random Initialization},
      author = {Sun, Zexuan and Raskutti, Garvesh},
      year   = {2026},
    }
    @article{raskutti2014early,
      title   = {Early Stopping and Non-parametric Regression: An Optimal Data-dependent
                 Stopping Rule},
      author  = {Raskutti, Garvesh and Wainwright, Martin J. and Yu, Bin},
      journal = {Journal of Machine Learning Research},
      volume  = {15},
      pages   = {335--366},
      year    = {2014},
    }
"""

from ntsim.theory.early_stopping._kernel_gd import (
    bias_bound,
    empirical_kernel_matrix,
    expected_variance,
    gd_shrinkage,
    kernel_gd_residuals,
    pretrained_kernel_gd,
    squared_bias,
    variance_bound,
)
from ntsim.theory.early_stopping._kernel_gd_checks import (
    BOUNDS_ANCHOR_X,
    BiasVarianceBounds,
    BoundsSetting,
    ClosedFormErrors,
    ClosedFormSetting,
    LinearisedGDSetting,
    MonteCarloSetting,
    random_kernel,
    simulate_bias_variance_bounds,
    simulate_bias_variance_monte_carlo,
    simulate_kernel_closed_forms,
    simulate_linearised_gd,
)
from ntsim.theory.early_stopping._learning_curves import (
    LEARNING_CURVE_TARGETS,
    LearningCurves,
    LearningCurveSetting,
    LearningCurveSweepSetting,
    holdout_learning_curves,
    simulate_learning_curves,
)
from ntsim.theory.early_stopping._mixed_init import (
    MixedInitBlocks,
    MixedInitBlocksSetting,
    MixedInitKernel,
    MixedInitRun,
    MixedInitSweep,
    mixed_init_kernel,
    mixed_init_run,
    simulate_mixed_init,
    simulate_mixed_init_blocks,
)
from ntsim.theory.early_stopping._rates import RateFit, fit_log_log_rate
from ntsim.theory.early_stopping._ridge import (
    SANDWICH_SETTINGS,
    SandwichMargins,
    SandwichSetting,
    ShrinkageSandwich,
    krr_shrinkage,
    ridge_for_steps_corrected,
    ridge_for_steps_printed,
    shrinkage_sandwich,
    simulate_shrinkage_sandwich,
)
from ntsim.theory.early_stopping._sobolev import (
    SOBOLEV_NOISE_STD,
    SOBOLEV_TARGET_RKHS_NORM,
    SobolevErrors,
    SobolevSweep,
    SobolevSweepSetting,
    simulate_sobolev_sweep,
    sobolev_benchmark,
    sobolev_kernel,
    sobolev_sample,
    sobolev_target,
)
from ntsim.theory.early_stopping._stopping import (
    CORRECTED_C_H_EXPONENT,
    GUARANTEE_FACTOR,
    PRINTED_C_H_EXPONENT,
    HoldoutResult,
    PowerLawRates,
    PowerLawRateSetting,
    critical_radius_coefficient,
    empirical_critical_radius,
    empirical_critical_radius_corrected,
    empirical_critical_radius_printed,
    guarantee_bound,
    holdout_early_stopping,
    optimal_stopping_time,
    optimal_stopping_time_printed,
    patience_stopping,
    power_law_critical_radius_squared,
    raskutti_stopping_time,
    simulate_power_law_rates,
)
from ntsim.theory.early_stopping._stopping_checks import (
    BELOW_ROOT,
    DRIFT_SLOPES,
    CHRescaling,
    CriticalRadiusRun,
    OptimalStoppingRun,
    SpectrumSetting,
    StoppingTimesRun,
    random_spectrum,
    simulate_c_h_rescaling,
    simulate_critical_radius,
    simulate_optimal_stopping,
    simulate_rademacher_facts,
    simulate_stopping_times,
)
from ntsim.theory.early_stopping._synthetic_tasks import (
    PretrainedAttention,
    pretrain_attention,
    pretrain_attention_for,
    subspace_basis,
    subspace_inputs,
    task_teacher,
    width_normalised_ntk,
)
from ntsim.theory.early_stopping._task_vectors import (
    LINEAR_TASK_VECTOR_SETTINGS,
    LinearTaskVectorRun,
    LinearTaskVectorSetting,
    addition_interference,
    gd_task_vector,
    linearised_mse,
    negation_gap,
    simulate_linear_task_vectors,
    task_vector,
    task_vector_coefficients,
    task_vector_cosine,
)
from ntsim.theory.early_stopping._taylor_remainder import (
    TaylorRemainderRun,
    TaylorRemainderSweep,
    simulate_taylor_remainder,
    taylor_remainder_run,
)
from ntsim.theory.early_stopping._trained_task_vectors import (
    NUM_TASKS,
    TRAINED_TASK_VECTOR_SETTINGS,
    TaskVectorSetting,
    TaskVectorSweepSetting,
    TrainedTaskVectors,
    TrainedTaskVectorSweep,
    finetune_step,
    simulate_trained_task_vectors,
    task_vector_bases,
    trained_task_vectors,
)
from ntsim.theory.early_stopping._width_scaling import (
    InitLogits,
    InitLogitSetting,
    TaskData,
    WidthScalingRun,
    WidthScalingSetting,
    WidthScalingSweep,
    attention_logits,
    backbone_features,
    backbone_kernel_block,
    head_kernel_block,
    paper_attention_model,
    pretrain_source,
    relative_kernel_drift,
    simulate_init_logits,
    simulate_width_scaling,
    source_target_data,
    width_scaling_run,
)

__all__ = [
    "BELOW_ROOT",
    "DRIFT_SLOPES",
    "CHRescaling",
    "CriticalRadiusRun",
    "OptimalStoppingRun",
    "SpectrumSetting",
    "StoppingTimesRun",
    "random_spectrum",
    "simulate_c_h_rescaling",
    "simulate_critical_radius",
    "simulate_optimal_stopping",
    "simulate_rademacher_facts",
    "simulate_stopping_times",
    "BOUNDS_ANCHOR_X",
    "BiasVarianceBounds",
    "BoundsSetting",
    "ClosedFormErrors",
    "ClosedFormSetting",
    "LinearisedGDSetting",
    "MonteCarloSetting",
    "random_kernel",
    "simulate_bias_variance_bounds",
    "simulate_bias_variance_monte_carlo",
    "simulate_kernel_closed_forms",
    "simulate_linearised_gd",
    "MixedInitKernel",
    "MixedInitRun",
    "MixedInitSweep",
    "MixedInitBlocks",
    "MixedInitBlocksSetting",
    "simulate_mixed_init_blocks",
    "simulate_mixed_init",
    "mixed_init_kernel",
    "mixed_init_run",
    "pretrain_source",
    "LEARNING_CURVE_TARGETS",
    "LearningCurves",
    "LearningCurveSetting",
    "LearningCurveSweepSetting",
    "simulate_learning_curves",
    "holdout_learning_curves",
    "PretrainedAttention",
    "pretrain_attention",
    "pretrain_attention_for",
    "subspace_basis",
    "subspace_inputs",
    "task_teacher",
    "width_normalised_ntk",
    "NUM_TASKS",
    "TRAINED_TASK_VECTOR_SETTINGS",
    "TaskVectorSweepSetting",
    "TrainedTaskVectorSweep",
    "simulate_trained_task_vectors",
    "TaskVectorSetting",
    "TrainedTaskVectors",
    "task_vector_bases",
    "trained_task_vectors",
    "finetune_step",
    "InitLogits",
    "InitLogitSetting",
    "RateFit",
    "fit_log_log_rate",
    "simulate_init_logits",
    "simulate_width_scaling",
    "TaskData",
    "TaylorRemainderRun",
    "TaylorRemainderSweep",
    "simulate_taylor_remainder",
    "taylor_remainder_run",
    "WidthScalingRun",
    "WidthScalingSetting",
    "WidthScalingSweep",
    "LinearTaskVectorRun",
    "LinearTaskVectorSetting",
    "LINEAR_TASK_VECTOR_SETTINGS",
    "gd_task_vector",
    "simulate_linear_task_vectors",
    "addition_interference",
    "attention_logits",
    "backbone_features",
    "backbone_kernel_block",
    "head_kernel_block",
    "linearised_mse",
    "negation_gap",
    "paper_attention_model",
    "relative_kernel_drift",
    "source_target_data",
    "task_vector",
    "task_vector_coefficients",
    "task_vector_cosine",
    "width_scaling_run",
    "CORRECTED_C_H_EXPONENT",
    "GUARANTEE_FACTOR",
    "PRINTED_C_H_EXPONENT",
    "SOBOLEV_NOISE_STD",
    "SOBOLEV_TARGET_RKHS_NORM",
    "HoldoutResult",
    "PowerLawRates",
    "PowerLawRateSetting",
    "power_law_critical_radius_squared",
    "simulate_power_law_rates",
    "SandwichMargins",
    "SandwichSetting",
    "SANDWICH_SETTINGS",
    "ShrinkageSandwich",
    "simulate_shrinkage_sandwich",
    "SobolevErrors",
    "SobolevSweep",
    "SobolevSweepSetting",
    "simulate_sobolev_sweep",
    "bias_bound",
    "critical_radius_coefficient",
    "empirical_critical_radius",
    "empirical_critical_radius_corrected",
    "empirical_critical_radius_printed",
    "empirical_kernel_matrix",
    "expected_variance",
    "gd_shrinkage",
    "guarantee_bound",
    "holdout_early_stopping",
    "kernel_gd_residuals",
    "krr_shrinkage",
    "optimal_stopping_time",
    "optimal_stopping_time_printed",
    "patience_stopping",
    "pretrained_kernel_gd",
    "raskutti_stopping_time",
    "ridge_for_steps_corrected",
    "ridge_for_steps_printed",
    "shrinkage_sandwich",
    "sobolev_benchmark",
    "sobolev_kernel",
    "sobolev_sample",
    "sobolev_target",
    "squared_bias",
    "variance_bound",
]
