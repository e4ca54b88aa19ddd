"""Pretraining a two-layer linear network by gradient flow (Springer et al. 2025, Sec 4.1, App A.1).

Task ``y = A x`` with ``A = U diag(σ) Vᵀ``; model ``θ = W1 W2`` (hidden width ``d``); loss
(eq. 4) ``L_pre(θ) = ‖W1 W2 − A‖_F²``; gradient flow (eqs. 5–6) ``Ẇ1 = −2(θ − A)W2ᵀ``,
``Ẇ2 = −2W1ᵀ(θ − A)`` from a small init (``W1 = W2 = e^{−τ}I`` in the paper).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ntsim._types import Array, ArrayLike
from ntsim._validation import check_ndim, check_positive, check_positive_int
from ntsim.core import gradient_flow

__all__ = [
    "aligned_init",
    "checkpoint_times",
    "closest_checkpoints",
    "geometric_spectrum",
    "ideal_checkpoint",
    "identity_init",
    "logistic_modes",
    "mode_matrix",
    "pretrain_gradient_flow",
    "pretraining_loss",
    "task_matrix",
]


def geometric_spectrum(d: int, first: float, ratio: float) -> Array:
    """``σ_i = first · ratio^{i−1}``, ``i = 1..d`` (the project's config R: ``4·0.6^{i−1}``).

    Examples:
      >>> geometric_spectrum(3, 4.0, 0.5).tolist()
      [4.0, 2.0, 1.0]
    """
    d = check_positive_int("geometric_spectrum", "d", d)
    check_positive("geometric_spectrum", "first", first)
    check_positive("geometric_spectrum", "ratio", ratio)
    return first * ratio ** jnp.arange(d, dtype=jnp.result_type(float))


def task_matrix(spectrum: ArrayLike, u: ArrayLike, v: ArrayLike) -> Array:
    """``A = U diag(σ) Vᵀ`` (Sec 4.1 for ``A^pre``, Sec 4.3 for ``A^ft``: same ``U``, ``V``)."""
    spectrum, u, v = jnp.asarray(spectrum), jnp.asarray(u), jnp.asarray(v)
    check_ndim("task_matrix", "spectrum", spectrum, 1)
    d = spectrum.shape[0]
    if u.shape != (d, d) or v.shape != (d, d):
        raise ValueError(
            f"task_matrix: u and v must be (d, d) with d = len(spectrum) = {d}, "
            f"got u.shape={u.shape}, v.shape={v.shape}."
        )
    return (u * spectrum[None, :]) @ v.T


def ideal_checkpoint(spectrum: ArrayLike, n, u: ArrayLike, v: ArrayLike) -> tuple[Array, Array]:
    """Ideal checkpoint ``n`` (eqs. 7–8): ``W̄1 = U(Σ^{pre,n})^{1/2}``, ``W̄2 = (Σ^{pre,n})^{1/2}Vᵀ``.

    ``Σ^{pre,n}`` keeps the first ``n`` singular values and zeroes the rest, so
    ``W̄1 W̄2 = U Σ^pre_{:n} Vᵀ``. ``n`` may be traced (``0 ≤ n ≤ d``); hidden units ``j > n``
    are exactly zero (a column of ``W̄1`` and a row of ``W̄2``).

    Examples:
      >>> import jax.numpy as jnp
      >>> w1, w2 = ideal_checkpoint(jnp.array([4.0, 1.0]), 1, jnp.eye(2), jnp.eye(2))
      >>> (w1 @ w2).tolist()
      [[4.0, 0.0], [0.0, 0.0]]
    """
    spectrum, u, v = jnp.asarray(spectrum), jnp.asarray(u), jnp.asarray(v)
    check_ndim("ideal_checkpoint", "spectrum", spectrum, 1)
    mask = jnp.arange(spectrum.shape[0]) < n
    root = jnp.sqrt(jnp.where(mask, spectrum, 0.0))
    return u * root[None, :], root[:, None] * v.T


def identity_init(d: int, tau: ArrayLike) -> tuple[Array, Array]:
    """The paper's init ``W1(0) = W2(0) = e^{−τ} I`` (Sec 4.1)."""
    d = check_positive_int("identity_init", "d", d)
    eye = jnp.exp(-jnp.asarray(tau, dtype=jnp.result_type(float))) * jnp.eye(d)
    return eye, eye


def aligned_init(u: ArrayLike, v: ArrayLike, tau: ArrayLike) -> tuple[Array, Array]:
    """Aligned init ``W1(0) = e^{−τ}U``, ``W2(0) = e^{−τ}Vᵀ`` (derived here).

    Every mode ``a_i = u_iᵀθv_i`` then starts at ``a_0 = e^{−2τ}`` and evolves on its own
    (:func:`logistic_modes`); with ``W1 = W2 = e^{−τ}I`` and ``U ≠ V`` the modes couple.
    """
    scale = jnp.exp(-jnp.asarray(tau, dtype=jnp.result_type(float)))
    return scale * jnp.asarray(u), scale * jnp.asarray(v).T


def logistic_modes(spectrum: ArrayLike, tau: ArrayLike, t: ArrayLike) -> Array:
    r"""Per-mode logistic solution of the aligned gradient flow (Saxe et al. 2014).

    With ``W1 = U diag(w)``, ``W2 = diag(w)Vᵀ`` and ``a = w²``, eqs. 5–6 decouple into
    ``ȧ_i = 4a_i(σ_i − a_i)``, solved by

    .. math:: a_i(t) = \frac{\sigma_i}{1 + (\sigma_i/a_0 - 1)e^{-4\sigma_i t}}
       = \sigma_i\,\mathrm{sigmoid}\big(4\sigma_i t - \ln(\sigma_i/a_0 - 1)\big),
       \quad a_0 = e^{-2\tau}.

    Args:
      spectrum: ``σ`` (``(d,)``, positive, ``σ_i > a_0``).
      tau: init scale ``τ`` (scalar).
      t: times, any shape ``S``.

    Returns:
      ``a(t)`` of shape ``S + (d,)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> a = logistic_modes(jnp.array([2.0]), 3.0, jnp.array([0.0, 100.0]))
      >>> [round(float(x), 6) for x in a[:, 0]]
      [0.002479, 2.0]
    """
    spectrum = jnp.asarray(spectrum)
    t = jnp.asarray(t, dtype=spectrum.dtype)[..., None]
    log_ratio = jnp.log(spectrum) + 2.0 * tau + jnp.log1p(-jnp.exp(-2.0 * tau) / spectrum)
    return spectrum * jax.nn.sigmoid(4.0 * spectrum * t - log_ratio)


def checkpoint_times(spectrum: ArrayLike, tau: ArrayLike, factor: float = 1e3) -> Array:
    """``t_n = ln((σ_n e^{2τ} − 1)·c)/(4σ_n)``: mode ``n`` has reached ``σ_n/(1 + 1/c)``.

    Exact for the aligned init (:func:`logistic_modes`); ``c = factor``.

    Examples:
      >>> import jax.numpy as jnp
      >>> s = jnp.array([2.0]); t = checkpoint_times(s, 3.0, factor=100.0)
      >>> round(float(logistic_modes(s, 3.0, t)[0, 0] / 2.0), 6)
      0.990099
    """
    check_positive("checkpoint_times", "factor", factor)
    spectrum = jnp.asarray(spectrum)
    log_ratio = jnp.log(spectrum) + 2.0 * tau + jnp.log1p(-jnp.exp(-2.0 * tau) / spectrum)
    return (log_ratio + jnp.log(factor)) / (4.0 * spectrum)


def pretraining_loss(w1: ArrayLike, w2: ArrayLike, a: ArrayLike) -> Array:
    """``L_pre = ‖W1 W2 − A‖_F²`` (eq. 4, Gaussian inputs ``x ~ N(0, I)``)."""
    return jnp.sum(jnp.square(jnp.asarray(w1) @ jnp.asarray(w2) - jnp.asarray(a)))


def mode_matrix(theta: ArrayLike, u: ArrayLike, v: ArrayLike) -> Array:
    """``Σ(t) = Uᵀ θ V`` (Sec 4.1); its diagonal ``σ(t)`` records the learned features."""
    return jnp.asarray(u).T @ jnp.asarray(theta) @ jnp.asarray(v)


def pretrain_gradient_flow(
    a_pre: ArrayLike,
    init: tuple[ArrayLike, ArrayLike],
    save_times: ArrayLike,
    *,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    max_steps: int = 65_536,
) -> tuple[Array, Array]:
    """Gradient flow of eqs. 5–6 on ``‖W1W2 − A^pre‖²`` from ``init``, via diffrax.

    Uses :func:`ntsim.core.gradient_flow` with learning rate 1, so
    ``Ẇ1 = −2(θ − A)W2ᵀ`` and ``Ẇ2 = −2W1ᵀ(θ − A)`` exactly as printed. ``save_times`` may
    be traced (vmap over ``τ``); the flow runs to ``save_times[-1]``.

    Returns:
      ``(W1, W2)``, each ``(len(save_times), d, d)``.
    """
    a_pre = jnp.asarray(a_pre)
    check_ndim("pretrain_gradient_flow", "a_pre", a_pre, 2)
    save_times = jnp.asarray(save_times, dtype=a_pre.dtype)

    def loss(params):
        return pretraining_loss(params[0], params[1], a_pre)

    w1, w2 = gradient_flow(
        loss,
        (jnp.asarray(init[0]), jnp.asarray(init[1])),
        t1=save_times[-1],
        save_times=save_times,
        rtol=rtol,
        atol=atol,
        max_steps=max_steps,
    )
    return w1, w2


def closest_checkpoints(
    thetas: ArrayLike, spectrum: ArrayLike, u: ArrayLike, v: ArrayLike
) -> tuple[Array, Array]:
    """Real checkpoints: for each ``n = 0..d`` the saved ``θ(t)`` closest to ``UΣ^pre_{:n}Vᵀ``.

    Thm 4.1 / A.1 asserts *existence* of ``t_1 < … < t_d`` with ``θ(t_n) ≈ UΣ^pre_{:n}Vᵀ``;
    with the identity init and ``U ≠ V`` the rise time of mode ``n`` depends on the instance
    (its effective start ``≈ e^{−2τ}(1 + u_nᵀv_n)/2`` and its coupling to the other modes), so
    no formula like :func:`checkpoint_times` places ``t_n`` reliably. Picking, on a dense
    grid of saved times, the one nearest to each ideal product realises the theorem's
    ``t_n``; the returned distances are what the theorem bounds by ``exp(−Cτ)``.

    Args:
      thetas: ``(T, d, d)`` products ``W1(t)W2(t)`` on a grid of times.
      spectrum: ``σ^pre`` (``(d,)``, decreasing); ``u``, ``v``: its singular vectors.

    Returns:
      ``(indices, distances)``, each ``(d + 1,)``: grid index of ``t_n`` and
      ``‖θ(t_n) − UΣ^pre_{:n}Vᵀ‖_F``.
    """
    thetas, spectrum = jnp.asarray(thetas), jnp.asarray(spectrum)
    check_ndim("closest_checkpoints", "thetas", thetas, 3)
    d = spectrum.shape[0]
    masks = jnp.arange(d)[None, :] < jnp.arange(d + 1)[:, None]
    ideals = jax.vmap(lambda m: task_matrix(jnp.where(m, spectrum, 0.0), u, v))(masks)
    dist = jnp.linalg.norm(thetas[None, :] - ideals[:, None], axis=(-2, -1))  # (d+1, T)
    index = jnp.argmin(dist, axis=1)
    return index, jnp.take_along_axis(dist, index[:, None], axis=1)[:, 0]
