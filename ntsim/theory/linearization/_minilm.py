r"""The κ experiment on a real checkpoint: MiniLM + PEFT configurations (Rahimi Afzal et al. 2025).

The paper fine-tunes RoBERTa-base with LoRA and reports "Higher condition number → Higher
train loss" for ``κ(K + σI)`` of the NTK of the trainable parameters at ``θ_0``. Here a
MiniLM sentence encoder (``minilm-l3`` / ``minilm-l6``, shipped offline) with mean pooling
and a scalar logit head is fine-tuned on Rotten Tomatoes and on positive-vs-negative tweets
with the configurations of :func:`ntsim.transformers.adapter_model` (the head; the head plus
LoRA on query/value or the FFN at several ranks; the head plus the last block). Per
(dataset, configuration, seed):

* **at θ_0** — the NTK ``K = JJᵀ`` and the sign kernel ``J sign(J)ᵀ`` of the trainable
  parameters on the ``n`` training sentences (LoRA at ``B = 0``: the ``A``-block is exactly
  zero and the kernel is the closed-form ``B``-block, :mod:`ntsim.transformers._lora_kernels`),
  ``κ(K + σI)`` (singular values for the asymmetric sign kernel), the eigen-decay exponent
  ``β`` (``λ_k ≈ λ_1 k^{−2β}``) and the effective rank ``(Σλ)²/Σλ²``;
* **AdamW + cross-entropy** (the paper's training): minibatches, dropout, warm-up and
  linear decay, one peak learning rate for every configuration;
* **GD + MSE** (the theory's): full-batch GD on the mean squared error to ``±1`` labels,
  dropout off, step ``η = f · n / λ_max(K)`` (the linearised model's largest stable step is
  ``n/λ_max``: each configuration runs at a fraction of it, as the small analogue's
  "normalised" rule does). ``f`` starts at ``step_fraction`` and is halved, up to
  ``step_halvings`` times, for a run whose training MSE rises
  (:func:`~ntsim.theory.linearization.minilm.halving_ladder`): at LoRA's ``B = 0`` the kernel
  is the ``B``-block alone, and the ``A``-block, zero there, grows with ``B`` (by ``(α/r)²``),
  so at rank 1 the curvature the run meets outgrows ``n/λ_max(K(θ_0))`` (measured at full
  scale: at ``f = 1/2`` LoRA on the FFN at rank 1 diverged, q/v at rank 1 oscillated);
* the final training loss of each regime (the full training set, dropout off) and the
  test accuracy.

The seed draws the head and the LoRA ``A`` factors (nested across ranks), so ``θ_0`` and
its kernels differ per seed; the data subsets, the minibatch order and the dropout masks
are drawn once per dataset from the run's key and shared by every (seed, configuration).
All of them train together as one stacked run per (dataset, regime)
(:func:`ntsim.theory.linearization.minilm.fit_stacked`): one compiled step
serves every configuration, seed and dataset.

Flax is imported inside the functions only (``import ntsim`` never imports it).
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
from ntsim.core import eigen_decay_exponent
from ntsim.theory.linearization._minilm_training import (
    Memo,
    TrainingSetup,
    fit_stacked,
    halving_ladder,
    stack,
    stacked_scores_fn,
)

__all__ = [
    "MINILM_CONFIGS",
    "MINILM_KAPPA_SCALES",
    "MINILM_KERNELS",
    "MINILM_REGIMES",
    "MiniLMKappaRun",
    "MiniLMKappaSetting",
    "minilm_kappa_loss_correlation",
    "simulate_minilm_kappa",
]

#: Every configuration the issue asks for, eight per dataset.
MINILM_CONFIGS = ("head", "lora_qv1", "lora_qv2", "lora_qv4", "lora_qv8", "lora_ffn1",
                  "lora_ffn8", "last_layer")  # fmt: skip


@dataclasses.dataclass(frozen=True)
class MiniLMKappaSetting(TrainingSetup):
    """Sizes of the κ experiment (module doc).

    Attributes:
      configs: configuration names (``ntsim.transformers.ADAPTER_CONFIG_PATTERN``).
      sigma: the ridge of ``κ(K + σI)``.
      gd_steps: full-batch GD steps of the MSE regime.
      step_fraction: the first GD step, ``η = step_fraction · n/λ_max(K)`` (``λ_max`` the
        largest over seeds) per configuration.
      step_halvings: at most this many halvings of a GD run's step when its training MSE
        rises (module doc; ``0``: every run at ``step_fraction``).
      seeds_at_once: seeds per stacked run (each with every configuration); must divide
        ``seeds``. Memory grows with it (L6, full-batch GD on 64 sentences: ~4 GB per 8 runs).
    """

    configs: tuple[str, ...] = MINILM_CONFIGS
    sigma: float = 0.01
    gd_steps: int = 30
    step_fraction: float = 0.5
    step_halvings: int = 6
    seeds_at_once: int = 1

    def __post_init__(self):
        super().__post_init__()
        check_int_fields(self, ("gd_steps", "seeds_at_once"))
        check_int_fields(self, ("step_halvings",), minimum=0)
        if self.seeds % self.seeds_at_once:
            raise ValueError("MiniLMKappaSetting.seeds_at_once must divide seeds.")
        if len(self.configs) < 3 or len(set(self.configs)) != len(self.configs):
            raise ValueError("MiniLMKappaSetting.configs needs at least 3 distinct entries.")
        if self.sigma < 0 or not 0 < self.step_fraction < 1:
            raise ValueError("MiniLMKappaSetting: sigma >= 0 and step_fraction in (0, 1).")


class MiniLMKappaRun(NamedTuple):
    """Per dataset ``D``, configuration ``C`` and seed ``S``.

    Attributes:
      kappa_ntk, kappa_sign: ``(D, C, S)`` ``κ(K + σI)`` of the NTK and of the sign kernel.
      lambda_max, lambda_min: ``(D, C, S)`` extreme NTK eigenvalues.
      eigenvalues: ``(D, C, S, n)`` NTK eigenvalues, decreasing.
      decay_ntk, decay_sign: ``(D, C, S)`` eigen-decay exponent ``β`` (singular values for
        the sign kernel).
      effective_rank_ntk, effective_rank_sign: ``(D, C, S)`` ``(Σλ)²/Σλ²``.
      train_loss_adamw, accuracy_adamw: ``(D, C, S)`` final training cross-entropy and test
        accuracy after AdamW.
      train_loss_gd, accuracy_gd: ``(D, C, S)`` final training MSE and test accuracy after GD.
      loss_curve_adamw: ``(D, C, S, steps)`` minibatch cross-entropy per AdamW step.
      loss_curve_gd: ``(D, C, S, gd_steps)`` training MSE per GD step.
      learning_rate_gd: ``(D, C, S)`` the GD step each run ended with.
      step_fraction_gd: ``(D, C, S)`` that step as a fraction of ``n/λ_max(K)``.
      num_params: ``(C,)`` trainable parameters per configuration.
      step_seconds: ``(2,)`` median seconds per AdamW step and per GD step of the stacked
        run (all ``S·C`` runs at once; tracing and compilation excluded).
      sigma: the ridge (scalar).
    """

    kappa_ntk: Array
    kappa_sign: Array
    lambda_max: Array
    lambda_min: Array
    eigenvalues: Array
    decay_ntk: Array
    decay_sign: Array
    effective_rank_ntk: Array
    effective_rank_sign: Array
    train_loss_adamw: Array
    accuracy_adamw: Array
    train_loss_gd: Array
    accuracy_gd: Array
    loss_curve_adamw: Array
    loss_curve_gd: Array
    learning_rate_gd: Array
    step_fraction_gd: Array
    num_params: Array
    step_seconds: Array
    sigma: Array


def _spectrum(kernel: np.ndarray, sigma: float, symmetric: bool):
    """κ(K + σI), decreasing spectrum (eigenvalues, or singular values of an asymmetric K),
    decay exponent and participation ratio, in float64."""
    k = np.asarray(kernel, np.float64)
    if symmetric:
        values = np.sort(np.linalg.eigvalsh((k + k.T) / 2))[::-1]
        kappa = (values[0] + sigma) / (values[-1] + sigma)
    else:
        values = np.linalg.svd(k, compute_uv=False)
        shifted = np.linalg.svd(k + sigma * np.eye(len(k)), compute_uv=False)
        kappa = shifted[0] / shifted[-1]
    positive = np.clip(values, 0.0, None)
    decay = float(eigen_decay_exponent(jnp.asarray(positive)))
    ratio = positive.sum() ** 2 / np.sum(positive**2)
    return float(kappa), values, decay, float(ratio)


def _config_kernels(jac, configs, alpha, kind):
    """Kernel per configuration from the probe's per-example gradients (head always in)."""
    from ntsim.transformers import (
        block_kernels,
        lora_rank_kernel,
        lora_row_kernels,
        parse_adapter_config,
    )

    blocks = block_kernels({"head": jac["head"], "last": jac["last"]}, kind=kind)
    head = sum(jax.tree.leaves(blocks["head"]))
    rows = {name: lora_row_kernels(tuple(f["b"] for f in jac[part]), kind=kind)
            for name, part in (("lora_qv", "qv"), ("lora_ffn", "ffn"))}  # fmt: skip
    out = []
    for config in configs:
        kind_, rank = parse_adapter_config(config)
        if kind_ == "head":
            extra = 0.0
        elif kind_ == "last_layer":
            extra = sum(jax.tree.leaves(blocks["last"]))
        else:
            extra = lora_rank_kernel(rows[kind_], rank, alpha / rank, kind=kind)
        out.append(np.asarray(head + extra))
    return out


def _layout(setting: MiniLMKappaSetting):
    from ntsim.transformers import AdapterLayout, parse_adapter_config

    ranks = {"lora_qv": [1], "lora_ffn": [1]}
    for config in setting.configs:
        kind, rank = parse_adapter_config(config)
        if kind in ranks:
            ranks[kind].append(rank)
    return AdapterLayout(qv_rank=max(ranks["lora_qv"]), ffn_rank=max(ranks["lora_ffn"]),
                         alpha=setting.alpha)  # fmt: skip


def _num_params(model, config) -> int:
    from ntsim.transformers import parse_adapter_config

    adapters = jax.eval_shape(lambda k: model.init(k, config)[0], jax.random.PRNGKey(0))
    kind, rank = parse_adapter_config(config)
    count = sum(math.prod(a.shape) for a in jax.tree.leaves(adapters["head"]))
    if kind == "last_layer":
        count += sum(math.prod(a.shape) for a in jax.tree.leaves(adapters["last"]))
    elif kind != "head":
        part = adapters["qv" if kind == "lora_qv" else "ffn"]
        count += sum(rank * (f["a"].shape[0] + f["b"].shape[1]) for f in part)
    return count


def simulate_minilm_kappa(
    key: PRNGKey, setting: MiniLMKappaSetting, *, memo: Memo | None = None
) -> MiniLMKappaRun:
    """κ at ``θ_0`` and both training regimes per (dataset, configuration, seed) (module doc).

    Dataset ``d``'s subsets are drawn from ``fold_in(key, d)`` and its minibatch order and
    dropout from ``fold_in(key, 2000 + d)``; seed ``s``'s head and ``A`` from
    ``jax.random.split(fold_in(key, 1000), seeds)[s]``, shared by the configurations (nested
    ``A`` columns across ranks) and the datasets.

    ``memo(name, compute) -> dict`` (default: ``compute()``) receives each unit of work — a
    dataset's kernel spectra (``"<dataset>_kernels"``), one stacked training run
    (``"<dataset>_<regime>_group<g>"``) — and may return a kept copy of an earlier
    ``compute()`` instead: every unit is a dict of JSON numbers and lists, so a caller can
    keep finished units on disk and resume an interrupted run with the same numbers.
    """
    check_setting_type("simulate_minilm_kappa", setting, MiniLMKappaSetting)
    check_key("simulate_minilm_kappa", key)
    from ntsim.transformers import adapter_model, binary_sentiment_split, load_pretrained

    s = setting
    memo = memo or (lambda name, compute: compute())
    model_config, encoder0 = load_pretrained(s.checkpoint)
    model = adapter_model(model_config, encoder0, _layout(s))
    seed_keys = jax.random.split(jax.random.fold_in(key, 1000), s.seeds)
    scores = stacked_scores_fn(model)

    @jax.jit
    def probe_gradients(adapters, selection, encoder, data):
        from ntsim.transformers import per_example_gradients

        def logit(a, x):
            one = jax.tree.map(lambda v: v[None], x)
            return model.scores(a, selection, one, encoder=encoder)[0]

        inputs = {"input_ids": data["input_ids"], "attention_mask": data["attention_mask"]}
        return per_example_gradients(logit, adapters, inputs, batch_size=8)

    def kernel_unit(train) -> dict:
        """Spectra of both kernels per (configuration, seed) of one dataset."""
        unit = {f"{name}_{kind}": np.zeros((len(s.configs), s.seeds)) for kind in ("ntk", "sign")
                for name in ("kappa", "decay", "effective_rank")}  # fmt: skip
        unit["eigenvalues"] = np.zeros((len(s.configs), s.seeds, s.train_size))
        for j, seed_key in enumerate(seed_keys):
            jac = probe_gradients(*model.probe(seed_key), encoder0, train)
            for kind in ("ntk", "sign"):
                for c, kernel in enumerate(_config_kernels(jac, s.configs, s.alpha, kind)):
                    kappa, values, decay, ratio = _spectrum(kernel, s.sigma, kind == "ntk")
                    unit[f"kappa_{kind}"][c, j] = kappa
                    unit[f"decay_{kind}"][c, j] = decay
                    unit[f"effective_rank_{kind}"][c, j] = ratio
                    if kind == "ntk":
                        unit["eigenvalues"][c, j] = values
            del jac
        return {name: value.tolist() for name, value in unit.items()}

    # (seed, configuration) rows j·C + c, stacked seeds_at_once seeds per finetune call
    inits = [model.init(k, c) for k in seed_keys for c in s.configs]
    group = s.seeds_at_once * len(s.configs)

    def training_unit(rows, train, test, data_key, regime, etas=None) -> dict:
        """One stacked run (GD: at the per-row steps ``etas``): per row, the final training
        loss (the full training set, dropout off) and test accuracy, the loss curve, and the
        seconds per step."""
        adapters0, selection = stack(rows)
        fit = fit_stacked(model, adapters0, selection, train, data_key,
                          regime="adamw_ce" if regime == "adamw" else "gd_mse", setup=s,
                          weights=etas, gd_steps=s.gd_steps, throw=regime == "adamw")  # fmt: skip
        per_segment = len(fit.records["loss"]) / len(fit.segment_seconds)
        both = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), train, test)
        z = np.asarray(scores(fit.params, selection, encoder0, both), np.float64)
        z_train, z_test = z[:, : s.train_size], z[:, s.train_size :]
        signed = 2.0 * np.asarray(train["label"], np.float64) - 1.0
        if regime == "adamw":
            loss = np.mean(np.logaddexp(0.0, -signed * z_train), axis=1)
        else:
            loss = np.mean((z_train - signed) ** 2, axis=1)
        accuracy = np.mean((z_test > 0) == (np.asarray(test["label"]) > 0.5), axis=1)
        return {
            "train_loss": loss.tolist(),
            "accuracy": accuracy.tolist(),
            "curves": np.asarray(fit.records["per_config"]).T.tolist(),
            "seconds": (np.asarray(fit.segment_seconds[1:]) / per_segment).tolist(),
        }

    shape = (len(s.datasets), len(s.configs), s.seeds)
    out = {name: np.zeros(shape) for name in ("kappa_ntk", "kappa_sign", "decay_ntk",
           "decay_sign", "effective_rank_ntk", "effective_rank_sign", "train_loss_adamw",
           "accuracy_adamw", "train_loss_gd", "accuracy_gd")}  # fmt: skip
    eigenvalues = np.zeros((*shape, s.train_size))
    curves = {"adamw": np.zeros((*shape, s.adamw_steps)), "gd": np.zeros((*shape, s.gd_steps))}
    step_fraction_gd = np.zeros(shape)
    stable_step = np.zeros(shape[:2])  # the linearised stable step n/λ_max (largest over seeds)
    seconds = {"adamw": [], "gd": []}
    for d, dataset in enumerate(s.datasets):
        train, test = binary_sentiment_split(dataset, jax.random.fold_in(key, d),
                                             train_size=s.train_size, test_size=s.test_size,
                                             max_length=s.max_length)  # fmt: skip
        spectra = memo(f"{dataset}_kernels", lambda train=train: kernel_unit(train))
        for name, value in spectra.items():
            (eigenvalues if name == "eigenvalues" else out[name])[d] = value
        stable_step[d] = s.train_size / eigenvalues[d, :, :, 0].max(axis=1)
        stable = np.tile(stable_step[d], s.seeds_at_once)  # per row j·C + c of a group
        data_key = jax.random.fold_in(key, 2000 + d)

        def unit(start, regime, train=train, test=test, data_key=data_key, stable=stable):
            rows = inits[start : start + group]
            if regime == "adamw":
                return training_unit(rows, train, test, data_key, regime)
            return halving_ladder(
                lambda idx, fractions: training_unit([rows[i] for i in idx], train, test,
                                                     data_key, regime, fractions * stable[idx]),
                len(rows), s.step_fraction, s.step_halvings)  # fmt: skip

        for regime in ("adamw", "gd"):
            units = [memo(f"{dataset}_{regime}_group{start // group}",
                          lambda start=start, regime=regime: unit(start, regime))
                     for start in range(0, len(inits), group)]  # fmt: skip
            grid = (s.seeds, len(s.configs))  # row j·C + c
            if regime == "gd":
                rows = np.concatenate([np.asarray(u["step_fraction"]) for u in units])
                step_fraction_gd[d] = rows.reshape(grid).T
            for name in ("train_loss", "accuracy"):
                rows = np.concatenate([np.asarray(u[name]) for u in units])
                out[f"{name}_{regime}"][d] = rows.reshape(grid).T
            curve = np.concatenate([np.asarray(u["curves"]) for u in units])
            curves[regime][d] = curve.reshape(*grid, -1).transpose(1, 0, 2)
            seconds[regime].extend(x for u in units for x in u["seconds"])
    step_seconds = [float(np.median(seconds[r])) if seconds[r] else float("nan")
                    for r in ("adamw", "gd")]  # fmt: skip
    num_params = [_num_params(model, config) for config in s.configs]
    return MiniLMKappaRun(
        **{k: jnp.asarray(v) for k, v in out.items()},
        lambda_max=jnp.asarray(eigenvalues[..., 0]),
        lambda_min=jnp.asarray(eigenvalues[..., -1]),
        eigenvalues=jnp.asarray(eigenvalues),
        loss_curve_adamw=jnp.asarray(curves["adamw"]),
        loss_curve_gd=jnp.asarray(curves["gd"]),
        learning_rate_gd=jnp.asarray(step_fraction_gd * stable_step[..., None]),
        step_fraction_gd=jnp.asarray(step_fraction_gd),
        num_params=jnp.asarray(num_params),
        step_seconds=jnp.asarray(step_seconds),
        sigma=jnp.asarray(s.sigma),
    )


#: Quick: L3, 8 sentences of 16 tokens, four configurations on both datasets (8 points),
#: 2 seeds, a few steps — a smoke test of the pipeline inside ``make reproduce`` (≤ 60 s
#: cold on 2 cores; its κ–loss correlation means nothing). Full: L6 and every configuration
#: (16 points), sized in the experiment's docs.
MINILM_KAPPA_SCALES = {
    "quick": MiniLMKappaSetting(checkpoint="minilm-l3", train_size=8, test_size=32,
                                max_length=16, seeds=2, epochs=2, batch_size=4, gd_steps=4,
                                configs=("head", "lora_qv1", "lora_qv8", "last_layer"),
                                seeds_at_once=2),
    "full": MiniLMKappaSetting(),
}  # fmt: skip


#: ``(kernel, regime)`` pairs the κ-predicts-loss correlation is taken for.
MINILM_KERNELS = ("ntk", "sign")
MINILM_REGIMES = ("adamw", "gd")


def minilm_kappa_loss_correlation(
    run: MiniLMKappaRun, kernel: str, regime: str, *, resamples: int = 2000
) -> tuple[float, tuple[float, float], np.ndarray, np.ndarray]:
    """Spearman ``ρ(log κ, final training loss)`` over (dataset, configuration) points, with a
    95% percentile bootstrap interval over the points.

    Each point is one configuration on one dataset: ``log κ`` averaged over seeds (the
    geometric mean of ``κ``) and the training loss averaged over seeds. Resampling points
    (not seeds) makes the interval about *which configurations* were tried, the population
    the paper's statement is about. The bootstrap generator is fixed, so the result is a
    pure function of ``run``.

    Returns:
      ``(ρ, (lo, hi), log_kappa_points, loss_points)``.
    """
    from ntsim.core import bootstrap_ci, spearman

    if kernel not in MINILM_KERNELS or regime not in MINILM_REGIMES:
        raise ValueError(
            f"kernel must be one of {MINILM_KERNELS} and regime one of {MINILM_REGIMES}, got "
            f"{kernel!r}, {regime!r}."
        )
    log_kappa = np.log(np.asarray(getattr(run, f"kappa_{kernel}"))).mean(-1).ravel()
    loss = np.asarray(getattr(run, f"train_loss_{regime}")).mean(-1).ravel()

    def statistic(index):
        value = spearman(log_kappa[index], loss[index])
        return 0.0 if np.isnan(value) else value  # a resample of one repeated point: no order

    rho, interval = bootstrap_ci(statistic, log_kappa.size, resamples=resamples)
    return rho, interval, log_kappa, loss
