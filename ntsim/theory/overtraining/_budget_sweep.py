"""The whole pretraining-budget protocol of Springer et al. 2025 (Figs 3–5, 8) as one function.

:func:`budget_sweep` pretrains :func:`ntsim.core.causal_decoder` on the Python standard
library's sources once per budget and pretraining replicate
(:func:`~ntsim.theory.overtraining.pretrain_replicates_for_budget`: independent runs, each
with its own init and batch sequence shared by its budgets; unless
``BudgetSetting.replicate_every_budget``, the replicates after the first are pretrained at the
first and last budgets only, the two the budget contrast reads), then evaluates every checkpoint
three ways on fixed held-out windows: the loss increase under Gaussian noise of relative size ``γ``
(:func:`~ntsim.theory.overtraining.perturbation_loss_increase`, Fig 3), the held-out
*pretraining* loss after fine-tuning on synthetic arithmetic lines at fixed learning rates
(:func:`~ntsim.theory.overtraining.finetune_at_learning_rates`, Figs 4–5), and
``‖θ_ft − θ_pre‖`` (Fig 8). The experiment ``overtraining/fig_pretraining_budget`` plots it
and the ``overtraining.budget.*`` claims check it; both take a :class:`BudgetSetting`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import jax
import numpy as np

from ntsim._types import PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.core import (
    arithmetic_corpus,
    causal_decoder,
    next_token_loss,
    sample_windows,
    stdlib_corpus,
)
from ntsim.theory.overtraining._budget import (
    finetune_at_learning_rates,
    perturbation_loss_increase,
    pretrain_replicates_for_budget,
)

__all__ = [
    "QUICK_BUDGET_SETTING",
    "BudgetSetting",
    "BudgetSweepRun",
    "budget_sweep",
    "simulate_budget_sweep",
]


@dataclass(frozen=True)
class BudgetSetting:
    """Model, budgets, perturbation and fine-tuning grids (the paper gives none at this scale).

    Defaults are the full scale: 43,904 parameters, budgets of 256–8192 AdamW steps of
    32 × 64 bytes, i.e. 12–382 tokens per parameter.

    Replicate 0 is pretrained at every budget (it is fine-tuned and traced over the whole
    grid); replicates ``1..R−1`` only at the first and last budgets unless
    ``replicate_every_budget`` (their losses elsewhere are NaN). Pretraining cost in
    replicate-steps is ``Σ budgets + (R−1)(first + last)`` instead of ``R·Σ budgets``: at
    full, 41,472 instead of 64,512.
    """

    width: int = 32
    depth: int = 2
    num_heads: int = 4
    context: int = 64
    batch_size: int = 32  # windows per step (tokens per step = batch_size · context)
    budgets: tuple[int, ...] = (256, 512, 1024, 2048, 4096, 8192)  # pretraining steps
    peak_lr: float = 3e-3
    warmup: int = 64
    weight_decay: float = 0.0
    chunk: int = 128  # steps per compiled scan (divides every budget)
    gammas: tuple[float, ...] = (0.25, 0.5, 1.0)  # noise scale relative to the init std
    noise_draws: int = 8  # per pretraining replicate
    pretrain_replicates: int = 4  # independent pretraining runs (init and batches) per budget
    replicate_every_budget: bool = False  # else replicates 1..R−1 at the first and last only
    finetune_lrs: tuple[float, ...] = (1e-4, 3e-4, 1e-3, 3e-3)
    finetune_steps: int = 256
    eval_windows: int = 128  # fixed held-out windows per task
    arithmetic_lines: int = 100_000

    def __post_init__(self):
        names = (
            "width", "depth", "num_heads", "context", "batch_size", "chunk", "noise_draws",
            "pretrain_replicates",
            "finetune_steps", "eval_windows", "arithmetic_lines"
        )  # fmt: skip
        check_int_fields(self, names)
        if list(self.budgets) != sorted(set(self.budgets)) or any(
            b % self.chunk or b <= self.warmup for b in self.budgets
        ):
            raise ValueError(
                f"budgets must be increasing multiples of chunk={self.chunk} above "
                f"warmup={self.warmup}, got {self.budgets}."
            )
        if not self.gammas or min(self.gammas) <= 0:
            raise ValueError(f"gammas must be positive, got {self.gammas}.")
        if not self.finetune_lrs or min(self.finetune_lrs) <= 0:
            raise ValueError(f"finetune_lrs must be positive, got {self.finetune_lrs}.")


QUICK_BUDGET_SETTING = BudgetSetting(
    width=16, depth=1, num_heads=2, context=32, batch_size=16, budgets=(128, 512),
    warmup=32, chunk=64, noise_draws=16, pretrain_replicates=6, finetune_lrs=(3e-4, 3e-3),
    finetune_steps=32, eval_windows=64, arithmetic_lines=5000,
)  # fmt: skip
"""Tens of seconds on a CPU: 12,016 parameters, budgets of 128 and 512 steps (5 and 22 tokens
per parameter; at 1–5 tokens per parameter the progressive sensitivity of the smallest γ had
not appeared yet); 6 independent pretraining runs per budget with 16 noise draws each, so the
budget contrast has an interval over pretraining runs (the claim is about them)."""


class BudgetSweepRun(NamedTuple):
    """What :func:`simulate_budget_sweep` returns (the arrays of :func:`budget_sweep`)."""

    budgets: np.ndarray  # (B,) pretraining steps
    tokens_per_parameter: np.ndarray  # (B,)
    num_params: int
    gammas: np.ndarray  # (γ,) noise scale relative to the init std
    finetune_lrs: np.ndarray  # (lrs,)
    base_loss: np.ndarray  # (B,) held-out pretraining loss (nats/byte)
    perturbed_increase: np.ndarray  # (R, B, γ, draws): per pretraining replicate; a
    # replicate's budgets share its init, batch sequence and noise draws; NaN where a
    # replicate r ≥ 1 was not pretrained (middle budgets, unless replicate_every_budget)
    finetuned_pretrain_loss: np.ndarray  # (B, lrs)
    finetuned_task_loss: np.ndarray  # (B, lrs)
    distance: np.ndarray  # (B, lrs): ‖θ_ft − θ_pre‖


def simulate_budget_sweep(
    key: PRNGKey, setting: BudgetSetting, *, progress: Callable[[int], None] | None = None
) -> BudgetSweepRun:
    """:func:`budget_sweep` as a simulation ``(key, setting) -> run`` (what the claims read and
    the experiment ``overtraining/fig_pretraining_budget`` plots); ``progress`` as there."""
    check_setting_type("simulate_budget_sweep", setting, BudgetSetting)
    check_key("simulate_budget_sweep", key)
    out = budget_sweep(setting, key, progress=progress)
    return BudgetSweepRun(
        budgets=np.asarray(out["budgets"]),
        tokens_per_parameter=np.asarray(out["tokens_per_parameter"]),
        num_params=out["num_params"],
        gammas=np.asarray(out["gammas"]),
        finetune_lrs=np.asarray(out["finetune_lrs"]),
        base_loss=out["base_loss"],
        perturbed_increase=out["perturbed_increase"],
        finetuned_pretrain_loss=out["finetuned_pretrain_loss"],
        finetuned_task_loss=out["finetuned_task_loss"],
        distance=out["distance"],
    )


def budget_sweep(
    setting: BudgetSetting, key: PRNGKey, *, progress: Callable[[int], None] | None = None
) -> dict:
    """Pretrain per budget, perturb and fine-tune every checkpoint, evaluate on both tasks.

    Args:
      setting: the :class:`BudgetSetting`.
      key: one key; init, batches, held-out windows, noise and fine-tuning batches are split
        from it (every budget shares them: common random numbers across budgets).
      progress: called with the number of pretraining steps just finished.

    Returns:
      numpy arrays and lists: ``budgets``, ``tokens``, ``tokens_per_parameter``,
      ``num_params``, ``gammas``, ``finetune_lrs``, ``base_loss`` ``(B,)``,
      ``perturbed_increase`` ``(R, B, γ, draws)`` (per pretraining replicate; NaN where a
      replicate was not pretrained, see :class:`BudgetSetting`),
      ``finetuned_pretrain_loss`` and
      ``finetuned_task_loss`` ``(B, lrs)``, ``distance`` ``(B, lrs)`` (``‖θ_ft − θ_pre‖``),
      ``inflection_budget`` and ``u_shape`` per learning rate (argmin of the post-FT
      pretraining loss before the last budget), and the corpora's descriptions.
    """
    check_setting_type("budget_sweep", setting, BudgetSetting)
    check_key("budget_sweep", key)
    c = setting
    k_init, k_batches, k_eval, k_noise, k_ft = jax.random.split(key, 5)
    init_keys, batch_keys, noise_keys = (
        jax.random.split(k, c.pretrain_replicates) for k in (k_init, k_batches, k_noise)
    )
    corpus = stdlib_corpus()
    shifted = arithmetic_corpus(0, c.arithmetic_lines)
    model = causal_decoder(context=c.context, width=c.width, depth=c.depth,
                           num_heads=c.num_heads)  # fmt: skip
    inits = jax.vmap(model.init)(init_keys)  # one initialisation per pretraining replicate
    init = jax.tree.map(lambda a: a[0], inits)
    k_pre, k_arith = jax.random.split(k_eval)
    heldout = sample_windows(k_pre, corpus.heldout, c.eval_windows, c.context + 1)
    heldout_ft = sample_windows(k_arith, shifted.heldout, c.eval_windows, c.context + 1)
    loss = jax.jit(lambda p, w: next_token_loss(model.apply, p, w))
    losses = jax.jit(jax.vmap(lambda p, w: next_token_loss(model.apply, p, w), in_axes=(0, None)))

    out = {name: [] for name in ("base", "perturbed", "ft_pretrain", "ft_task", "distance")}
    ends = (c.budgets[0], c.budgets[-1])
    for budget in c.budgets:
        done = [0]
        # replicates pretrained at this budget: all at the ends (or everywhere if asked)
        count = c.pretrain_replicates if c.replicate_every_budget or budget in ends else 1

        def tick(steps, done=done):
            if progress is not None:
                progress(steps - done[0])
            done[0] = steps

        replicas = pretrain_replicates_for_budget(
            model.apply, jax.tree.map(lambda a, n=count: a[:n], inits), corpus.train,
            batch_keys[:count], budget=budget,
            batch_size=c.batch_size, context=c.context, peak_lr=c.peak_lr, warmup=c.warmup,
            weight_decay=c.weight_decay, chunk=c.chunk, progress=tick,
        )  # fmt: skip
        replica = [jax.tree.map(lambda a, r=r: a[r], replicas) for r in range(count)]
        perturbed = np.full((c.pretrain_replicates, len(c.gammas), c.noise_draws), np.nan)
        for r, p in enumerate(replica):
            perturbed[r] = np.asarray(perturbation_loss_increase(
                model.apply, p, jax.tree.map(lambda a, r=r: a[r], inits), heldout, c.gammas,
                noise_keys[r], num_draws=c.noise_draws,
            ))  # fmt: skip
        out["perturbed"].append(perturbed)
        params = replica[0]  # fine-tuning (Figs 4–5, 8) reads the first replicate only
        out["base"].append(float(loss(params, heldout)))
        tuned, distance = finetune_at_learning_rates(
            model.apply, params, shifted.train, k_ft, learning_rates=c.finetune_lrs,
            steps=c.finetune_steps, batch_size=c.batch_size, context=c.context,
        )  # fmt: skip
        out["ft_pretrain"].append(np.asarray(losses(tuned, heldout)))
        out["ft_task"].append(np.asarray(losses(tuned, heldout_ft)))
        out["distance"].append(np.asarray(distance))
    out = {name: np.asarray(value) for name, value in out.items()}
    out["perturbed"] = np.moveaxis(out["perturbed"], 1, 0)  # (R, B, γ, draws)
    argmin = out["ft_pretrain"].argmin(axis=0)  # per learning rate
    tokens = np.asarray(c.budgets) * c.batch_size * c.context
    num_params = int(sum(leaf.size for leaf in jax.tree.leaves(init)))
    return {
        "budgets": list(c.budgets),
        "tokens": tokens,
        "tokens_per_parameter": tokens / num_params,
        "num_params": num_params,
        "gammas": list(c.gammas),
        "finetune_lrs": list(c.finetune_lrs),
        "base_loss": out["base"],
        "perturbed_increase": out["perturbed"],
        "finetuned_pretrain_loss": out["ft_pretrain"],
        "finetuned_task_loss": out["ft_task"],
        "distance": out["distance"],
        "inflection_budget": [c.budgets[i] for i in argmin],
        "u_shape": [bool(i < len(c.budgets) - 1) for i in argmin],
        "corpus": corpus.description,
        "corpus_sha256": corpus.sha256,
        "shifted_task": shifted.description,
    }
