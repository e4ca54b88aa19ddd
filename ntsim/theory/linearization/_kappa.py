r"""Does ``κ(K + σI)`` of the NTK at ``θ_0`` predict fine-tuning? (Rahimi Afzal et al. 2025).

The paper's condition-number experiment ("Higher condition number → Higher train loss",
after Thm 5) as one pure simulation shared by the figure
(``experiments/linearization/kappa_predicts_finetuning.py``) and the claim: a tanh MLP is
pretrained on ``tanh(x·w_0)`` (:func:`pretrained_setup`) and fine-tuned on related binary
tasks with several parameter-efficient configurations (one layer, the head, LoRA of rank
``r``); before training, ``κ(K + σI)`` of the NTK and of the sign kernel of the trainable
parameters at ``θ_0``; then split-step GD on the summed squared loss. ``replicates``
independent pretrained models (data, pretraining and LoRA init drawn anew) make the rank
correlation between ``κ`` and the final loss an estimate with a confidence interval.
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.core import spearman
from ntsim.theory.linearization._dynamics import outputs
from ntsim.theory.linearization._peft import (
    kernel_condition_number,
    peft_kernels,
    peft_model,
    pretrained_setup,
)
from ntsim.theory.linearization._sweeps import fit_config

__all__ = [
    "KAPPA_SCALES",
    "PREDICTORS",
    "STEP_RULES",
    "KappaRun",
    "KappaSetting",
    "loss_rank_correlations",
    "simulate_kappa",
]

#: Step-size rules: ``η = step_fraction/(2λ_max(K) + λ)`` per configuration, or one ``η``.
STEP_RULES = ("normalised", "fixed")


@dataclasses.dataclass(frozen=True)
class KappaSetting:
    """Model, tasks, configurations and training (the paper gives no hyperparameters)."""

    hidden: tuple[int, ...] = (64, 64)
    dim: int = 8
    num_pretrain: int = 512
    num_train: int = 64
    num_test: int = 1000
    angles: tuple[float, ...] = (0.4, 0.8, 1.2)
    configs: tuple[str, ...] = ("head", "layer0", "layer1", "lora1", "lora2", "lora4", "lora8")
    sigma: float = 0.01  # ridge in κ(K + σI) (σ = λ/2 of the summed loss)
    proximal: float = 0.02  # λ during fine-tuning
    step_rule: str = "normalised"  # "normalised" or "fixed"
    step_fraction: float = 0.5
    fixed_learning_rate: float = 1e-3  # η for step_rule="fixed"
    steps: int = 2000
    record_every: int = 100
    pretrain_steps: int = 2000
    pretrain_lr: float = 0.5
    replicates: int = 1

    def __post_init__(self):
        names = ("dim", "num_pretrain", "num_train", "num_test", "steps", "record_every",
                 "replicates")  # fmt: skip
        check_int_fields(self, names)
        check_int_fields(self, ("pretrain_steps",), minimum=0)
        if self.step_rule not in STEP_RULES:
            raise ValueError(
                f"KappaSetting.step_rule must be one of {STEP_RULES}, got {self.step_rule!r}."
            )
        if len(self.configs) < 3:
            raise ValueError(f"KappaSetting.configs needs at least 3 entries, got {self.configs}.")
        if self.sigma < 0 or self.proximal < 0:
            raise ValueError(f"KappaSetting.sigma and proximal must be >= 0, got {self}.")
        if not 0 < self.step_fraction <= 1 or self.fixed_learning_rate <= 0:
            raise ValueError("KappaSetting: step_fraction in (0, 1] and fixed_learning_rate > 0.")
        if self.record_every > self.steps:
            raise ValueError("KappaSetting.record_every must not exceed steps.")


class KappaRun(NamedTuple):
    """Per replicate ``R`` and configuration ``C`` (and task ``T``).

    Attributes:
      kappa_ntk, kappa_sign: ``(R, C)`` ``κ(K + σI)`` of the NTK and of the sign kernel.
      lambda_max, lambda_min: ``(R, C)`` extreme eigenvalues of the NTK.
      learning_rate: ``(R, C)`` the step used.
      loss_curves: ``(R, C, T, steps/record_every + 1)`` mean squared training error.
      train_loss: ``(R, C, T)`` final mean squared training error.
      accuracy: ``(R, C, T)`` final test accuracy.
      num_params: ``(C,)`` trainable parameters per configuration.
      sigma: the ridge ``σ`` of ``κ(K + σI)`` (scalar).
      pretrained_loss: ``(R, T)`` mean squared training error of the pretrained model
        ``f_θ0`` itself (computed without the PEFT wrapping or the fine-tuning loop): every
        configuration's fine-tuning starts there, so each ``loss_curves[..., 0]`` equals it.
    """

    kappa_ntk: Array
    kappa_sign: Array
    lambda_max: Array
    lambda_min: Array
    learning_rate: Array
    loss_curves: Array
    train_loss: Array
    accuracy: Array
    num_params: Array
    sigma: Array
    pretrained_loss: Array | None = None


def simulate_kappa(key: PRNGKey, setting: KappaSetting) -> KappaRun:
    """κ at ``θ_0`` and one fine-tuning run per (replicate, configuration, task).

    Replicate ``r`` uses ``jax.random.split(key, replicates)[r]`` (split again into data,
    model and LoRA keys), identical across configurations. Pretraining is compiled and run
    once per replicate and shared by every configuration; configurations are a Python loop
    (parameter shapes differ), replicates and tasks are vmapped.
    """
    check_setting_type("simulate_kappa", setting, KappaSetting)
    check_key("simulate_kappa", key)
    s = setting
    targets = [("layers", i, "w") for i in range(len(s.hidden))]
    keys = jax.random.split(key, s.replicates)
    lora_keys = jax.vmap(lambda k: jax.random.split(k, 3)[2])(keys)
    model = {}

    def setup(k):
        k_data, k_model, _ = jax.random.split(k, 3)
        tasks, apply, theta0 = pretrained_setup(k_data, k_model, s)
        model["apply"] = apply  # the architecture's pure apply (the same for every key)
        return tasks, theta0

    # pretraining once per replicate (one compilation), shared by every configuration
    tasks, theta0 = jax.jit(jax.vmap(setup))(keys)
    apply = model["apply"]
    pretrained_loss = jax.vmap(
        lambda t, th: jnp.mean((outputs(apply, th, t.x_train) - t.y_train) ** 2, axis=1)
    )(tasks, theta0)
    per_config, num_params = [], []
    for name in s.configs:

        def one(tasks, theta0, k_lora, name=name):
            peft = peft_model(apply, theta0, name, key=k_lora, lora_targets=targets)
            ntk, sign = peft_kernels(peft, tasks.x_train)
            evals = jnp.linalg.eigvalsh(ntk)
            eta = (
                s.step_fraction / (2 * evals[-1] + s.proximal)
                if s.step_rule == "normalised"
                else jnp.asarray(s.fixed_learning_rate, evals.dtype)
            )

            def fit(y, y_test):
                return fit_config(
                    peft.apply, peft.params0, tasks.x_train, y, tasks.x_test, y_test,
                    proximal=s.proximal, learning_rate=eta, num_steps=s.steps,
                    record_every=s.record_every,
                )  # fmt: skip

            result = jax.vmap(fit)(tasks.y_train, tasks.y_test)
            return (
                kernel_condition_number(ntk, s.sigma), kernel_condition_number(sign, s.sigma),
                evals[-1], evals[0], eta, result.loss_curve, result.train_loss, result.accuracy,
            )  # fmt: skip

        per_config.append(jax.jit(jax.vmap(one))(tasks, theta0, lora_keys))
        first = jax.tree.map(lambda a: a[0], (theta0, lora_keys))
        shapes = jax.eval_shape(
            lambda t, k, name=name: peft_model(apply, t, name, key=k, lora_targets=targets).params0,
            *first,
        )
        num_params.append(sum(math.prod(a.shape) for a in jax.tree.leaves(shapes)))
    fields = [jnp.stack([out[i] for out in per_config], axis=1) for i in range(8)]
    return KappaRun(*fields, jnp.asarray(num_params), jnp.asarray(s.sigma), pretrained_loss)


#: Sizes of the experiment and of the claim reading it (one simulation per figure and claim).
#: Quick keeps full's seven configurations and three tasks (the association between κ and
#: the loss comes from comparing the head and single layers with LoRA of growing rank; with
#: five configurations and two tasks its per-replicate ρ was ≈ −0.1 and the 95% interval
#: over 32 replicates straddled 0) and shrinks the network, the data and the training.
KAPPA_SCALES = {
    "quick": KappaSetting(
        hidden=(16, 16),
        num_pretrain=128,
        num_train=16,
        num_test=150,
        steps=150,
        record_every=15,
        pretrain_steps=150,
        replicates=32,
    ),
    "full": KappaSetting(replicates=8),
}

#: Predictors of the final training loss: ``log κ(K + σI)`` (the paper's) and
#: ``−log(λ_min(K) + σ)`` (Thm 5's upper bound ``(σ‖ỹ‖/(σ + λ_min))²``, on the log scale).
PREDICTORS = ("kappa_ntk", "kappa_sign", "thm5_upper")


def loss_rank_correlations(run: KappaRun, predictor: str) -> np.ndarray:
    """Spearman's ρ between a predictor and the final training loss over (configuration,
    task) pairs, one per replicate (NaN where undefined).
    """
    if predictor not in PREDICTORS:
        raise ValueError(f"loss_rank_correlations: predictor must be one of {PREDICTORS}.")
    if predictor == "thm5_upper":
        values = -np.log(np.asarray(run.lambda_min, float) + float(run.sigma))
    else:
        values = np.log(np.asarray(getattr(run, predictor), float))
    loss = np.asarray(run.train_loss, float)
    tasks = loss.shape[2]
    return np.array([spearman(np.repeat(values[r], tasks), loss[r].ravel())
                     for r in range(loss.shape[0])])  # fmt: skip
