r"""Does the proximal regulariser make a real model linear? The slides' λ table on MiniLM + LoRA.

The slides (RoBERTa-base + LoRA, CoLA and SST-2) report, for ``λ ∈ {50, 10, 5, 2, 1, 0.5,
0.1, 0}``, the distance ``‖θ_T − θ_0‖``, the gap ``‖f_{θ_T}(x*) − f̄_{θ_T}(x*)‖`` between the
fine-tuned model and its linearisation at ``θ_0``, a KL between their predictive
distributions, and the accuracy, with "as the regularization strength increases, the model
behaves more like a linear model". Here: MiniLM with the head plus LoRA on query/value
(:func:`ntsim.transformers.adapter_model`) is fine-tuned by AdamW + cross-entropy with the
proximal term ``(λ/2)‖θ − θ_0‖²`` over the trainable parameters (λ on the minibatch-mean
loss scale; the slides do not give theirs), every λ and seed stacked in one run
(:func:`~ntsim.theory.linearization.minilm.fit_stacked`). Per (dataset, λ, seed):

* ``distance`` — ``‖θ_T − θ_0‖₂`` over the trainable parameters (head and LoRA factors);
* ``gap_train``, ``gap_test`` — ``‖f(θ_T, x) − f̄(θ_T, x)‖₂`` over the training and test
  sentences, ``f̄`` the first-order Taylor expansion of the logit at ``θ_0`` in the trainable
  parameters (one ``jax.jvp``; :func:`linearization_gap`) — at LoRA's ``B = 0`` it misses
  the bilinear ``ΔA·ΔB`` term and everything of higher order;
* ``gap_train_scaled``, ``gap_test_scaled`` — the same gaps at ``θ_0 + s(θ_T − θ_0)`` for
  ``s = ½, ¼`` (:data:`TAYLOR_SCALES`): along each trained direction a correct
  linearisation leaves a remainder of second order in ``s`` (halving ``s`` quarters it);
* ``kl_test`` — mean ``KL(Ber σ(f) ‖ Ber σ(f̄))`` over the test sentences, and
  ``logit_max_test`` — the largest ``|f|`` or ``|f̄|`` over them (the KL's curvature
  ``σ(z)(1 − σ(z))`` is at least its value there);
* ``accuracy`` — test accuracy of ``f(θ_T)``;
* ``train_targets`` — the targets ``y = 2·label − 1`` of the training labels, by the label
  coding the training loss ``softplus(−y·f)`` calls (recomputed here, and read by
  ``train_loss``): the cross-entropy of labels ``{0, 1}`` needs them at ``±1``.

Flax is imported inside the functions only.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.theory.linearization._minilm_training import (
    Memo,
    TrainingSetup,
    _signed,
    fit_stacked,
    linearization_gap,
    stack,
)
from ntsim.theory.linearization._peft import bernoulli_kl

__all__ = [
    "MINILM_LAMBDA_SCALES",
    "TAYLOR_SCALES",
    "MiniLMLambdaRun",
    "MiniLMLambdaSetting",
    "simulate_minilm_lambda",
]

#: The fractions ``s`` of the trained step ``θ_T − θ_0`` at which the gaps are also taken.
TAYLOR_SCALES = (0.5, 0.25)

#: The issue's grid (the slides' grid is {50, 10, 5, 2, 1, 0.5, 0.1, 0}).
MINILM_LAMBDAS = (0.0, 0.01, 0.1, 1.0, 10.0, 50.0)


@dataclasses.dataclass(frozen=True)
class MiniLMLambdaSetting(TrainingSetup):
    """Sizes of the λ table (module doc).

    Attributes:
      config: the trainable set, a LoRA configuration (``ntsim.transformers``' names).
      lambdas: the proximal strengths λ of the table, strictly increasing.
    """

    config: str = "lora_qv8"
    lambdas: tuple[float, ...] = MINILM_LAMBDAS

    def __post_init__(self):
        super().__post_init__()
        if not self.config.startswith("lora_"):
            raise ValueError(f"MiniLMLambdaSetting.config must be a LoRA configuration, got "
                             f"{self.config!r}.")  # fmt: skip
        if len(self.lambdas) < 3 or any(lam < 0 for lam in self.lambdas):
            raise ValueError("MiniLMLambdaSetting.lambdas needs at least 3 values, all >= 0.")
        if list(self.lambdas) != sorted(set(self.lambdas)):
            raise ValueError("MiniLMLambdaSetting.lambdas must be strictly increasing.")


#: The fields of the run that come from the setting, not from a dataset's unit.
_SETTING_FIELDS = {"lambdas", "train_size", "test_size"}


class MiniLMLambdaRun(NamedTuple):
    """Per dataset ``D``, λ ``L`` and seed ``S`` (module doc for each quantity).

    Attributes:
      distance, gap_train, gap_test, kl_test, logit_max_test, accuracy: ``(D, L, S)``.
      train_loss: ``(D, L, S)`` final training cross-entropy (full set, dropout off).
      train_targets: ``(D, L, S, n)`` the training labels' ``±1`` targets, by the coding
        the training loss calls.
      gap_train_scaled, gap_test_scaled: ``(D, L, S, 2)``: the gaps at
        ``θ_0 + s(θ_T − θ_0)``, ``s`` in :data:`TAYLOR_SCALES`.
      lambdas: ``(L,)``.
      train_size, test_size: the sentences the train and test gaps are norms over.
    """

    distance: Array
    gap_train: Array
    gap_test: Array
    kl_test: Array
    logit_max_test: Array
    accuracy: Array
    train_loss: Array
    train_targets: Array
    gap_train_scaled: Array
    gap_test_scaled: Array
    lambdas: Array
    train_size: int
    test_size: int


def _kl64(f: np.ndarray, f_lin: np.ndarray) -> np.ndarray:
    """Per-run mean KL in float64: for nearly linear runs the KL is ~gap²/8 (1e-8 and less),
    below float32 round-off of the log-probabilities it is a difference of."""
    with jax.enable_x64(True):
        f, f_lin = np.asarray(f, np.float64), np.asarray(f_lin, np.float64)
        return np.asarray(jax.vmap(bernoulli_kl)(f, f_lin))


def simulate_minilm_lambda(
    key: PRNGKey, setting: MiniLMLambdaSetting, *, memo: Memo | None = None
) -> MiniLMLambdaRun:
    """The λ table per (dataset, λ, seed) (module doc).

    Dataset ``d``'s subsets come from ``fold_in(key, d)``, its minibatch order and dropout
    from ``fold_in(key, 2000 + d)``; seed ``s``'s head and ``A`` from
    ``split(fold_in(key, 1000), seeds)[s]``, the same for every λ (paired).

    ``memo(name, compute) -> dict`` (default: ``compute()``) receives each dataset's stacked
    run as a unit named by the dataset, a dict of JSON lists, and may return a kept copy (as
    :func:`ntsim.theory.linearization.minilm.simulate_minilm_kappa`'s ``memo``).
    """
    check_setting_type("simulate_minilm_lambda", setting, MiniLMLambdaSetting)
    check_key("simulate_minilm_lambda", key)
    from ntsim.transformers import (
        AdapterLayout,
        adapter_model,
        binary_sentiment_split,
        load_pretrained,
        parse_adapter_config,
    )

    s = setting
    kind, rank = parse_adapter_config(s.config)
    model_config, encoder0 = load_pretrained(s.checkpoint)
    layout = AdapterLayout(qv_rank=rank if kind == "lora_qv" else 1,
                           ffn_rank=rank if kind == "lora_ffn" else 1, alpha=s.alpha)  # fmt: skip
    model = adapter_model(model_config, encoder0, layout)
    seed_keys = jax.random.split(jax.random.fold_in(key, 1000), s.seeds)
    # row l·S + j: λ_l, seed j
    adapters0, selection = stack([model.init(k, s.config) for _ in s.lambdas for k in seed_keys])
    proximal = np.repeat(np.asarray(s.lambdas, np.float32), s.seeds)

    @jax.jit
    def evaluate(params, params0, selection, encoder, data):
        def one(args):  # runs one after another (lax.map): bounded memory
            p, p0, sel = args
            apply = lambda a, batch: model.scores(a, sel, batch, encoder=encoder)  # noqa: E731
            f, f_lin = linearization_gap(apply, p0, p, data)
            delta = [jnp.sum((a - b) ** 2) for a, b in
                     zip(jax.tree.leaves(p), jax.tree.leaves(p0), strict=True)]  # fmt: skip
            return f, f_lin, jnp.sqrt(sum(delta))

        return jax.lax.map(one, (params, params0, selection))

    def dataset_unit(train, test, data_key) -> dict:
        """Every (λ, seed) row of one dataset, fine-tuned as one stacked run."""
        fit = fit_stacked(model, adapters0, selection, train, data_key, regime="adamw_ce",
                          setup=s, proximal=proximal)  # fmt: skip
        both = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), train, test)
        result = evaluate(fit.params, adapters0, selection, encoder0, both)
        f, f_lin, distance = (np.asarray(v) for v in result)
        n = s.train_size

        def split_gaps(f, f_lin):  # ‖f − f̄‖ on the training and on the test sentences
            gap = f - f_lin
            return np.linalg.norm(gap[:, :n], axis=1), np.linalg.norm(gap[:, n:], axis=1)

        scaled = []  # (rows, 2 splits, scales): the gaps along each trained step
        for fraction in TAYLOR_SCALES:
            params = jax.tree.map(lambda p, p0, c=fraction: p0 + c * (p - p0), fit.params,
                                  adapters0)  # fmt: skip
            f_s, f_lin_s, _ = evaluate(params, adapters0, selection, encoder0, both)
            scaled.append(np.stack(split_gaps(np.asarray(f_s), np.asarray(f_lin_s)), axis=1))
        scaled = np.stack(scaled, axis=-1)
        gap_train, gap_test = split_gaps(f, f_lin)
        signed = np.asarray(_signed(np.asarray(train["label"], np.float32)))  # the loss's y
        y_test = np.asarray(test["label"]) > 0.5
        values = {
            "distance": distance,
            "gap_train": gap_train,
            "gap_test": gap_test,
            "kl_test": _kl64(f[:, n:], f_lin[:, n:]),
            "logit_max_test": np.maximum(np.abs(f[:, n:]), np.abs(f_lin[:, n:])).max(axis=1),
            "accuracy": np.mean((f[:, n:] > 0) == y_test, axis=1),
            "train_loss": np.mean(np.logaddexp(0.0, -signed * f[:, :n]), axis=1),
            "train_targets": np.tile(signed, (f.shape[0], 1)),
            "gap_train_scaled": scaled[:, 0],
            "gap_test_scaled": scaled[:, 1],
        }
        return {name: np.asarray(value, np.float64).tolist() for name, value in values.items()}

    memo = memo or (lambda name, compute: compute())
    shape = (len(s.datasets), len(s.lambdas), s.seeds)
    out = {}
    for d, dataset in enumerate(s.datasets):
        train, test = binary_sentiment_split(dataset, jax.random.fold_in(key, d),
                                             train_size=s.train_size, test_size=s.test_size,
                                             max_length=s.max_length)  # fmt: skip
        data_key = jax.random.fold_in(key, 2000 + d)
        unit = memo(dataset, lambda t=train, u=test, k=data_key: dataset_unit(t, u, k))
        missing = set(MiniLMLambdaRun._fields) - set(unit) - _SETTING_FIELDS
        if missing:
            raise ValueError(f"simulate_minilm_lambda: the kept unit {dataset!r} lacks "
                             f"{sorted(missing)}: it was made by older code; remove it from the "
                             "run cache to compute it again.")  # fmt: skip
        for name, value in unit.items():
            value = np.asarray(value)
            out.setdefault(name, np.zeros(shape + value.shape[1:]))
            out[name][d] = value.reshape(shape[1:] + value.shape[1:])
    return MiniLMLambdaRun(**{k: jnp.asarray(v) for k, v in out.items()},
                           lambdas=jnp.asarray(s.lambdas), train_size=s.train_size,
                           test_size=s.test_size)  # fmt: skip


#: Quick: L3, 8 sentences, three λ, 2 seeds, 2 epochs (a smoke test, ≤ 60 s cold). Full: L6,
#: the issue's six λ, sized in the experiment's docs.
MINILM_LAMBDA_SCALES = {
    "quick": MiniLMLambdaSetting(checkpoint="minilm-l3", datasets=("rotten_tomatoes",),
                                 train_size=8, test_size=32, max_length=16, seeds=2, epochs=2,
                                 batch_size=4, lambdas=(0.0, 1.0, 50.0)),
    "full": MiniLMLambdaSetting(),
}  # fmt: skip
