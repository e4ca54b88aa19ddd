r"""The kernel theory applied to a measured kernel: plug-in stopping rule, predicted cosines.

For a synthetic kernel the noise level ``σ`` and the distance ``C_H = ‖f_tgt − f_PT‖_H`` are
known, and :func:`ntsim.theory.early_stopping.raskutti_stopping_time` takes them. For the
empirical NTK ``𝕂 = Θ`` of a real checkpoint on real labels neither is known, so
:func:`plug_in_stopping_time` estimates both from a validation split, using only kernel
GD (Sun & Raskutti 2026, Secs 3.3–3.5):

* ``s*``: the step of linearised GD (train split) with the least validation MSE;
* ``σ̂² = min_s MSE_val(s)``: the validation MSE is ``σ² + ‖f_s − f_tgt‖²`` in expectation,
  so this over-estimates ``σ²`` (it makes ``T̂`` earlier);
* ``Ĉ_H² = cᵀ𝕂c`` for the increment ``f_{s*} − f_PT = 𝕂(·, X)c`` of kernel GD at ``s*``
  (:func:`ntsim.theory.early_stopping.task_vector_coefficients`): the RKHS norm of the
  fitted increment, which in the linearised model is the parameter distance ``‖τ‖`` of
  the fine-tune it describes.

Then ``T̂`` is eq. (11)'s rule (corrected exponent) on ``K = 𝕂/N`` with these plug-ins. The
corrected rule is unchanged by the rescaling ``(𝕂, α) → (𝕂/n, nα)``, so the width
normalisation of eq. (37) does not matter here [derived].

:func:`kernel_predicted_cosines` is Cor 2's cosine of task vectors, for any number of tasks,
from one Gram matrix over all tasks' training inputs.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike
from ntsim._validation import check_ndim
from ntsim.theory.early_stopping._kernel_gd import pretrained_kernel_gd
from ntsim.theory.early_stopping._stopping import empirical_critical_radius, raskutti_stopping_time
from ntsim.theory.early_stopping._task_vectors import task_vector_coefficients, task_vector_cosine

__all__ = [
    "PlugInStoppingRule",
    "heldout_mse_by_iteration",
    "heldout_mse_curve",
    "increment_rkhs_norm",
    "kernel_predicted_cosines",
    "plug_in_stopping_time",
    "vector_cosines",
]


def heldout_mse_curve(
    kernel_train: ArrayLike,
    kernel_heldout_train: ArrayLike,
    y_train: ArrayLike,
    y_heldout: ArrayLike,
    f_pt_train: ArrayLike,
    f_pt_heldout: ArrayLike,
    *,
    step_size: ArrayLike,
    steps: ArrayLike,
) -> Array:
    r"""MSE on held-out points of linearised GD from ``f_PT`` after each of ``steps``.

    ``(1/M)‖f_τ(X_ho) − Y_ho‖²`` with ``f_τ`` of :func:`pretrained_kernel_gd` (``K = 𝕂/N``,
    step ``α``), ``(T,)`` for ``steps`` of shape ``(T,)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> k = jnp.array([[2.0, 1.0], [1.0, 2.0]])
      >>> curve = heldout_mse_curve(k, jnp.array([[1.0, 1.0]]), jnp.array([1.0, 1.0]),
      ...                           jnp.array([1.0]), jnp.zeros(2), jnp.zeros(1),
      ...                           step_size=0.5, steps=jnp.array([0, 200]))
      >>> [round(float(v), 6) for v in curve]  # 1 at f_PT = 0; the interpolant gives 2/3
      [1.0, 0.111111]
    """
    predictions = pretrained_kernel_gd(
        kernel_train,
        y_train,
        f_pt_train,
        step_size=step_size,
        steps=steps,
        kernel_test_train=kernel_heldout_train,
        f_pt_test=f_pt_heldout,
    ).test
    return jnp.mean((predictions - jnp.asarray(y_heldout)) ** 2, axis=-1)


def heldout_mse_by_iteration(
    kernel_train: ArrayLike,
    kernel_heldout_train: ArrayLike,
    y_train: ArrayLike,
    y_heldout: ArrayLike,
    f_pt_train: ArrayLike,
    f_pt_heldout: ArrayLike,
    *,
    step_size: float,
    steps: ArrayLike,
) -> np.ndarray:
    r""":func:`heldout_mse_curve` by a second route: eq. (7)'s updates iterated one step at a
    time in float64 numpy, with no eigendecomposition and no closed form,

    .. math:: f_{t+1}(x) = f_t(x) − \frac{α}{N}\,𝕂(x, X)\,\big(f_t(X) − Y\big),
       \qquad f_0 = f_{PT},

    on the training and the held-out inputs at once; returns ``(1/M)‖f_τ(X_ho) − Y_ho‖²`` at
    each of ``steps`` (non-negative integers), ``(T,)``.

    Examples:
      >>> import numpy as np
      >>> k = np.array([[2.0, 1.0], [1.0, 2.0]])
      >>> curve = heldout_mse_by_iteration(k, np.array([[1.0, 1.0]]), np.array([1.0, 1.0]),
      ...                                  np.array([1.0]), np.zeros(2), np.zeros(1),
      ...                                  step_size=0.5, steps=np.array([0, 200]))
      >>> [round(float(v), 6) for v in curve]  # heldout_mse_curve's example, iterated
      [1.0, 0.111111]
    """
    kernel = np.asarray(kernel_train, np.float64)
    kernel_ho = np.asarray(kernel_heldout_train, np.float64)
    y, y_ho = np.asarray(y_train, np.float64), np.asarray(y_heldout, np.float64)
    f, f_ho = np.asarray(f_pt_train, np.float64), np.asarray(f_pt_heldout, np.float64)
    wanted = np.asarray(steps, int)
    rate = float(step_size) / kernel.shape[0]
    out = np.empty(wanted.shape[0])
    for step in range(int(wanted.max(initial=0)) + 1):
        out[wanted == step] = np.mean((f_ho - y_ho) ** 2)
        residual = f - y
        f, f_ho = f - rate * kernel @ residual, f_ho - rate * kernel_ho @ residual
    return out


class PlugInStoppingRule(NamedTuple):
    """Outcome of :func:`plug_in_stopping_time`.

    Attributes:
      stopping_time: ``T̂`` (steps of size ``α``).
      critical_radius: ``ϱ̂_N`` of eq. (11) with the plug-ins.
      noise_std: ``σ̂``.
      rkhs_distance: ``Ĉ_H``.
      validation_step: ``s*``.
      validation_curve: the validation MSE at ``steps``.
    """

    stopping_time: Array
    critical_radius: Array
    noise_std: Array
    rkhs_distance: Array
    validation_step: Array
    validation_curve: Array


def plug_in_stopping_time(
    kernel_train: ArrayLike,
    kernel_val_train: ArrayLike,
    y_train: ArrayLike,
    y_val: ArrayLike,
    f_pt_train: ArrayLike,
    f_pt_val: ArrayLike,
    *,
    step_size: float,
    steps: ArrayLike,
    horizon: int,
) -> PlugInStoppingRule:
    r"""Eq. (11)'s stopping time ``T̂`` on a measured kernel with plug-in ``σ̂`` and ``Ĉ_H``.

    Module doc for the plug-ins. ``T̂`` is :func:`raskutti_stopping_time` for the constant
    step ``α`` over ``horizon`` steps (``horizon`` if the rule never fires before).

    Args:
      kernel_train: ``𝕂(X, X)`` (unnormalised), ``(N, N)``.
      kernel_val_train: ``𝕂(X_val, X)``, ``(M, N)``.
      y_train, y_val: labels.
      f_pt_train, f_pt_val: ``f_PT`` on both splits.
      step_size: ``α`` with ``α λ̂_max(𝕂/N) ≤ 1``.
      steps: the steps ``s`` at which the validation MSE is evaluated, ``(T,)``.
      horizon: the longest ``T̂`` looked for (static).

    Examples:
      >>> import jax.numpy as jnp
      >>> k = jnp.diag(jnp.array([4.0, 1.0]))  # K = 𝕂/2: eigenvalues 2 and 1/2
      >>> rule = plug_in_stopping_time(k, jnp.zeros((1, 2)), jnp.array([1.0, 1.0]),
      ...                              jnp.array([0.5]), jnp.zeros(2), jnp.zeros(1),
      ...                              step_size=0.5, steps=jnp.arange(3), horizon=100)
      >>> float(rule.noise_std), int(rule.validation_step)  # f_val ≡ 0: σ̂ = 0.5 at s* = 0
      (0.5, 0)
    """
    k = jnp.asarray(kernel_train)
    check_ndim("plug_in_stopping_time", "kernel_train", k, 2)
    steps = jnp.asarray(steps)
    curve = heldout_mse_curve(
        k, kernel_val_train, y_train, y_val, f_pt_train, f_pt_val, step_size=step_size, steps=steps
    )
    best = jnp.argmin(curve)
    residual = jnp.asarray(f_pt_train) - jnp.asarray(y_train)
    c = task_vector_coefficients(k, residual, step_size=step_size, steps=steps[best])
    rkhs_distance = jnp.sqrt(jnp.maximum(c @ k @ c, jnp.finfo(k.dtype).tiny))
    noise_std = jnp.sqrt(curve[best])
    eigenvalues = jnp.clip(jnp.linalg.eigvalsh((k + k.T) / (2 * k.shape[0])), 0, None)
    schedule = jnp.full(int(horizon), step_size, k.dtype)
    stop = raskutti_stopping_time(eigenvalues, schedule, noise_std, rkhs_distance)
    radius = empirical_critical_radius(eigenvalues, noise_std, rkhs_distance)
    return PlugInStoppingRule(stop, radius, noise_std, rkhs_distance, steps[best], curve)


def increment_rkhs_norm(
    kernel_train: ArrayLike, residual: ArrayLike, *, step_size: float, steps: int
) -> float:
    r"""``‖f_s − f_PT‖_H`` of ``s`` kernel-GD steps from ``f_PT``: :func:`plug_in_stopping_time`'s
    ``Ĉ_H`` by a second route, the spectral sum (float64 numpy)

    .. math:: ‖f_s − f_{PT}‖_H^2 = \sum_i \big(1 − (1 − αg_i/N)^s\big)^2
       \frac{⟨q_i, r_0⟩^2}{g_i}, \qquad 𝕂 = Q\,\mathrm{diag}(g)\,Qᵀ,

    [derived]: on the training inputs ``f_s − f_PT = −Q diag(1 − (1 − αg_i/N)^s) Qᵀ r_0 =
    𝕂c`` (eq. (7)'s kernel GD with ``K = 𝕂/N``, Secs 3.3–3.4), and the RKHS norm of
    ``𝕂(·, X)c`` is ``(cᵀ𝕂c)^{1/2}``; a term with ``g_i → 0`` vanishes like ``g_i``.

    Args:
      kernel_train: ``𝕂(X, X)`` (unnormalised), ``(N, N)``.
      residual: ``r_0 = f_PT(X) − Y``, ``(N,)``.
      step_size: ``α`` with ``α λ̂_max(𝕂/N) ≤ 1``.
      steps: ``s``.

    Examples:
      >>> import numpy as np
      >>> # 𝕂 = diag(4, 1), N = 2, α = 1/4: one step shrinks by (1/4)·(4, 1)/2 = (1/2, 1/8)
      >>> norm = increment_rkhs_norm(np.diag([4.0, 1.0]), np.array([2.0, 4.0]), step_size=0.25,
      ...                            steps=1)
      >>> round(norm**2, 12)  # (1/2)²·2²/4 + (1/8)²·4²/1 = 1/4 + 1/4
      0.5
    """
    g, q = np.linalg.eigh(np.asarray(kernel_train, np.float64))
    g = np.maximum(g, np.finfo(np.float64).tiny)
    with np.errstate(divide="ignore"):  # αg_i/N = 1: log 0 = −inf, shrinkage exactly 1
        shrink = -np.expm1(steps * np.log1p(-step_size * g / g.shape[0]))
    coordinates = q.T @ np.asarray(residual, np.float64)
    return float(np.sqrt(np.sum(shrink**2 * coordinates**2 / g)))


def kernel_predicted_cosines(
    gram: ArrayLike,
    task_sizes: tuple[int, ...],
    residuals: ArrayLike,
    *,
    step_size: float,
    steps: int,
) -> Array:
    r"""Cor 2's ``cos(τ_i, τ_j)`` of linearised GD task vectors from one Gram matrix.

    Task ``i`` owns rows ``[o_i, o_i + N_i)`` of ``G = JJᵀ`` over all tasks' training inputs
    stacked. Each ``τ_i = J_iᵀc_i`` with ``c_i`` from :func:`task_vector_coefficients`
    (``G_ii``, ``r_0 = f_PT − Y``, step ``α``, ``steps``) and
    :func:`task_vector_cosine` reads the blocks ``G_ii, G_ij, G_jj``.

    Args:
      gram: ``(ΣN_i, ΣN_i)``.
      task_sizes: ``(N_1, …, N_M)`` (static).
      residuals: ``f_PT(X) − Y`` stacked the same way, ``(ΣN_i,)``.
      step_size: ``α``; steps: GD steps (each task the same).

    Returns:
      ``(M, M)`` cosines (1 on the diagonal).

    Examples:
      >>> import jax.numpy as jnp
      >>> g = jnp.array([[1.0, 0.0], [0.0, 1.0]])  # orthogonal rows: cos = 0
      >>> cos = kernel_predicted_cosines(g, (1, 1), jnp.array([1.0, -1.0]), step_size=1.0,
      ...                                steps=3)
      >>> [[abs(float(v)) for v in row] for row in cos]
      [[1.0, 0.0], [0.0, 1.0]]
    """
    g = jnp.asarray(gram)
    r = jnp.asarray(residuals)
    bounds = np.cumsum((0, *task_sizes))
    if g.shape != (bounds[-1], bounds[-1]) or r.shape != (bounds[-1],):
        raise ValueError(
            f"kernel_predicted_cosines: gram must be ({bounds[-1]}, {bounds[-1]}) and residuals "
            f"({bounds[-1]},) for task_sizes {task_sizes}, got {g.shape} and {r.shape}."
        )
    blocks = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    coefficients = [
        task_vector_coefficients(g[b, b], r[b], step_size=step_size, steps=steps) for b in blocks
    ]
    rows = []
    for i, bi in enumerate(blocks):
        rows.append(
            jnp.stack(
                [
                    task_vector_cosine(g[bi, bi], g[bi, bj], g[bj, bj], coefficients[i], c_j)
                    for bj, c_j in zip(blocks, coefficients, strict=True)
                ]
            )
        )
    return jnp.stack(rows)


def vector_cosines(vectors: ArrayLike) -> np.ndarray:
    """``(M, M)`` cosines between the rows of ``vectors`` ``(M, P)`` (measured task vectors),
    in float64 numpy (a float32 sum over ``10⁷`` parameters loses about three digits).

    Examples:
      >>> import jax.numpy as jnp
      >>> vector_cosines(jnp.array([[1.0, 0.0], [1.0, 1.0]])).round(4).tolist()
      [[1.0, 0.7071], [0.7071, 1.0]]
    """
    v = np.asarray(vectors, np.float64)  # float64: P can be 10⁷ (a transformer's parameters)
    check_ndim("vector_cosines", "vectors", v, 2)
    unit = v / np.linalg.norm(v, axis=1, keepdims=True)
    return unit @ unit.T
