"""Learning curves with hold-out early stopping for tasks of different NTK decay (Fig. 2 analogue).

What is plotted (Sun & Raskutti 2026, Sec 7.1, Fig. 2; notes §5): for synthetic target tasks
of different difficulty (token subspace dimension ``r``; smaller ``r`` gives a larger NTK
decay exponent ``β``, see ``ntk_eigen_decay``), the test error of fine-tuning from a
pretrained attention block against the number of samples ``N``, with hold-out early
stopping as the paper runs it (``holdout_fraction`` of the ``N`` samples held out,
validation loss every ``eval_every`` steps, ``patience`` evaluations without improvement,
best checkpoint kept). Fine-tuning is the linearised network's GD (Lemma 1; kernel GD on
the width-normalised empirical NTK at ``θ_PT`` from ``f_PT``,
:func:`ntsim.theory.early_stopping.holdout_early_stopping`), so every ``N`` and seed costs
one kernel solve instead of a network run (float64). Targets ``f_tgt = f_PT + Δ`` (Δ a random tanh
teacher) plus Gaussian noise; the error is ``mean (f̂ − f_tgt)²`` on fresh test inputs,
divided by ``mean Δ²`` (the error of not fine-tuning), mean ± std over seeds (paper: 3
runs). Left: error vs ``N`` (log–log) with the fitted slope; the paper's Thm 1 gives
``O(N^{−1/2})`` and eq. (30) ``N^{−2β/(2β+1)}``. Right: fitted ``β`` (100-point NTK) per task.
The paper's claim (larger β ⇒ fewer samples) predicts curves ordered by ``β``.

Run: ``ntsim run early_stopping/learning_curves [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_int_fields
from ntsim.core import eigen_decay_exponent, log_log_slope
from ntsim.theory import early_stopping as es


@dataclass(frozen=True)
class Config:
    """Model, tasks, sample sizes and hold-out rule (the paper reports none of these)."""

    width: int = 64  # n
    seq_len: int = 4  # T
    input_dim: int = 16  # d⁰
    ranks: tuple[int, ...] = (1, 2, 4, 16)  # task input-subspace dimensions r
    sizes: tuple[int, ...] = (25, 50, 100, 200, 400, 800)  # N (notes §5's grid)
    num_test: int = 200
    noise_std: float = 0.1  # σ of the target noise
    num_source: int = 64
    pretrain_steps: int = 300
    holdout_fraction: float = 0.2
    patience: int = 10  # evaluations
    eval_every: int = 20  # GD steps between validation evaluations
    max_steps: int = 4000
    beta_points: int = 100  # NTK size for the β fit (paper: 100)
    seeds: int = 3  # paper: "three random runs"

    def __post_init__(self):
        check_int_fields(
            self,
            (
                "width",
                "seq_len",
                "input_dim",
                "num_test",
                "num_source",
                "pretrain_steps",
                "patience",
                "eval_every",
                "max_steps",
                "beta_points",
                "seeds",
            ),
        )
        if not self.ranks or any(not 1 <= int(r) <= self.input_dim for r in self.ranks):
            raise ValueError(
                f"Config.ranks must be non-empty, each in [1, input_dim = {self.input_dim}], got "
                f"{self.ranks}."
            )
        if not self.sizes or any(int(n) < 10 for n in self.sizes):
            raise ValueError(f"Config.sizes must be non-empty with N >= 10, got {self.sizes}.")
        if not 0 < self.holdout_fraction < 0.5:
            raise ValueError(
                f"Config.holdout_fraction must lie in (0, 0.5), got {self.holdout_fraction}."
            )
        if not self.noise_std >= 0:
            raise ValueError(f"Config.noise_std must be >= 0, got {self.noise_std}.")
        if self.seeds < 2:
            raise ValueError(f"Config.seeds must be >= 2 for a std band, got {self.seeds}.")


SCALES = {
    "quick": Config(
        width=32,
        ranks=(1, 4, 16),
        sizes=(25, 50, 100, 200),
        num_test=100,
        pretrain_steps=100,
        beta_points=50,
        max_steps=2000,
        seeds=2,
    ),
    "full": Config(),
}


def _seed_errors(config: Config, key):
    """Normalised test errors ``(ranks, sizes)``, kept steps and β ``(ranks,)`` for one seed."""
    k_pre, k_tasks = jax.random.split(key)
    pre = es.pretrain_attention(
        k_pre,
        width=config.width,
        seq_len=config.seq_len,
        input_dim=config.input_dim,
        num_source=config.num_source,
        steps=config.pretrain_steps,
    )
    predict = jax.vmap(pre.model.apply, in_axes=(None, 0))
    n_max = max(config.sizes)
    errors, steps, betas = [], [], []
    for index, rank in enumerate(config.ranks):
        k_b, k_x, k_t, k_w, k_beta = jax.random.split(jax.random.fold_in(k_tasks, index), 5)
        basis = es.subspace_basis(k_b, config.input_dim, rank)
        x = es.subspace_inputs(k_x, n_max + config.num_test, config.seq_len, basis)
        f_pt = predict(pre.params, x)[:, 0]
        delta = es.task_teacher(k_t, x)
        y = f_pt + delta + config.noise_std * jax.random.normal(k_w, f_pt.shape)
        gram = es.width_normalised_ntk(pre.model, pre.params, x)
        test = slice(n_max, None)
        scale = jnp.mean(delta[test] ** 2)
        row_e, row_s = [], []
        for n in config.sizes:  # static N; the first n samples are an i.i.d. draw
            n_val = max(1, round(config.holdout_fraction * n))
            tr, va = slice(0, n - n_val), slice(n - n_val, n)
            held = es.holdout_early_stopping(
                gram[tr, tr],
                gram[va, tr],
                y[tr],
                y[va],
                max_steps=config.max_steps,
                patience=config.patience,
                eval_every=config.eval_every,
                f_pt_train=f_pt[tr],
                f_pt_val=f_pt[va],
                kernel_eval_train=gram[test, tr],
                f_pt_eval=f_pt[test],
            )
            target = f_pt[test] + delta[test]
            row_e.append(jnp.mean((held.predictions - target) ** 2) / scale)
            row_s.append(held.step)
        errors.append(jnp.stack(row_e))
        steps.append(jnp.stack(row_s))
        x_beta = es.subspace_inputs(k_beta, config.beta_points, config.seq_len, basis)
        lam = jnp.linalg.eigvalsh(es.width_normalised_ntk(pre.model, pre.params, x_beta))
        betas.append(eigen_decay_exponent(lam))
    return jnp.stack(errors), jnp.stack(steps), jnp.stack(betas)


def run(config: Config, key) -> dict:
    """Errors per seed, task and N; fitted β; slopes of the mean curves."""
    # float64: the NTK spectra span ~10 decades (r = 1), below float32's resolution
    with jax.enable_x64(True):
        keys = jax.random.split(key, config.seeds)
        errors, steps, betas = (
            np.asarray(a) for a in jax.jit(jax.vmap(lambda k: _seed_errors(config, k)))(keys)
        )
    sizes = np.asarray(config.sizes, float)
    mean = errors.mean(axis=0)
    slopes = [float(log_log_slope(jnp.asarray(sizes), jnp.asarray(m))[0]) for m in mean]
    return {
        "ranks": list(config.ranks),
        "sizes": list(config.sizes),
        "seeds": config.seeds,
        "width": config.width,
        "noise_std": config.noise_std,
        "error_mean": mean.tolist(),  # (ranks, sizes)
        "error_std": errors.std(axis=0, ddof=1).tolist(),
        "kept_step_mean": steps.mean(axis=0).tolist(),
        "beta_mean": betas.mean(axis=0).tolist(),
        "beta_std": betas.std(axis=0, ddof=1).tolist(),
        "slope": slopes,
        "rate_theory": [-2 * b / (2 * b + 1) for b in betas.mean(axis=0)],
    }


def plot(results: dict):
    """Left: normalised test error vs N per task. Right: kept hold-out steps."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    sizes = np.asarray(results["sizes"], float)
    fig, (ax, ax_steps) = plt.subplots(1, 2, figsize=(12.5, 4.8))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(results["ranks"])))
    for i, rank in enumerate(results["ranks"]):
        mean, std = np.asarray(results["error_mean"][i]), np.asarray(results["error_std"][i])
        label = (
            f"r = {rank}: β = {results['beta_mean'][i]:.2f}, slope {results['slope'][i]:.2f} "
            f"(eq. 30: {results['rate_theory'][i]:.2f})"
        )
        ax.fill_between(
            sizes, np.maximum(mean - std, mean * 0.1), mean + std, color=colors[i], alpha=0.15
        )
        ax.plot(sizes, mean, marker="o", color=colors[i], label=label)
        ax_steps.plot(sizes, results["kept_step_mean"][i], marker="o", color=colors[i])
    anchor = np.max(np.asarray(results["error_mean"])[:, 0])
    ax.plot(sizes, anchor * (sizes / sizes[0]) ** -0.5, "k:", label="N^(−1/2) (Thm 1 rate)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("number of fine-tuning samples N (train + hold-out)")
    ax.set_ylabel("test MSE / mean Δ² (1 = not fine-tuning)")
    ax.set_title(
        f"hold-out early stopping (band: ± std), linearised FT at θ_PT (n = {results['width']}, "
        f"σ = {results['noise_std']:g}); mean ± std over {results['seeds']} seeds",
        fontsize=9,
    )
    ax.legend(fontsize=7)
    ax_steps.set_xscale("log")
    ax_steps.set_yscale("log")
    for axis in (ax, ax_steps):
        axis.set_xticks(sizes, [str(int(n)) for n in sizes])
        axis.xaxis.set_minor_formatter(NullFormatter())
    ax_steps.set_xlabel("number of fine-tuning samples N")
    ax_steps.set_ylabel("kept step (best validation loss)")
    ax_steps.set_title("hold-out stopping step (mean over seeds)", fontsize=9)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.experiment import main

    main(__file__)
