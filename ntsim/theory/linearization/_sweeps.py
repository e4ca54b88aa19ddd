r"""The paper's two experiments as pure functions: linearity vs ``λ`` and fits of PEFT configs.

* :func:`linearity_vs_lambda` — the slides' table "Does the regularizer in fact make the
  model linear?": for each ``λ``, fine-tune the network and its linearisation at ``θ_0``
  with the same split-step GD and report ``‖θ_T − θ_0‖``, ``‖f_{θ_T}(x*) − f̄_{θ̄_T}(x*)‖``,
  the KL between their predictive distributions, accuracies, and Thm 2's bound.
* :func:`fit_config` — fine-tune one PEFT configuration and report its train-loss curve
  and test accuracy (the "condition number predicts fine-tuning" experiment).

Both are ``vmap``-able over targets (tasks) and, for the first, over ``λ``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from ntsim._types import Array, ArrayLike, Params
from ntsim._validation import check_choice
from ntsim.core import Record, gradient_descent, linearize, logistic_loss, tree_distance
from ntsim.theory.linearization._bounds import thm2_bound_constant
from ntsim.theory.linearization._dynamics import finetune, jacobian_op_norm, outputs, squared_loss
from ntsim.theory.linearization._peft import bernoulli_kl

#: Training losses accepted by :func:`linearity_vs_lambda`.
LOSSES = ("squared", "logistic")

__all__ = ["LOSSES", "ConfigFit", "LinearityTable", "fit_config", "linearity_vs_lambda"]


class LinearityTable(NamedTuple):
    """One row per ``λ`` (leading axis) of the linearity table.

    Attributes:
      distance: ``‖θ_T − θ_0‖``.
      gap_train: ``‖f_{θ_T}(x*) − f̄_{θ̄_T}(x*)‖`` on the training inputs.
      gap_test: the same on the test inputs, divided by ``sqrt(m/n)`` (comparable scale).
      kl_test: mean ``KL(Ber(σ(f)) ‖ Ber(σ(f̄)))`` on the test inputs (logits ``f``, ``f̄``).
      logit_max_test: the largest ``|f|`` or ``|f̄|`` on the test inputs (the KL's curvature
        ``σ(1 − σ)`` is at least ``σ′`` of it).
      accuracy: test accuracy of ``sign f_{θ_T}``.
      accuracy_linear: test accuracy of ``sign f̄_{θ̄_T}``.
      train_loss: ``R̃(θ_T)/n`` (mean squared error on the training set).
      thm2_bound: ``2L̂ r_0(1 − e^{−λT})/λ`` (Thm 2, constant ``λ``; ``L̂`` = path max).
      distance_curve: ``(T_rec,)`` ``‖θ_t − θ_0‖`` at the recorded steps.
      bound_curve: ``(T_rec,)`` Thm 2's bound at the recorded times.
      times: ``(T_rec,)`` recorded flow times ``t = ηk``.
    """

    distance: Array
    gap_train: Array
    gap_test: Array
    kl_test: Array
    logit_max_test: Array
    accuracy: Array
    accuracy_linear: Array
    train_loss: Array
    thm2_bound: Array
    distance_curve: Array
    bound_curve: Array
    times: Array


class _Run(NamedTuple):
    """What :func:`linearity_vs_lambda` reads from one run."""

    distance: Array
    train: Array
    test: Array
    jac_norm: Array
    times: Array


def _optax_run(apply, params0, x, y, x_test, *, loss, proximal, optimizer, num_steps, every):
    """Any optax optimiser on ``loss + (λ/2)‖θ − θ_0‖²`` (the practice-like variant)."""
    if loss == "squared":
        loss_fn = squared_loss(apply, x, y)
    else:  # mean logistic (binary cross-entropy on ±1 labels), as in practice

        def loss_fn(p):
            return jnp.mean(logistic_loss(y * outputs(apply, p, x)))

    def fn(p, step):
        return {
            "distance": tree_distance(p, params0),
            "train": outputs(apply, p, x),
            "test": outputs(apply, p, x_test),
            "jac_norm": jacobian_op_norm(apply, p, x),
        }

    res = gradient_descent(
        loss_fn,
        params0,
        num_steps=num_steps,
        optimizer=optimizer,
        proximal=proximal,
        record=Record(every=every, fn=fn),
        throw=False,
    )
    rec = res.records
    return _Run(rec["distance"], rec["train"], rec["test"], rec["jac_norm"], res.steps * 1.0)


def linearity_vs_lambda(
    apply: Callable[[Params, Array], Array],
    params0: Params,
    x: ArrayLike,
    y: ArrayLike,
    x_test: ArrayLike,
    y_test: ArrayLike,
    *,
    lambdas: ArrayLike,
    learning_rate: ArrayLike,
    num_steps: int,
    record_every: int,
    loss: str = "squared",
    optimizer: optax.GradientTransformation | None = None,
) -> LinearityTable:
    r"""The linearity table (Rahimi Afzal et al. 2025, experiments) for each ``λ`` in ``lambdas``.

    The network ``f_θ`` and its linearisation ``f̄_θ = f_{θ_0} + J_0(θ − θ_0)`` are trained
    from ``θ_0`` with the same ``λ``. Theory setting (default): split-step GD on the summed
    squared loss ``R̃`` (``λη ≤ 1`` required; ``times`` are ``ηk``). Practice-like setting
    (the slides' experiments used cross-entropy and AdamW): pass ``optimizer`` (any optax
    optimiser, applied to ``loss + (λ/2)‖θ − θ_0‖²`` jointly; ``learning_rate`` is then
    ignored and ``times`` are step counts) and ``loss="logistic"`` (mean binary
    cross-entropy on ``±1`` labels). Thm 2's bound is reported for both but holds only for
    the theory setting.
    """
    check_choice("linearity_vs_lambda", "loss", loss, LOSSES)
    if optimizer is None and loss != "squared":
        raise ValueError(
            "linearity_vs_lambda: the split-step GD of the theory uses loss='squared'; pass an "
            f"optax optimizer for loss={loss!r}."
        )
    x, y = jnp.asarray(x), jnp.asarray(y)
    x_test, y_test = jnp.asarray(x_test), jnp.asarray(y_test)
    n, m = y.shape[0], y_test.shape[0]

    def run(model, lam):
        if optimizer is None:
            tr = finetune(
                model,
                params0,
                x,
                y,
                proximal=lam,
                learning_rate=learning_rate,
                num_steps=num_steps,
                record_every=record_every,
                x_test=x_test,
            )
            return _Run(tr.distance, tr.train, tr.test, tr.jac_norm, tr.times)
        return _optax_run(
            model,
            params0,
            x,
            y,
            x_test,
            loss=loss,
            proximal=lam,
            optimizer=optimizer,
            num_steps=num_steps,
            every=record_every,
        )

    def one(lam):
        net = run(apply, lam)
        lin = run(linearize(apply, params0), lam)
        f, f_lin = net.test[-1], lin.test[-1]
        r0 = jnp.linalg.norm(net.train[0] - y)
        lip = jnp.max(net.jac_norm)
        bound_curve = thm2_bound_constant(lip, r0, lam, net.times)
        return LinearityTable(
            distance=net.distance[-1],
            gap_train=jnp.linalg.norm(net.train[-1] - lin.train[-1]),
            gap_test=jnp.linalg.norm(f - f_lin) / jnp.sqrt(m / n),
            kl_test=bernoulli_kl(f, f_lin),
            logit_max_test=jnp.maximum(jnp.max(jnp.abs(f)), jnp.max(jnp.abs(f_lin))),
            accuracy=jnp.mean(jnp.sign(f) == y_test),
            accuracy_linear=jnp.mean(jnp.sign(f_lin) == y_test),
            train_loss=jnp.mean((net.train[-1] - y) ** 2),
            thm2_bound=bound_curve[-1],
            distance_curve=net.distance,
            bound_curve=bound_curve,
            times=net.times,
        )

    return jax.vmap(one)(jnp.asarray(lambdas))


class ConfigFit(NamedTuple):
    """A fine-tuning run of one PEFT configuration.

    Attributes:
      loss_curve: ``(T_rec,)`` mean squared training error at the recorded steps.
      train_loss: final mean squared training error.
      accuracy: final test accuracy of ``sign f``.
    """

    loss_curve: Array
    train_loss: Array
    accuracy: Array


def fit_config(
    apply: Callable[[Params, Array], Array],
    params0: Params,
    x: ArrayLike,
    y: ArrayLike,
    x_test: ArrayLike,
    y_test: ArrayLike,
    *,
    proximal: ArrayLike,
    learning_rate: ArrayLike,
    num_steps: int,
    record_every: int,
) -> ConfigFit:
    """Split-step GD on ``R̃ + (λ/2)‖θ − θ_0‖²`` for one configuration's trainable parameters."""
    y, y_test = jnp.asarray(y), jnp.asarray(y_test)
    run = finetune(
        apply,
        params0,
        x,
        y,
        proximal=proximal,
        learning_rate=learning_rate,
        num_steps=num_steps,
        record_every=record_every,
        record_jacobian=False,
    )
    curve = jnp.mean((run.train - y) ** 2, axis=1)
    preds = outputs(apply, run.params, x_test)
    return ConfigFit(curve, curve[-1], jnp.mean(jnp.sign(preds) == y_test))
