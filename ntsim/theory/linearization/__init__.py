r"""Linearization explains fine-tuning (Rahimi Afzal et al. 2025): dynamics, bounds, spectra.

Setting (slides; ``../shared/papers/notes_afzal2025_linearization.md``): a scalar model
``f_θ`` fine-tuned from ``θ_0`` on ``(x*, y*)`` by split proximal GD on the summed loss
``R̃(θ) = ‖f_θ(x*) − y*‖²`` with ``(λ/2)‖θ − θ_0‖²`` (constant or selective ``λ_t``);
``J_θ = ∇f_θ(x*)``, ``k_θ = J_θJ_θᵀ``, ``K = k_{θ_0}``.

* :mod:`._dynamics` — runs of the network and its linearisation (:func:`finetune`), the
  Lemma-3 flow (:func:`flow_path`), Thm 1's identities (:func:`thm1_identity`).
* :mod:`._lipschitz` — Lemma 1 (:func:`lemma1_pair`) and Algorithm 1
  (:func:`estimate_lipschitz`).
* :mod:`._bounds` — Thm 2 (distance to ``θ_0``), Thm 3 (network vs linearisation),
  Thm 4 (``λ_o``, containment, exit time, simplified bound).
* :mod:`._spectral` — KRR reduction (ridge ``σ = λ/(2c)``, residual path, distance limit),
  Thms 5–7.
* :mod:`._sweeps` — the paper's experiments as functions: the linearity-vs-λ table
  (:func:`linearity_vs_lambda`) and fits of PEFT configurations (:func:`fit_config`).
* :mod:`._peft` — PEFT configurations (layer, LoRA rank, head only), their NTK and sign
  kernels at ``θ_0``, NTK additivity, κ, Spearman's ρ, synthetic tasks and pretraining.

Errata (printed / corrected pairs): Thm 2's residual (:func:`thm2_bound_printed`), Thm 4's
``R̃(θ_0)`` (:func:`thm4_lambda_o_printed`), the KRR ridge and targets
(:func:`ridge_from_proximal_printed`), Thm 5's ``‖y*‖`` (:func:`thm5_bounds_printed`),
Thm 7's ``λ_min`` denominator (:func:`thm7_step_bounds` with ``printed=True``).

References:
  .. code-block:: bibtex

    @inproceedings{rahimiafzal2025linearization,
      title     = {Linearization Explains Fine-Tuning in Large Language Models},
      author    = {Rahimi Afzal, Zahra and Esmaeilbeig, Tara and Soltanalian, Mojtaba and
                   Ohannessian, Mesrob I.},
      booktitle = {Advances in Neural Information Processing Systems},
      year      = {2025},
      note      = {arXiv:2602.08239},
    }
"""

from ntsim.theory.linearization._bounds import (
    thm2_bound,
    thm2_bound_constant,
    thm2_bound_printed,
    thm2_integral,
    thm3_b,
    thm3_bound,
    thm4_lambda_o,
    thm4_lambda_o_printed,
    thm4_simplified_bound,
    thm4_stay_time,
)
from ntsim.theory.linearization._dynamics import (
    Thm1Identity,
    Trajectory,
    finetune,
    flat_jacobian,
    flow_path,
    jacobian_op_norm,
    outputs,
    squared_loss,
    thm1_identity,
)
from ntsim.theory.linearization._lipschitz import (
    LipschitzEstimate,
    estimate_lipschitz,
    lemma1_pair,
    sample_ball,
    spectral_norm,
)
from ntsim.theory.linearization._peft import (
    PeftModel,
    SyntheticTasks,
    bernoulli_kl,
    block_kernels,
    kernel_condition_number,
    peft_kernels,
    peft_model,
    pretrained_attention,
    pretrained_mlp,
    pretrained_setup,
    spearman,
    subset_model,
    synthetic_tasks,
)
from ntsim.theory.linearization._spectral import (
    RIDGE_CONVENTIONS,
    SpectralBounds,
    krr_train_risk,
    perturbation_size,
    residual_path,
    ridge_from_proximal,
    ridge_from_proximal_printed,
    thm5_bounds,
    thm5_bounds_printed,
    thm6_bounds,
    thm7_bounds,
    thm7_step_bounds,
    weight_distance_limit,
)
from ntsim.theory.linearization._sweeps import (
    ConfigFit,
    LinearityTable,
    fit_config,
    linearity_vs_lambda,
)

__all__ = [
    "RIDGE_CONVENTIONS",
    "ConfigFit",
    "LinearityTable",
    "LipschitzEstimate",
    "PeftModel",
    "SpectralBounds",
    "SyntheticTasks",
    "Thm1Identity",
    "Trajectory",
    "bernoulli_kl",
    "block_kernels",
    "estimate_lipschitz",
    "finetune",
    "fit_config",
    "flat_jacobian",
    "flow_path",
    "jacobian_op_norm",
    "kernel_condition_number",
    "krr_train_risk",
    "linearity_vs_lambda",
    "lemma1_pair",
    "outputs",
    "peft_kernels",
    "peft_model",
    "perturbation_size",
    "pretrained_attention",
    "pretrained_mlp",
    "pretrained_setup",
    "residual_path",
    "ridge_from_proximal",
    "ridge_from_proximal_printed",
    "sample_ball",
    "spearman",
    "spectral_norm",
    "squared_loss",
    "subset_model",
    "synthetic_tasks",
    "thm1_identity",
    "thm2_bound",
    "thm2_bound_constant",
    "thm2_bound_printed",
    "thm2_integral",
    "thm3_b",
    "thm3_bound",
    "thm4_lambda_o",
    "thm4_lambda_o_printed",
    "thm4_simplified_bound",
    "thm4_stay_time",
    "thm5_bounds",
    "thm5_bounds_printed",
    "thm6_bounds",
    "thm7_bounds",
    "thm7_step_bounds",
    "weight_distance_limit",
]
