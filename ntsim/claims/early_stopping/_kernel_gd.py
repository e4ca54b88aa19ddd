"""Claims on kernel GD from a pretrained initialisation (Sun & Raskutti 2026, Secs 3.4, B.1).

All checks run in float64 inside ``with jax.enable_x64(True):`` and vmap one compiled
function over ``≥ 200`` random instances. Random kernels are Gram matrices ``𝕂 = ΦΦᵀ`` of
Gaussian features with a power-law column scale (``p ≥ N + M`` columns, so ``𝕂`` is full
rank, Assumption 4.5), which spreads the spectrum of ``K = 𝕂/N`` over several decades.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._validation import check_choice
from ntsim.claims._base import SCALES, Claim, ClaimResult, combine_results, compare, vmap_instances
from ntsim.claims.early_stopping._common import map_instances
from ntsim.core import (
    Record,
    check_finite,
    empirical_ntk_fn,
    gradient_descent,
    linearize,
    mlp,
    mse_loss,
    record_predictions,
)
from ntsim.theory import early_stopping as es

__all__ = ["CLAIMS"]

_PAPER = "Sun & Raskutti 2026"
_INSTANCES = 200

# (width n, N train points, input dim, GD steps) for the linearised network.
_LINEARISED = {"quick": (24, 5, 3, 12), "full": (256, 16, 4, 100)}
# (N train, M test, steps) for random kernels.
_CLOSED_FORM = {"quick": (12, 5, 40), "full": (60, 20, 400)}
# (N, Monte Carlo noise draws); step counts τ at which E‖f_τ − f_tgt‖²_N is checked.
_MONTE_CARLO = {"quick": (12, 4000), "full": (60, 20_000)}
_MC_STEPS = (1, 7, 60)

# Float64 identities: the linearised network's GD and the eigen closed form differ by
# round-off accumulated over ≤ 100 steps of a contraction, ~1e-14 relative; 1e-9 leaves
# > 1e4 slack while any wrong factor of N or n in K would give O(1) errors.
_TOL_IDENTITY = 1e-9
# Monte Carlo: |z| ≤ 4.5 per (instance, τ, quantity). Each z is a mean of ≥ 4000 i.i.d.
# draws of a quadratic form in Gaussians (CLT), so P(|z| > 4.5) ≈ 6.8e-6 and over
# 200 × 3 × 2 = 1200 z's the family-wise false-alarm rate is ≈ 0.8%.
_Z_MAX = 4.5


def _random_kernel(key, rows: int):
    """``𝕂 = ΦΦᵀ`` with ``Φ_ij ~ N(0, j^{−1.5})`` (``p = 2·rows`` columns): full rank, decaying."""
    p = 2 * rows
    scale = jnp.arange(1, p + 1) ** -0.75
    phi = jax.random.normal(key, (rows, p)) * scale
    return phi @ phi.T


# ------------------------------------------------------------------ eqs. (5), (7), (37)


def _linearised_error(key, width: int, n: int, d: int, steps: int):
    k_init, k_x, k_y = jax.random.split(key, 3)
    model = mlp((width, width), activation="tanh", parameterization="standard", b_std=0.1)
    x = jax.random.normal(k_x, (n, d))
    y = jax.random.normal(k_y, (n,))
    params = model.init(k_init, x[0])
    apply_lin = linearize(lambda p, xi: model.apply(p, xi)[0], params)
    ntk = empirical_ntk_fn(lambda p, xi: model.apply(p, xi)[0], trace_axes=())(x, None, params)
    kernel = es.empirical_kernel_matrix(ntk, width=width)  # K = JJᵀ/(N n)
    eta0 = 1.0 / jnp.linalg.eigvalsh(kernel)[-1]
    loss = mse_loss(apply_lin, x, y, loss_scale=0.5 / n)  # (1/2N) Σ (f − y)²
    run = gradient_descent(
        loss,
        params,
        learning_rate=eta0 / width,  # ε = η_0/n
        num_steps=steps,
        record=Record(1, record_predictions(apply_lin, x)),
        throw=False,
    )
    f0 = run.records[0]
    closed = y + es.kernel_gd_residuals(kernel, f0 - y, eta0, run.steps)
    scale = jnp.max(jnp.abs(f0 - y))
    return run, jnp.max(jnp.abs(run.records - closed)) / scale


def check_linearised_network(key, scale: str) -> ClaimResult:
    """GD with ε = η_0/n on the linearised SP network = kernel GD with α = η_0, K = JJᵀ/(Nn)."""
    check_choice("check_linearised_network", "scale", scale, SCALES)
    width, n, d, steps = _LINEARISED[scale]
    with jax.enable_x64(True):
        keys = jax.random.split(key, _INSTANCES)
        run, errors = vmap_instances(lambda k: _linearised_error(k, width, n, d, steps), keys)
        check_finite(run)
        errors = np.asarray(errors)
    return compare(
        errors,
        _TOL_IDENTITY,
        relation="upper_bound",
        notes=f"tanh MLP (2 hidden layers of width n = {width}, standard parameterisation), "
        f"N = {n}, d = {d}, linearised at θ_PT = a random init; {steps} GD steps on "
        "(1/2N)Σ(f − y)² with ε = η_0/n, η_0 = 1/λ̂_max(K). Measured: max_τ ‖f_τ(X) − "
        "[Y + (I − η_0K)^τ(f_0 − Y)]‖_∞ / ‖f_0 − Y‖_∞ with K = JJᵀ/(Nn); worst "
        f"{errors.max():.1e} vs tolerance {_TOL_IDENTITY:g}.",
    )


# ----------------------------------------------------------- closed forms vs iteration


def _closed_form_errors(key, n: int, m: int, steps: int):
    k_kernel, k_y, k_f = jax.random.split(key, 3)
    gram = _random_kernel(k_kernel, n + m)
    y = jax.random.normal(k_y, (n,))
    f_pt = jax.random.normal(k_f, (n + m,))
    k_train, k_test = gram[:n, :n], gram[n:, :n]
    alpha = 1.0 / jnp.linalg.eigvalsh(k_train / n)[-1]

    def step(f, _):  # f_{τ+1}(x) = f_τ(x) − (α/N) 𝕂(x, X)(f_τ(X) − Y), train and test
        f_next = f - alpha / n * gram[:, :n] @ (f[:n] - y)
        return f_next, f

    _, path = jax.lax.scan(step, f_pt, None, length=steps + 1)
    taus = jnp.arange(steps + 1)
    pred = es.pretrained_kernel_gd(
        k_train,
        y,
        f_pt[:n],
        step_size=alpha,
        steps=taus,
        kernel_test_train=k_test,
        f_pt_test=f_pt[n:],
    )
    residual = es.kernel_gd_residuals(k_train / n, f_pt[:n] - y, alpha, taus)
    scale = jnp.max(jnp.abs(path))
    return (
        jnp.stack(
            [
                jnp.max(jnp.abs(pred.train - path[:, :n])),
                jnp.max(jnp.abs(pred.test - path[:, n:])),
                jnp.max(jnp.abs(residual - (path[:, :n] - y))),
            ]
        )
        / scale
    )


def check_closed_forms(key, scale: str) -> ClaimResult:
    """Train residual (I − αK)^τ r_0 and test predictions vs direct function-space iteration."""
    check_choice("check_closed_forms", "scale", scale, SCALES)
    n, m, steps = _CLOSED_FORM[scale]
    with jax.enable_x64(True):
        keys = jax.random.split(key, _INSTANCES)
        errors = np.asarray(vmap_instances(lambda k: _closed_form_errors(k, n, m, steps), keys))
    worst = errors.max(axis=0)
    return compare(
        errors,
        _TOL_IDENTITY,
        relation="upper_bound",
        num_instances=_INSTANCES,
        notes=f"random full-rank kernels 𝕂 = ΦΦᵀ, N = {n} train + M = {m} test points, "
        f"α = 1/λ̂_max(𝕂/N), τ = 0..{steps}; f_PT and Y Gaussian. Errors relative to "
        f"max|f|: train {worst[0]:.1e}, test {worst[1]:.1e}, residual {worst[2]:.1e} vs "
        f"tolerance {_TOL_IDENTITY:g}.",
    )


# ------------------------------------------------------------ bias² and variance (MC)


def _monte_carlo(key, n: int, draws: int):
    k_kernel, k_gap, k_sigma, k_noise = jax.random.split(key, 4)
    kernel = _random_kernel(k_kernel, n) / n
    lam = jnp.maximum(jnp.linalg.eigvalsh(kernel), 0)
    alpha = 1.0 / lam[-1]
    gap = jax.random.normal(k_gap, (n,))  # Δ* = f_tgt(X) − f_PT(X)
    sigma = jax.random.uniform(k_sigma, minval=0.2, maxval=2.0)
    noise = sigma * jax.random.normal(k_noise, (draws, n))
    taus = jnp.asarray(_MC_STEPS)
    reference_total = es.squared_bias(kernel, gap, alpha, taus) + es.expected_variance(
        lam, alpha, taus, sigma
    )
    reference_variance = es.expected_variance(lam, alpha, taus, sigma)

    def z(samples, reference):
        return (samples.mean() - reference) / (samples.std(ddof=1) / np.sqrt(draws))

    z_total, z_variance = [], []
    for index, tau in enumerate(_MC_STEPS):  # static τ: explicit matrix powers, no eigenbasis
        decay = jnp.linalg.matrix_power(jnp.eye(n) - alpha * kernel, tau)
        fitted_noise = noise - noise @ decay.T  # [I − (I − αK)^τ] w, one row per draw
        # f_τ − f_tgt = −(I − αK)^τ Δ* + [I − (I − αK)^τ] w
        total = jnp.mean((fitted_noise - decay @ gap) ** 2, axis=-1)
        z_total.append(z(total, reference_total[index]))
        z_variance.append(z(jnp.mean(fitted_noise**2, axis=-1), reference_variance[index]))
    return jnp.stack(z_total + z_variance)


def check_bias_variance_monte_carlo(key, scale: str) -> ClaimResult:
    """E‖f_τ − f_tgt‖²_N = B²_τ + E V_τ, E V_τ = (σ²/N)Σ(1 − (1 − αλ̂_i)^τ)² (Monte Carlo)."""
    check_choice("check_bias_variance_monte_carlo", "scale", scale, SCALES)
    n, draws = _MONTE_CARLO[scale]
    with jax.enable_x64(True):
        keys = jax.random.split(key, _INSTANCES)
        z = np.abs(
            np.asarray(map_instances(lambda k: _monte_carlo(k, n, draws), keys, batch_size=10))
        )
    return compare(
        z.ravel(),
        _Z_MAX,
        relation="upper_bound",
        num_instances=_INSTANCES,
        notes=f"N = {n}, random kernels, Δ* ~ N(0, I), σ ~ U[0.2, 2], τ ∈ {_MC_STEPS}, "
        f"{draws} Gaussian noise draws per instance. Simulation: explicit matrix powers "
        "(I − αK)^τ applied to Δ* and w; reference: the eigenvalue closed forms B²_τ + E V_τ "
        f"and E V_τ. |z| of both means: max {z.max():.2f} vs {_Z_MAX} (family-wise "
        f"false-alarm rate ≈ 0.8% over {z.size} z's).",
    )


# ------------------------------------------------------- bias and variance bounds


def _bounds(key, n: int, num_taus: int):
    k_kernel, k_coef, k_sigma = jax.random.split(key, 3)
    gram = _random_kernel(k_kernel, n)
    kernel = gram / n
    lam = jnp.maximum(jnp.linalg.eigvalsh(kernel), 0)
    alpha = 1.0 / lam[-1]
    coef = jax.random.normal(k_coef, (n,))
    gap = gram @ coef  # Δ* = Σ_j a_j 𝕂(·, X_j) on X
    norm_sq = coef @ gram @ coef  # ‖Δ*‖²_H = aᵀ𝕂a
    sigma = jax.random.uniform(k_sigma, minval=0.2, maxval=2.0)
    taus = jnp.unique(jnp.geomspace(1, 10_000, num_taus).round(), size=num_taus)
    eta = alpha * taus
    bias = es.squared_bias(kernel, gap, alpha, taus)
    variance = es.expected_variance(lam, alpha, taus, sigma)
    return {
        "bias": bias,
        "bias_bound": es.bias_bound(norm_sq, eta),
        "variance": variance,
        "variance_bound": es.variance_bound(lam, eta, sigma),
    }


def check_bias_variance_bounds(key, scale: str) -> ClaimResult:
    """B²_τ ≤ ‖Δ*‖²_H/(2eη_τ) and E V_τ ≤ σ²η_τ R̂_K(η_τ^{−1/2})²."""
    check_choice("check_bias_variance_bounds", "scale", scale, SCALES)
    n = _CLOSED_FORM[scale][0]
    num_taus = 30
    with jax.enable_x64(True):
        keys = jax.random.split(key, _INSTANCES)
        out = {
            k: np.asarray(v)
            for k, v in vmap_instances(lambda k: _bounds(k, n, num_taus), keys).items()
        }
    # round-off only: the variance bound is attained in the limit τ → ∞ (both → σ²)
    bias = compare(
        out["bias"],
        out["bias_bound"],
        relation="upper_bound",
        atol=1e-12 * out["bias_bound"].max(),
        num_instances=_INSTANCES,
    )
    variance = compare(
        out["variance"],
        out["variance_bound"],
        relation="upper_bound",
        atol=1e-12 * out["variance_bound"].max(),
        num_instances=_INSTANCES,
    )
    tight_bias = np.max(out["bias"] / out["bias_bound"])
    tight_var = np.max(out["variance"] / out["variance_bound"])
    return combine_results(
        bias,
        variance,
        notes=f"N = {n}, random kernels, Δ* = 𝕂a with a ~ N(0, I), {num_taus} step counts "
        "τ ∈ [1, 10⁴] (geometric), α = 1/λ̂_max. Tightest ratios: B²/bound "
        f"{tight_bias:.3f}, E V/bound {tight_var:.3f} (both must be ≤ 1).",
    )


CLAIMS = (
    Claim(
        id="early_stopping.eq7.linearised_gd_is_kernel_gd",
        paper=f"{_PAPER}, eqs. (5), (7), (37)",
        statement="GD with ε = η_0/n on (1/2N)Σ(f − y)² moves the linearised SP network as "
        "f_{τ+1}(X) = f_τ(X) − η_0 K(f_τ(X) − Y) with K = JJᵀ/(N n).",
        check=check_linearised_network,
    ),
    Claim(
        id="early_stopping.kernel_gd.closed_forms",
        paper=f"{_PAPER}, Sec 3.4, Lemma 1 (linearised)",
        statement="Kernel GD from f_PT: r_τ = (I − αK)^τ r_0 and f_τ(x) = f_PT(x) + "
        "𝕂(x, X)𝕂^{-1}[I − (I − αK)^τ](Y − f_PT(X)).",
        check=check_closed_forms,
    ),
    Claim(
        id="early_stopping.eq34.bias_variance_monte_carlo",
        paper=f"{_PAPER}, eq. (34)",
        statement="E‖f_τ − f_tgt‖²_N = (1/N)‖(I − αK)^τΔ*‖² + (σ²/N)Σ_i(1 − (1 − αλ̂_i)^τ)².",
        check=check_bias_variance_monte_carlo,
    ),
    Claim(
        id="early_stopping.eq35.bias_variance_bounds",
        paper=f"{_PAPER}, eq. (35); Raskutti et al. 2014, Lemmas 7–8",
        statement="B²_τ ≤ ‖Δ*‖²_H/(2eη_τ) and E V_τ ≤ σ²η_τ R̂_K(η_τ^{−1/2})² for every τ.",
        check=check_bias_variance_bounds,
    ),
)
