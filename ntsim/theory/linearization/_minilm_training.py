r"""Fine-tuning several MiniLM configurations as ONE stacked run (shared by the MiniLM studies).

The configurations of :func:`ntsim.transformers.adapter_model` share one parameter
structure, so ``C`` of them stack along a leading axis and train together in one
:func:`ntsim.transformers.finetune` call: the objective is the sum of their objectives,

.. math:: F(θ_1, …, θ_C) = \sum_c \Big[ w_c\,L_c(θ_c) + \frac{λ_c}{2}‖θ_c − θ_{0,c}‖² \Big],

whose gradient in ``θ_c`` is ``w_c∇L_c + λ_c(θ_c − θ_{0,c})`` alone. So every coordinate-wise
optimiser (GD, Adam/AdamW without global-norm clipping) runs each configuration exactly as a
run of its own would: GD with step 1 and ``w_c = η_c`` is GD with step ``η_c``; AdamW is
invariant to ``w_c`` and uses ``w_c = 1``. ``λ_c`` is the proximal term of
:func:`~ntsim.transformers.finetune` written with one strength per configuration (data, so a
λ sweep is one program; ``finetune``'s own ``proximal=`` is one float per call). The
configurations see the same minibatches and dropout masks (paired comparisons). One call
per (dataset, seed, regime) replaces ``C`` calls: on 2 CPU cores each call costs ~6 s of
tracing and lowering before its first step (measured on MiniLM-L3), more than the quick
study's whole training.

Global-norm clipping is off (it would couple the configurations through a shared norm).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ntsim._types import Array
from ntsim._validation import check_int_fields

__all__ = [
    "RISE_TOLERANCE",
    "Memo",
    "TrainingSetup",
    "fit_stacked",
    "gd_rises",
    "halving_ladder",
    "linearization_gap",
    "stack",
    "stacked_scores_fn",
]

REGIMES = ("adamw_ce", "gd_mse")

#: ``memo(name, compute) -> dict``: receives a unit of work's name and its computation and
#: returns its result, computed now or kept from an earlier run (the simulations' ``memo``).
Memo = Callable[[str, Callable[[], dict]], dict]


@dataclasses.dataclass(frozen=True)
class TrainingSetup:
    """The fine-tuning both MiniLM studies share (the paper gives no hyperparameters).

    Attributes:
      checkpoint: ``"minilm-l3"`` or ``"minilm-l6"``.
      datasets: ``"rotten_tomatoes"`` and/or ``"tweets"`` (positive vs negative).
      train_size: training sentences per subset.
      test_size: test sentences per subset.
      max_length: tokens per sentence (padded or truncated).
      seeds: runs per configuration (head, ``A``, minibatch order, dropout).
      alpha: LoRA ``α`` (scale ``α/r``, Hu et al.'s fixed ``α``).
      epochs: AdamW + cross-entropy epochs (10% warm-up, linear decay).
      batch_size: AdamW minibatch size.
      learning_rate: AdamW peak learning rate.
    """

    checkpoint: str = "minilm-l6"
    datasets: tuple[str, ...] = ("rotten_tomatoes", "tweets")
    train_size: int = 64
    test_size: int = 256
    max_length: int = 32
    seeds: int = 5
    alpha: float = 16.0
    epochs: int = 10  # the paper's condition-number panel trains 10 epochs
    batch_size: int = 16
    learning_rate: float = 5e-4

    def __post_init__(self):
        check_int_fields(self, ("train_size", "test_size", "max_length", "seeds", "epochs",
                                "batch_size"))  # fmt: skip
        if self.batch_size > self.train_size:
            raise ValueError(f"{type(self).__name__}.batch_size must not exceed train_size.")
        if not self.datasets or len(set(self.datasets)) != len(self.datasets):
            raise ValueError(f"{type(self).__name__}.datasets must be distinct and non-empty.")
        if not (self.learning_rate > 0 and self.alpha > 0):
            raise ValueError(f"{type(self).__name__}: learning_rate and alpha must be > 0.")

    @property
    def adamw_steps(self) -> int:
        return self.epochs * (self.train_size // self.batch_size)


def stack(trees):
    """Stack pytrees of one structure along a new leading axis.

    Args:
      trees: a sequence of pytrees with the same structure and leaf shapes.
    """
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *trees)


def _signed(labels: Array) -> Array:
    return 2.0 * labels - 1.0


def fit_stacked(
    model,
    adapters0,
    selection,
    train,
    key,
    *,
    regime: str,
    setup: TrainingSetup,
    weights: Array | None = None,
    proximal: Array | None = None,
    gd_steps: int = 0,
    throw: bool = True,
):
    """Train ``C`` stacked configurations together (module doc); ``finetune``'s result.

    Args:
      model: :func:`ntsim.transformers.adapter_model`.
      adapters0: stacked ``θ_0`` (leading axis ``C``).
      selection: stacked :class:`~ntsim.transformers.Selection` (leading axis ``C``).
      train: ``{"input_ids", "attention_mask", "label"}`` with labels in ``{0, 1}``.
      key: the run's key (minibatch order, dropout).
      regime: ``"adamw_ce"`` (minibatch AdamW on the logistic loss, dropout on, the setup's
        schedule) or ``"gd_mse"`` (full-batch GD on ``(1/n)Σ(f − y)²`` to ``y = ±1``,
        dropout off, ``gd_steps`` steps of size ``weights[c]``).
      setup: the :class:`TrainingSetup` (AdamW's epochs, batch size, learning rate).
      weights: ``w_c`` (GD: the step ``η_c``); default ones.
      proximal: ``λ_c ≥ 0``; default zeros.
      gd_steps: GD steps (``"gd_mse"`` only).
      throw: raise on a non-finite training loss (``False``: train on; a diverging
        configuration then stays confined to its own row, the others are unaffected).

    Returns:
      :class:`ntsim.transformers.FinetuneResult`; ``records["per_config"]`` is each
      configuration's training loss per step ``(steps, C)``.
    """
    from ntsim.transformers import adamw, finetune, learning_rate_schedule

    if regime not in REGIMES:
        raise ValueError(f"fit_stacked: regime must be one of {REGIMES}, got {regime!r}.")
    size = len(jax.tree.leaves(selection)[0])
    weights = jnp.ones(size) if weights is None else jnp.asarray(weights, jnp.float32)
    proximal = jnp.zeros(size) if proximal is None else jnp.asarray(proximal, jnp.float32)
    anchor = adapters0
    adamw_regime = regime == "adamw_ce"

    def loss_fn(adapters, batch, k):
        def one(a, a0, sel):
            z = model.scores(a, sel, batch, key=k if adamw_regime else None)
            y = _signed(batch["label"])
            loss = jnp.mean(jax.nn.softplus(-y * z) if adamw_regime else (z - y) ** 2)
            distance2 = sum(jnp.sum((p - p0) ** 2) for p, p0 in
                            zip(jax.tree.leaves(a), jax.tree.leaves(a0), strict=True))  # fmt: skip
            return loss, distance2

        losses, distance2 = jax.vmap(one)(adapters, anchor, selection)
        objective = jnp.sum(weights * losses + 0.5 * proximal * distance2)
        return objective, {"per_config": losses}

    if adamw_regime:
        num_steps, batch_size = setup.adamw_steps, setup.batch_size
        warmup = max(num_steps // 10, 1)
        shape = learning_rate_schedule(1.0, total_steps=num_steps, warmup_steps=warmup,
                                       decay="linear")  # fmt: skip
        optimizer = adamw(shape, peak=setup.learning_rate, max_grad_norm=None)
        every = setup.train_size // setup.batch_size
    else:
        num_steps, batch_size = gd_steps, int(np.shape(train["label"])[0])
        optimizer = optax.sgd(1.0)
        quarter = max(num_steps // 4, 1)  # four segments: the first's time includes tracing
        every = quarter if num_steps % quarter == 0 else num_steps
    return finetune(loss_fn, adapters0, train, optimizer=optimizer, num_steps=num_steps,
                    batch_size=batch_size, keys=key, eval_every=every, throw=throw)  # fmt: skip


#: A GD run's training loss "rises" when it grows by more than this fraction over one step.
#: Chosen: far above the float32 round-off of a mean of n ≥ 8 squared errors (~1e-6
#: relative), far below the rises that marked divergence at full scale (factors > 2).
RISE_TOLERANCE = 0.01


def gd_rises(losses) -> bool:
    """Whether a GD loss sequence is non-finite somewhere or rises by more than
    :data:`RISE_TOLERANCE` over a step. Full-batch GD on a smooth loss at a step below
    ``2/L`` (``L`` the curvature along the path) descends at every step (the descent lemma);
    for the linearised MSE model ``(1/n)‖f − y‖²`` that is ``η < n/λ_max(K)``, so a rise
    says the step outgrew the curvature the run met.

    Examples:
      >>> gd_rises([1.0, 0.5, 0.5, 0.2]), gd_rises([1.0, 0.5, 0.6]), gd_rises([1.0, float("nan")])
      (False, True, True)
    """
    losses = np.asarray(losses, np.float64)
    if not np.all(np.isfinite(losses)):
        return True
    return bool(np.any(losses[1:] > losses[:-1] * (1.0 + RISE_TOLERANCE)))


def halving_ladder(
    run: Callable[[np.ndarray, np.ndarray], dict], size: int, fraction: float, halvings: int
) -> dict:
    """Per run, the largest step fraction ``fraction·2^{−k}``, ``k ≤ halvings``, at which its
    GD training loss never rises (:func:`gd_rises`).

    Every run first trains at ``fraction``; the runs whose loss rose train again, from the
    same start, at half their fraction, and so on; after ``halvings`` halvings a run keeps
    its last result (rising or not, its ``step_fraction`` says where it stopped).

    Args:
      run: ``run(rows, fractions) -> unit``: trains the given rows (indices into
        ``range(size)``) at the given fractions and returns a dict of per-row lists
        ``"train_loss"`` (the final loss), ``"curves"`` (the loss per step) and any other
        per-row entries, plus ``"seconds"`` (kept from the first call only: all rows).
      size: number of rows.
      fraction: the first step fraction.
      halvings: at most this many halvings per row.

    Returns:
      The merged unit (each row's entries from its last call) with ``"step_fraction"``: each
      row's final fraction.
    """
    fractions = np.full(size, float(fraction))
    pending = np.arange(size)
    merged: dict = {}
    for halving in range(halvings + 1):
        part = run(pending, fractions[pending])
        for name, values in part.items():
            if name == "seconds":
                merged.setdefault(name, list(values))
                continue
            column = merged.setdefault(name, [None] * size)
            for row, value in zip(pending, values, strict=True):
                column[row] = value
        rising = [row for row, curve, last in
                  zip(pending, part["curves"], part["train_loss"], strict=True)
                  if gd_rises([*curve, last])]  # fmt: skip
        if not rising or halving == halvings:
            break
        pending = np.asarray(rising)
        fractions[pending] /= 2
    merged["step_fraction"] = fractions.tolist()
    return merged


def stacked_scores_fn(model):
    """``scores(adapters, selection, encoder, data) -> (C, N)`` logits of stacked
    configurations, dropout off; jitted once, the encoder an argument (not a constant). The
    runs are evaluated one after another (``lax.map``): all of them at once would hold
    ``C × N`` sentences' activations."""

    @jax.jit
    def scores(adapters, selection, encoder, data):
        one = lambda args: model.scores(*args, data, encoder=encoder)  # noqa: E731
        return jax.lax.map(one, (adapters, selection))

    return scores


def linearization_gap(apply, params0, params, data):
    r"""``(f(θ, x), f̄(θ, x))``: the model and its first-order Taylor expansion at ``θ_0``,

    .. math:: \bar f(θ, x) = f(θ_0, x) + ⟨∇_θ f(θ_0, x), θ − θ_0⟩,

    both at the same ``θ`` (the slides' table compares ``f_{θ_t}`` with ``f̄_{θ_t}``), via
    :func:`ntsim.core.linearize` (one ``jax.jvp``, no Jacobian formed).

    Args:
      apply: ``apply(params, data) -> outputs``.
      params0: the expansion point ``θ_0``.
      params: where both are evaluated.
      data: the inputs ``apply`` takes.

    Examples:
      >>> import jax.numpy as jnp
      >>> f = lambda p, x: x * p["a"] * p["b"]          # bilinear, like LoRA's A·B
      >>> p0 = {"a": jnp.array(1.0), "b": jnp.array(0.0)}
      >>> p = {"a": jnp.array(3.0), "b": jnp.array(2.0)}
      >>> f_t, f_lin = linearization_gap(f, p0, p, 1.0)
      >>> float(f_t), float(f_lin)                      # f − f̄ = Δa·Δb = 2·2
      (6.0, 2.0)
    """
    from ntsim.core import linearize

    return apply(params, data), linearize(apply, params0)(params, data)
