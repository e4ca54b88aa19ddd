r"""Loss and regulariser pieces that stabilise fine-tuning, on any ``apply(params, x)``.

These are the stabilising methods compared by Fu, So & Collier (2023, Sec 3 and 4.2), written
as pure, ``jit``/``vmap``-compatible functions on pytrees so that the toy MLPs of
:mod:`ntsim.core` and the Flax path (``ntsim.transformers``, via ``module.apply``) share them:

* :func:`max_margin_regularizer` — MMR, eq. (8): ``R = 1/(1 + ‖μ₊ − μ₋‖)`` on encoded
  features (add ``α·R`` to the loss, eq. (9));
* :func:`multi_head_loss` and :func:`multi_head_predict` — MHLoss, eq. (10): ``H`` heads
  stacked on a leading axis, each trained on its own margin loss, predicting with the mean;
* :func:`mixout` — MixOut (Lee et al. 2019): stochastic mixing of the weights with their
  pretrained values, unbiased in expectation;
* :func:`noise_stability_penalty` — LNSR (Hua et al. 2021): ``‖f(h + ε) − f(h)‖²`` for
  Gaussian ``ε`` injected into a hidden input ``h``;
* :func:`masked_reconstruction_loss` — the SURT re-training step (Fu et al. 2023, Sec 3.3)
  as masked-feature reconstruction, the small-scale substitute of masked-LM re-training.

Conventions: binary labels are ``±1`` floats; per-example functions act on ONE example and
are vmapped here over the leading axis of the batch, as elsewhere in :mod:`ntsim.core`.
Optional ``weights`` (``≥ 0``, one per example) turn every average into a weighted one,
which is how a leave-one-out set (weight 0 on the removed point) or a data fraction is
expressed without changing shapes. Value checks (labels in ``{−1, +1}``, both classes
present, ``p ∈ [0, 1)``) raise ``ValueError`` on concrete inputs; under ``jit``/``vmap``
they cannot, and a missing class then makes the MMR value NaN, which the training loops'
divergence checks report.

References:
  Fu, So, Collier (2023). A Stability Analysis of Fine-Tuning a Pre-Trained Model.
  arXiv:2301.09820.
  Lee, Cho, Kang (2020). Mixout: Effective Regularization to Finetune Large-scale
  Pretrained Language Models. ICLR 2020, arXiv:1909.11299.
  Hua, Zhang, Xu, Lu, Zheng (2021). Noise Stability Regularization for Improving BERT
  Fine-tuning. NAACL 2021, arXiv:2107.04835.
  Devlin, Chang, Lee, Toutanova (2019). BERT. NAACL 2019 (masked-LM objective).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import _is_concrete, check_ndim, check_nonnegative, check_positive

__all__ = [
    "augmented_linear_head",
    "logistic_loss",
    "masked_reconstruction_loss",
    "max_margin_regularizer",
    "mixout",
    "multi_head_loss",
    "multi_head_predict",
    "noise_stability_penalty",
]


def logistic_loss(margin: ArrayLike) -> Array:
    r"""Logistic margin loss ``ℓ(u) = log(1 + e^{−u})`` (Fu et al. 2023, eq. (4)).

    Non-negative, ``1/4``-smooth, decreasing to 0 with an exponential tail, as Soudry et
    al. (2018) need for the max-margin implicit bias. Computed as ``softplus(−u)``.

    Examples:
      >>> round(float(logistic_loss(0.0)), 6)
      0.693147
    """
    return jax.nn.softplus(-jnp.asarray(margin))


def augmented_linear_head(w: Array, feature: Array) -> Array:
    r"""Score ``wᵀx̃ = vᵀE(x) − b`` of the head ``w = [v; b]`` on ``x̃ = [E(x); −1]``.

    Fu et al. (2023), Sec 2.3: the augmented feature ``x̃ = [E(x)ᵀ, −1]ᵀ`` and the head
    ``w = [vᵀ, b]ᵀ``. Acts on one example: ``w`` has shape ``(k + 1,)`` and ``feature``
    (``E(x)``) shape ``(k,)``.

    Examples:
      >>> import jax.numpy as jnp
      >>> float(augmented_linear_head(jnp.array([2.0, 1.0]), jnp.array([3.0])))
      5.0
    """
    return jnp.dot(w[:-1], feature) - w[-1]


def _check_labels(where: str, labels: Array) -> None:
    if _is_concrete(labels):
        values = np.unique(np.asarray(labels))
        if not np.all(np.isin(values, (-1.0, 1.0))):
            raise ValueError(f"{where}: labels must be ±1, got values {values.tolist()}.")


def _weights(where: str, weights: ArrayLike | None, n: int, dtype) -> Array:
    if weights is None:
        return jnp.ones((n,), dtype)
    weights = jnp.asarray(weights, dtype)
    if weights.shape != (n,):
        raise ValueError(f"{where}: weights must have shape ({n},), got {weights.shape}.")
    check_nonnegative(where, "weights", weights)
    return weights


def max_margin_regularizer(
    features: ArrayLike,
    labels: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    missing_class: float | None = None,
) -> Array:
    r"""MMR, the max-margin regulariser (Fu et al. 2023, eq. (8)).

    .. math::
        \mathcal R(S) = \Big(1 + \Big\|\sum_i E(x_i)\, y_i \Big(\frac{1+y_i}{\sum_j (1+y_j)}
        + \frac{1-y_i}{\sum_j (1-y_j)}\Big)\Big\|\Big)^{-1} = \frac{1}{1 + \|\mu_+ - \mu_-\|}

    with :math:`E(x_i)` = ``features[i]``, :math:`y_i` = ``labels[i]`` and
    :math:`\mu_\pm` the class means. Minimising ``α·R`` (eq. (9)) pushes the class centres
    of the encoded features apart, a differentiable proxy for the margin ``γ_S`` in
    Thm 2.4. The sums are computed as printed (eq. (8)); with ``weights`` every sum over
    ``j`` and ``i`` carries ``w_j`` (weighted class means). The norm has a zero-safe
    gradient (equal class means give gradient 0, not NaN).

    Args:
      features: encoded features ``E(x_i)``, shape ``(n, k)``.
      labels: ``±1`` labels, shape ``(n,)``; both classes must occur (with positive weight).
      weights: optional non-negative example weights, shape ``(n,)``.
      missing_class: what a sample with one class only gives. ``None`` (default): an error
        (``ValueError`` on concrete inputs, NaN under ``jit``), since ``μ₊`` or ``μ₋`` is
        undefined. A number: that value, with zero gradient — ``0.0`` drops the term on a
        minibatch that happens to hold one class (as the MMR method does during
        fine-tuning; otherwise one such batch turns the whole run into NaN).

    Returns:
      The scalar ``R ∈ (0, 1]`` (or ``missing_class``).

    Raises:
      ValueError: (concrete inputs) labels not ``±1``, a class missing while
        ``missing_class`` is None, bad shapes.

    Examples:
      >>> import jax.numpy as jnp
      >>> e = jnp.array([[0.0, 0.0], [3.0, 4.0], [3.0, 4.0]])
      >>> round(float(max_margin_regularizer(e, jnp.array([-1.0, 1.0, 1.0]))), 6)  # 1/(1 + 5)
      0.166667
    """
    where = "max_margin_regularizer"
    features, labels = jnp.asarray(features), jnp.asarray(labels)
    check_ndim(where, "features", features, 2)
    check_ndim(where, "labels", labels, 1)
    if labels.shape[0] != features.shape[0]:
        raise ValueError(
            f"{where}: features and labels need the same number of rows, got "
            f"{features.shape[0]} and {labels.shape[0]}."
        )
    _check_labels(where, labels)
    labels = labels.astype(features.dtype)
    w = _weights(where, weights, labels.shape[0], features.dtype)
    positive = jnp.sum(w * (1 + labels))  # = 2·(weight of class +1)
    negative = jnp.sum(w * (1 - labels))
    both_classes = (positive > 0) & (negative > 0)
    if missing_class is None and _is_concrete(positive) and not bool(both_classes):
        raise ValueError(
            f"{where}: each class needs at least one sample with positive weight (eq. (8)); "
            f"got class weights +1: {float(positive) / 2:g}, −1: {float(negative) / 2:g}."
        )
    # safe denominators: the branch not taken stays finite, so its gradient is 0, not NaN
    positive = jnp.where(positive > 0, positive, 1.0)
    negative = jnp.where(negative > 0, negative, 1.0)
    coef = w * labels * ((1 + labels) / positive + (1 - labels) / negative)
    gap = coef @ features  # μ₊ − μ₋
    sq = jnp.sum(gap**2)
    norm = jnp.where(sq > 0, jnp.sqrt(jnp.where(sq > 0, sq, 1.0)), 0.0)
    fallback = jnp.nan if missing_class is None else missing_class
    return jnp.where(both_classes, 1.0 / (1.0 + norm), fallback)


def multi_head_predict(
    heads: Params,
    features: ArrayLike,
    *,
    head_apply: Callable[[Params, Array], Array] = augmented_linear_head,
) -> Array:
    r"""Averaged-head prediction ``(1/H) Σ_h f_h(E(x))`` of MHLoss (Fu et al. 2023, Sec 3.2).

    For linear heads this is ``w̄ᵀx̃`` with ``w̄ = (1/H) Σ_h w_h``: the MHLoss model is still
    one linear head. ``heads`` is a pytree whose leaves have a leading head axis ``H``.

    Args:
      heads: stacked head parameters (leading axis ``H``).
      features: ``E(x_i)``, shape ``(n, k)``.
      head_apply: ``head_apply(head, feature) -> scalar`` on one head and one example.

    Returns:
      Scores, shape ``(n,)``.
    """
    features = jnp.asarray(features)
    per_head = jax.vmap(jax.vmap(head_apply, in_axes=(None, 0)), in_axes=(0, None))
    return jnp.mean(per_head(heads, features), axis=0)


def multi_head_loss(
    heads: Params,
    features: ArrayLike,
    labels: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    head_apply: Callable[[Params, Array], Array] = augmented_linear_head,
    margin_loss: Callable[[Array], Array] = logistic_loss,
) -> Array:
    r"""MHLoss, the multi-head loss (Fu et al. 2023, eq. (10)).

    .. math::
        \mathcal L_{MH} = \frac{1}{nH}\sum_{h=1}^H\sum_{i=1}^n \ell(y_i\, f_h(E(x_i)))

    with :math:`f_h` = ``head_apply(heads[h], ·)`` (default: the linear head ``w_hᵀx̃``),
    :math:`\ell` = ``margin_loss``. Each head sees only its own loss, so
    ``∂L_MH/∂w_h = (1/H)·∇ L_single(w_h)``; a shared encoder receives the head-averaged
    gradient. Heads must be initialised independently at random (with identical heads the
    method is plain fine-tuning). With ``weights`` the ``1/n`` becomes ``1/Σ_i w_i``.

    Args:
      heads: pytree of head parameters with leading axis ``H`` (e.g. ``(H, k + 1)``).
      features: ``E(x_i)``, shape ``(n, k)``.
      labels: ``±1`` labels, shape ``(n,)``.
      weights: optional non-negative example weights, shape ``(n,)``.
      head_apply: ``head_apply(head, feature) -> scalar`` on one head and one example.
      margin_loss: ``ℓ(u)`` applied to the margins ``y_i f_h(E(x_i))``.

    Returns:
      The scalar loss.

    Examples:
      >>> import jax.numpy as jnp
      >>> heads = jnp.array([[1.0, 0.0], [-1.0, 0.0]])  # two heads on a 1-d feature
      >>> loss = multi_head_loss(heads, jnp.array([[2.0]]), jnp.array([1.0]))
      >>> round(float(loss), 6) == round(float((logistic_loss(2.0) + logistic_loss(-2.0)) / 2), 6)
      True
    """
    where = "multi_head_loss"
    features, labels = jnp.asarray(features), jnp.asarray(labels)
    check_ndim(where, "features", features, 2)
    check_ndim(where, "labels", labels, 1)
    _check_labels(where, labels)
    per_head = jax.vmap(jax.vmap(head_apply, in_axes=(None, 0)), in_axes=(0, None))
    scores = per_head(heads, features)  # (H, n)
    losses = jnp.mean(margin_loss(scores * labels.astype(scores.dtype)), axis=0)  # (n,)
    w = _weights(where, weights, labels.shape[0], losses.dtype)
    return jnp.sum(w * losses) / jnp.sum(w)


def mixout(key: PRNGKey, params: Params, pretrained_params: Params, p: ArrayLike) -> Params:
    r"""MixOut (Lee et al. 2019, eq. (4)); a baseline in Fu et al. (2023), Sec 4.2.

    .. math::  \Phi(w) = \frac{M\odot w + (1-M)\odot u - p\,u}{1-p},\qquad
               M_{ij}\sim \mathrm{Bernoulli}(1-p)

    with :math:`w` = ``params``, :math:`u` = ``pretrained_params`` and :math:`p` = ``p``
    the mix probability (each coordinate is replaced by its pretrained value with
    probability ``p``). The correction makes it unbiased, ``E[Φ(w)] = w``, and ``p = 0`` is
    the identity. Use ``apply(mixout(key_t, θ, θ_0, p), x)`` in the training loss with a
    fresh key per step; gradients reach ``w`` through ``M/(1 − p)``. Evaluate with ``w``
    itself (the expectation), as Lee et al. do. Leaves are masked independently.

    Args:
      key: PRNG key for the masks.
      params: the current weights ``w`` (any pytree).
      pretrained_params: the pretrained weights ``u``, same structure.
      p: mix probability in ``[0, 1)``.

    Returns:
      The mixed parameters, same structure as ``params``.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> w, u = jnp.arange(3.0), jnp.ones(3)
      >>> bool(jnp.all(mixout(jax.random.key(0), w, u, 0.0) == w))
      True
    """
    where = "mixout"
    if _is_concrete(p) and not 0 <= float(p) < 1:
        raise ValueError(f"{where}: p must lie in [0, 1), got {p=}.")
    leaves, treedef = jax.tree.flatten(params)
    pre_leaves, pre_def = jax.tree.flatten(pretrained_params)
    if pre_def != treedef:
        raise ValueError(
            f"{where}: params and pretrained_params need the same structure, got {treedef} "
            f"and {pre_def}."
        )
    keys = jax.random.split(key, len(leaves))
    mixed = []
    for k, w, u in zip(keys, leaves, pre_leaves, strict=True):
        keep = jax.random.bernoulli(k, 1.0 - p, jnp.shape(w)).astype(jnp.result_type(w))
        mixed.append((keep * w + (1 - keep) * u - p * u) / (1 - p))
    return jax.tree.unflatten(treedef, mixed)


def noise_stability_penalty(
    key: PRNGKey,
    apply: Callable[[Params, Array], Array],
    params: Params,
    hidden: ArrayLike,
    sigma: ArrayLike,
    *,
    weights: ArrayLike | None = None,
) -> Array:
    r"""LNSR, the layer-wise noise stability penalty (Hua et al. 2021, eq. (3)–(5)).

    .. math::  \mathcal R = \frac{1}{n}\sum_i \|f(h_i + \varepsilon_i) - f(h_i)\|^2,
               \qquad \varepsilon_i \sim \mathcal N(0, \sigma^2 I)

    with :math:`f` = ``apply(params, ·)`` and :math:`h_i` = ``hidden[i]``. Fu et al. (2023,
    Sec 2.2 and Cor 2.5) read it as lowering the Lipschitz constant ``L`` of the network.
    For small ``σ``, ``E[R] ≈ σ² · mean_i ‖J_f(h_i)‖_F²`` (exact for linear ``f``).

    **Marking the hidden input.** Split the network yourself: ``apply`` must be the part
    *above* the injection point, and ``hidden`` its input. E.g. with an encoder ``enc``
    and head ``head``: ``apply = lambda θ, h: head(θ["head"], upper(θ, h))`` and
    ``hidden = vmap(lower)(x)``; for noise on the raw (embedded) inputs, as Hua et al. do
    on the embedding output, pass the whole network and ``hidden = x``. Gradients flow
    through both the clean and the noisy branch. Add ``λ·R`` to the task loss with a fresh
    key per step.

    Args:
      key: PRNG key for the noise.
      apply: ``apply(params, h) -> y`` on ONE hidden input.
      params: parameters of ``apply``.
      hidden: hidden inputs, leading axis ``n``.
      sigma: noise standard deviation ``σ > 0``.
      weights: optional non-negative example weights (``1/n`` becomes ``1/Σ w``).

    Returns:
      The scalar penalty.

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> f = lambda a, h: a * h  # ‖J‖_F² = 4·d for a = 2
      >>> r = noise_stability_penalty(jax.random.key(0), f, 2.0, jnp.zeros((4000, 3)), 0.1)
      >>> abs(float(r) - 4 * 3 * 0.01) < 0.005
      True
    """
    where = "noise_stability_penalty"
    check_positive(where, "sigma", sigma)
    hidden = jnp.asarray(hidden)
    noise = sigma * jax.random.normal(key, hidden.shape, hidden.dtype)
    batch_apply = jax.vmap(apply, in_axes=(None, 0))
    diff = batch_apply(params, hidden + noise) - batch_apply(params, hidden)
    sq = jnp.sum(jnp.reshape(diff, (hidden.shape[0], -1)) ** 2, axis=1)
    w = _weights(where, weights, hidden.shape[0], sq.dtype)
    return jnp.sum(w * sq) / jnp.sum(w)


def masked_reconstruction_loss(
    key: PRNGKey,
    apply: Callable[[Params, Array], Array],
    params: Params,
    x: ArrayLike,
    mask_rate: float,
    *,
    mask_value: float = 0.0,
    weights: ArrayLike | None = None,
) -> Array:
    r"""SURT re-training objective as masked-feature reconstruction (Fu et al. 2023, Sec 3.3).

    SURT re-trains the pretrained model on the task's own *unlabelled* training inputs with
    the masked-LM objective (Devlin et al. 2019) before fine-tuning, to move ``w_0``
    towards ``w_*`` (Thm 2.2). For vector inputs the analogue masks each coordinate with
    probability ``mask_rate`` (replaced by ``mask_value``, the ``[MASK]`` token) and
    scores the reconstruction only on the masked coordinates, as MLM scores only masked
    tokens:

    .. math::  \mathcal L = \frac{\sum_{i,j} m_{ij} (g(\tilde x_i)_j - x_{ij})^2}
               {\sum_{i,j} m_{ij}},\qquad \tilde x_i = (1-m_i)\odot x_i + m_i\,c

    with :math:`g` = ``apply(params, ·)`` (encoder followed by a reconstruction decoder,
    one example in, ``(d,)`` out), :math:`m_{ij}\sim` Bernoulli(``mask_rate``) and
    :math:`c` = ``mask_value``. With ``weights`` each ``m_{ij}`` is multiplied by ``w_i``
    (weight 0 drops an input). Returns 0 when no coordinate is masked.

    Args:
      key: PRNG key for the masks.
      apply: ``apply(params, x_masked) -> reconstruction`` of shape ``(d,)``.
      params: parameters of ``apply``.
      x: unlabelled inputs, shape ``(n, d)``.
      mask_rate: masking probability in ``(0, 1]`` (BERT uses 0.15).
      mask_value: the value a masked coordinate is replaced by.
      weights: optional non-negative example weights, shape ``(n,)``.

    Returns:
      The scalar loss.
    """
    where = "masked_reconstruction_loss"
    x = jnp.asarray(x)
    check_ndim(where, "x", x, 2)
    if _is_concrete(mask_rate) and not 0 < float(mask_rate) <= 1:
        raise ValueError(f"{where}: mask_rate must lie in (0, 1], got {mask_rate=}.")
    mask = jax.random.bernoulli(key, mask_rate, x.shape).astype(x.dtype)
    masked = (1 - mask) * x + mask * mask_value
    recon = jax.vmap(apply, in_axes=(None, 0))(params, masked)
    if recon.shape != x.shape:
        raise ValueError(
            f"{where}: apply must reconstruct each input, got output shape {recon.shape[1:]} "
            f"for inputs of shape {x.shape[1:]}."
        )
    counted = mask * _weights(where, weights, x.shape[0], x.dtype)[:, None]
    total = jnp.sum(counted)
    safe_total = jnp.where(total > 0, total, 1.0)
    return jnp.sum(counted * (recon - x) ** 2) / safe_total
