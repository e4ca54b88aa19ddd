r"""Fine-tuning a two-layer ReLU network in the NTK regime (Shachaf et al. 2021, Sec 6).

Model (Sec 6): ``f(x; W) = (1/√m) Σ_r a_r relu(w_rᵀx)`` (:func:`ntsim.core.two_layer_relu`)
with fixed uniform signs ``a ∈ {−1, 1}^m``, unit-norm inputs, ``w_r ~ N(0, κ²I)`` before
pretraining. Pretraining runs GD on the source task, fine-tuning runs GD on the target task
from the pretrained ``W_S`` with the same ``m``; both minimise ``L(W) = (1/n)‖f(X; W) − y‖²``.
The infinite-width Gram matrix w.r.t. ``W`` is

.. math:: H^∞_{ij} = x_iᵀx_j (π − \arccos(x_iᵀx_j)) / (2π)

(:func:`ntsim.core.two_layer_relu_hinf`). Theorem 6.1 bounds the risk by
``2√(ỹᵀ(H^∞)⁻¹ỹ/n)`` plus an ``O(√(log(n/(λ₀δ))/n))`` term, with the *residual targets*
``ỹ = y − f(X; W_S)``; Corollaries 6.2/6.3 specialise to linear teachers.

Derived facts (not in the paper; derived here), used as oracles by the claims:

* ``(π − arccos t)/(2π) = 1/4 + arcsin(t)/(2π)``, and ``arcsin`` has a power series with
  non-negative coefficients in odd powers, so by Schur's product theorem
  ``H^∞ − XXᵀ/4 = (XXᵀ) ∘ arcsin(XXᵀ)/(2π) ⪰ 0``. Hence for ``ỹ = Xv``, ``v = θ_T − θ_S``:
  ``ỹᵀ(H^∞)⁻¹ỹ ≤ 4 ỹᵀ(XXᵀ)⁻¹ỹ = 4‖P_∥v‖²``, i.e. ``√(ỹᵀ(H^∞)⁻¹ỹ) ≤ 2‖P_∥v‖ ≤ 2‖v‖``,
  tighter than Cor. 6.2's ``3‖v‖``.
* In the kernel regime the fine-tuned network is the kernel predictor
  ``f_S(x) + H^∞(x, X)(H^∞)⁻¹ỹ`` and ``‖W_FT − W_S‖_F → √(ỹᵀ(H^∞)⁻¹ỹ)`` (the min-norm
  interpolating displacement of the linearised model).

The empirical Gram ``H(W) = (1/m)(XXᵀ) ∘ (A Aᵀ)``, ``A_ir = 1{w_rᵀx_i ≥ 0}``, is the
empirical NTK of the model w.r.t. ``W``; :func:`first_layer_gram` evaluates that closed form
(an ``n × n × m`` contraction, ~100x cheaper than forming the ``n × md`` Jacobian at
``m = 10⁴``), and the tests and the ``hinf_empirical_gram`` claim check it against
:func:`ntsim.core.empirical_ntk_fn`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import (
    _is_concrete,
    check_ndim,
    check_positive,
    check_positive_int,
    check_same_leading_dim,
)
from ntsim.core import (
    Record,
    TrainResult,
    gradient_descent,
    mse_loss,
    random_signs,
    two_layer_relu,
    two_layer_relu_hinf,
)
from ntsim.theory.linear_teachers._common import _check_data, _row_basis, _shaped

__all__ = [
    "COR6_2_FACTOR",
    "COR6_3_FACTOR",
    "DERIVED_FACTOR",
    "THM6_1_FACTOR",
    "clipped_l1_loss",
    "first_layer_gram",
    "hinf_norm",
    "hinf_norm_bound_cor6_2",
    "hinf_norm_bound_derived",
    "kernel_predictor",
    "pretrain_two_layer_relu",
    "PretrainedReLU",
    "residual_targets",
    "risk_bound_cor6_3",
    "risk_bound_thm6_1",
    "simulate_relu_fine_tuning",
    "thm6_1_o_term",
    "train_two_layer_relu",
    "unit_norm_inputs",
]

# Constants of the printed statements (Shachaf et al. 2021, Sec 6).
THM6_1_FACTOR = 2.0  # eq. (11): R ≤ 2√(ỹᵀ(H^∞)⁻¹ỹ/n) + O(·)
COR6_2_FACTOR = 3.0  # Cor. 6.2: √(ỹᵀ(H^∞)⁻¹ỹ) ≤ 3‖θ_T − θ_S‖
COR6_3_FACTOR = 6.0  # Cor. 6.3: R ≤ 6‖θ_T − θ_S‖/√n + O(·)
DERIVED_FACTOR = 2.0  # derived: √(ỹᵀ(H^∞)⁻¹ỹ) ≤ 2‖P_∥(θ_T − θ_S)‖ (H^∞ ⪰ XXᵀ/4)


class PretrainedReLU(NamedTuple):
    """A pretrained two-layer ReLU network: fixed output ``signs`` (m,) and ``params``."""

    signs: Array
    params: Params


# -------------------------------------------------------------------------------- data


def unit_norm_inputs(key: PRNGKey, n: int, d: int) -> Array:
    """``n`` i.i.d. inputs uniform on the unit sphere of ``R^d`` (Sec 6 assumes ``‖x‖ = 1``).

    Examples:
      >>> x = unit_norm_inputs(jax.random.PRNGKey(0), 3, 4)
      >>> x.shape, bool(jnp.allclose(jnp.linalg.norm(x, axis=1), 1.0))
      ((3, 4), True)
    """
    n = check_positive_int("unit_norm_inputs", "n", n)
    d = check_positive_int("unit_norm_inputs", "d", d)
    z = jax.random.normal(key, (n, d))
    return z / jnp.linalg.norm(z, axis=1, keepdims=True)


# ----------------------------------------------------------------------- H^∞ and ỹ


def residual_targets(apply, params: Params, x: ArrayLike, y: ArrayLike) -> Array:
    """``ỹ = y − f(X, Θ_S)``, the targets left after pretraining (Thm 6.1, below eq. (11)).

    Args:
      apply (Callable): ``apply(params, x_i)`` on one example (e.g.
        ``two_layer_relu(signs).apply``).
      params: the pretrained parameters ``Θ_S = Θ(0)`` of fine-tuning.
      x: target inputs ``(n, d)``.
      y: target labels ``(n,)``.

    Returns:
      ``ỹ``, shape ``(n,)``.
    """
    check_ndim("residual_targets", "x", x, 2)
    check_ndim("residual_targets", "y", y, 1)
    check_same_leading_dim("residual_targets", ("x", "y"), (x, y))
    preds = jax.vmap(apply, in_axes=(None, 0))(params, jnp.asarray(x)).reshape(-1)
    return jnp.asarray(y) - preds


def _cholesky(where: str, hinf: ArrayLike) -> Array:
    """Cholesky factor of ``hinf``; a ``ValueError`` when concrete and not positive definite."""
    check_ndim(where, "hinf", hinf, 2)
    hinf = jnp.asarray(hinf)
    if hinf.shape[0] != hinf.shape[1]:
        raise ValueError(f"{where}: hinf must be square (n, n), got shape {hinf.shape}.")
    chol = jnp.linalg.cholesky(hinf)
    if _is_concrete(hinf):
        # λ_min below round-off relative to λ_max means numerically singular (e.g. parallel
        # inputs, where Cholesky returns a tiny pivot instead of failing).
        evals = np.linalg.eigvalsh(np.asarray(hinf, dtype=np.float64))
        tolerance = hinf.shape[0] * np.finfo(hinf.dtype).eps * max(evals[-1], 0.0)
        if not evals[0] > tolerance:
            raise ValueError(
                f"{where}: hinf must be symmetric positive definite (λ₀ = λ_min(H^∞) > 0, "
                "which holds when no two inputs are parallel; Du et al. 2019, Thm 3.1), got "
                f"λ_min = {evals[0]:.3g}, shape {hinf.shape}."
            )
    return chol


def hinf_norm(hinf: ArrayLike, residual: ArrayLike) -> Array:
    """``√(ỹᵀ(H^∞)⁻¹ỹ)``, the RKHS-type norm of the residual in Thm 6.1, eq. (11).

    Computed by a Cholesky solve ``H^∞ = LLᵀ``, ``‖L⁻¹ỹ‖`` (no explicit inverse).

    Args:
      hinf: ``H^∞`` on the target inputs, ``(n, n)``, positive definite.
      residual: ``ỹ`` of shape ``(n,)`` (:func:`residual_targets`).

    Raises:
      ValueError: wrong shapes, or (when concrete) ``hinf`` not positive definite.

    Examples:
      >>> round(float(hinf_norm(jnp.array([[0.5, 0.0], [0.0, 2.0]]), jnp.array([1.0, 2.0]))), 6)
      2.0
    """
    chol = _cholesky("hinf_norm", hinf)
    residual = _shaped("hinf_norm", "residual", residual, (chol.shape[0],))
    z = jax.scipy.linalg.solve_triangular(chol, residual, lower=True)
    return jnp.linalg.norm(z)


def risk_bound_thm6_1(hinf: ArrayLike, residual: ArrayLike) -> Array:
    """Main term ``2√(ỹᵀ(H^∞)⁻¹ỹ/n)`` of Thm 6.1, eq. (11) (Shachaf et al. 2021).

    The theorem adds ``O(√(log(n/(λ₀δ))/n))`` (:func:`thm6_1_o_term`) and holds w.p.
    ``≥ 1 − δ`` for a loss in ``[0, 1]``, 1-Lipschitz in its first argument, ``κ = O(λ₀δ/n)``,
    ``m ≥ κ⁻² poly(n, n_S, 1/λ₀, 1/δ)`` and enough GD iterations.
    """
    n = jnp.shape(residual)[0]
    return THM6_1_FACTOR * hinf_norm(hinf, residual) / math.sqrt(n)


def thm6_1_o_term(n: int, lambda_min: ArrayLike, delta: float, constant: float) -> Array:
    """``constant · √(log(n/(λ₀δ))/n)``: the ``O``-term of eq. (11) with an explicit constant.

    The paper leaves the constant unspecified (its proof is in the absent supplement); any
    value passed here is a modelling choice that the caller must justify.
    """
    n = check_positive_int("thm6_1_o_term", "n", n)
    check_positive("thm6_1_o_term", "lambda_min", lambda_min)
    check_positive("thm6_1_o_term", "constant", constant)
    if not 0 < delta < 1:
        raise ValueError(f"thm6_1_o_term: delta must be in (0, 1), got {delta=}.")
    return constant * jnp.sqrt(jnp.log(n / (jnp.asarray(lambda_min) * delta)) / n)


def _task_gap(where: str, theta_source: ArrayLike, theta_target: ArrayLike) -> Array:
    check_ndim(where, "theta_source", theta_source, 1)
    d = jnp.shape(theta_source)[0]
    return _shaped(where, "theta_target", theta_target, (d,)) - jnp.asarray(theta_source)


def hinf_norm_bound_cor6_2(theta_source: ArrayLike, theta_target: ArrayLike) -> Array:
    """``3‖θ_T − θ_S‖``, the bound of Cor. 6.2 on ``√(ỹᵀ(H^∞)⁻¹ỹ)`` (linear teachers).

    Assumes perfect pretraining (Assumption 3.2), so ``ỹ = X(θ_T − θ_S)`` (the paper prints
    ``Xᵀθ_S``, a typo for ``Xθ_S``), and unit-norm inputs.
    """
    v = _task_gap("hinf_norm_bound_cor6_2", theta_source, theta_target)
    return COR6_2_FACTOR * jnp.linalg.norm(v)


def hinf_norm_bound_derived(
    x: ArrayLike, theta_source: ArrayLike, theta_target: ArrayLike
) -> Array:
    """``2‖P_∥(θ_T − θ_S)‖``: a tighter bound than Cor. 6.2 (derived: module doc).

    Follows from ``H^∞ ⪰ XXᵀ/4``; needs ``XXᵀ`` non-singular (Assumption 3.1, ``n < d``).
    """
    where = "hinf_norm_bound_derived"
    x = _check_data(where, x)
    v = _shaped(where, "theta_target", theta_target, (x.shape[1],))
    v = v - _shaped(where, "theta_source", theta_source, (x.shape[1],))
    q = _row_basis(x)
    return DERIVED_FACTOR * jnp.linalg.norm(q.T @ v)


def risk_bound_cor6_3(theta_source: ArrayLike, theta_target: ArrayLike, n: int) -> Array:
    """Main term ``6‖θ_T − θ_S‖/√n`` of Cor. 6.3 (plus the ``O``-term of eq. (11))."""
    n = check_positive_int("risk_bound_cor6_3", "n", n)
    v = _task_gap("risk_bound_cor6_3", theta_source, theta_target)
    return COR6_3_FACTOR * jnp.linalg.norm(v) / math.sqrt(n)


def kernel_predictor(
    x_test: ArrayLike, x: ArrayLike, f_source_test: ArrayLike, residual: ArrayLike
) -> Array:
    """``f_S(x*) + H^∞(x*, X)(H^∞)⁻¹ỹ``: the infinite-width fine-tuned predictor (module doc).

    The limit of GD fine-tuning to zero training loss when the Gram matrix stays at
    ``H^∞`` (linearised dynamics from ``W_S``).

    Args:
      x_test: test inputs ``(M, d)``.
      x: target training inputs ``(n, d)``.
      f_source_test: the pretrained network's outputs ``f(x*; W_S)``, ``(M,)``.
      residual: ``ỹ = y − f(X; W_S)``, ``(n,)``.
    """
    where = "kernel_predictor"
    check_ndim(where, "x_test", x_test, 2)
    check_ndim(where, "x", x, 2)
    chol = _cholesky(where, two_layer_relu_hinf(x))
    residual = _shaped(where, "residual", residual, (chol.shape[0],))
    f_source_test = _shaped(where, "f_source_test", f_source_test, (jnp.shape(x_test)[0],))
    alpha = jax.scipy.linalg.cho_solve((chol, True), residual)
    return f_source_test + two_layer_relu_hinf(x_test, x) @ alpha


def clipped_l1_loss(predictions: ArrayLike, targets: ArrayLike) -> Array:
    """``mean_i min(|f_i − y_i|, 1)``: a loss in ``[0, 1]``, 1-Lipschitz in ``f`` (Thm 6.1).

    Examples:
      >>> float(clipped_l1_loss(jnp.array([0.0, 0.0]), jnp.array([0.5, -3.0])))
      0.75
    """
    predictions, targets = jnp.asarray(predictions), jnp.asarray(targets)
    if predictions.shape != targets.shape:
        raise ValueError(
            f"clipped_l1_loss: predictions and targets must have the same shape, got "
            f"{predictions.shape} and {targets.shape}."
        )
    return jnp.mean(jnp.minimum(jnp.abs(predictions - targets), 1.0))


# ---------------------------------------------------------------- finite-width network


def first_layer_gram(signs: ArrayLike, params: Params, x: ArrayLike) -> Array:
    """``H(W) = (1/m)(XXᵀ) ∘ (AAᵀ)``, ``A_ir = 1{w_rᵀx_i > 0}`` (Du et al. 2019; Sec 6).

    The empirical NTK of :func:`ntsim.core.two_layer_relu` w.r.t. ``W`` (``a_r² = 1``, so
    the signs drop out; ``signs`` only fixes the width), in closed form. At ``W(0)`` with
    ``w_r ~ N(0, κ²I)`` it is an average of ``m`` i.i.d. terms with mean ``H^∞``.
    (Convention: ``relu'(0) = 0`` as in JAX; ties have probability zero.)
    """
    check_ndim("first_layer_gram", "x", x, 2)
    x, w = jnp.asarray(x), params["w"]
    width = jnp.shape(signs)[0]
    if w.shape != (width, x.shape[1]):
        raise ValueError(
            f"first_layer_gram: params['w'] must have shape (m, d) = ({width}, {x.shape[1]}) "
            f"for {width} signs and {x.shape[1]}-dimensional inputs, got {w.shape}."
        )
    active = (x @ w.T > 0).astype(x.dtype)  # (n, m)
    return (x @ x.T) * (active @ active.T) / width


def train_two_layer_relu(
    signs: ArrayLike,
    params0: Params,
    x: ArrayLike,
    y: ArrayLike,
    *,
    learning_rate: ArrayLike,
    num_steps: int,
    record: Record | None = None,
    throw: bool = True,
) -> TrainResult:
    """GD on ``L(W) = (1/n)‖f(X; W) − y‖²`` from ``params0`` (Sec 3 loss; Sec 6 model).

    One function for both phases of Sec 6: pretraining (``params0`` random, source data)
    and fine-tuning (``params0 = W_S``, target data). In the kernel regime the residual
    contracts as ``(I − (2η/n)H)^t``, so GD is stable for ``η < n/λ_max(H^∞)`` and
    converges at rate ``1 − 2ηλ₀/n``. Wraps :func:`ntsim.core.gradient_descent` (pass
    ``throw=False`` under ``jit``/``vmap``).
    """
    x, y = jnp.asarray(x), jnp.asarray(y)
    check_ndim("train_two_layer_relu", "x", x, 2)
    n = y.shape[0] if y.ndim else 0
    loss = mse_loss(two_layer_relu(signs).apply, x, y, loss_scale=1.0 / max(n, 1))
    return gradient_descent(
        loss, params0, learning_rate=learning_rate, num_steps=num_steps, record=record,
        throw=throw,
    )  # fmt: skip


def pretrain_two_layer_relu(
    key: PRNGKey,
    x_source: ArrayLike,
    y_source: ArrayLike,
    *,
    width: int,
    init_scale: float,
    learning_rate: ArrayLike,
    num_steps: int,
    throw: bool = True,
) -> PretrainedReLU:
    """Pretraining of Sec 6: ``a ~ U{±1}^m``, ``w_r ~ N(0, κ²I)``, GD on the source task.

    Args:
      key: PRNG key (split for the signs and the initial weights).
      x_source: source inputs ``(n_S, d)`` (unit norm in the paper).
      y_source: source labels ``(n_S,)``.
      width: ``m``.
      init_scale: ``κ``.
      learning_rate: ``η`` (stable for ``η < n_S/λ_max(H^∞)``).
      num_steps: GD iterations ("sufficiently many": train loss → 0).
      throw: as :func:`ntsim.core.gradient_descent`.
    """
    width = check_positive_int("pretrain_two_layer_relu", "width", width)
    check_positive("pretrain_two_layer_relu", "init_scale", init_scale)
    x_source = jnp.asarray(x_source)
    k_signs, k_init = jax.random.split(key)
    signs = random_signs(k_signs, width)
    params0 = two_layer_relu(signs, init_scale=init_scale).init(k_init, x_source[0])
    run = train_two_layer_relu(
        signs, params0, x_source, y_source, learning_rate=learning_rate, num_steps=num_steps,
        throw=throw,
    )  # fmt: skip
    return PretrainedReLU(signs, run.params)


# ------------------------------------------------------------- the Sec 6 setting end to end


def _fit_steps_rate(hinf: Array, n: int) -> Array:
    """``η = 0.9·n/λ_max(H^∞)``: 90% of the kernel-regime stability limit of GD on (1/n)‖·‖²."""
    return 0.9 * n / jnp.linalg.eigvalsh(hinf)[-1]


def simulate_relu_fine_tuning(
    key: PRNGKey,
    *,
    d: int,
    n_source: int,
    n_values: tuple[int, ...],
    gap_norms: ArrayLike,
    width: int,
    init_scale: float,
    pretrain_steps: int,
    fine_tune_steps: int,
    num_test: int,
) -> dict[str, Array]:
    """One draw of the Sec 6 setting with linear teachers: pretrain, then fine-tune per task.

    Draws unit-norm source/target/test inputs (uniform on the sphere), ``θ_S`` uniform on
    the unit sphere and a direction ``u``; the target teachers are ``θ_T = θ_S + g·u`` for
    ``g`` in ``gap_norms`` (so ``‖θ_T − θ_S‖ = g``). Pretrains once with
    :func:`pretrain_two_layer_relu` (``η = 0.9·n_S/λ_max(H^∞_S)``), then for every ``n`` in
    ``n_values`` (the first ``n`` target inputs) and every ``g`` fine-tunes by GD
    (``η = 0.9·n/λ_max(H^∞)``) and evaluates on ``num_test`` fresh inputs. Pure and
    vmappable over ``key`` (divergence is not raised here: check the returned losses).

    Args:
      key: PRNG key of the draw (inputs, teachers and network).
      d: input dimension.
      n_source: source sample size ``n_S``.
      n_values: target sample sizes ``n`` (positive integers; nested: the first ``n`` of
        ``max(n_values)`` target inputs).
      gap_norms: teacher gaps ``g = ‖θ_T − θ_S‖``.
      width: hidden width ``m``.
      init_scale: ``κ`` of :func:`pretrain_two_layer_relu`.
      pretrain_steps: GD iterations on the source task.
      fine_tune_steps: GD iterations on each target task.
      num_test: fresh test inputs (positive integer).

    Returns:
      A dict of arrays of shape ``(len(n_values), len(gap_norms))``: ``network_risk`` and
      ``kernel_risk`` (clipped-ℓ1 test risk of the fine-tuned network and of
      :func:`kernel_predictor`), ``network_kernel_gap`` (mean |f_net − f_kernel| on the test
      inputs), ``hinf_norm`` (``√(ỹᵀ(H^∞)⁻¹ỹ)``), ``weight_distance`` (``‖W_FT − W_S‖_F``),
      ``thm6_1_bound``, ``cor6_3_bound`` (main terms), ``train_loss`` (final), ``lambda_min``
      (``λ₀``); and scalars ``source_train_loss``, ``source_risk`` (clipped-ℓ1 risk of the
      pretrained network w.r.t. ``θ_S``) and ``input_norm_error`` (``max_i |‖x_i‖ − 1|`` over
      the source, target and test inputs drawn: Sec 6 assumes unit-norm inputs, and a check
      can verify that the instance meets it).
    """
    where = "simulate_relu_fine_tuning"
    n_values = tuple(check_positive_int(where, "n_values", n) for n in n_values)
    num_test = check_positive_int(where, "num_test", num_test)
    gaps = jnp.atleast_1d(jnp.asarray(gap_norms, dtype=jnp.result_type(float)))
    k_src, k_tgt, k_test, k_theta, k_dir, k_net = jax.random.split(key, 6)
    x_s = unit_norm_inputs(k_src, n_source, d)
    x_all = unit_norm_inputs(k_tgt, max(n_values), d)
    x_test = unit_norm_inputs(k_test, num_test, d)
    theta_s = unit_norm_inputs(k_theta, 1, d)[0]
    direction = unit_norm_inputs(k_dir, 1, d)[0]
    thetas_t = theta_s + gaps[:, None] * direction  # (G, d)

    pre = pretrain_two_layer_relu(
        k_net, x_s, x_s @ theta_s, width=width, init_scale=init_scale,
        learning_rate=_fit_steps_rate(two_layer_relu_hinf(x_s), n_source),
        num_steps=pretrain_steps, throw=False,
    )  # fmt: skip
    apply = two_layer_relu(pre.signs).apply
    net = lambda params, x: jax.vmap(apply, in_axes=(None, 0))(params, x)[:, 0]
    f_s_test = net(pre.params, x_test)
    out: dict[str, list] = {}
    for n in n_values:
        x = x_all[:n]
        hinf = two_layer_relu_hinf(x)
        eta = _fit_steps_rate(hinf, n)
        f_s = net(pre.params, x)

        def one_task(theta_t, x=x, hinf=hinf, eta=eta, f_s=f_s, n=n):
            y = x @ theta_t
            residual = y - f_s
            run = train_two_layer_relu(
                pre.signs, pre.params, x, y, learning_rate=eta, num_steps=fine_tune_steps,
                throw=False,
            )  # fmt: skip
            y_test = x_test @ theta_t
            f_net = net(run.params, x_test)
            f_ker = kernel_predictor(x_test, x, f_s_test, residual)
            return {
                "network_risk": clipped_l1_loss(f_net, y_test),
                "kernel_risk": clipped_l1_loss(f_ker, y_test),
                "network_kernel_gap": jnp.mean(jnp.abs(f_net - f_ker)),
                "hinf_norm": hinf_norm(hinf, residual),
                "weight_distance": jnp.linalg.norm(run.params["w"] - pre.params["w"]),
                "thm6_1_bound": risk_bound_thm6_1(hinf, residual),
                "cor6_3_bound": risk_bound_cor6_3(theta_s, theta_t, n),
                "train_loss": jnp.mean((net(run.params, x) - y) ** 2),
                "lambda_min": jnp.linalg.eigvalsh(hinf)[0],
            }

        for name, value in jax.vmap(one_task)(thetas_t).items():
            out.setdefault(name, []).append(value)
    result = {name: jnp.stack(values) for name, values in out.items()}
    result["source_train_loss"] = jnp.mean((net(pre.params, x_s) - x_s @ theta_s) ** 2)
    result["source_risk"] = clipped_l1_loss(f_s_test, x_test @ theta_s)
    inputs = jnp.concatenate([x_s, x_all, x_test])
    result["input_norm_error"] = jnp.max(jnp.abs(jnp.linalg.norm(inputs, axis=1) - 1.0))
    return result
