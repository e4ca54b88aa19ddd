"""The linearization paper's experiments on a real checkpoint (MiniLM + PEFT configurations).

A public submodule of its own, not re-exported by :mod:`ntsim.theory.linearization`: its
functions reach the Flax path (:mod:`ntsim.transformers`, imported inside them), so keeping
them out of the topic's namespace keeps ``import ntsim.theory.linearization`` — and the
source hash of every synthetic linearization claim, which follows the topic's imports —
independent of the Flax path.

* :mod:`._minilm` — κ(K + σI) of the NTK and the sign kernel at θ₀ against the training
  loss of AdamW + cross-entropy and GD + MSE (:func:`simulate_minilm_kappa`,
  :func:`minilm_kappa_loss_correlation`);
* :mod:`._minilm_lambda` — the slides' λ table (:func:`simulate_minilm_lambda`);
* :mod:`._minilm_training` — several configurations fine-tuned as one stacked run
  (:func:`fit_stacked`), their logits (:func:`stacked_scores_fn`), the GD step ladder
  (:func:`halving_ladder`, :func:`gd_rises`), and the gap between a model and its
  first-order Taylor expansion (:func:`linearization_gap`).
"""

from ntsim.theory.linearization._minilm import (
    MINILM_CONFIGS,
    MINILM_KAPPA_SCALES,
    MINILM_KERNELS,
    MINILM_REGIMES,
    MiniLMKappaRun,
    MiniLMKappaSetting,
    minilm_kappa_loss_correlation,
    simulate_minilm_kappa,
)
from ntsim.theory.linearization._minilm_lambda import (
    MINILM_LAMBDA_SCALES,
    MINILM_LAMBDAS,
    MiniLMLambdaRun,
    MiniLMLambdaSetting,
    simulate_minilm_lambda,
)
from ntsim.theory.linearization._minilm_training import (
    REGIMES,
    RISE_TOLERANCE,
    TrainingSetup,
    fit_stacked,
    gd_rises,
    halving_ladder,
    linearization_gap,
    stack,
    stacked_scores_fn,
)

__all__ = [
    "MINILM_CONFIGS",
    "MINILM_KAPPA_SCALES",
    "MINILM_KERNELS",
    "MINILM_LAMBDAS",
    "MINILM_LAMBDA_SCALES",
    "MINILM_REGIMES",
    "REGIMES",
    "RISE_TOLERANCE",
    "MiniLMKappaRun",
    "MiniLMKappaSetting",
    "MiniLMLambdaRun",
    "MiniLMLambdaSetting",
    "TrainingSetup",
    "fit_stacked",
    "gd_rises",
    "halving_ladder",
    "linearization_gap",
    "minilm_kappa_loss_correlation",
    "simulate_minilm_kappa",
    "simulate_minilm_lambda",
    "stack",
    "stacked_scores_fn",
]
