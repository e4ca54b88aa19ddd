"""Fig 3 of Shachaf et al. 2021 (Sec 5, Thm 5.5): freezing the first layer vs fine-tuning.

What is plotted: the population test risk ``R(β) = ‖θ_T − β‖²`` (``Σ = I``) of three
two-layer linear networks ``β = W_1 w_2`` (hidden width ``d``) trained by GD on ``n`` target
samples of ``y = Xθ_T``, against ``n``:

* "Frozen": ``W_1`` fixed after pretraining, only ``w_2`` trained;
* "Vanilla": both layers trained from a fresh small init ``N(0, σ₀²)`` on the target only;
* "Finetune": both layers trained from the pretrained weights.

Pretraining is GD from ``N(0, σ₀²)`` (δ-approximately balanced) on ``n_S ≥ d`` samples of the
source ``θ_S`` (``‖θ_S‖ = 1``); ``θ_T = θ_S + 0.5·ξ/√d``, ``ξ ~ N(0, I)`` (notes' defaults).
Overlays: Vanilla ``((d − n)/d)‖θ_T‖²`` (min-norm interpolation, in expectation) and the
min-norm risk ``‖P_⊥θ_T‖²`` of the same draws; Finetune
eq. (5) with ``L = 2`` (:func:`~ntsim.theory.linear_teachers.deep_risk`, with the pretrained
``β_S`` as source); Frozen ``R(c*β_S)``, ``c* = ⟨Xβ_S, y⟩/‖Xβ_S‖²`` (Thm 5.5), and the
``n``-independent floor ``min_c R(cβ_S)``. Bands are mean ± std over seeds (vmapped).

GD is layer-wise on the paper's ``(1/n)‖Xβ − y‖²``; all ``n`` of a seed share the target
inputs (nested prefixes) and run in one vmap, the rows beyond ``n`` zeroed (they add
nothing to the loss or its gradient). The step size is ``η = eta_scale/λ_max(XᵀX/n)``.

Caveat (found here): Thm 5.5 needs a rank-one frozen ``W_1``; pretraining from
``N(0, σ₀²)`` leaves the init ``W_1(0)`` (``‖W_1(0)‖_F² ≈ σ₀²d²``, i.e. ≈ 1 at the notes'
σ₀ = 0.01, d = 100) in the frozen layer, and long GD on ``w_2`` then fits the target through
those small directions: the Frozen risk drifts below the floor as ``n`` grows.
``--set init_scale=0.001`` makes ``W_1`` rank one to ~1% and the Frozen curve flat.

Run: ``ntsim run linear_teachers/fig3_freezing [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import deep_linear, end_to_end_vector, gradient_descent, mse_loss, sweep_keys
from ntsim.experiment import check_int_fields
from ntsim.theory import linear_teachers as lt


@dataclass(frozen=True)
class Config:
    """E5 / Fig 3 setting (notes' defaults; d, steps and step sizes are not in the paper)."""

    d: int = 100  # input dimension = hidden width
    n_values: tuple[int, ...] = tuple(range(5, 100, 5))  # target sample sizes (n < d)
    source_ratio: int = 3  # n_S = source_ratio · d pretraining samples
    task_noise: float = 0.5  # θ_T = θ_S + task_noise · N(0, I)/√d · ‖θ_S‖
    init_scale: float = 0.01  # σ₀: entries of the random inits ~ N(0, σ₀²)
    eta_scale: float = 0.15  # η = eta_scale / λ_max(XᵀX/n) (pretraining: of the source X)
    pretrain_steps: int = 3000
    fine_tune_steps: int = 10_000  # for all three models
    seeds: int = 8

    def __post_init__(self):
        check_int_fields(self, ("d", "source_ratio", "pretrain_steps", "fine_tune_steps"))
        if self.seeds < 2:
            raise ValueError(f"Config.seeds must be >= 2 for a std band, got {self.seeds}.")
        if not self.n_values or min(self.n_values) <= 0 or max(self.n_values) >= self.d:
            raise ValueError(
                f"Config.n_values must lie in [1, d − 1] = [1, {self.d - 1}] (n < d, Sec 3), "
                f"got {self.n_values}."
            )
        if list(self.n_values) != sorted(set(self.n_values)):
            raise ValueError(f"Config.n_values must be strictly increasing, got {self.n_values}.")
        for name in ("task_noise", "init_scale"):
            if not getattr(self, name) > 0:
                raise ValueError(f"Config.{name} must be positive, got {getattr(self, name)!r}.")
        if not 0 < self.eta_scale < 0.5:
            raise ValueError(
                f"Config.eta_scale must be in (0, 0.5) (GD stability for ‖β‖ ≈ 1), "
                f"got {self.eta_scale!r}."
            )


SCALES = {
    "quick": Config(
        d=30,
        n_values=(3, 6, 9, 12, 15, 18, 21, 24, 27),
        pretrain_steps=1500,
        fine_tune_steps=4000,
        seeds=6,
    ),  # fmt: skip
    "full": Config(),
}


def _apply(params, x_i):
    """One example through ``β = W_1 w_2`` (β formed once; vmapped over rows by mse_loss)."""
    return x_i @ end_to_end_vector(params)


def _one_seed(key, config: Config) -> dict:
    d, n_max = config.d, max(config.n_values)
    n_source = config.source_ratio * d
    k_s, k_xi, k_xs, k_xt, k_pre, k_van = jax.random.split(key, 6)
    theta_s = jax.random.normal(k_s, (d,))
    theta_s = theta_s / jnp.linalg.norm(theta_s)
    theta_t = theta_s + config.task_noise * jax.random.normal(k_xi, (d,)) / jnp.sqrt(d)
    eye = jnp.eye(d)

    # Pretraining from N(0, σ₀²) on n_S ≥ d source samples.
    model = deep_linear((d, 1), init_scale=config.init_scale)
    x_src = jax.random.normal(k_xs, (n_source, d))
    pre_loss = mse_loss(_apply, x_src, x_src @ theta_s, loss_scale=1.0 / n_source)
    eta_pre = config.eta_scale / (jnp.linalg.norm(x_src, 2) ** 2 / n_source)
    pre = gradient_descent(pre_loss, model.init(k_pre, x_src[0]), learning_rate=eta_pre,
                           num_steps=config.pretrain_steps, throw=False)  # fmt: skip
    beta_s = end_to_end_vector(pre.params)
    w1_pre, w2_pre = pre.params["layers"]
    vanilla0 = model.init(k_van, x_src[0])

    x_all = jax.random.normal(k_xt, (n_max, d))  # nested target sets: x_all[:n]
    y_all = x_all @ theta_t

    def fine_tune(n):
        mask = (jnp.arange(n_max) < n).astype(x_all.dtype)
        x, y = x_all * mask[:, None], y_all * mask
        loss = mse_loss(_apply, x, y, loss_scale=1.0 / n)
        eta = config.eta_scale / (jnp.linalg.norm(x, 2) ** 2 / n)
        steps = config.fine_tune_steps
        frozen_loss = lambda w2: loss({"layers": [w1_pre, w2]})  # noqa: E731
        runs = {
            "frozen": gradient_descent(frozen_loss, w2_pre, learning_rate=eta,
                                       num_steps=steps, throw=False),
            "vanilla": gradient_descent(loss, vanilla0, learning_rate=eta, num_steps=steps,
                                        throw=False),
            "finetune": gradient_descent(loss, pre.params, learning_rate=eta,
                                         num_steps=steps, throw=False),
        }  # fmt: skip
        frozen_params = {"layers": [w1_pre, runs["frozen"].params]}
        params = {"frozen": frozen_params, **{k: runs[k].params for k in ("vanilla", "finetune")}}
        out = {}
        for name, p in params.items():
            beta = end_to_end_vector(p)
            out[f"{name}_risk"] = lt.population_risk(beta, theta_t, eye)
            out[f"{name}_train_loss"] = loss(p)
            out[f"{name}_nonfinite"] = runs[name].first_nonfinite_step >= 0
        return out

    sim = jax.vmap(fine_tune)(jnp.asarray(config.n_values))

    # Theory per n (static shapes: Python loop over n, exact X[:n]).
    theory = {"finetune": [], "frozen": [], "vanilla_min_norm": []}
    for n in config.n_values:
        x, y = x_all[:n], y_all[:n]
        theory["finetune"].append(lt.deep_risk(x, beta_s, theta_t, eye, 2.0))
        c_star = lt.frozen_first_layer_coefficient(x, y, beta_s)
        theory["frozen"].append(lt.population_risk(c_star * beta_s, theta_t, eye))
        gamma = lt.fine_tuned_linear(x, jnp.zeros(d), theta_t)  # min-norm interpolant
        theory["vanilla_min_norm"].append(lt.population_risk(gamma, theta_t, eye))
    return {
        **sim,
        **{f"theory_{k}": jnp.stack(v) for k, v in theory.items()},
        "frozen_floor": lt.frozen_risk_floor(beta_s, theta_t, eye),
        "target_norm_sq": theta_t @ theta_t,
        "pretrain_loss": pre_loss(pre.params),
        "pretrain_error": jnp.linalg.norm(beta_s - theta_s),
        # δ-balancedness of the frozen layer: share of ‖W_1‖_F² outside its top singular value
        "w1_off_rank_one": 1.0 - jnp.linalg.norm(w1_pre, 2) ** 2 / jnp.sum(w1_pre**2),
        "pretrain_nonfinite": pre.first_nonfinite_step >= 0,
    }


def run(config: Config, key) -> dict:
    """Risks (simulated and theory) of Frozen / Vanilla / Finetune per (seed, n)."""
    with jax.enable_x64(True):
        out = sweep_keys(
            _one_seed, key, config.seeds, progress=True, description="fig3 seeds", config=config
        )
        out = {k: np.asarray(v) for k, v in out.items()}
    bad = [k for k in out if k.endswith("nonfinite") and out[k].any()]
    if bad:
        raise FloatingPointError(f"fig3_freezing: GD diverged ({bad}); lower eta_scale.")
    n = np.asarray(config.n_values, dtype=float)
    vanilla_theory = (config.d - n) / config.d * out["target_norm_sq"][:, None]
    return {
        "d": config.d,
        "n_values": list(config.n_values),
        "n_source": config.source_ratio * config.d,
        "fine_tune_steps": config.fine_tune_steps,
        "theory_vanilla": vanilla_theory,  # ((d − n)/d)‖θ_T‖², (seeds, n)
        **{k: v for k, v in out.items() if not k.endswith("nonfinite")},
    }


def plot(results: dict):
    """Test risk vs n for Frozen / Vanilla / Finetune with their theory overlays."""
    import matplotlib.pyplot as plt

    n = np.asarray(results["n_values"])
    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    for name, label, color, theory, theory_label in (
        ("frozen", "Frozen (W₁ fixed)", "C0", "theory_frozen", "R(c*β_S), Thm 5.5"),
        ("vanilla", "Vanilla (from scratch)", "C1", "theory_vanilla", "((d−n)/d)‖θ_T‖²"),
        ("finetune", "Finetune (all layers)", "C2", "theory_finetune", "eq. (5), L = 2"),
    ):
        values = np.asarray(results[f"{name}_risk"])
        mean, std = values.mean(0), values.std(0)
        ax.plot(n, mean, color=color, marker="o", ms=4, label=f"{label}: GD")
        ax.fill_between(n, mean - std, mean + std, color=color, alpha=0.2)
        ax.plot(n, np.asarray(results[theory]).mean(0), color=color, ls="--",
                label=f"{label}: theory {theory_label}")  # fmt: skip
        if name == "vanilla":
            ax.plot(n, np.asarray(results["theory_vanilla_min_norm"]).mean(0), color=color,
                    ls=":", label=f"{label}: min-norm ‖P_⊥θ_T‖² (same draws)")  # fmt: skip
    floor = float(np.mean(results["frozen_floor"]))
    ax.axhline(floor, color="k", ls=":", lw=1, label=f"floor min_c R(cβ_S) = {floor:.3f}")
    ax.set(xlabel="number of target samples n", ylabel="test loss R(β) = ‖θ_T − β‖² (Σ = I)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7.5, loc="upper right")
    ax.set_title(
        f"Shachaf et al. 2021, Fig 3: two-layer linear nets, d = {results['d']}, "
        f"n_S = {results['n_source']}\n(mean ± std over {np.shape(results['frozen_risk'])[0]} "
        f"seeds, {results['fine_tune_steps']} GD steps; frozen W₁: "
        f"{100 * np.mean(results['w1_off_rank_one']):.0f}% of ‖W₁‖²_F off rank one)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
