r"""Small-scale analogue of Fu et al. (2023) Sec 4.2: pretrain an MLP encoder, fine-tune it.

The paper fine-tunes RoBERTa on GLUE/SuperGLUE with 10 seeds per method (Tables 2–5,
Figs 1–4, 10); that needs a GPU and real checkpoints. This module is a CPU substitute of our
own (a small pretrained encoder on a related synthetic task), built only from :mod:`ntsim.core`:

* **Tasks** (:func:`transfer_task_data`). A latent ``z ∈ R^r`` is observed through a fixed
  random map, ``x = A z + noise_x·ξ``. The *source* task has ``K`` binary labels
  ``y_k = sign(a_kᵀz)``; the *target* task is related but not contained in it:
  ``y = sign(bᵀz + curvature·(z_1² − 1))`` with ``b`` at cosine ``alignment`` to ``a_1``,
  the target inputs have a shifted latent mean ``shift·e_1`` (a domain shift that SURT can
  adapt to), and a fraction ``label_noise`` of the target training labels is flipped (test
  labels are clean). Only ``n_train`` target examples are labelled, the small-data regime
  where fine-tuning is unstable.
* **Model.** Encoder ``E(x) = tanh(MLP(x)) ∈ R^k`` (``ntsim.core.mlp``; tanh as RoBERTa's
  pooler), linear heads ``w = [v; b]`` on ``x̃ = [E(x); −1]`` (Sec 2.3), and a linear
  reconstruction decoder used by pretraining and SURT.
* **Pretraining** (:func:`pretrain`): source logistic losses + masked reconstruction on the
  source inputs (the analogue of MLM pretraining), full-batch Adam.
* **Fine-tuning** (:func:`finetune`): minibatch Adam over the encoder and ``H`` new random
  heads; every method of Table 2 is a setting of :class:`MethodHyper` plus ``heads`` and
  an optional SURT re-training (:func:`surt_retrain`) of the starting encoder:
  FineTune (``H = 1``), MixOut (``mixout_p > 0``), LNSR (``lnsr_weight > 0``), MHLoss
  (``H > 1``), MMR (``mmr_weight > 0``, R(S) of eq. (8) on the whole weighted training set)
  and SURT. Examples carry weights: ``0`` removes a point (leave-one-out set ``S^i``) or
  a data fraction, so ``S`` and ``S^i`` share shapes, batches and random draws and differ
  only by point ``i`` (the paper's ``1/n`` convention of App. A.1, per minibatch).

The per-seed randomness is the head initialisation, the minibatch order and the method's
own noise (MixOut masks, LNSR noise, SURT masks), as for seeds in the paper; the data are
fixed. Hyperparameters the paper does not give (``p``, ``σ``, ``α``, mask rate, steps) are
:class:`MethodHyper` / config fields with the defaults of the experiments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ntsim._types import Array, ArrayLike, Params, PRNGKey
from ntsim._validation import _is_concrete, check_int_fields, check_key, check_setting_type
from ntsim.core import (
    augmented_linear_head,
    logistic_loss,
    masked_reconstruction_loss,
    max_margin_regularizer,
    mixout,
    mlp,
    multi_head_loss,
    multi_head_predict,
    noise_stability_penalty,
)

__all__ = [
    "FinetuneResult",
    "LooResult",
    "MethodHyper",
    "Pretrained",
    "TransferData",
    "TransferSetting",
    "finetune",
    "finetune_loo",
    "method_hyper",
    "pretrain",
    "surt_retrain",
    "transfer_task_data",
]


@dataclass(frozen=True)
class TransferSetting:
    """Sizes of the synthetic source/target pair and the encoder (module doc).

    Attributes:
      d: input dimension.
      latent: latent dimension ``r``.
      source_tasks: number ``K`` of binary source labels.
      n_source: source examples (pretraining).
      n_train: labelled target training examples.
      n_test: target test examples.
      alignment: cosine between the target direction ``b`` and the source direction ``a_1``.
      curvature: weight of the ``z_1² − 1`` term in the target label (not in any source task).
      shift: latent mean shift of the target inputs along ``e_1``.
      label_noise: fraction of flipped target training labels.
      noise_x: input noise level.
      hidden: encoder hidden widths.
      features: encoder output dimension ``k``.
    """

    d: int = 20
    latent: int = 4
    source_tasks: int = 8
    n_source: int = 2000
    n_train: int = 64
    n_test: int = 2000
    alignment: float = 0.6
    curvature: float = 0.5
    shift: float = 0.75
    label_noise: float = 0.1
    noise_x: float = 0.3
    hidden: tuple[int, ...] = (32,)
    features: int = 8

    def __post_init__(self):
        check_int_fields(
            self, ("d", "latent", "source_tasks", "n_source", "n_train", "n_test", "features")
        )
        if not -1 <= self.alignment <= 1:
            raise ValueError(
                f"TransferSetting.alignment must lie in [-1, 1], got {self.alignment}."
            )
        if not 0 <= self.label_noise < 0.5:
            raise ValueError(
                f"TransferSetting.label_noise must lie in [0, 0.5), got {self.label_noise}."
            )
        if self.latent < 2:
            raise ValueError(f"TransferSetting.latent must be >= 2, got {self.latent}.")

    def encoder(self):
        """The encoder MLP (standard parameterization, He-scaled tanh network)."""
        return mlp(self.hidden, self.features, activation="tanh", parameterization="standard")


class TransferData(NamedTuple):
    """Source and target arrays (labels are ``±1`` floats)."""

    x_source: Array  # (n_source, d)
    y_source: Array  # (n_source, K)
    x_train: Array  # (n_train, d)
    y_train: Array  # (n_train,), with label noise
    x_test: Array  # (n_test, d)
    y_test: Array  # (n_test,), clean


def _sign(v: Array) -> Array:
    return jnp.where(v >= 0, 1.0, -1.0).astype(v.dtype)


def transfer_task_data(key: PRNGKey, setting: TransferSetting) -> TransferData:
    """Draw one source/target task pair (module doc). Pure; vmappable over ``key``."""
    check_setting_type("transfer_task_data", setting, TransferSetting)
    check_key("transfer_task_data", key)
    s = setting
    k_a, k_dirs, k_b, k_zs, k_xs, k_zt, k_xt, k_flip = jax.random.split(key, 8)
    mixing = jax.random.normal(k_a, (s.d, s.latent)) / math.sqrt(s.latent)
    dirs = jax.random.normal(k_dirs, (s.source_tasks, s.latent))
    dirs = dirs / jnp.linalg.norm(dirs, axis=1, keepdims=True)
    other = jax.random.normal(k_b, (s.latent,))
    other = other - (other @ dirs[0]) * dirs[0]
    other = other / jnp.linalg.norm(other)
    b = s.alignment * dirs[0] + math.sqrt(1 - s.alignment**2) * other

    def observe(k_z, k_x, n, mean):
        z = jax.random.normal(k_z, (n, s.latent)) + mean
        return z, z @ mixing.T + s.noise_x * jax.random.normal(k_x, (n, s.d))

    z_s, x_s = observe(k_zs, k_xs, s.n_source, jnp.zeros(s.latent))
    n_target = s.n_train + s.n_test
    mean_t = jnp.zeros(s.latent).at[0].set(s.shift)
    z_t, x_t = observe(k_zt, k_xt, n_target, mean_t)
    y_t = _sign(z_t @ b + s.curvature * (z_t[:, 0] ** 2 - 1 - s.shift**2))
    flip = jax.random.bernoulli(k_flip, s.label_noise, (s.n_train,))
    y_train = jnp.where(flip, -y_t[: s.n_train], y_t[: s.n_train])
    return TransferData(
        x_s, _sign(z_s @ dirs.T), x_t[: s.n_train], y_train, x_t[s.n_train :], y_t[s.n_train :]
    )


class Pretrained(NamedTuple):
    """Encoder and reconstruction decoder (``recon = W E(x) + c``) parameters."""

    encoder: Params
    decoder: dict[str, Array]


def _features(setting: TransferSetting, encoder: Params, x: Array) -> Array:
    return jnp.tanh(jax.vmap(setting.encoder().apply, in_axes=(None, 0))(encoder, x))


def _reconstruct(setting: TransferSetting, params: Pretrained, x_masked: Array) -> Array:
    feature = jnp.tanh(setting.encoder().apply(params.encoder, x_masked))
    return params.decoder["w"] @ feature + params.decoder["b"]


def _adam_scan(loss_fn, params, key, steps: int, learning_rate):
    """``steps`` of Adam on ``loss_fn(params, key_t)`` with a fresh key per step."""
    opt = optax.adam(learning_rate)

    def step(carry, k):
        p, state = carry
        grads = jax.grad(loss_fn)(p, k)
        updates, state = opt.update(grads, state, p)
        return (optax.apply_updates(p, updates), state), None

    (params, _), _ = jax.lax.scan(step, (params, opt.init(params)), jax.random.split(key, steps))
    return params


def pretrain(
    key: PRNGKey,
    data: TransferData,
    setting: TransferSetting,
    *,
    steps: int,
    learning_rate: float = 1e-2,
    mask_rate: float = 0.15,
) -> Pretrained:
    """Pretrain encoder + decoder on the source task: ``K`` logistic losses + masked reconstruction.

    The reconstruction term is the analogue of RoBERTa's MLM pretraining, so SURT later
    *continues* a pretrained objective on the target inputs, as in Fu et al. (2023, Sec 3.3).
    """
    check_setting_type("pretrain", setting, TransferSetting)
    check_key("pretrain", key)
    s = setting
    k_enc, k_head, k_dec, k_train = jax.random.split(key, 4)
    params = {
        "model": Pretrained(
            s.encoder().init(k_enc, data.x_source[0]),
            {
                "w": jax.random.normal(k_dec, (s.d, s.features)) / math.sqrt(s.features),
                "b": jnp.zeros(s.d),
            },
        ),  # fmt: skip
        "heads": jax.random.normal(k_head, (s.source_tasks, s.features + 1))
        / math.sqrt(s.features),
    }

    def loss_fn(p, k):
        feats = _features(s, p["model"].encoder, data.x_source)
        scores = jax.vmap(jax.vmap(augmented_linear_head, (None, 0)), (0, None))(p["heads"], feats)
        source = jnp.mean(logistic_loss(scores * data.y_source.T))
        recon = masked_reconstruction_loss(
            k, lambda q, v: _reconstruct(s, q, v), p["model"], data.x_source, mask_rate
        )
        return source + recon

    return _adam_scan(loss_fn, params, k_train, steps, learning_rate)["model"]


def surt_retrain(
    key: PRNGKey,
    pretrained: Pretrained,
    x: ArrayLike,
    setting: TransferSetting,
    *,
    steps: int,
    learning_rate: float,
    mask_rate: float = 0.15,
    weights: ArrayLike | None = None,
) -> Pretrained:
    """SURT step 1 (Fu et al. 2023, Sec 3.3): re-train on the task's unlabelled inputs.

    Continues the masked-reconstruction objective (:func:`ntsim.core` SURT piece) on the
    target training inputs ``x`` for ``steps`` full-batch Adam steps. ``weights`` removes
    points (a leave-one-out set drops ``x_i`` here too).
    """
    check_setting_type("surt_retrain", setting, TransferSetting)
    check_key("surt_retrain", key)

    def loss_fn(p, k):
        return masked_reconstruction_loss(
            k, lambda q, v: _reconstruct(setting, q, v), p, x, mask_rate, weights=weights
        )

    return _adam_scan(loss_fn, pretrained, key, steps, learning_rate)


class MethodHyper(NamedTuple):
    """Method hyperparameters as arrays (so methods can be vmapped together).

    FineTune is one head and all regularisers off; MixOut sets ``mixout_p`` (Lee et al.
    2019), LNSR sets ``lnsr_weight`` and ``lnsr_sigma`` (noise on the inputs, Hua et al.
    2021), MMR sets ``mmr_weight`` (``α`` of eq. (9)), MHLoss sets ``heads`` (``H`` of
    eq. (10); must divide :func:`finetune`'s ``head_slots``). SURT is a different starting
    encoder (:func:`surt_retrain`).
    """

    heads: ArrayLike = 1
    mixout_p: ArrayLike = 0.0
    lnsr_weight: ArrayLike = 0.0
    lnsr_sigma: ArrayLike = 0.1
    mmr_weight: ArrayLike = 0.0


def method_hyper(
    name: str,
    *,
    heads: int,
    mixout_p: float,
    lnsr_weight: float,
    lnsr_sigma: float,
    mmr_weight: float,
) -> MethodHyper:
    """The :class:`MethodHyper` of one Table 2 method (SURT uses FineTune's)."""
    if name == "MHLoss":
        return MethodHyper(heads=heads, lnsr_sigma=lnsr_sigma)
    if name == "MixOut":
        return MethodHyper(mixout_p=mixout_p, lnsr_sigma=lnsr_sigma)
    if name == "LNSR":
        return MethodHyper(lnsr_weight=lnsr_weight, lnsr_sigma=lnsr_sigma)
    if name == "MMR":
        return MethodHyper(mmr_weight=mmr_weight, lnsr_sigma=lnsr_sigma)
    if name in ("FineTune", "SURT"):
        return MethodHyper(lnsr_sigma=lnsr_sigma)
    raise ValueError(f"method_hyper: unknown method {name!r}.")


class FinetuneResult(NamedTuple):
    """Output of :func:`finetune`.

    Attributes:
      test_accuracy: test accuracy (in %) after each epoch, shape ``(epochs,)``.
      encoder: fine-tuned encoder parameters.
      head: the effective head ``w̄ = mean_h w_h``, shape ``(k + 1,)``.
    """

    test_accuracy: Array
    encoder: Params
    head: Array


def finetune(
    key: PRNGKey,
    encoder0: Params,
    data: TransferData,
    weights: ArrayLike,
    hyper: MethodHyper,
    setting: TransferSetting,
    *,
    head_slots: int,
    epochs: int,
    batch_size: int,
    learning_rate: ArrayLike,
    tune_encoder: bool = True,
) -> FinetuneResult:
    """Fine-tune ``encoder0`` and ``hyper.heads`` new random heads on the target training set.

    Minibatch Adam over ``epochs`` passes of a fresh permutation of all ``n_train`` slots
    (``batch_size`` must divide ``n_train``); each minibatch loss is the weighted MHLoss
    (eq. (10); one head is plain fine-tuning) on MixOut-mixed encoder weights, plus
    ``lnsr_weight`` × the LNSR penalty on the inputs, plus ``mmr_weight`` × R(S) (eq. (8)) on
    the whole weighted training set. A minibatch whose weights are all 0 makes no update.
    Jit/vmap-compatible in ``key``, ``encoder0``, ``weights``, ``hyper``, ``learning_rate``.

    **Head slots.** So that ``H`` can be vmapped (one compilation for every method and the
    whole H sweep), the model holds a static number ``head_slots`` of heads and ``H`` =
    ``hyper.heads`` (traced; must divide ``head_slots``) independent initialisations: slot
    ``j`` starts from initialisation ``j mod H``. Identical slots get identical gradients
    and stay identical, so the loss (eq. (10)) and the averaged prediction equal those of
    the ``H``-head model exactly. Each slot's gradient is ``1/head_slots`` instead of
    ``1/H`` of its single-head gradient; Adam is invariant to that constant rescaling
    (up to its ``ε = 1e-8``), so the trajectory is the ``H``-head one.

    ``tune_encoder=False`` (static) freezes the encoder: only the heads are trained, the
    setting of Fu et al.'s Table 3 (head tuning) and of Sec 2.3's theory. Its gradient is
    zeroed, so Adam leaves it exactly at ``encoder0`` (MixOut then mixes it with itself).
    """
    check_setting_type("finetune", setting, TransferSetting)
    check_key("finetune", key)
    s = setting
    n = s.n_train
    if n % batch_size:
        raise ValueError(f"finetune: batch_size must divide n_train = {n}, got {batch_size}.")
    if _is_concrete(hyper.heads) and np.any(head_slots % np.asarray(hyper.heads) != 0):
        raise ValueError(
            f"finetune: hyper.heads must divide head_slots = {head_slots}, got {hyper.heads}."
        )
    weights = jnp.asarray(weights, jnp.result_type(float))
    k_head, k_train = jax.random.split(key)
    init_index = jnp.arange(head_slots) % jnp.asarray(hyper.heads)  # slot j ← init j mod H
    head0 = jax.vmap(lambda i: jax.random.normal(jax.random.fold_in(k_head, i), (s.features + 1,)))(
        init_index
    ) / math.sqrt(s.features)  # init i does not depend on head_slots
    params0 = {"encoder": encoder0, "heads": head0}
    opt = optax.adam(learning_rate)

    def batch_loss(p, k, idx):
        k_mix, k_noise = jax.random.split(k)
        encoder = mixout(k_mix, p["encoder"], encoder0, hyper.mixout_p)
        xb, yb, wb = data.x_train[idx], data.y_train[idx], weights[idx]
        active = jnp.sum(wb) > 0
        wb = jnp.where(active, wb, jnp.ones_like(wb))  # all-zero batch: no update (below)
        task = multi_head_loss(p["heads"], _features(s, encoder, xb), yb, weights=wb)

        def network(q, v):
            return multi_head_predict(q["heads"], _features(s, q["encoder"], v[None]))[0]

        lnsr = noise_stability_penalty(
            k_noise, network, {**p, "encoder": encoder}, xb, hyper.lnsr_sigma, weights=wb
        )
        # R(S) needs both classes with positive weight; otherwise the term is dropped (a
        # safe stand-in keeps NaN out of the gradient, as with the empty minibatch above)
        both = (jnp.sum(weights * (data.y_train > 0)) > 0) & (
            jnp.sum(weights * (data.y_train < 0)) > 0
        )
        mmr_weights = jnp.where(both, weights, jnp.ones_like(weights))
        mmr = max_margin_regularizer(
            _features(s, encoder, data.x_train), data.y_train, weights=mmr_weights
        )
        total = task + hyper.lnsr_weight * lnsr + jnp.where(both, hyper.mmr_weight, 0.0) * mmr
        return jnp.where(active, total, 0.0)

    def accuracy(p):
        pred = multi_head_predict(p["heads"], _features(s, p["encoder"], data.x_test))
        return 100.0 * jnp.mean(_sign(pred) == data.y_test)

    def batch_step(carry, xs):
        p, state = carry
        k, idx = xs
        grads = jax.grad(batch_loss)(p, k, idx)
        if not tune_encoder:
            grads = {**grads, "encoder": jax.tree.map(jnp.zeros_like, grads["encoder"])}
        updates, state = opt.update(grads, state, p)
        return (optax.apply_updates(p, updates), state), None

    def epoch(carry, k):
        k_perm, k_steps = jax.random.split(k)
        order = jax.random.permutation(k_perm, n).reshape(-1, batch_size)
        carry, _ = jax.lax.scan(batch_step, carry, (jax.random.split(k_steps, len(order)), order))
        return carry, accuracy(carry[0])

    (params, _), acc = jax.lax.scan(
        epoch, (params0, opt.init(params0)), jax.random.split(k_train, epochs)
    )
    return FinetuneResult(acc, params["encoder"], jnp.mean(params["heads"], axis=0))


class LooResult(NamedTuple):
    """Fine-tuning on ``S`` and on ``S^i`` with the same seed (:func:`finetune_loo`).

    Attributes:
      test_accuracy: per-epoch test accuracy (%) of the run on ``S``, shape ``(epochs,)``.
      loo_distance: Def. 2.1, ``‖A(S^i) − A(S)‖`` over the encoder and the effective head.
      loo_head_normalized: Def. 2.3 on the effective head,
        ``‖w̄(S^i)/‖w̄(S^i)‖ − w̄(S)/‖w̄(S)‖‖``.
    """

    test_accuracy: Array
    loo_distance: Array
    loo_head_normalized: Array


def _flat(result: FinetuneResult) -> Array:
    leaves = jax.tree.leaves((result.encoder, result.head))
    return jnp.concatenate([jnp.ravel(leaf) for leaf in leaves])


def finetune_loo(
    key: PRNGKey,
    encoder0: Params,
    data: TransferData,
    weights: ArrayLike,
    removed: ArrayLike,
    hyper: MethodHyper,
    setting: TransferSetting,
    *,
    head_slots: int,
    epochs: int,
    batch_size: int,
    learning_rate: ArrayLike,
    tune_encoder: bool = True,
) -> LooResult:
    """Leave-one-out model stability of one seed: :func:`finetune` on ``S`` and ``S^i``.

    ``S^i`` is ``S`` with weight 0 on ``removed`` (Fu et al. 2023, Def. 2.1 / 2.3, removal
    not replacement); both runs share the key, hence the head initialisation, the minibatch
    order and the method noise. The keywords are :func:`finetune`'s.
    """
    check_setting_type("finetune_loo", setting, TransferSetting)
    check_key("finetune_loo", key)
    weights = jnp.asarray(weights, jnp.result_type(float))
    pair = jnp.stack([weights, weights.at[removed].set(0.0)])
    kw = dict(
        head_slots=head_slots, epochs=epochs, batch_size=batch_size, learning_rate=learning_rate,
        tune_encoder=tune_encoder,
    )  # fmt: skip
    runs = jax.vmap(lambda w: finetune(key, encoder0, data, w, hyper, setting, **kw))(pair)
    full = jax.tree.map(lambda a: a[0], runs)
    loo = jax.tree.map(lambda a: a[1], runs)
    unit = jax.vmap(lambda h: h / jnp.linalg.norm(h))(runs.head)
    return LooResult(
        full.test_accuracy,
        jnp.linalg.norm(_flat(loo) - _flat(full)),
        jnp.linalg.norm(unit[1] - unit[0]),
    )
