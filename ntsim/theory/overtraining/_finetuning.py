r"""Fine-tuning the pretrained two-layer linear network (Springer et al. 2025, Sec 4.3, A.3–A.6).

Fine-tuning task ``A^ft = U Σ^ft Vᵀ`` (same ``U``, ``V`` as ``A^pre``); objective (eqs. 3, 9)
``L_ft(θ; λ) = ‖θ − A^ft‖² + λ‖θ − θ^n(0)‖²`` with ``θ^n(0)`` the checkpoint; GD with
learning rate ``η`` on minibatches of ``m`` Gaussian inputs (eqs. 10–11), or ``m = ∞``
(``Σ_k^(x) = I``, eqs. 16–17). In the ideal infinite-batch dynamics every learned mode evolves
on its own by the scalar map ``f`` (Lemma A.7) and unlearned modes stay exactly 0, so the
post-fine-tuning losses are sums over modes (closed forms).

Errata implemented as ``*_printed`` / corrected pairs:

* eq. (18) drops the factor ``x`` in the λ term of ``f`` (``mode_step(printed=True)``);
* Lemmas A.11 and A.28 swap pre/ft in the fixed point (:func:`fixed_point_printed`);
* eq. (11) as printed, ``W2 ← W2 − 2ηW1ᵀΣ_k(θ − A^ft) − …``, is not the gradient of the
  minibatch loss ``Tr((θ − A)ᵀ(θ − A)Σ_k)`` (that is ``2W1ᵀ(θ − A)Σ_k``); both agree at
  ``m = ∞`` (``finetune(..., eq11="printed")`` keeps the printed form; found while
  implementing).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike, PRNGKey
from ntsim._validation import check_choice, check_nonnegative, check_positive, check_positive_int

__all__ = [
    "FinetuneResult",
    "assumption_a8_holds",
    "contraction_condition",
    "contraction_rate",
    "finetune",
    "finetune_ideal_checkpoints",
    "finetune_step",
    "finetuning_increments",
    "fixed_point",
    "fixed_point_printed",
    "mode_limit",
    "mode_step",
    "mode_trajectory",
    "printed_map_fixed_point",
    "post_finetuning_losses",
]


class FinetuneResult(NamedTuple):
    """Output of :func:`finetune`.

    Attributes:
      w1: the factor ``W_1`` after ``num_steps`` steps.
      w2: the factor ``W_2`` after ``num_steps`` steps.
      thetas: ``θ = W1W2`` at steps ``0, every, 2·every, …`` (``(records, d, d)``).
      steps: the step index of each record.
    """

    w1: Array
    w2: Array
    thetas: Array
    steps: Array


def finetune(
    w1: ArrayLike,
    w2: ArrayLike,
    a_ft: ArrayLike,
    *,
    learning_rate: ArrayLike,
    num_steps: int,
    reg: ArrayLike = 0.0,
    batch_size: int | None = None,
    key: PRNGKey | None = None,
    record_every: int | None = None,
    eq11: Literal["gradient", "printed"] = "gradient",
) -> FinetuneResult:
    r"""GD fine-tuning of ``θ = W1W2`` from a checkpoint, eqs. (10)–(11), as one ``lax.scan``.

    .. math::
       G_k &= (\theta_k - A^{ft})\Sigma_k + \lambda(\theta_k - \theta_0),\\
       W_1 &\leftarrow W_1 - 2\eta\, G_k W_2^\top, \qquad
       W_2 \leftarrow W_2 - 2\eta\, W_1^\top G_k,

    with :math:`\eta` = ``learning_rate``, :math:`\lambda` = ``reg`` (toward the checkpoint
    :math:`\theta_0 = W_1(0)W_2(0)`), and :math:`\Sigma_k = X_k^\top X_k/m`, ``X_k`` an
    ``m × d`` standard Gaussian batch (``m = batch_size``), or ``Σ_k = I`` when
    ``batch_size is None`` (infinite batch, eqs. 16–17). Runs with the same ``key`` see the
    same batches (the real and ideal dynamics of App A.3 share them).

    Args:
      w1: the checkpoint's first factor ``W_1(0)`` (real, e.g. from
        :func:`pretrain_gradient_flow`, or ideal, :func:`ideal_checkpoint`).
      w2: the checkpoint's second factor ``W_2(0)``, from the same source as ``w1``.
      a_ft: ``A^ft``.
      learning_rate: ``η > 0`` (may be traced). A.8 asks ``4η(λ + 2)Γ < 1``.
      num_steps: ``K`` (static).
      reg: ``λ ≥ 0`` (may be traced).
      batch_size: ``m``, or ``None`` for ``m = ∞``.
      key: batch key (required when ``batch_size`` is set).
      record_every: record ``θ`` every this many steps (default: only at 0 and ``K``).
      eq11: ``"gradient"`` (``W1ᵀ(θ − A)Σ_k``, the true minibatch gradient) or ``"printed"``
        (``W1ᵀΣ_k(θ − A)`` as eq. 11 is printed); identical when ``m = ∞``.

    Returns:
      :class:`FinetuneResult`.

    Examples:
      >>> import jax.numpy as jnp
      >>> res = finetune(jnp.eye(1), jnp.eye(1), 4.0 * jnp.eye(1), learning_rate=0.05,
      ...                num_steps=200)
      >>> round(float(res.thetas[-1, 0, 0]), 6)
      4.0
    """
    where = "finetune"
    num_steps = check_positive_int(where, "num_steps", num_steps)
    check_positive(where, "learning_rate", learning_rate)
    check_nonnegative(where, "reg", reg)
    check_choice(where, "eq11", eq11, ("gradient", "printed"))
    if batch_size is not None:
        batch_size = check_positive_int(where, "batch_size", batch_size)
        if key is None:
            raise ValueError(f"{where}: key is required when batch_size is set.")
    every = num_steps
    if record_every is not None:
        every = check_positive_int(where, "record_every", record_every)
    if num_steps % every:
        raise ValueError(f"{where}: record_every={every} must divide num_steps={num_steps}.")
    w1, w2, a_ft = jnp.asarray(w1), jnp.asarray(w2), jnp.asarray(a_ft)
    d = a_ft.shape[0]
    if a_ft.shape != (d, d) or w1.shape[:1] != (d,) or w1.ndim != 2 or w2.shape != w1.shape[::-1]:
        raise ValueError(
            f"{where}: a_ft must be square (d, d), w1 (d, m) and w2 (m, d), got "
            f"a_ft.shape={a_ft.shape}, w1.shape={w1.shape}, w2.shape={w2.shape}."
        )
    anchor = w1 @ w2
    keys = jax.random.split(jax.random.PRNGKey(0) if key is None else key, num_steps)
    keys = keys.reshape(num_steps // every, every, *keys.shape[1:])

    def step(carry, k):
        cov = None
        if batch_size is not None:
            x = jax.random.normal(k, (batch_size, d), a_ft.dtype)
            cov = x.T @ x / batch_size
        return finetune_step(
            *carry, a_ft, anchor, learning_rate=learning_rate, reg=reg, cov=cov, eq11=eq11
        ), None

    def chunk(carry, ks):
        carry = jax.lax.scan(step, carry, ks)[0]
        return carry, carry[0] @ carry[1]

    (w1_k, w2_k), thetas = jax.lax.scan(chunk, (w1, w2), keys)
    thetas = jnp.concatenate([anchor[None], thetas])
    return FinetuneResult(w1_k, w2_k, thetas, jnp.arange(0, num_steps + 1, every))


def finetune_step(
    w1: ArrayLike,
    w2: ArrayLike,
    a_ft: ArrayLike,
    anchor: ArrayLike,
    *,
    learning_rate: ArrayLike,
    reg: ArrayLike = 0.0,
    cov: ArrayLike | None = None,
    eq11: Literal["gradient", "printed"] = "gradient",
) -> tuple[Array, Array]:
    r"""One step of eqs. (10)–(11): the update :func:`finetune` scans.

    .. math::
       G &= (\theta - A^{ft})\Sigma_k + \lambda(\theta - \theta_0),\qquad \theta = W_1W_2,\\
       W_1 &\leftarrow W_1 - 2\eta\, G W_2^\top, \qquad W_2 \leftarrow W_2 - 2\eta\, W_1^\top G,

    with :math:`\Sigma_k` = ``cov`` (a batch's ``XᵀX/m``) or ``I`` when ``cov is None``
    (infinite batch, eqs. 16–17), :math:`\theta_0` = ``anchor``. ``eq11="printed"`` puts
    ``Σ_k`` left of ``θ − A^ft`` in the ``W2`` update, as eq. (11) is printed. Exposed so that
    several dynamics can be stepped on shared batches (App A.3's real / ideal / infinite-batch
    comparisons). Equivariant under ``(W1, W2) → (W1Q, QᵀW2)`` for orthogonal ``Q``.
    """
    w1, w2, a_ft = jnp.asarray(w1), jnp.asarray(w2), jnp.asarray(a_ft)
    theta = w1 @ w2
    resid = theta - a_ft
    if cov is None:
        fit_1 = fit_2 = resid
    else:
        fit_1 = resid @ cov
        fit_2 = cov @ resid if eq11 == "printed" else fit_1
    prox = reg * (theta - anchor)
    new_w1 = w1 - 2 * learning_rate * (fit_1 + prox) @ w2.T
    new_w2 = w2 - 2 * learning_rate * w1.T @ (fit_2 + prox)
    return new_w1, new_w2


def finetune_ideal_checkpoints(
    spectrum_pre: ArrayLike,
    spectrum_ft: ArrayLike,
    u: ArrayLike,
    v: ArrayLike,
    *,
    learning_rate: ArrayLike,
    num_steps: int,
    reg: ArrayLike = 0.0,
    record_every: int | None = None,
) -> tuple[Array, Array, Array]:
    """:func:`finetune` (``m = ∞``) from every ideal checkpoint ``n = 0..d``, vmapped over ``n``.

    The matrix-level counterpart of :func:`post_finetuning_losses` (eqs. 7–8 init, eqs. 16–17
    dynamics): the losses are measured on ``θ^n(K) = W1 W2``, not read off the recursion.

    Returns:
      ``(thetas, pretrain_losses, id_losses)``: ``θ`` records ``(d+1, R, d, d)`` and
      ``‖θ^n(K) − A^pre‖²``, ``‖θ^n(K) − A^ft‖²`` of shape ``(d+1,)``.
    """
    spectrum_pre, spectrum_ft = jnp.asarray(spectrum_pre), jnp.asarray(spectrum_ft)
    d = spectrum_pre.shape[0]
    a_pre = (jnp.asarray(u) * spectrum_pre[None, :]) @ jnp.asarray(v).T
    a_ft = (jnp.asarray(u) * spectrum_ft[None, :]) @ jnp.asarray(v).T

    def one(n):
        root = jnp.sqrt(jnp.where(jnp.arange(d) < n, spectrum_pre, 0.0))
        res = finetune(
            jnp.asarray(u) * root[None, :], root[:, None] * jnp.asarray(v).T, a_ft,
            learning_rate=learning_rate, reg=reg, num_steps=num_steps, record_every=record_every,
        )  # fmt: skip
        theta = res.w1 @ res.w2
        return res.thetas, jnp.sum((theta - a_pre) ** 2), jnp.sum((theta - a_ft) ** 2)

    return jax.vmap(one)(jnp.arange(d + 1))


def mode_step(
    x: ArrayLike,
    sigma_ft: ArrayLike,
    sigma_pre: ArrayLike,
    *,
    learning_rate: ArrayLike,
    reg: ArrayLike,
    printed: bool = False,
) -> Array:
    r"""One step of the per-mode map ``f`` of Lemma A.7 (``x = √(mode value)``).

    Corrected (App A.6, and what GD on eqs. 16–17 does):

    .. math:: f(x) = x + 2\eta x(\sigma^{ft} - x^2) + 2\eta\lambda x(\sigma^{pre} - x^2)

    (the paper's ``f(x; η, λ, σ, σ0)`` takes ``σ = √σ^ft``, ``σ0 = √σ^pre``). ``printed=True``
    gives eq. (18) as printed, ``… + 2ηλ(σ^pre − x²)`` without the factor ``x`` (erratum).
    """
    x = jnp.asarray(x)
    reg_term = (sigma_pre - x**2) * (1.0 if printed else x)
    return x + 2 * learning_rate * x * (sigma_ft - x**2) + 2 * learning_rate * reg * reg_term


def mode_trajectory(
    sigma_pre: ArrayLike,
    sigma_ft: ArrayLike,
    *,
    learning_rate: ArrayLike,
    reg: ArrayLike,
    num_steps: int,
    printed: bool = False,
) -> Array:
    """``x_k = f^{(k)}(√σ^pre)``, ``k = 0..K`` (Lemma A.7), elementwise over modes.

    The learned mode ``i ≤ n`` of the ideal infinite-batch fine-tuning has
    ``(UᵀθV)_ii = x_k²``. Returns shape ``(K + 1,) + broadcast shape``.

    Examples:
      >>> import jax.numpy as jnp
      >>> x = mode_trajectory(jnp.array(1.0), jnp.array(4.0), learning_rate=0.02, reg=1.0,
      ...                     num_steps=2000)
      >>> round(float(x[-1] ** 2), 4)  # (σ^ft + λσ^pre)/(1 + λ)
      2.5
    """
    num_steps = check_positive_int("mode_trajectory", "num_steps", num_steps)
    sigma_pre, sigma_ft = jnp.broadcast_arrays(jnp.asarray(sigma_pre), jnp.asarray(sigma_ft))

    def step(x, _):
        x = mode_step(x, sigma_ft, sigma_pre, learning_rate=learning_rate, reg=reg, printed=printed)
        return x, x

    x0 = jnp.sqrt(sigma_pre)
    return jnp.concatenate([x0[None], jax.lax.scan(step, x0, length=num_steps)[1]])


def mode_limit(
    sigma_pre: ArrayLike,
    sigma_ft: ArrayLike,
    *,
    learning_rate: ArrayLike,
    reg: ArrayLike,
    num_steps: int,
    printed: bool = False,
) -> Array:
    """``x_K = f^{(K)}(√σ^pre)`` only (the last entry of :func:`mode_trajectory`, no history).

    Examples:
      >>> import jax.numpy as jnp
      >>> x = mode_limit(jnp.array(1.0), jnp.array(4.0), learning_rate=0.02, reg=1.0,
      ...                num_steps=2000)
      >>> round(float(x**2), 4)  # (σ^ft + λσ^pre)/(1 + λ)
      2.5
    """
    num_steps = check_positive_int("mode_limit", "num_steps", num_steps)
    sigma_pre, sigma_ft = jnp.broadcast_arrays(jnp.asarray(sigma_pre), jnp.asarray(sigma_ft))

    def step(_, x):
        return mode_step(x, sigma_ft, sigma_pre, learning_rate=learning_rate, reg=reg,
                         printed=printed)  # fmt: skip

    return jax.lax.fori_loop(0, num_steps, step, jnp.sqrt(sigma_pre))


def printed_map_fixed_point(sigma_pre: ArrayLike, sigma_ft: ArrayLike, reg: ArrayLike):
    """Fixed point ``x*`` of eq. (18) as printed, in closed form (numpy, float64).

    ``f(x) = x`` for the printed map means ``x(σ^ft − x²) + λ(σ^pre − x²) = 0``, i.e.
    ``x³ + λx² − σ^ft·x − λσ^pre = 0``; for ``λ, σ^pre > 0`` its coefficients change sign
    once, so it has exactly one positive root (Descartes), returned here (the corrected map's
    fixed point is instead ``x*² =`` :func:`fixed_point`). Independent of :func:`mode_step`.

    Examples:
      >>> round(float(printed_map_fixed_point(0.25, 2.0, 1.0) ** 2), 4)
      1.1569
    """
    pre, ft, lam = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in
                                         (sigma_pre, sigma_ft, reg)))  # fmt: skip
    if np.any(lam <= 0) or np.any(pre <= 0):
        raise ValueError("printed_map_fixed_point: need λ > 0 and σ^pre > 0.")
    companion = np.zeros(pre.shape + (3, 3))
    companion[..., 0, :] = np.stack([-lam, ft, lam * pre], axis=-1)
    companion[..., 1, 0] = companion[..., 2, 1] = 1.0
    roots = np.linalg.eigvals(companion)
    positive = (np.abs(roots.imag) < 1e-9 * (1 + np.abs(roots.real))) & (roots.real > 0)
    return np.where(positive, roots.real, -np.inf).max(axis=-1)


def fixed_point(sigma_pre: ArrayLike, sigma_ft: ArrayLike, reg: ArrayLike) -> Array:
    """Corrected limit of a learned mode: ``(σ^ft + λσ^pre)/(1 + λ)`` (A.16, A.23–A.27).

    The minimiser of ``(a − σ^ft)² + λ(a − σ^pre)²``, i.e. ``A^target = (A^ft + λA^pre)/(1+λ)``.
    ``λ ≥ 0`` is checked when concrete (the falsifier traces this inside its search).
    """
    check_nonnegative("fixed_point", "reg", reg)
    return (sigma_ft + reg * sigma_pre) / (1 + reg)


def fixed_point_printed(sigma_pre: ArrayLike, sigma_ft: ArrayLike, reg: ArrayLike) -> Array:
    """Lemmas A.11 / A.28 as printed: ``(σ^pre + λσ^ft)/(1 + λ)`` (pre/ft swapped; erratum).

    Agrees with :func:`fixed_point` only when ``λ = 1`` or ``σ^pre = σ^ft``.
    """
    check_nonnegative("fixed_point_printed", "reg", reg)
    return (sigma_pre + reg * sigma_ft) / (1 + reg)


def contraction_condition(
    sigma_pre: ArrayLike, sigma_ft: ArrayLike, learning_rate: ArrayLike, reg: ArrayLike
) -> Array:
    """Hypothesis of Lemma A.28: ``(λ+2)η(2max{σ^ft, σ^pre} + λ + λ√σ^pre/√σ^ft) < 1``."""
    big = 2 * jnp.maximum(sigma_ft, sigma_pre) + reg + reg * jnp.sqrt(sigma_pre / sigma_ft)
    return (reg + 2) * learning_rate * big < 1


def contraction_rate(sigma_pre: ArrayLike, sigma_ft: ArrayLike, learning_rate: ArrayLike) -> Array:
    """Lemma A.28: ``|f^{(k)}(x_0) − x*| ≤ ρ^k |x_0 − x*|`` with ``ρ = 1 − 2η min{σ^ft, σ^pre}``."""
    return 1 - 2 * learning_rate * jnp.minimum(sigma_ft, sigma_pre)


def assumption_a8_holds(gamma_max: ArrayLike, learning_rate: ArrayLike, reg: ArrayLike) -> Array:
    """Assumption A.8: ``4η(λ + 2)Γ < 1``, ``Γ = max{σ^pre_1, max_i σ^ft_i}`` (eq. 12)."""
    return 4 * learning_rate * (reg + 2) * gamma_max < 1


def post_finetuning_losses(
    modes: ArrayLike, sigma_pre: ArrayLike, sigma_ft: ArrayLike
) -> tuple[Array, Array]:
    r"""Pretraining and ID losses after fine-tuning checkpoints ``n = 0..d``.

    ``modes[i]`` is the value mode ``i`` reaches when it was learned (the fixed point
    :func:`fixed_point` for converged fine-tuning, ``x_K²`` from :func:`mode_trajectory` for
    ``K`` steps); unlearned modes stay 0 (ideal init), so

    .. math::
       L_{pre}(n) = \sum_{i\le n}(a_i - \sigma^{pre}_i)^2 + \sum_{i>n}(\sigma^{pre}_i)^2,\quad
       L_{ID}(n) = \sum_{i\le n}(a_i - \sigma^{ft}_i)^2 + \sum_{i>n}(\sigma^{ft}_i)^2.

    With ``a = fixed_point(...)`` these are the closed forms from the proofs of A.24–A.27;
    ``Δ_pre(n) = L_pre(n) − Σ_{i>n}(σ^pre_i)²`` (Thm 4.6) is the learned part.

    Returns:
      ``(pretrain_losses, id_losses)``, each ``(..., d + 1)`` (leading axes broadcast).

    Examples:
      >>> import jax.numpy as jnp
      >>> pre, ft = jnp.array([2.0, 1.0]), jnp.array([1.0, 4.0])
      >>> [x.tolist() for x in post_finetuning_losses(fixed_point(pre, ft, 0.0), pre, ft)]
      [[5.0, 2.0, 10.0], [17.0, 16.0, 0.0]]
    """
    modes, sigma_pre, sigma_ft = jnp.broadcast_arrays(
        jnp.asarray(modes), jnp.asarray(sigma_pre), jnp.asarray(sigma_ft)
    )

    def curve(target):
        zero = jnp.zeros(target.shape[:-1] + (1,), target.dtype)
        learned = jnp.concatenate([zero, jnp.cumsum((modes - target) ** 2, axis=-1)], axis=-1)
        tail = jnp.cumsum((target**2)[..., ::-1], axis=-1)[..., ::-1]
        return learned + jnp.concatenate([tail, zero], axis=-1)

    return curve(sigma_pre), curve(sigma_ft)


def finetuning_increments(sigma_pre: ArrayLike, sigma_ft: ArrayLike, reg: ArrayLike) -> Array:
    """``L_pre(θ^n(K)) − L_pre(θ^{n−1}(K)) = ((σ^ft_n − σ^pre_n)/(1+λ))² − (σ^pre_n)²`` (A.26).

    Positive iff ``|σ^ft_n − σ^pre_n| > (1 + λ)σ^pre_n``; at ``λ = 0`` iff ``σ^ft_n > 2σ^pre_n``
    (the sharp misalignment threshold).
    """
    return ((sigma_ft - sigma_pre) / (1 + reg)) ** 2 - sigma_pre**2
