r"""Task vectors in the linearised model (Sun & Raskutti 2026, Sec 5.2, Cors 1–2, eqs. (22)–(25)).

A task vector is ``τ = θ_FT − θ_PT`` (eq. (22)). In the linearised model
``f_lin(θ, x) = f(θ_PT, x) + J(x)(θ − θ_PT)`` (Lemma 1), full-batch GD on
``L(θ) = (1/2N)‖f_lin(θ, X) − Y‖²`` with step ``ε`` from ``θ_PT`` moves only along the rows
of ``J = J(X)``: every update is ``−(ε/N) Jᵀ r_t``. Hence

.. math::

   τ = Jᵀ c, \qquad c = −\frac{ε}{N} \sum_{s<t} r_s
     = −G^{+}\,[I − (I − εG/N)^{t}]\, r_0, \qquad G = JJᵀ,\; r_0 = f_{PT}(X) − Y,

with the eigenvalue-wise limit ``εt/N`` on ``ker G`` (:func:`task_vector_coefficients`).
Consequences, exact in the linearised model:

* **negation** (Cor 1, eq. (104), with the corrected ``θ_neg = θ_PT − τ``, a typo fix):
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

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_ndim, check_setting_type
from ntsim.theory.early_stopping._kernel_gd import gd_shrinkage

__all__ = [
    "LINEAR_TASK_VECTOR_SETTINGS",
    "LinearTaskVectorRun",
    "LinearTaskVectorSetting",
    "addition_interference",
    "gd_task_vector",
    "linearised_mse",
    "negation_gap",
    "task_vector",
    "task_vector_coefficients",
    "task_vector_cosine",
    "simulate_linear_task_vectors",
]


def task_vector_coefficients(
    gram: ArrayLike, residual: ArrayLike, *, step_size: ArrayLike, steps: ArrayLike
) -> Array:
    r"""Coefficients ``c`` of ``τ = Jᵀc`` after ``steps`` GD steps of the linearised model.

    .. math:: c = −Q\,\mathrm{diag}\Big(\frac{1 − (1 − εg_i/N)^t}{g_i}\Big)\,Qᵀ r_0,
       \qquad G = JJᵀ = Q\,\mathrm{diag}(g)\,Qᵀ,

    (the geometric sum of the residuals ``r_s = (I − εG/N)^s r_0``), with the
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
    r"""``τ = θ_FT − θ_PT = Jᵀc`` of the linearised model (eq. (22)).

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
    negation ``θ_neg = θ_PT − τ``; the printed ``θ_FT − τ`` is a typo; eq. (104) is a sum,
    divided here by ``N_test`` for a mean).

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
    r"""``cos(τ_1, τ_2)`` from kernel blocks only (Cor 2).

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


@dataclasses.dataclass(frozen=True)
class LinearTaskVectorSetting:
    """Random instances of the linearised model for Cors 1–2 (sizes are ours).

    Attributes:
      num_params: ``P`` (even; each task's rows live in a ``P/2``-dimensional subspace).
      num_train: train points per task ``N``.
      num_test: test points of task 1.
      steps: GD steps producing each task vector.
      instances: independent instances (vmapped in batches).
      orthogonal: the two tasks' row spaces are orthogonal (Assumption 5.1,
        ``J_1J_2ᵀ = 0``); otherwise task 2 reuses a random number of task 1's directions.
      batch_size: instances vmapped at once.
    """

    num_params: int = 200
    num_train: int = 30
    num_test: int = 50
    steps: int = 400
    instances: int = 400
    orthogonal: bool = False
    batch_size: int = 50

    def __post_init__(self):
        check_int_fields(
            self, ("num_params", "num_train", "num_test", "steps", "instances", "batch_size")
        )
        if self.num_params % 2 or self.num_params < 4:
            raise ValueError(
                f"LinearTaskVectorSetting.num_params must be even and >= 4, got {self.num_params}."
            )


def gd_task_vector(jacobian, f_pt, y, step_size, steps: int) -> Array:
    """``steps`` GD steps on ``(1/2N)‖f_PT + Jδ − Y‖²`` from ``δ = 0`` (a ``lax.scan``).

    The iterate-by-iterate oracle that :func:`task_vector` gives in closed form.
    """
    j, n = jnp.asarray(jacobian), jnp.asarray(y).shape[0]

    def step(delta, _):
        return delta - step_size / n * j.T @ (f_pt + j @ delta - y), None

    return jax.lax.scan(step, jnp.zeros(j.shape[1], j.dtype), length=steps)[0]


class LinearTaskVectorRun(NamedTuple):
    """Per instance (leading axis ``instances``); task vectors from :func:`gd_task_vector`.

    Attributes:
      tau_error: ``‖τ_1 − task_vector(...)‖/‖τ_1‖`` (scan vs closed form).
      cosine: ``cos(τ_1, τ_2)`` of the scanned task vectors.
      cosine_kernel: :func:`task_vector_cosine` from the kernel blocks.
      interference: ``J_1(τ_1 + τ_2) − J_1τ_1`` on task 1's train inputs, ``(instances, N)``.
      interference_kernel: :func:`addition_interference` ``G_12c_2``.
      interference_test: the same on task 1's test inputs, ``(instances, num_test)``.
      interference_scale: ``max |J_1τ_1|``.
      gap_corrected: ``MSE(θ_PT − τ_1) − MSE(θ_PT + τ_1)`` on task 1's test inputs, random
        targets (Cor 1 with the corrected negation).
      gap_printed: the same with the printed ``θ_neg = θ_FT − τ_1`` (``= θ_PT``).
      gap_formula: eq. (104), :func:`negation_gap`.
      gap_same_task: the corrected gap when train and test targets come from task 1
        (``Y = f_PT + Jδ* + w``, ``σ = 0.5``, eq. (105)).
      task_noise_z: for those targets, ``⟨Y − f_PT − Jδ*, Jδ*⟩/(σ‖Jδ*‖)`` on the train and
        on the test inputs, ``(instances, 2)``: the realised noise along the task's signal,
        exactly ``N(0, 1)`` when both sets follow eq. (105) with the same ``δ*``.
    """

    tau_error: Array
    cosine: Array
    cosine_kernel: Array
    interference: Array
    interference_kernel: Array
    interference_test: Array
    interference_scale: Array
    gap_corrected: Array
    gap_printed: Array
    gap_formula: Array
    gap_same_task: Array
    task_noise_z: Array


#: Noise of Cor 1's same-task targets (eq. (105)); ours.
_TASK_NOISE_STD = 0.5


def _noise_z(targets, f_pt, signal):
    """``⟨Y − f_PT − s, s⟩/(σ‖s‖)``: the noise along the signal ``s``, standardised."""
    return (targets - f_pt - signal) @ signal / (_TASK_NOISE_STD * jnp.linalg.norm(signal))


def _random_jacobians(key, p: int, n: int, n_test: int, orthogonal: bool):
    k_q, k_a1, k_a2, k_t, k_share = jax.random.split(key, 5)
    q, _ = jnp.linalg.qr(jax.random.normal(k_q, (p, p)))
    half = p // 2
    u1 = q[:, :half]
    if orthogonal:
        u2 = q[:, half:]
    else:  # task 2 reuses `shared` of task 1's directions
        shared = jax.random.randint(k_share, (), 1, half)
        idx = jnp.arange(half)
        u2 = jnp.where(idx < shared, q[:, idx], q[:, half + idx])
    spectrum = jnp.arange(1, half + 1.0) ** -0.5  # a decaying kernel spectrum
    j1 = jax.random.normal(k_a1, (n, half)) * spectrum @ u1.T
    j2 = jax.random.normal(k_a2, (n, half)) * spectrum @ u2.T
    j1_test = jax.random.normal(k_t, (n_test, half)) * spectrum @ u1.T
    return j1, j2, j1_test


def _step_size(j):
    return 1.0 / jnp.linalg.eigvalsh(j @ j.T / j.shape[0])[-1]  # εg_max/N = 1


def _linear_task_instance(key, setting: LinearTaskVectorSetting) -> LinearTaskVectorRun:
    p, n, n_test, steps = setting.num_params, setting.num_train, setting.num_test, setting.steps
    k_j, k_f, k_y = jax.random.split(key, 3)
    j1, j2, j1_test = _random_jacobians(k_j, p, n, n_test, setting.orthogonal)
    f1, f2, f_test = (
        jax.random.normal(k, (m,))
        for k, m in zip(jax.random.split(k_f, 3), (n, n, n_test), strict=True)
    )
    y1, y2, y_test = (
        jax.random.normal(k, (m,))
        for k, m in zip(jax.random.split(k_y, 3), (n, n, n_test), strict=True)
    )
    eps1, eps2 = _step_size(j1), _step_size(j2)
    tau1 = gd_task_vector(j1, f1, y1, eps1, steps)
    tau2 = gd_task_vector(j2, f2, y2, eps2, steps)
    c1 = task_vector_coefficients(j1 @ j1.T, f1 - y1, step_size=eps1, steps=steps)
    c2 = task_vector_coefficients(j2 @ j2.T, f2 - y2, step_size=eps2, steps=steps)
    closed1 = task_vector(j1, f1, y1, step_size=eps1, steps=steps)
    both = tau1 + tau2
    # Cor 1's setting (eq. (105)): train and test targets from the same task,
    # Y = f_PT + Jδ* + w, with δ* in task 1's row space and noise σ = 0.5
    k_star, k_w1, k_w2 = jax.random.split(jax.random.fold_in(key, 1), 3)
    delta_star = j1.T @ jax.random.normal(k_star, (n,)) / jnp.sqrt(p)
    y1_task = f1 + j1 @ delta_star + _TASK_NOISE_STD * jax.random.normal(k_w1, (n,))
    y_test_task = (
        f_test + j1_test @ delta_star + _TASK_NOISE_STD * jax.random.normal(k_w2, (n_test,))
    )
    tau_task = gd_task_vector(j1, f1, y1_task, eps1, steps)
    return LinearTaskVectorRun(
        tau_error=jnp.linalg.norm(tau1 - closed1) / jnp.linalg.norm(tau1),
        cosine=tau1 @ tau2 / (jnp.linalg.norm(tau1) * jnp.linalg.norm(tau2)),
        cosine_kernel=task_vector_cosine(j1 @ j1.T, j1 @ j2.T, j2 @ j2.T, c1, c2),
        interference=j1 @ both - j1 @ tau1,
        interference_kernel=addition_interference(j1 @ j2.T, c2),
        interference_test=j1_test @ both - j1_test @ tau1,
        interference_scale=jnp.maximum(jnp.max(jnp.abs(j1 @ tau1)), 1e-300),
        gap_corrected=linearised_mse(j1_test, f_test, y_test, -tau1)
        - linearised_mse(j1_test, f_test, y_test, tau1),
        gap_printed=linearised_mse(j1_test, f_test, y_test, tau1 - tau1)
        - linearised_mse(j1_test, f_test, y_test, tau1),
        gap_formula=negation_gap(j1_test, f_test, y_test, tau1),
        gap_same_task=linearised_mse(j1_test, f_test, y_test_task, -tau_task)
        - linearised_mse(j1_test, f_test, y_test_task, tau_task),
        task_noise_z=jnp.stack(
            [
                _noise_z(y1_task, f1, j1 @ delta_star),
                _noise_z(y_test_task, f_test, j1_test @ delta_star),
            ]
        ),
    )


def simulate_linear_task_vectors(
    key: PRNGKey, setting: LinearTaskVectorSetting
) -> LinearTaskVectorRun:
    """Cors 1–2 in the linearised model over ``setting.instances`` random instances.

    Per instance: random Jacobians ``J_1, J_2`` (rows in two ``P/2``-dim subspaces,
    orthogonal or overlapping, spectrum ``k^{−1/2}``), random ``f_PT`` and targets, step
    ``ε = N/g_max``; the task vectors come from iterating GD in parameter space
    (:func:`gd_task_vector`) and are compared with the kernel closed forms. Instance keys
    are ``split(key, instances)``. Run it in float64 (the checks are identities).
    """
    check_setting_type("simulate_linear_task_vectors", setting, LinearTaskVectorSetting)
    check_key("simulate_linear_task_vectors", key)
    keys = jax.random.split(key, setting.instances)
    return jax.jit(
        lambda ks: jax.lax.map(
            lambda k: _linear_task_instance(k, setting), ks, batch_size=setting.batch_size
        )
    )(keys)


LINEAR_TASK_VECTOR_SETTINGS = {
    "quick": LinearTaskVectorSetting(
        num_params=40, num_train=6, num_test=8, steps=60, instances=200
    ),
    "full": LinearTaskVectorSetting(),
}
"""Linearised-model task vectors per scale (the Cors 1–2 claims and the Fig. 3 experiment
both read these; the orthogonal variant sets ``orthogonal=True``)."""
