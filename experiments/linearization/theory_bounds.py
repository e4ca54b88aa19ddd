"""Theory figures for Rahimi Afzal et al. 2025: Thms 2, 3 and 5 and the selective scheme, simulated.

What is plotted (no figure of the slides). One tanh MLP at a random
``θ_0`` with ``n`` Gaussian inputs and ``±1`` targets, trained by split-step GD on the
summed squared loss ``R̃`` with ``(λ/2)‖θ − θ_0‖²``:

(a) ``Δ(t) = ‖f_{θ_t}(x*) − f̄_{θ̄_t}(x*)‖`` (network vs linearisation, same ``λ``) with
    Thm 3's bound ``b(t − (1 − e^{−λt})/λ)`` for several ``λ``;
(b) ``‖θ_t − θ_0‖`` with Thm 2's bound ``2L̂r_0∫e^{−(Λ_t−Λ_s)}ds`` (constant ``λ``, ``λ = 0``
    and the selective scheme);
(c) training loss ``R̃`` under the selective and the constant scheme, with the steps at
    which the selective ``λ_t`` was on marked;
(d) the KRR training risk ``‖σ(K + σI)^{−1}ỹ‖²`` of the linearised model against ``σ``,
    between Thm 5's bounds ``(σ‖ỹ‖/(σ + λ_max))²`` and ``(σ‖ỹ‖/(σ + λ_min))²``.

``L̂`` and ``L̂_∇`` are path maxima of ``‖J_θ‖`` and ``‖J_θ − J_{θ_0}‖/‖θ − θ_0‖``.
``λ`` values are in units of ``λ_max(K)``.

Run: ``ntsim run linearization/theory_bounds [--scale full]`` or this file.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from ntsim.core import mlp
from ntsim.theory import linearization as lz


@dataclass(frozen=True)
class Config:
    """One instance and its runs (illustrative sizes; the slides have no such figure)."""

    width: int = 64
    num_train: int = 16  # n
    dim: int = 4
    lambdas: tuple[float, ...] = (0.1, 0.5, 2.0, 8.0)  # × λ_max(K)
    selective_lambda: float = 2.0  # × λ_max(K)
    steps: int = 2000
    step_fraction: float = 0.1  # η = step_fraction / λ_max(K) (capped at 0.5/λ)
    record_every: int = 10
    sigmas: tuple[float, ...] = tuple(float(s) for s in np.geomspace(1e-4, 1e2, 40))

    def __post_init__(self):
        for name in ("width", "num_train", "dim", "steps", "record_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"Config.{name} must be a positive integer, got {value!r}.")
        if not self.lambdas or any(lam <= 0 for lam in self.lambdas):
            raise ValueError(f"Config.lambdas must be positive, got {self.lambdas}.")
        if not self.selective_lambda > 0:
            raise ValueError(
                f"Config.selective_lambda must be positive, got {self.selective_lambda}."
            )
        if not 0 < self.step_fraction <= 0.5:
            raise ValueError(
                f"Config.step_fraction must lie in (0, 0.5], got {self.step_fraction}."
            )
        if not self.sigmas or any(s <= 0 for s in self.sigmas):
            raise ValueError("Config.sigmas must be positive.")
        if self.record_every > self.steps:
            raise ValueError("Config.record_every must not exceed Config.steps.")


SCALES = {
    "quick": Config(width=16, num_train=8, dim=3, steps=400, record_every=5),
    "full": Config(),
}


def run(config: Config, key) -> dict:
    """Runs of the network and its linearisation for every λ, the selective run, KRR risks."""
    k_x, k_y, k_p = jax.random.split(key, 3)
    model = mlp((config.width,), activation="tanh", parameterization="ntk", b_std=0.3)
    x = jax.random.normal(k_x, (config.num_train, config.dim))
    y = jnp.where(jax.random.bernoulli(k_y, 0.5, (config.num_train,)), 1.0, -1.0)
    params0 = model.init(k_p, x[0])
    jac = lz.flat_jacobian(model.apply, params0, x)
    kernel = jac @ jac.T
    mu_max = float(jnp.linalg.eigvalsh(kernel)[-1])
    kw = dict(num_steps=config.steps, record_every=config.record_every)

    def constant(factor):
        lam = factor * mu_max
        eta = jnp.minimum(config.step_fraction / mu_max, 0.5 / lam)
        net = lz.finetune(model.apply, params0, x, y, proximal=lam, learning_rate=eta, **kw)
        lin = lz.finetune(
            model.apply, params0, x, y, proximal=lam, learning_rate=eta, linearised=True, **kw
        )
        gap = jnp.linalg.norm(net.train - lin.train, axis=1)
        r0 = jnp.linalg.norm(net.train[0] - y)
        lip, lip_grad = jnp.max(net.jac_norm), jnp.max(net.grad_lip)
        thm3 = lz.thm3_bound(lip, lip_grad, r0, lam, net.times)
        thm2 = lz.thm2_bound(lip, r0, lz.thm2_integral(net.strengths, eta)[:: config.record_every])
        return net.times, gap, thm3, net.distance, thm2

    times, gaps, thm3, distances, thm2 = jax.jit(jax.vmap(constant))(jnp.asarray(config.lambdas))

    def scheme(selective, factor):
        lam = factor * mu_max
        eta = (
            min(config.step_fraction / mu_max, 0.5 / lam)
            if lam > 0
            else config.step_fraction / mu_max
        )
        run_ = lz.finetune(
            model.apply, params0, x, y, proximal=lam, learning_rate=eta, selective=selective, **kw
        )
        r0 = jnp.linalg.norm(run_.train[0] - y)
        bound = lz.thm2_bound(
            jnp.max(run_.jac_norm),
            r0,
            lz.thm2_integral(run_.strengths, eta)[:: config.record_every],
        )
        loss = jnp.sum((run_.train - y) ** 2, axis=1)
        return run_, bound, loss

    selective, sel_bound, sel_loss = scheme(True, config.selective_lambda)
    const, const_bound, const_loss = scheme(False, config.selective_lambda)
    zero, zero_bound, _ = scheme(False, 0.0)
    f0 = lz.outputs(model.apply, params0, x)
    residual = y - f0
    sigmas = jnp.asarray(config.sigmas)
    thm5 = jax.vmap(lambda s: lz.thm5_bounds(kernel, residual, s))(sigmas)
    to_list = lambda a: np.asarray(a).tolist()  # noqa: E731
    return {
        "lambda_max_ntk": mu_max,
        "lambdas": [f * mu_max for f in config.lambdas],
        "times": to_list(times),
        "gap": to_list(gaps),
        "thm3_bound": to_list(thm3),
        "distance": to_list(distances),
        "thm2_bound": to_list(thm2),
        "selective": {
            "times": to_list(selective.times),
            "distance": to_list(selective.distance),
            "thm2_bound": to_list(sel_bound),
            "loss": to_list(sel_loss),
            "strength_times": to_list(
                jnp.arange(config.steps) * selective.times[1] / config.record_every
            ),
            "strengths": to_list(selective.strengths),
            "fraction_regularised": float(selective.fraction_regularised),
            "lambda": config.selective_lambda * mu_max,
        },
        "constant": {
            "times": to_list(const.times),
            "loss": to_list(const_loss),
            "distance": to_list(const.distance),
            "thm2_bound": to_list(const_bound),
        },
        "zero": {
            "times": to_list(zero.times),
            "distance": to_list(zero.distance),
            "thm2_bound": to_list(zero_bound),
        },
        "sigmas": list(config.sigmas),
        "thm5_lower": to_list(thm5.lower),
        "krr_risk": to_list(thm5.value),
        "thm5_upper": to_list(thm5.upper),
        "ntk_eigenvalues": to_list(jnp.linalg.eigvalsh(kernel)),
    }


def plot(results: dict):
    """Four panels (a)–(d) of the module doc."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(13.0, 9.0))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ax = axes[0, 0]
    for i, lam in enumerate(results["lambdas"]):
        t = np.asarray(results["times"][i])
        c = colors[i % len(colors)]
        ax.plot(t[1:], results["gap"][i][1:], color=c, label=f"Δ(t), λ = {lam:.3g}")
        ax.plot(
            t[1:],
            results["thm3_bound"][i][1:],
            color=c,
            linestyle="--",
            label=f"Thm 3 bound, λ = {lam:.3g}",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("flow time t = η·step")
    ax.set_ylabel("‖f_θt(x*) − f̄_θ̄t(x*)‖")
    ax.set_title("(a) network vs linearisation (Thm 3)", fontsize=10)
    ax.legend(fontsize=6, ncol=2)
    ax = axes[0, 1]
    for i, lam in enumerate(results["lambdas"]):
        c = colors[i % len(colors)]
        ax.plot(results["times"][i], results["distance"][i], color=c, label=f"λ = {lam:.3g}")
        ax.plot(results["times"][i], results["thm2_bound"][i], color=c, linestyle="--")
    for name, label, c in (("zero", "λ = 0", "k"), ("selective", "selective λ_t", "tab:purple")):
        part = results[name]
        ax.plot(part["times"], part["distance"], color=c, label=label)
        ax.plot(part["times"], part["thm2_bound"], color=c, linestyle="--")
    ax.set_yscale("log")
    ax.set_xlabel("flow time t")
    ax.set_ylabel("‖θ_t − θ_0‖ (dashed: Thm 2 bound)")
    ax.set_title("(b) distance to θ_0 (Thm 2)", fontsize=10)
    ax.legend(fontsize=7)
    ax = axes[1, 0]
    sel, const = results["selective"], results["constant"]
    ax.plot(
        sel["times"],
        sel["loss"],
        label=f"selective λ_t (on in {100 * sel['fraction_regularised']:.1f}% of steps)",
    )
    ax.plot(const["times"], const["loss"], label=f"constant λ = {sel['lambda']:.3g}")
    on = np.asarray(sel["strengths"]) > 0
    st = np.asarray(sel["strength_times"])
    ymin = min(min(sel["loss"]), min(const["loss"]))
    ax.scatter(
        st[on],
        np.full(int(on.sum()), ymin),
        marker="|",
        color="tab:red",
        label="λ_t on (selective)",
    )
    ax.set_yscale("log")
    ax.set_xlabel("flow time t")
    ax.set_ylabel("R̃(θ_t) = ‖f_θt(x*) − y*‖²")
    ax.set_title("(c) selective vs constant λ (Thm 1: selective is monotone)", fontsize=10)
    ax.legend(fontsize=7)
    ax = axes[1, 1]
    ax.plot(results["sigmas"], results["krr_risk"], label="KRR risk ‖σ(K+σI)⁻¹ỹ‖²")
    ax.plot(
        results["sigmas"],
        results["thm5_lower"],
        linestyle="--",
        label="Thm 5 lower (σ‖ỹ‖/(σ+λ_max))²",
    )
    ax.plot(
        results["sigmas"],
        results["thm5_upper"],
        linestyle="--",
        label="Thm 5 upper (σ‖ỹ‖/(σ+λ_min))²",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ridge σ = λ/2")
    ax.set_ylabel("training risk of the linearised model")
    ax.set_title("(d) Thm 5 sandwich (empirical NTK at θ_0)", fontsize=10)
    ax.legend(fontsize=7)
    fig.suptitle(
        f"Rahimi Afzal et al. 2025, Thms 1–3, 5 (λ_max(K) = {results['lambda_max_ntk']:.3g})"
    )
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    from ntsim.cli import run_script

    run_script(__file__)
