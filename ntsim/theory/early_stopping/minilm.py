r"""Sun & Raskutti 2026's Sec 7 on a real checkpoint: MiniLM's NTK decay, T̂, task vectors.

Three simulations on the MiniLM model of :mod:`._minilm_model` (a pretrained encoder with a
scalar head, GD on the squared loss, labels ``±1``), each a loop over independent units
(draws or seeds) so that a caller can keep finished units (``memo``, below):

* :func:`simulate_minilm_ntk_decay` — the spectrum of the ``N × N`` NTK ``Θ`` (all
  parameters) at ``θ_PT`` on ``N`` random sentences of each dataset, and the decay exponent
  ``β`` of ``λ_k ≈ λ_1 k^{−2β}`` fitted by least squares on ``log(λ_k/λ_1)`` against
  ``log k`` (App. A.3, eqs. (31)–(32); through the origin and with an intercept), per draw
  of sentences (Sec 7.1 on 100 samples);
* :func:`simulate_minilm_stopping_rule` — per training-set size and seed: the plug-in
  stopping time ``T̂`` of eq. (11) on the empirical kernel
  (:func:`plug_in_stopping_time`), and the step that minimises
  the test MSE of (a) linearised GD on ``Θ`` (closed form) and (b) full fine-tuning by GD
  (:func:`gd_finetune`: all parameters, full-batch GD as one ``lax.scan``), at the same
  step ``α = step_fraction/λ̂_max(Θ/N)``;
* :func:`simulate_minilm_task_vectors` — per seed: each task fine-tuned separately by GD
  from one ``θ_PT``, ``τ_i = θ_i − θ_PT`` (eq. (22)), the measured ``cos(τ_i, τ_j)`` beside
  Cor 2's kernel prediction (:func:`kernel_predicted_cosines`),
  and test accuracy of ``θ_PT + Σ_i τ_i`` relative to each ``θ_i`` (Sec 7.2's "normalised
  accuracy").

``memo(name, compute) -> dict`` (default: ``compute()``) receives a unit's name and a thunk
computing it (a dict of lists); the experiments pass one that keeps units on disk, so a long
run resumes. Nothing here writes files. Flax is imported only inside the functions.

This module is public (``from ntsim.theory.early_stopping import minilm``) and re-exports the
model (:mod:`._minilm_model`) and the measured-kernel pieces (:mod:`._real_kernel`). It is
not re-exported from the package ``__init__`` yet: every early-stopping claim hashes that
``__init__``, so touching it marks all recorded early-stopping verdicts stale; the
re-export belongs in the commit that re-records the topic.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import ArrayLike, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.core import Record, eigen_decay_exponent, gradient_descent
from ntsim.theory.early_stopping._minilm_model import (
    MINILM_TASKS,
    MiniLMScalarModel,
    PowerIteration,
    draw_task_splits,
    minilm_scalar_model,
    squared_gradient_norms,
    task_corpus,
    top_ntk_eigenvalue,
)
from ntsim.theory.early_stopping._real_kernel import (
    PlugInStoppingRule,
    heldout_mse_by_iteration,
    heldout_mse_curve,
    increment_rkhs_norm,
    kernel_predicted_cosines,
    plug_in_stopping_time,
    vector_cosines,
)

__all__ = [
    "MINILM_TASKS",
    "MiniLMScalarModel",
    "PlugInStoppingRule",
    "draw_task_splits",
    "heldout_mse_by_iteration",
    "heldout_mse_curve",
    "increment_rkhs_norm",
    "kernel_predicted_cosines",
    "minilm_scalar_model",
    "plug_in_stopping_time",
    "PowerIteration",
    "squared_gradient_norms",
    "task_corpus",
    "top_ntk_eigenvalue",
    "vector_cosines",
    "PAPER_BETA_TABLE",
    "MiniLMDecay",
    "MiniLMDecaySetting",
    "MiniLMStopping",
    "MiniLMStoppingSetting",
    "MiniLMTaskVectorSetting",
    "MiniLMTaskVectors",
    "gd_finetune",
    "simulate_minilm_ntk_decay",
    "simulate_minilm_stopping_rule",
    "simulate_minilm_task_vectors",
]

Memo = Callable[[str, Callable[[], dict]], dict]

#: Sec 7.1's fitted decay exponents of GPT-Neo's NTK at ``θ_PT`` on 100 samples per dataset,
#: ``dataset: (β, ±)`` as printed (the paper does not say what ``±`` is; three runs are
#: mentioned for Fig 2). Regression tasks SemRel, STS-12, STS-B; classification tasks
#: Amazon Reviews, MRPC, RTE.
PAPER_BETA_TABLE = {
    "SemRel": (0.60, 0.0366),
    "STS-12": (0.58, 0.0126),
    "STS-B": (0.54, 0.0229),
    "Amazon Reviews": (0.62, 0.0076),
    "MRPC": (0.55, 0.0029),
    "RTE": (0.51, 0.01),
}


#: The power iteration's cap in :func:`simulate_minilm_ntk_decay`. Chosen: 7–9 iterations reach
#: the relative residual 1e-6 at quick scale (MiniLM-L3, 2 datasets × 3 draws, master seed 0),
#: the top eigenvalue standing well clear of the second; 50 leaves 5× headroom, and a run that
#: does not converge stops there (its residual makes the decay check raise) instead of running
#: 200 iterations of MiniLM's products.
POWER_ITERATIONS = 50


def _no_memo(name: str, compute: Callable[[], dict]) -> dict:
    del name
    return compute()


def _check_checkpoint(setting) -> None:
    if setting.checkpoint not in ("minilm-l3", "minilm-l6"):
        raise ValueError(
            f"{type(setting).__name__}.checkpoint must be minilm-l3 or minilm-l6, got "
            f"{setting.checkpoint!r}."
        )


def _check_step_fraction(setting) -> None:
    if not 0 < setting.step_fraction <= 1:
        raise ValueError(
            f"{type(setting).__name__}.step_fraction must lie in (0, 1] (α·λ̂_max ≤ 1), got "
            f"{setting.step_fraction}."
        )


@dataclasses.dataclass(frozen=True)
class MiniLMDecaySetting:
    """Sec 7.1 on MiniLM: ``num_points`` sentences per draw (paper: 100), ``draws`` draws."""

    checkpoint: str = "minilm-l6"
    datasets: tuple[str, ...] = ("rotten_tomatoes", "tweets")
    num_points: int = 100
    draws: int = 5
    max_length: int = 48
    ntk_batch: int = 25

    def __post_init__(self):
        where = "MiniLMDecaySetting"
        _check_checkpoint(self)
        check_int_fields(self, ("num_points", "draws", "max_length", "ntk_batch"))
        if self.num_points < 3 or self.draws < 2:
            raise ValueError(f"{where}: need num_points >= 3 and draws >= 2 (a CI over draws).")
        if not self.datasets or any(d not in ("rotten_tomatoes", "tweets") for d in self.datasets):
            raise ValueError(
                f"{where}.datasets: rotten_tomatoes and/or tweets, not {self.datasets}."
            )


class MiniLMDecay(NamedTuple):
    """Spectra and fitted ``β`` per dataset and draw.

    Attributes:
      eigenvalues: ``(D, draws, N)``, decreasing, of ``Θ/N``.
      beta_origin: ``(D, draws)``: eq. (32) through the origin.
      beta_intercept: ``(D, draws)``: with an intercept (the paper does not say which).
      num_params: parameters the NTK is taken over.
      gradient_trace: ``(D, draws)``: ``Σ_i ‖∇_θ f(θ_PT, x_i)‖²/N`` from per-sentence
        gradients (:func:`squared_gradient_norms`), which equals ``tr(Θ/N) = Σ_k λ_k``.
      power_top_eigenvalue: ``(D, draws)``: ``λ_1(Θ/N)`` by power iteration on Jacobian
        products (:func:`top_ntk_eigenvalue`), which equals ``eigenvalues[..., 0]``.
      power_residual: ``(D, draws)``: its relative residual ``‖Θu − λu‖/λ`` (an eigenvalue of
        ``Θ`` lies that close, relatively, to ``power_top_eigenvalue``).
    """

    eigenvalues: np.ndarray
    beta_origin: np.ndarray
    beta_intercept: np.ndarray
    num_params: int
    gradient_trace: np.ndarray
    power_top_eigenvalue: np.ndarray
    power_residual: np.ndarray


def simulate_minilm_ntk_decay(
    key: PRNGKey, setting: MiniLMDecaySetting, *, memo: Memo = _no_memo
) -> MiniLMDecay:
    """Spectrum of MiniLM's NTK on ``num_points`` sentences, per dataset and draw (module doc).

    Each draw has its own sentences and head (``θ_PT``'s head is random, as in the paper's
    added classification head).
    """
    check_setting_type("simulate_minilm_ntk_decay", setting, MiniLMDecaySetting)
    check_key("simulate_minilm_ntk_decay", key)
    spectra, traces, powers, num_params = [], [], [], 0
    for d, dataset in enumerate(setting.datasets):
        rows, row_traces, row_powers = [], [], []
        for draw in range(setting.draws):
            k_data, k_head = jax.random.split(jax.random.fold_in(jax.random.fold_in(key, d), draw))

            def sentences(dataset=dataset, k_data=k_data, k_head=k_head):
                model = minilm_scalar_model(setting.checkpoint, k_head, ntk_batch=setting.ntk_batch)
                batch = draw_task_splits(k_data, dataset, (setting.num_points,), setting.max_length)
                return model, batch[0]

            def compute(sentences=sentences):
                model, batch = sentences()
                kernel = np.asarray(model.ntk(model.params, batch), np.float64)
                lam = np.linalg.eigvalsh((kernel + kernel.T) / 2)[::-1] / setting.num_points
                return {"eigenvalues": lam.tolist(), "num_params": model.num_params}

            def trace(sentences=sentences):  # a separate unit: kept spectra stay valid
                model, batch = sentences()
                norms = squared_gradient_norms(model, batch)
                return {"gradient_trace": float(norms.sum()) / setting.num_points}

            def power(sentences=sentences, k_data=k_data):  # a third unit, for the same reason
                model, batch = sentences()
                start = jax.random.fold_in(k_data, 1)  # the power iteration's start
                top = top_ntk_eigenvalue(model, batch, key=start, chunk=setting.ntk_batch,
                                         max_iterations=POWER_ITERATIONS)  # fmt: skip
                return {"top_eigenvalue": top.eigenvalue / setting.num_points,
                        "residual": top.residual, "iterations": top.iterations}  # fmt: skip

            unit = memo(f"{dataset}_draw{draw}", compute)
            rows.append(unit["eigenvalues"])
            num_params = unit["num_params"]
            row_traces.append(memo(f"{dataset}_draw{draw}_gradients", trace)["gradient_trace"])
            top = memo(f"{dataset}_draw{draw}_top_eigenvalue", power)
            row_powers.append((top["top_eigenvalue"], top["residual"]))
        spectra.append(rows)
        traces.append(row_traces)
        powers.append(row_powers)
    lam = np.asarray(spectra)
    fit = lambda intercept: np.asarray(  # noqa: E731
        jax.vmap(jax.vmap(lambda v: eigen_decay_exponent(v, fit_intercept=intercept)))(lam)
    )
    powers = np.asarray(powers)  # (D, draws, 2)
    return MiniLMDecay(lam, fit(False), fit(True), num_params, np.asarray(traces),
                       powers[..., 0], powers[..., 1])  # fmt: skip


@functools.lru_cache(maxsize=8)
def _gd_program(score: Callable, num_steps: int, eval_every: int) -> Callable:
    """One jitted GD run per (model, horizon, grid): params, data and ``α`` are arguments,
    so every seed, size and task reuses the same compiled program."""

    def mse(params, batch):
        return jnp.mean((score(params, batch) - batch["y"]) ** 2)

    @jax.jit
    def run(params0, train, weights, test, alpha):
        def loss(params):
            r = score(params, train) - train["y"]
            return 0.5 * jnp.sum(weights * r**2) / jnp.sum(weights)

        record = Record(every=eval_every, fn=lambda params, step: mse(params, test))
        result = gradient_descent(loss, params0, num_steps=num_steps, learning_rate=alpha,
                                  record=record, throw=False)  # fmt: skip
        return result.params, result.records, result.first_nonfinite_step

    return run


def gd_finetune(
    model: MiniLMScalarModel,
    train: dict,
    weights: ArrayLike,
    test: dict,
    *,
    step_size: float,
    num_steps: int,
    eval_every: int,
) -> tuple[dict, np.ndarray]:
    r"""Fine-tune all of ``θ_PT`` by full-batch GD on ``(1/2)Σ_i w_i(f(θ, x_i) − y_i)²/Σ_i w_i``.

    The dynamics of Secs 3.3–3.5 on the network itself (:func:`ntsim.core.gradient_descent`,
    step ``α``, no dropout). ``weights`` (0/1) let one compiled program serve every training
    size (the unused rows are padding).

    Returns:
      The final parameters and the test MSE at steps ``0, e, 2e, …, num_steps``.

    Raises:
      FloatingPointError: the loss became non-finite (a step above ``2/λ_max``).
    """
    run = _gd_program(model.score, num_steps, eval_every)
    alpha = jnp.asarray(step_size, jnp.float32)
    w = jnp.asarray(weights, jnp.float32)
    params, curve, bad = run(model.params, train, w, test, alpha)
    if int(bad) >= 0:
        raise FloatingPointError(
            f"gd_finetune: the loss became non-finite at step {int(bad)} (α = {step_size:g})."
        )
    return params, np.asarray(curve)


@dataclasses.dataclass(frozen=True)
class MiniLMStoppingSetting:
    """``T̂`` against the test-optimal step, per training-set size and seed (sizes are ours).

    Attributes:
      sizes: training-set sizes ``N`` (nested prefixes of one draw per seed).
      validation_size: the split that gives the plug-ins ``σ̂``, ``Ĉ_H`` (module doc of
        :mod:`._real_kernel`); test_size: the split that scores every step.
      max_steps, eval_every: the GD horizon and the grid on which test MSE is read.
      step_fraction: ``α = step_fraction/λ̂_max(Θ_tr/N)`` per size and seed.
      horizon: the longest ``T̂`` looked for.
      finetune: also fine-tune the network (else linearised GD only).
    """

    checkpoint: str = "minilm-l6"
    dataset: str = "rotten_tomatoes"
    sizes: tuple[int, ...] = (16, 32, 64)
    validation_size: int = 32
    test_size: int = 64
    max_length: int = 32
    seeds: int = 5
    max_steps: int = 200
    eval_every: int = 10
    step_fraction: float = 0.5
    horizon: int = 100_000
    ntk_batch: int = 16
    finetune: bool = True

    def __post_init__(self):
        _check_checkpoint(self)
        _check_step_fraction(self)
        names = ("validation_size", "test_size", "max_length", "seeds", "max_steps", "eval_every",
                 "horizon", "ntk_batch")  # fmt: skip
        check_int_fields(self, names)
        if self.dataset not in MINILM_TASKS:
            raise ValueError(f"MiniLMStoppingSetting.dataset must be one of {MINILM_TASKS}.")
        if not self.sizes or any(isinstance(n, bool) or not isinstance(n, int) or n < 2
                                 for n in self.sizes):  # fmt: skip
            raise ValueError(f"MiniLMStoppingSetting.sizes: integers >= 2, not {self.sizes}.")
        if self.max_steps % self.eval_every:
            raise ValueError("MiniLMStoppingSetting.max_steps must be a multiple of eval_every.")


class MiniLMStopping(NamedTuple):
    """Per seed and size ``(S, A)`` unless noted.

    Attributes:
      sizes: ``(A,)``; evaluated_steps: ``(E,)``, ``0, e, 2e, …, max_steps``.
      stopping_time: ``T̂``; critical_radius: ``ϱ̂``; noise_std: ``σ̂``; rkhs_distance: ``Ĉ_H``.
      step_size: ``α``.
      linearised_step, finetune_step: the evaluated step with the least test MSE.
      linearised_curve, finetune_curve: test MSE at ``evaluated_steps``, ``(S, A, E)``
        (``finetune_*`` NaN when not run).
      linearised_mse_at_rule: linearised GD's test MSE at exactly ``T̂``.
      pretrained_mse: test MSE of ``f_PT``, from the scores directly (float64), not from
        the curve (whose step 0 is the same number by another route).
      rkhs_distance_spectral: ``Ĉ_H`` by a second route, :func:`increment_rkhs_norm` on the
        same kernel, residual ``f_PT − Y`` and validation step ``s*`` (NaN in units kept
        before this field existed).
      linearised_curve_iterated: ``linearised_curve`` by a second route,
        :func:`heldout_mse_by_iteration` (eq. (7)'s steps iterated in float64 on the same
        kernel, scores and targets), ``(S, A, E)`` (NaN in units kept before this field).
    """

    sizes: np.ndarray
    evaluated_steps: np.ndarray
    stopping_time: np.ndarray
    critical_radius: np.ndarray
    noise_std: np.ndarray
    rkhs_distance: np.ndarray
    step_size: np.ndarray
    linearised_step: np.ndarray
    finetune_step: np.ndarray
    linearised_curve: np.ndarray
    finetune_curve: np.ndarray
    linearised_mse_at_rule: np.ndarray
    pretrained_mse: np.ndarray
    rkhs_distance_spectral: np.ndarray
    linearised_curve_iterated: np.ndarray


def _stopping_seed(setting: MiniLMStoppingSetting, key: PRNGKey) -> dict:
    k_data, k_head = jax.random.split(key)
    model = minilm_scalar_model(setting.checkpoint, k_head, ntk_batch=setting.ntk_batch)
    largest = max(setting.sizes)
    train, val, test = draw_task_splits(
        k_data, setting.dataset, (largest, setting.validation_size, setting.test_size),
        setting.max_length,
    )  # fmt: skip
    both = jax.tree.map(lambda *a: jnp.concatenate(a), train, val, test)
    kernel = model.ntk(model.params, both)
    f_pt = model.score(model.params, both)
    y = both["y"]
    va = slice(largest, largest + setting.validation_size)
    te = slice(largest + setting.validation_size, None)
    steps = np.arange(0, setting.max_steps + 1, setting.eval_every)
    out = {name: [] for name in MiniLMStopping._fields[2:]}
    for size in setting.sizes:
        n = slice(0, size)
        k_n = kernel[n, n]
        alpha = setting.step_fraction / float(jnp.linalg.eigvalsh(k_n / size)[-1])
        rule = plug_in_stopping_time(k_n, kernel[va, n], y[n], y[va], f_pt[n], f_pt[va],
                                     step_size=alpha, steps=jnp.asarray(steps),
                                     horizon=setting.horizon)  # fmt: skip
        curve_steps = jnp.asarray(np.append(steps, int(rule.stopping_time)))
        curve = np.asarray(heldout_mse_curve(k_n, kernel[te, n], y[n], y[te], f_pt[n], f_pt[te],
                                             step_size=alpha, steps=curve_steps))  # fmt: skip
        ft_curve = np.full(len(steps), np.nan)
        if setting.finetune:
            weights = (np.arange(largest) < size).astype(np.float32)
            grid = dict(num_steps=setting.max_steps, eval_every=setting.eval_every)
            _, ft_curve = gd_finetune(model, train, weights, test, step_size=alpha, **grid)
        values = {
            "stopping_time": int(rule.stopping_time),
            "critical_radius": float(rule.critical_radius),
            "noise_std": float(rule.noise_std),
            "rkhs_distance": float(rule.rkhs_distance),
            "step_size": alpha,
            "linearised_step": int(steps[np.argmin(curve[:-1])]),
            "finetune_step": int(steps[np.argmin(ft_curve)]) if setting.finetune else -1,
            "linearised_curve": curve[:-1].tolist(),
            "finetune_curve": ft_curve.tolist(),
            "linearised_mse_at_rule": float(curve[-1]),
            # directly from the scores, a second route to the curve's step 0
            "pretrained_mse": float(
                np.mean((np.asarray(f_pt[te], np.float64) - np.asarray(y[te], np.float64)) ** 2)
            ),
            "rkhs_distance_spectral": increment_rkhs_norm(
                k_n, f_pt[n] - y[n], step_size=alpha, steps=int(rule.validation_step)
            ),
            "linearised_curve_iterated": heldout_mse_by_iteration(
                k_n, kernel[te, n], y[n], y[te], f_pt[n], f_pt[te], step_size=alpha, steps=steps
            ).tolist(),
        }
        for name, value in values.items():
            out[name].append(value)
    return out


def simulate_minilm_stopping_rule(
    key: PRNGKey, setting: MiniLMStoppingSetting, *, memo: Memo = _no_memo
) -> MiniLMStopping:
    """``T̂`` (plug-in, eq. (11)) against the test-optimal steps of linearised and full GD.

    One unit per seed: a fresh draw of train (the largest size; smaller sizes are its
    prefixes), validation and test sentences, and a fresh head.
    """
    check_setting_type("simulate_minilm_stopping_rule", setting, MiniLMStoppingSetting)
    check_key("simulate_minilm_stopping_rule", key)
    units = [memo(f"seed{s}", lambda s=s: _stopping_seed(setting, jax.random.fold_in(key, s)))
             for s in range(setting.seeds)]  # fmt: skip
    steps = np.arange(0, setting.max_steps + 1, setting.eval_every)

    def missing(name: str) -> np.ndarray:  # a field that units kept earlier lack
        per_step = name == "linearised_curve_iterated"
        return np.full((len(setting.sizes), len(steps)) if per_step else len(setting.sizes),
                       np.nan)  # fmt: skip

    fields = {name: np.asarray([u[name] if name in u else missing(name) for u in units])
              for name in MiniLMStopping._fields[2:]}  # fmt: skip
    return MiniLMStopping(
        sizes=np.asarray(setting.sizes),
        evaluated_steps=steps,
        **fields,
    )


@dataclasses.dataclass(frozen=True)
class MiniLMTaskVectorSetting:
    """Sec 7.2 on MiniLM: each task fine-tuned by GD from one ``θ_PT`` (sizes are ours)."""

    checkpoint: str = "minilm-l6"
    tasks: tuple[str, ...] = MINILM_TASKS
    train_size: int = 64
    test_size: int = 128
    max_length: int = 32
    seeds: int = 5
    steps: int = 100
    step_fraction: float = 0.5
    ntk_batch: int = 16

    def __post_init__(self):
        _check_checkpoint(self)
        _check_step_fraction(self)
        names = ("train_size", "test_size", "max_length", "seeds", "steps", "ntk_batch")
        check_int_fields(self, names)
        if len(self.tasks) < 2 or any(t not in MINILM_TASKS for t in self.tasks):
            raise ValueError(
                f"MiniLMTaskVectorSetting.tasks: at least two of {MINILM_TASKS}, got {self.tasks}."
            )


class MiniLMTaskVectors(NamedTuple):
    """Per seed; ``M`` tasks.

    Attributes:
      measured_cosine, predicted_cosine: ``(S, M, M)``: ``cos(τ_i, τ_j)`` of the fine-tuned
        network and Cor 2's kernel prediction for the same GD run.
      accuracy_pretrained, accuracy_finetuned, accuracy_multitask: ``(S, M)``: test accuracy
        on task ``i`` of ``θ_PT``, ``θ_i`` and ``θ_PT + Σ_j τ_j`` (sign of ``f`` vs ``y``).
      normalised_accuracy: ``accuracy_multitask/accuracy_finetuned`` (Sec 7.2, Fig 3 right).
      task_vector_norm: ``‖τ_i‖``, ``(S, M)``; step_size: ``α``, ``(S,)``.
    """

    measured_cosine: np.ndarray
    predicted_cosine: np.ndarray
    accuracy_pretrained: np.ndarray
    accuracy_finetuned: np.ndarray
    accuracy_multitask: np.ndarray
    normalised_accuracy: np.ndarray
    task_vector_norm: np.ndarray
    step_size: np.ndarray


def _task_vector_seed(setting: MiniLMTaskVectorSetting, key: PRNGKey) -> dict:
    from jax.flatten_util import ravel_pytree

    k_data, k_head = jax.random.split(key)
    model = minilm_scalar_model(setting.checkpoint, k_head, ntk_batch=setting.ntk_batch)
    splits = [
        draw_task_splits(jax.random.fold_in(k_data, i), task,
                         (setting.train_size, setting.test_size), setting.max_length)
        for i, task in enumerate(setting.tasks)
    ]  # fmt: skip
    trains = jax.tree.map(lambda *a: jnp.concatenate(a), *[train for train, _ in splits])
    gram = model.ntk(model.params, trains)
    residuals = model.score(model.params, trains) - trains["y"]
    n = setting.train_size
    blocks = [slice(i * n, (i + 1) * n) for i in range(len(setting.tasks))]
    largest = max(float(jnp.linalg.eigvalsh(gram[b, b] / n)[-1]) for b in blocks)
    alpha = setting.step_fraction / largest
    predicted = kernel_predicted_cosines(gram, (n,) * len(blocks), residuals, step_size=alpha,
                                         steps=setting.steps)  # fmt: skip
    flat0, unravel = ravel_pytree(model.params)
    vectors, finetuned = [], []
    for train, test in splits:
        params, _ = gd_finetune(model, train, np.ones(n), test, step_size=alpha,
                                num_steps=setting.steps, eval_every=setting.steps)  # fmt: skip
        vectors.append(ravel_pytree(params)[0] - flat0)
        finetuned.append(params)
    multitask = unravel(flat0 + sum(vectors))

    def accuracy(params, batch):
        return float(jnp.mean(jnp.sign(model.score(params, batch)) == batch["y"]))

    tests = [test for _, test in splits]
    acc_ft = [accuracy(p, t) for p, t in zip(finetuned, tests, strict=True)]
    acc_multi = [accuracy(multitask, t) for t in tests]
    return {
        "measured_cosine": vector_cosines(np.stack(vectors)).tolist(),
        "predicted_cosine": np.asarray(predicted).tolist(),
        "accuracy_pretrained": [accuracy(model.params, t) for t in tests],
        "accuracy_finetuned": acc_ft,
        "accuracy_multitask": acc_multi,
        "normalised_accuracy": [m / f for m, f in zip(acc_multi, acc_ft, strict=True)],
        "task_vector_norm": [float(jnp.linalg.norm(v)) for v in vectors],
        "step_size": alpha,
    }


def simulate_minilm_task_vectors(
    key: PRNGKey, setting: MiniLMTaskVectorSetting, *, memo: Memo = _no_memo
) -> MiniLMTaskVectors:
    """Task vectors of separately fine-tuned MiniLMs, measured against Cor 2 (module doc)."""
    check_setting_type("simulate_minilm_task_vectors", setting, MiniLMTaskVectorSetting)
    check_key("simulate_minilm_task_vectors", key)
    units = [memo(f"seed{s}", lambda s=s: _task_vector_seed(setting, jax.random.fold_in(key, s)))
             for s in range(setting.seeds)]  # fmt: skip
    return MiniLMTaskVectors(
        **{name: np.asarray([u[name] for u in units]) for name in MiniLMTaskVectors._fields}
    )
