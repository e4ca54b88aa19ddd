r"""Fine-tuning linear regression from a linear teacher (Shachaf, Brutzkus & Globerson 2021).

Setting (Sec 3): target inputs ``x ~ D`` with second moment ``Σ = V diag(λ) Vᵀ``
(``λ_1 ≥ … ≥ λ_d``), ``n < d`` target samples ``X ∈ R^{n×d}`` labelled by a linear teacher,
``y = X θ_T``; fine-tuning runs gradient descent on ``L(w) = (1/n)‖Xw − y‖²`` from the
pretrained weights ``w(0) = θ_S``. ``P_∥ = Xᵀ(XXᵀ)⁻¹X`` projects onto the row space of ``X``
and ``P_⊥ = I − P_∥`` onto its null space. Theorem 4.1 gives the limit ``γ`` of GD and its
population risk; Figure 1 compares ``v = θ_T − θ_S`` in the top vs the bottom eigenspace.

Conventions: ``x`` is ``(n, d)`` (rows are samples). Functions are pure, keep the input
dtype, and are ``jit``/``vmap``-compatible; value checks (rank, ordering) run only on concrete
inputs. Nothing here touches ``jax_enable_x64``: use ``with jax.enable_x64(True):``.

References:
  .. code-block:: bibtex

    @inproceedings{shachaf2021theoretical,
      title     = {A Theoretical Analysis of Fine-tuning with Linear Teachers},
      author    = {Shachaf, Gal and Brutzkus, Alon and Globerson, Amir},
      booktitle = {Advances in Neural Information Processing Systems},
      volume    = {34},
      year      = {2021},
      url       = {https://arxiv.org/abs/2107.01641},
    }

"""

from ntsim.theory.linear_teachers._alignment import (
    AlignmentDirections,
    alignment_directions,
    deterministic_equivalent_crossing,
    deterministic_equivalent_risk,
    nested_prefix_risks,
    risk_curve_nested,
)
from ntsim.theory.linear_teachers._bounds import (
    bartlett_bias_bound,
    bound_thm4_2,
    bound_thm4_2_deterministic,
    bound_thm4_2_prefixes,
    bound_thm4_2_printed,
    deviation_bound_thm4_2,
    effective_rank,
    eigen_split_norms,
    implied_constant,
    min_norm_least_squares,
    null_space_top_overlap,
    r_squared,
    realised_deviation,
    realised_deviation_spiked,
    risk_null_space_bound,
    second_moment,
    zero_one_error,
)
from ntsim.theory.linear_teachers._common import null_space_projector, row_space_projector
from ntsim.theory.linear_teachers._deep import (
    DeepLimitScale,
    RandomProjectionBounds,
    aligned_risk_depth1,
    deep_fine_tuned_limit,
    deep_limit_scale,
    deep_risk,
    end_to_end_preconditioner,
    frozen_first_layer_coefficient,
    frozen_risk_floor,
    projection_epsilon,
    random_projection_bounds,
    unit_pair_at_distance,
)
from ntsim.theory.linear_teachers._freezing import (
    FreezingRun,
    FreezingSetting,
    FreezingTraining,
    FrozenFirstLayerRun,
    FrozenFirstLayerSetting,
    simulate_freezing,
    simulate_frozen_first_layer,
)
from ntsim.theory.linear_teachers._kernel_regime import (
    KernelRegimeRun,
    KernelRegimeSetting,
    simulate_kernel_regime,
)
from ntsim.theory.linear_teachers._random_projection import (
    CONSTRUCTED_ANGLES_DEG,
    RandomProjectionRun,
    RandomProjectionSetting,
    simulate_random_projection,
)
from ntsim.theory.linear_teachers._regression import (
    fine_tuned_linear,
    fine_tuned_linear_pinv,
    gd_iterate_closed_form,
    monte_carlo_risk,
    population_risk,
    risk_thm4_1,
)
from ntsim.theory.linear_teachers._relu import (
    COR6_2_FACTOR,
    COR6_3_FACTOR,
    DERIVED_FACTOR,
    THM6_1_FACTOR,
    PretrainedReLU,
    clipped_l1_loss,
    first_layer_gram,
    hinf_norm,
    hinf_norm_bound_cor6_2,
    hinf_norm_bound_derived,
    kernel_predictor,
    pretrain_two_layer_relu,
    residual_targets,
    risk_bound_cor6_3,
    risk_bound_thm6_1,
    simulate_relu_fine_tuning,
    thm6_1_o_term,
    train_two_layer_relu,
    unit_norm_inputs,
)
from ntsim.theory.linear_teachers._scale import (
    ScaleRun,
    ScaleSetting,
    simulate_scale_target_vs_source,
)

__all__ = [
    "CONSTRUCTED_ANGLES_DEG",
    "RandomProjectionRun",
    "RandomProjectionSetting",
    "simulate_random_projection",
    "FreezingRun",
    "FreezingSetting",
    "FreezingTraining",
    "FrozenFirstLayerRun",
    "FrozenFirstLayerSetting",
    "simulate_freezing",
    "simulate_frozen_first_layer",
    "KernelRegimeRun",
    "KernelRegimeSetting",
    "simulate_kernel_regime",
    "ScaleRun",
    "ScaleSetting",
    "simulate_scale_target_vs_source",
    "COR6_2_FACTOR",
    "COR6_3_FACTOR",
    "DERIVED_FACTOR",
    "THM6_1_FACTOR",
    "aligned_risk_depth1",
    "alignment_directions",
    "AlignmentDirections",
    "bartlett_bias_bound",
    "bound_thm4_2",
    "bound_thm4_2_deterministic",
    "bound_thm4_2_prefixes",
    "bound_thm4_2_printed",
    "clipped_l1_loss",
    "deep_fine_tuned_limit",
    "end_to_end_preconditioner",
    "deep_limit_scale",
    "deep_risk",
    "DeepLimitScale",
    "deterministic_equivalent_crossing",
    "deterministic_equivalent_risk",
    "deviation_bound_thm4_2",
    "effective_rank",
    "eigen_split_norms",
    "fine_tuned_linear",
    "fine_tuned_linear_pinv",
    "first_layer_gram",
    "frozen_first_layer_coefficient",
    "frozen_risk_floor",
    "gd_iterate_closed_form",
    "hinf_norm",
    "hinf_norm_bound_cor6_2",
    "hinf_norm_bound_derived",
    "implied_constant",
    "kernel_predictor",
    "min_norm_least_squares",
    "monte_carlo_risk",
    "nested_prefix_risks",
    "null_space_projector",
    "null_space_top_overlap",
    "population_risk",
    "pretrain_two_layer_relu",
    "PretrainedReLU",
    "projection_epsilon",
    "r_squared",
    "random_projection_bounds",
    "RandomProjectionBounds",
    "realised_deviation",
    "realised_deviation_spiked",
    "residual_targets",
    "risk_bound_cor6_3",
    "risk_bound_thm6_1",
    "risk_curve_nested",
    "risk_null_space_bound",
    "risk_thm4_1",
    "row_space_projector",
    "second_moment",
    "simulate_relu_fine_tuning",
    "thm6_1_o_term",
    "train_two_layer_relu",
    "unit_norm_inputs",
    "unit_pair_at_distance",
    "zero_one_error",
]
