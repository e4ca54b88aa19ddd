"""Task vectors of a fine-tuned attention model: cosine heatmap and multi-task performance (Fig. 3).

What is plotted (Sun & Raskutti 2026, Sec 7.2, Fig. 3, Cor 2; notes §3, §5). A small
attention block is pretrained on a synthetic source task
(:func:`ntsim.theory.early_stopping.pretrain_attention`) and fine-tuned separately, by
full-batch GD with step ``η_0/n`` (the real network, not its linearisation), on four target
tasks whose tokens lie on subspaces of ``ℝ^{d⁰}``: A and B share one subspace (different
teachers), C overlaps it in half of its directions, D lies on an orthogonal subspace.
Task vectors ``τ_t = θ_FT,t − θ_PT`` (eq. (22)).

* Left: ``cos(τ_s, τ_t)`` of the trained network.
* Middle: the cross-task NTK alignment ``‖Θ(X_s, X_t)‖_F/√(‖Θ(X_s, X_s)‖_F‖Θ(X_t, X_t)‖_F)``
  at ``θ_PT`` (Cor 2: the cosine is controlled by the cross-task kernel block), and, in
  each cell, the linearised-model prediction of the cosine from kernel blocks alone,
  ``c_sᵀG_{st}c_t/√(c_sᵀG_{ss}c_s · c_tᵀG_{tt}c_t)`` (:func:`task_vector_cosine`).
* Right: normalised multi-task performance of ``θ_PT + Σ_t τ_t`` on each task,
  ``(MSE_PT − MSE_MT)/(MSE_PT − MSE_FT)`` on test inputs (1: as good as the task's own
  fine-tuned model; 0: no better than ``f_PT``), mean ± std over seeds. The paper normalises
  accuracy the same way (Ilharco et al. convention; not stated).

Run: ``ntsim run early_stopping/task_vectors [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_int_fields
from ntsim.core import gradient_descent, mse_loss
from ntsim.theory import early_stopping as es

TASKS = ("A", "B (= A's subspace)", "C (half overlap)", "D (orthogonal)")


@dataclass(frozen=True)
class Config:
    """Model, task sizes and fine-tuning (ours; the paper uses GPT-Neo-1.3B)."""

    width: int = 64  # n
    seq_len: int = 4  # T
    input_dim: int = 16  # d⁰ (three disjoint 4-dim subspaces fit)
    subspace_dim: int = 4
    num_train: int = 32  # per task
    num_test: int = 100  # per task
    noise_std: float = 0.05
    num_source: int = 64
    pretrain_steps: int = 300
    finetune_steps: int = 300
    eta0: float = 1.0  # GD step η_0/n
    seeds: int = 3

    def __post_init__(self):
        check_int_fields(
            self,
            (
                "width",
                "seq_len",
                "input_dim",
                "subspace_dim",
                "num_train",
                "num_test",
                "num_source",
                "pretrain_steps",
                "finetune_steps",
                "seeds",
            ),
        )
        if 3 * self.subspace_dim > self.input_dim:
            raise ValueError(
                f"Config.subspace_dim must satisfy 3·subspace_dim <= input_dim = "
                f"{self.input_dim}, got {self.subspace_dim}."
            )
        if self.subspace_dim < 2:
            raise ValueError(f"Config.subspace_dim must be >= 2, got {self.subspace_dim}.")
        if not self.eta0 > 0:
            raise ValueError(f"Config.eta0 must be positive, got {self.eta0}.")
        if not self.noise_std >= 0:
            raise ValueError(f"Config.noise_std must be >= 0, got {self.noise_std}.")
        if self.seeds < 2:
            raise ValueError(f"Config.seeds must be >= 2 for a std band, got {self.seeds}.")


SCALES = {
    "quick": Config(
        width=16, num_train=16, num_test=32, pretrain_steps=50, finetune_steps=50, seeds=2
    ),
    "full": Config(),
}


def _bases(key, config: Config):
    """Subspace bases of tasks A–D, ``(4, r, d⁰)``, scaled as in :func:`subspace_basis`."""
    r, d = config.subspace_dim, config.input_dim
    q, _ = jnp.linalg.qr(jax.random.normal(key, (d, d)))
    scale = jnp.sqrt(d / r)
    half = r // 2
    cols = (
        jnp.arange(r),  # A
        jnp.arange(r),  # B: A's subspace
        jnp.arange(half, half + r),  # C: half of A's directions + new ones
        jnp.arange(2 * r, 3 * r),  # D: orthogonal to A, B and C
    )
    return jnp.stack([q[:, c].T * scale for c in cols])


def _seed(config: Config, key):
    k_pre, k_basis, k_x, k_t, k_w = jax.random.split(key, 5)
    pre = es.pretrain_attention(
        k_pre,
        width=config.width,
        seq_len=config.seq_len,
        input_dim=config.input_dim,
        num_source=config.num_source,
        steps=config.pretrain_steps,
        eta0=config.eta0,
    )
    predict = jax.vmap(pre.model.apply, in_axes=(None, 0))
    bases = _bases(k_basis, config)
    n_all = config.num_train + config.num_test
    x = jax.vmap(lambda k, b: es.subspace_inputs(k, n_all, config.seq_len, b))(
        jax.random.split(k_x, 4), bases
    )  # (4, n_all, T, d⁰)
    f_pt = jax.vmap(lambda xi: predict(pre.params, xi)[:, 0])(x)
    delta = jax.vmap(es.task_teacher)(jax.random.split(k_t, 4), x)
    y = f_pt + delta + config.noise_std * jax.random.normal(k_w, f_pt.shape)
    tr = slice(0, config.num_train)
    lr = config.eta0 / config.width

    def finetune(xi, yi):
        loss = mse_loss(pre.model.apply, xi[tr], yi[tr], loss_scale=0.5 / config.num_train)
        return gradient_descent(
            loss, pre.params, num_steps=config.finetune_steps, learning_rate=lr, throw=False
        ).params

    fine = jax.vmap(finetune)(x, y)
    flat_pt, unravel = jax.flatten_util.ravel_pytree(pre.params)
    taus = jax.vmap(lambda p: jax.flatten_util.ravel_pytree(p)[0] - flat_pt)(fine)  # (4, P)
    norms = jnp.linalg.norm(taus, axis=1)
    cosine = taus @ taus.T / jnp.outer(norms, norms)

    # kernel blocks at θ_PT on the train inputs: alignment and the linearised prediction
    x_train = x[:, tr].reshape(-1, *x.shape[2:])
    gram = es.width_normalised_ntk(pre.model, pre.params, x_train) * config.width  # JJᵀ
    m = config.num_train
    block = gram.reshape(4, m, 4, m).transpose(0, 2, 1, 3)  # (s, t, m, m)
    fro = jnp.linalg.norm(block, axis=(2, 3))
    alignment = fro / jnp.sqrt(jnp.outer(jnp.diag(fro), jnp.diag(fro)))
    coeffs = jax.vmap(
        lambda g, r0: es.task_vector_coefficients(g, r0, step_size=lr, steps=config.finetune_steps)
    )(jnp.stack([block[t, t] for t in range(4)]), f_pt[:, tr] - y[:, tr])  # (4, m)
    diag = jnp.stack([block[t, t] for t in range(4)])

    def pair(s_, t_):
        return es.task_vector_cosine(diag[s_], block[s_, t_], diag[t_], coeffs[s_], coeffs[t_])

    index = jnp.arange(4)
    predicted = jax.vmap(lambda s_: jax.vmap(lambda t_: pair(s_, t_))(index))(index)

    # multi-task model θ_PT + Σ τ_t on each task's test inputs
    multi = unravel(flat_pt + taus.sum(axis=0))
    te = slice(config.num_train, None)
    target = f_pt[:, te] + delta[:, te]

    def mse(params, t):
        return jnp.mean((predict(params, x[t][te])[:, 0] - target[t]) ** 2)

    mse_pt = jnp.mean(delta[:, te] ** 2, axis=1)
    mse_ft = jax.vmap(mse)(fine, index)
    mse_mt = jax.vmap(mse, in_axes=(None, 0))(multi, index)
    return {
        "cosine": cosine,
        "alignment": alignment,
        "predicted_cosine": predicted,
        "normalised": (mse_pt - mse_mt) / (mse_pt - mse_ft),
        "mse_pt": mse_pt,
        "mse_ft": mse_ft,
        "mse_mt": mse_mt,
    }


def run(config: Config, key) -> dict:
    """Per-seed cosines, alignments, predicted cosines and multi-task scores; their means."""
    keys = jax.random.split(key, config.seeds)
    out = {k: np.asarray(v) for k, v in jax.jit(jax.vmap(lambda k: _seed(config, k)))(keys).items()}
    results = {"tasks": list(TASKS), "seeds": config.seeds, "width": config.width}
    for name, values in out.items():
        results[f"{name}_mean"] = values.mean(axis=0).tolist()
        results[f"{name}_std"] = values.std(axis=0, ddof=1).tolist()
    off = ~np.eye(4, dtype=bool)
    results["cosine_vs_predicted_max_gap"] = float(
        np.max(np.abs(out["cosine"] - out["predicted_cosine"])[:, off])
    )
    return results


def plot(results: dict):
    """Cosine heatmap, alignment heatmap with predicted cosines, normalised performance bars."""
    import matplotlib.pyplot as plt

    tasks = results["tasks"]
    short = [t.split(" ")[0] for t in tasks]
    fig, axes = plt.subplots(1, 3, figsize=(15.5, 4.8))
    for ax, name, title, cells in (
        (axes[0], "cosine_mean", "cos(τ_s, τ_t), trained network", "cosine_mean"),
        (
            axes[1],
            "alignment_mean",
            "cross-NTK alignment at θ_PT\n(cells: linearised-model predicted cosine)",
            "predicted_cosine_mean",
        ),
    ):
        data = np.asarray(results[name])
        cosine = name == "cosine_mean"
        image = ax.imshow(
            data, vmin=-1 if cosine else 0, vmax=1, cmap="RdBu_r" if cosine else "Reds"
        )
        for s in range(4):
            for t in range(4):
                value = results[cells][s][t]
                ax.text(t, s, f"{value:.2f}", ha="center", va="center", fontsize=9)
        ax.set_xticks(range(4), short)
        ax.set_yticks(range(4), short)
        ax.set_title(title, fontsize=10)
        fig.colorbar(image, ax=ax, fraction=0.046)
    ax = axes[2]
    ax.bar(
        range(4),
        results["normalised_mean"],
        yerr=results["normalised_std"],
        capsize=4,
        color="tab:blue",
    )
    ax.axhline(1.0, color="black", linestyle=":", label="individually fine-tuned model")
    ax.set_xticks(range(4), tasks, fontsize=8, rotation=15)
    ax.set_ylabel("(MSE_PT − MSE_MT) / (MSE_PT − MSE_FT)")
    ax.set_title(
        f"θ_PT + Σ_t τ_t on each task (n = {results['width']}, mean ± std, "
        f"{results['seeds']} seeds)",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.experiment import main

    main(__file__)
