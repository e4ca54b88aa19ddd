"""Does the regulariser make the model linear? The slides' λ table as a figure, on synthetic tasks.

What is plotted (Rahimi Afzal et al. 2025, experiments table). A tanh
MLP (or, with ``model="attention"``, one attention block reading ``x`` as tokens) is
pretrained on ``tanh(x·w_0)`` (θ_0), then fine-tuned on two or more related binary
tasks (labels ``sign(x·w_k + 0.5 sin(2x·v))``, ``w_k`` at growing angles from ``w_0``) by
full-batch split-step GD on the summed squared loss with ``(λ/2)‖θ − θ_0‖²`` (with
``practice=True``: mean cross-entropy and Adam on the loss plus the proximal term, the
slides' practical setting with the decay pulling towards θ_0), for ``λ`` in
the paper's grid ``{50, 10, 5, 2, 1, 0.5, 0.1, 0}``; its linearisation at ``θ_0`` is
trained the same way. Panels: ``‖θ_T − θ_0‖`` with Thm 2's bound ``2L̂r_0(1 − e^{−λT})/λ``
(dashed; ``L̂`` the path max of ``‖J‖``); ``‖f_{θ_T}(x*) − f̄_{θ̄_T}(x*)‖``; the mean KL
between the predictive distributions ``Ber(σ(f))`` and ``Ber(σ(f̄))`` on test inputs; test
accuracy. The paper's CoLA / SST-2 numbers (RoBERTa + LoRA, cross-entropy, AdamW) are
printed beside ours. Substitutes (documented assumptions): MSE on ±1 labels and GD (the
theory's setting) instead of CE + AdamW; ``λ`` on the summed-loss scale.

One simulation per figure and claim: the claim that reads this table's statement
(``linearization.table.distance_monotone``: ``‖θ_T − θ_0‖`` strictly decreasing over the
grid, every instance) reads :func:`ntsim.theory.linearization.simulate_linearity_table`
on random tanh MLPs (:class:`~ntsim.theory.linearization.NetworkSetting`); the last panel
draws that simulation with the claim's sizes (``Config.instances``: the spread of
``‖θ_T − θ_0‖/‖θ_T − θ_0‖_{λ=0}`` over the instances and the fraction strictly decreasing).
The pretrained-task panels (the paper's setting: pretraining, several tasks, PEFT choice,
``practice`` mode, the gap, KL and accuracy rows) are read by no claim.

Run: ``ntsim run linearization/lambda_table [--scale full]`` or this file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ntsim.core import empirical_ntk_fn
from ntsim.experiment import Validated, param, shared_run
from ntsim.theory import linearization as lz

#: The slides' table (CoLA accuracy in %, SST-2 as a fraction), columns = PAPER_LAMBDAS.
PAPER_LAMBDAS = (50, 10, 5, 2, 1, 0.5, 0.1, 0.0)
PAPER_TABLE = {
    "CoLA": {
        "distance": (0.280, 0.350, 0.404, 0.5263, 0.6148, 0.6946, 0.8223, 0.960),
        "gap": (1.06, 1.12, 1.39, 1.25, 1.27, 1.32, 1.28, 1.47),
        "kl": (0.1060, 0.1377, 0.200, 0.1613, 0.1788, 0.1961, 0.1599, 0.210),
        "accuracy": (0.7459, 0.7957, 0.8044, 0.7938, 0.8024, 0.8015, 0.8015, 0.7967),
    },
    "SST-2": {
        "distance": (0.292, 0.336, 0.369, 0.424, 0.520, 0.700, 1.589, 2.519),
        "gap": (1.712, 2.303, 2.635, 2.957, 3.217, 3.331, 3.397, 2.791),
        "kl": (0.320, 0.433, 0.476, 0.517, 0.545, 0.560, 0.578, 0.540),
        "accuracy": (0.893, 0.912, 0.915, 0.924, 0.928, 0.930, 0.924, 0.916),
    },
}


@dataclass(frozen=True)
class Config(Validated):
    """Model, data, PEFT choice and training (the slides give no hyperparameters)."""

    model: str = param(
        "mlp", '"mlp" (tanh MLP) or "attention" (one attention block, seq_len tokens)',
        choices=("mlp", "attention"), shape=True,
    )  # fmt: skip
    hidden: tuple[int, ...] = param(
        (64, 64), 'tanh MLP widths; "attention" uses hidden[0] as width', low=1, shape=True
    )
    seq_len: int = param(
        4, 'tokens per input for "attention" (must divide dim)', low=1,
        allowed="≥ 1, divides dim (model = attention)", shape=True,
    )  # fmt: skip
    dim: int = param(8, "input dimension d", low=1, shape=True)
    num_pretrain: int = param(512, "pretraining samples of tanh(x·w_0)", low=1, shape=True)
    num_train: int = param(64, "n", low=1, shape=True)
    num_test: int = param(1000, "test inputs per task (KL and accuracy panels)", low=1, shape=True)
    angles: tuple[float, ...] = param(
        (0.4, 0.8, 1.2), "task directions vs w_0 (radians)", allowed="≥ 2 tasks", shape=True
    )
    lambdas: tuple[float, ...] = param(
        PAPER_LAMBDAS, "proximal strengths λ (paper's grid; x-axis)", low=0, shape=True
    )
    tune: str = param(
        "full", '"full", "head", "layer<i>", "lora<r>" (LoRA on the hidden weights)',
        allowed="full, head, layer<i>, lora<r> (r ≥ 1)", shape=True,
    )  # fmt: skip
    steps: int = param(
        2000, "fine-tuning steps (split-step GD, or Adam if practice)", low=1, shape=True
    )
    step_fraction: float = param(
        0.5, "η = step_fraction / (2λ_max(K) + max λ)", low=0, high=1, open="low"
    )
    practice: bool = param(
        False, "True: mean cross-entropy + Adam on loss + (λ/2)‖θ − θ0‖²", shape=True
    )
    adam_lr: float = param(0.01, "Adam's step size when practice=True", low=0, open=True)
    record_every: int = param(
        40, "steps between records of ‖θ − θ_0‖ and ‖J‖ (L̂ of Thm 2)", low=1,
        allowed="[1, steps]", shape=True,
    )  # fmt: skip
    pretrain_steps: int = param(2000, "full-batch GD steps of pretraining θ_0", low=0, shape=True)
    pretrain_lr: float = param(0.5, "GD step size of pretraining", low=0)
    instances: lz.NetworkSetting = param(
        lz.NetworkSetting(),
        "the claim's simulation (simulate_linearity_table) and sizes, drawn in the last panel",
    )

    def check(self):
        if self.model == "attention" and self.dim % self.seq_len:
            raise ValueError(f"Config.seq_len must divide dim={self.dim}, got {self.seq_len}.")
        if len(self.angles) < 2:
            raise ValueError(f"Config.angles must name at least 2 tasks, got {self.angles}.")
        if not re.fullmatch(r"full|head|layer\d+|lora[1-9]\d*", self.tune):
            raise ValueError(
                "Config.tune must be 'full', 'head', 'layer<i>' or 'lora<r>' (r ≥ 1), got "
                f"{self.tune!r}."
            )
        if self.record_every > self.steps:
            raise ValueError(
                f"Config.record_every must not exceed Config.steps = {self.steps}, got "
                f"{self.record_every}."
            )


SCALES = {
    "quick": Config(
        hidden=(16,),
        num_pretrain=128,
        num_train=20,
        num_test=200,
        angles=(0.4, 1.0),
        steps=250,
        record_every=25,
        pretrain_steps=200,
    ),
    "full": Config(instances=lz.NetworkSetting(n=16, d=4, width=64, steps=1000)),
}


def _lora_targets(config: Config):
    if config.model == "attention":
        return [("attention", "query"), ("attention", "value")]
    return [("layers", i, "w") for i in range(len(config.hidden))]


def _rho(a, b):
    """Spearman's ρ, or ``None`` when undefined (a constant series)."""
    value = lz.spearman(a, b)
    return None if np.isnan(value) else value


def run(config: Config, key) -> dict:
    """Pretrain, then the linearity table for every task and λ (vmapped over both)."""
    k_data, k_model, k_lora = jax.random.split(key, 3)
    tasks, apply, theta0 = lz.pretrained_setup(k_data, k_model, config)
    peft = lz.peft_model(apply, theta0, config.tune, key=k_lora, lora_targets=_lora_targets(config))
    scalar = lambda p, x: peft.apply(p, x)  # noqa: E731
    kernel = empirical_ntk_fn(scalar)(tasks.x_train, None, peft.params0)
    mu_max = float(jnp.linalg.eigvalsh(kernel)[-1])
    eta = config.step_fraction / (2 * mu_max + max(config.lambdas))

    def table(y, y_test):
        return lz.linearity_vs_lambda(
            scalar,
            peft.params0,
            tasks.x_train,
            y,
            tasks.x_test,
            y_test,
            lambdas=jnp.asarray(config.lambdas),
            learning_rate=eta,
            num_steps=config.steps,
            record_every=config.record_every,
            loss="logistic" if config.practice else "squared",
            optimizer=optax.adam(config.adam_lr) if config.practice else None,
        )

    rows = jax.jit(jax.vmap(table))(tasks.y_train, tasks.y_test)
    to_list = lambda a: np.asarray(a).tolist()  # noqa: E731
    with jax.enable_x64(True):  # as the claim reads it
        claim_run = shared_run(
            lz.simulate_linearity_table, jax.random.fold_in(key, 1), config.instances
        )
    claim_distance = np.asarray(claim_run.distance)
    relative = claim_distance / claim_distance[:, -1:]
    spearman = {  # None where a metric is constant over λ (ρ undefined)
        metric: [
            _rho(config.lambdas, np.asarray(getattr(rows, metric))[t])
            for t in range(len(config.angles))
        ]
        for metric in ("distance", "gap_train", "kl_test", "accuracy")
    }
    return {
        "lambdas": list(config.lambdas),
        "angles": list(config.angles),
        "tune": config.tune,
        "model": config.model,
        "practice": config.practice,
        "learning_rate": eta,
        "horizon": eta * config.steps,
        "lambda_max_ntk": mu_max,
        **{field: to_list(getattr(rows, field)) for field in rows._fields},
        "spearman_vs_lambda": spearman,
        "distance_strictly_decreasing": [
            bool(np.all(np.diff(np.asarray(rows.distance)[t][np.argsort(config.lambdas)]) < 0))
            for t in range(len(config.angles))
        ],
        "paper": {"lambdas": list(PAPER_LAMBDAS), **PAPER_TABLE},
        "instances": {
            "lambdas": list(lz.TABLE_LAMBDAS),
            "relative_distance_quantiles": to_list(
                np.quantile(relative, [0.05, 0.5, 0.95], axis=0)
            ),
            "fraction_strictly_decreasing": float(
                np.mean(np.all(np.diff(claim_distance, axis=1) > 0, axis=1))
            ),
            "count": int(claim_distance.shape[0]),
        },
    }


def plot(results: dict):
    """Four metric panels against λ (categorical, paper's order) and the paper's table."""
    import matplotlib.pyplot as plt

    lambdas = results["lambdas"]
    pos = np.arange(len(lambdas))
    fig = plt.figure(figsize=(15.0, 8.0))
    grid = fig.add_gridspec(2, 3)
    panels = [
        ("distance", "‖θ_T − θ_0‖₂", True),
        ("gap_train", "‖f_θT(x*) − f̄_θ̄T(x*)‖₂", False),
        ("kl_test", "mean KL(Ber σ(f) ‖ Ber σ(f̄)) (test)", False),
        ("accuracy", "test accuracy of f_θT", False),
    ]
    for index, (field, label, bound) in enumerate(panels):
        ax = fig.add_subplot(grid[index // 2, index % 2])
        for t, angle in enumerate(results["angles"]):
            (line,) = ax.plot(pos, results[field][t], marker="o", label=f"task at {angle:g} rad")
            if bound:
                ax.plot(
                    pos,
                    results["thm2_bound"][t],
                    linestyle="--",
                    color=line.get_color(),
                    label=f"Thm 2 bound 2L̂r₀(1−e^(−λT))/λ, task {angle:g}"
                    + (" (GD + MSE theory only)" if results["practice"] else ""),
                )
        if bound:
            ax.set_yscale("log")
        ax.set_xticks(pos, [f"{lam:g}" for lam in lambdas])
        ax.set_xlabel("λ (proximal strength, summed-loss scale)")
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    ax = fig.add_subplot(grid[1, 2])
    inst = results["instances"]
    ipos = np.arange(len(inst["lambdas"]))
    low, median, high = inst["relative_distance_quantiles"]
    ax.fill_between(ipos, low, high, alpha=0.3, label="5–95% of instances")
    ax.plot(ipos, median, marker="o", label="median")
    ax.set_xticks(ipos, [f"{lam:g}" for lam in inst["lambdas"]])
    ax.set_yscale("log")
    ax.set_xlabel("λ")
    ax.set_ylabel("‖θ_T − θ_0‖ / ‖θ_T − θ_0‖ at λ = 0")
    ax.set_title(
        f"claim's simulation: {inst['count']} random MLPs, "
        f"{100 * inst['fraction_strictly_decreasing']:.0f}% strictly decreasing",
        fontsize=8,
    )
    ax.legend(fontsize=7)
    ax = fig.add_subplot(grid[0, 2])
    ax.axis("off")
    paper = results["paper"]
    lines = [
        "Paper (RoBERTa + LoRA):",
        "λ:      " + " ".join(f"{lam:>6g}" for lam in paper["lambdas"]),
    ]
    for name in ("CoLA", "SST-2"):
        for metric in ("distance", "gap", "kl", "accuracy"):
            values = " ".join(f"{v:6.3f}" for v in paper[name][metric])
            lines.append(f"{name[:4]} {metric[:4]} {values}")
    lines += [
        "",
        f"Ours ({results['model']}, tune={results['tune']}, T = {results['horizon']:.3g}):",
    ]
    for t, angle in enumerate(results["angles"]):
        for field, short in (
            ("distance", "dist"),
            ("gap_train", "gap"),
            ("kl_test", "kl"),
            ("accuracy", "acc"),
        ):
            values = " ".join(f"{v:6.2g}" for v in results[field][t])
            lines.append(f"t{angle:<3g} {short:<4} {values}")
    rho = results["spearman_vs_lambda"]
    lines += [
        "",
        "Spearman ρ with λ (per task):",
        *(
            f"  {k}: " + ", ".join("n/a" if v is None else f"{v:+.2f}" for v in vals)
            for k, vals in rho.items()
        ),
    ]
    ax.text(0.0, 1.0, "\n".join(lines), family="monospace", fontsize=6.5, va="top")
    fig.suptitle(
        "Does the proximal regulariser make fine-tuning linear? (Rahimi Afzal et al. 2025)"
    )
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
