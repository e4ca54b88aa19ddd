r"""Task vectors in the linearised model (Sun & Raskutti 2026, Sec 5.2, Cors 1–2, eqs. (22)–(25)).

A task vector is ``τ = θ_FT − θ_PT`` (eq. (22)). In the linearised model
``f_lin(θ, x) = f(θ_PT, x) + J(x)(θ − θ_PT)`` (Lemma 1), full-batch GD on
``L(θ) = (1/2N)‖f_lin(θ, X) − Y‖²`` with step ``ε`` from ``θ_PT`` moves only along the rows
of ``J = J(X)``: every update is ``−(ε/N) Jᵀ r_t``. Hence (notes §3, [derived])

.. math::

   τ = Jᵀ c, \qquad c = −\frac{ε}{N} \sum_{s<t} r_s
     = −G^{+}\,[I − (I − εG/N)^{t}]\, r_0, \qquad G = JJᵀ,\; r_0 = f_{PT}(X) − Y,

with the eigenvalue-wise limit ``εt/N`` on ``ker G`` (:func:`task_vector_coefficients`).
Consequences, exact in the linearised model:

* **negation** (Cor 1, eq. (104), with the corrected ``θ_neg = θ_PT − τ``, notes typo 3):
  ``MSE(θ_PT − τ) − MSE(θ_PT + τ) = (4/N_test)(Y − f_PT)ᵀ J_test τ``
  (:func:`negation_gap`). The printed ``θ_neg = θ_FT − τ`` is ``θ_PT`` itself;
* **addition** (Cor 2, eqs. (107)–(109)): ``⟨τ_1, τ_2⟩ = c_1ᵀ J_1 J_2ᵀ c_2``, so the cosine
  of two task vectors is fixed by the cross-task kernel block ``G_{12} = J_1J_2ᵀ``
  (:func:`task_vector_cosine`), and on task 1's inputs
  ``f_lin(θ_PT + τ_1 + τ_2) − f_lin(θ_PT + τ_1) = G_{12} c_2`` (:func:`addition_interference`).
  Under Assumption 5.1 (``G_{12} = 0``) the task vectors are orthogonal and addition is exact.

All functions act on flattened Jacobians (``(N, P)`` rows ``∇_θ f(θ_PT, x_i)``), keep the
input dtype and are ``jit``/``vmap``-compatible.
"""

from __future__ import annotations

import jax.numpy as jnp

from ntsim._types import Array, ArrayLike
from ntsim._validation import check_ndim
from ntsim.theory.early_stopping._kernel_gd import gd_shrinkage

__all__ = [
    "addition_interference",
    "linearised_mse",
    "negation_gap",
    "task_vector",
    "task_vector_coefficients",
    "task_vector_cosine",
]


def task_vector_coefficients(
    gram: ArrayLike, residual: ArrayLike, *, step_size: ArrayLike, steps: ArrayLike
) -> Array:
    r"""Coefficients ``c`` of ``τ = Jᵀc`` after ``steps`` GD steps of the linearised model.

    .. math:: c = −Q\,\mathrm{diag}\Big(\frac{1 − (1 − εg_i/N)^t}{g_i}\Big)\,Qᵀ r_0,
       \qquad G = JJᵀ = Q\,\mathrm{diag}(g)\,Qᵀ,

    (notes §3; the geometric sum of the residuals ``r_s = (I − εG/N)^s r_0``), with the
    limit ``εt/N`` where ``g_i = 0``. Loss ``(1/2N)Σ(f − y)²``, step ``ε``, ``N`` = rows.

    Args:
      gram: ``G = JJᵀ``, ``(N, N)`` (unnormalised).
      residual: ``r_0 = f_PT(X) − Y``, ``(N,)``.
      step_size: ``ε`` with ``ε g_max/N ≤ 1`` (checked on concrete inputs, as in
        :func:`gd_shrinkage`).
      steps: number of GD steps ``t`` (scalar).

    Returns:
      ``c``, ``(N,)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> c = task_vector_coefficients(jnp.eye(2) * 2.0, jnp.array([1.0, -1.0]),
      ...                              step_size=1.0, steps=100)
      >>> c.tolist()  # converged: c = −G⁻¹ r_0
      [-0.5, 0.5]
    """
    g = jnp.asarray(gram)
    r0 = jnp.asarray(residual)
    check_ndim("task_vector_coefficients", "gram", g, 2)
    check_ndim("task_vector_coefficients", "residual", r0, 1)
    n = g.shape[0]
    eig, q = jnp.linalg.eigh(g)
    eig = jnp.maximum(eig, 0)
    shrink = gd_shrinkage(eig / n, step_size, steps)  # 1 − (1 − εg_i/N)^t, needs εg_max/N ≤ 1
    safe = jnp.where(eig > 0, eig, 1.0)
    limit = jnp.asarray(step_size, g.dtype) * jnp.asarray(steps, g.dtype) / n
    factor = jnp.where(eig > 0, shrink / safe, limit)
    return -(q @ (factor * (q.T @ r0)))


def task_vector(
    jacobian: ArrayLike,
    f_pt: ArrayLike,
    targets: ArrayLike,
    *,
    step_size: ArrayLike,
    steps: ArrayLike,
) -> Array:
    r"""``τ = θ_FT − θ_PT = Jᵀc`` of the linearised model (eq. (22); notes §3).

    Args:
      jacobian: ``J``, ``(N, P)``: rows ``∇_θ f(θ_PT, x_i)``.
      f_pt: ``f_PT(X)``, ``(N,)``.
      targets: ``Y``, ``(N,)``.
      step_size: GD step ``ε`` on ``(1/2N)‖f − Y‖²``.
      steps: number of steps.

    Returns:
      ``τ``, ``(P,)``.
    """
    j = jnp.asarray(jacobian)
    check_ndim("task_vector", "jacobian", j, 2)
    c = task_vector_coefficients(
        j @ j.T, jnp.asarray(f_pt) - jnp.asarray(targets), step_size=step_size, steps=steps
    )
    return j.T @ c


def linearised_mse(
    jacobian: ArrayLike, f_pt: ArrayLike, targets: ArrayLike, delta: ArrayLike
) -> Array:
    """``(1/N)‖f_PT(X) + J δ − Y‖²``: the test MSE of the linearised model at ``θ_PT + δ``."""
    pred = jnp.asarray(f_pt) + jnp.asarray(jacobian) @ jnp.asarray(delta)
    return jnp.mean((pred - jnp.asarray(targets)) ** 2)


def negation_gap(
    jacobian_test: ArrayLike, f_pt_test: ArrayLike, targets_test: ArrayLike, tau: ArrayLike
) -> Array:
    r"""``(4/N_test)(Y − f_PT)ᵀ J_test τ`` (Sun & Raskutti 2026, Cor 1, eq. (104)).

    Equals ``MSE(θ_PT − τ) − MSE(θ_PT + τ)`` in the linearised model (the corrected
    negation ``θ_neg = θ_PT − τ``, notes typo 3; eq. (104) is a sum, divided here by
    ``N_test`` for a mean).

    Examples:
      >>> import jax.numpy as jnp
      >>> float(negation_gap(jnp.eye(2), jnp.zeros(2), jnp.array([1.0, 0.0]),
      ...                    jnp.array([0.5, 3.0])))
      1.0
    """
    residual = jnp.asarray(targets_test) - jnp.asarray(f_pt_test)
    return 4 * residual @ (jnp.asarray(jacobian_test) @ jnp.asarray(tau)) / residual.shape[0]


def task_vector_cosine(
    gram_11: ArrayLike, gram_12: ArrayLike, gram_22: ArrayLike, c_1: ArrayLike, c_2: ArrayLike
) -> Array:
    r"""``cos(τ_1, τ_2)`` from kernel blocks only (notes §3, Cor 2).

    .. math:: \cos(τ_1, τ_2) = \frac{c_1ᵀ G_{12} c_2}{\sqrt{c_1ᵀG_{11}c_1}\sqrt{c_2ᵀG_{22}c_2}},
       \qquad τ_i = J_iᵀ c_i,\; G_{ij} = J_iJ_jᵀ.

    ``G_{12} = 0`` (Assumption 5.1) gives ``cos = 0``.
    """
    c_1, c_2 = jnp.asarray(c_1), jnp.asarray(c_2)
    inner = c_1 @ jnp.asarray(gram_12) @ c_2
    norm_1 = jnp.sqrt(c_1 @ jnp.asarray(gram_11) @ c_1)
    norm_2 = jnp.sqrt(c_2 @ jnp.asarray(gram_22) @ c_2)
    return inner / (norm_1 * norm_2)


def addition_interference(gram_12: ArrayLike, c_2: ArrayLike) -> Array:
    r"""``f_lin(θ_PT + τ_1 + τ_2) − f_lin(θ_PT + τ_1) = J_1τ_2 = G_{12}c_2`` on task 1's inputs.

    Sun & Raskutti 2026, Cor 2, eqs. (107)–(109): the multi-task model equals the task-1
    model on task 1 exactly when ``G_{12}c_2 = 0``, e.g. under Assumption 5.1.
    """
    return jnp.asarray(gram_12) @ jnp.asarray(c_2)
