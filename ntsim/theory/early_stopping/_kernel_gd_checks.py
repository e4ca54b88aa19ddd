r"""Random instances for the kernel-GD statements (Sun & Raskutti 2026, Secs 3.4, B.1).

Each simulation draws ``instances`` independent problems (instance keys
``split(key, instances)``) and measures one statement of :mod:`._kernel_gd` against an
independent computation:

* :func:`simulate_linearised_gd` — GD with ``ε = η_0/n`` on the linearised SP network
  (``ntsim.core.linearize``, ``gradient_descent``) against the kernel-GD closed form with
  ``K = JJᵀ/(Nn)`` (eqs. (5), (7), (37));
* :func:`simulate_kernel_closed_forms` — direct function-space iteration against
  :func:`pretrained_kernel_gd` and :func:`kernel_gd_residuals`;
* :func:`simulate_bias_variance_monte_carlo` — noise drawn and propagated by explicit
  matrix powers against ``B²_τ + E V_τ`` (eq. (34)), as z-scores;
* :func:`simulate_bias_variance_bounds` — ``B²_τ``, ``E V_τ`` and their bounds (eq. (35)).

Random kernels are Gram matrices ``𝕂 = ΦΦᵀ`` of Gaussian features with a power-law column
scale (``p = 2·rows`` columns: full rank, Assumption 4.5), which spreads the spectrum of
``K = 𝕂/N`` over several decades. Run them in float64 (the checks are identities).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_int_fields, check_key, check_setting_type
from ntsim.core import (
    Record,
    empirical_ntk_fn,
    gradient_descent,
    linearize,
    mlp,
    mse_loss,
    record_predictions,
)
from ntsim.theory.early_stopping._kernel_gd import (
    bias_bound,
    empirical_kernel_matrix,
    expected_variance,
    kernel_gd_residuals,
    pretrained_kernel_gd,
    squared_bias,
    variance_bound,
)

__all__ = [
    "BOUNDS_ANCHOR_X",
    "BiasVarianceBounds",
    "BoundsSetting",
    "ClosedFormErrors",
    "ClosedFormSetting",
    "LinearisedGDSetting",
    "MonteCarloSetting",
    "random_kernel",
    "simulate_bias_variance_bounds",
    "simulate_bias_variance_monte_carlo",
    "simulate_kernel_closed_forms",
    "simulate_linearised_gd",
]


def random_kernel(key: PRNGKey, rows: int) -> Array:
    """``𝕂 = ΦΦᵀ`` with ``Φ_ij ~ N(0, j^{−1.5})`` (``p = 2·rows`` columns): full rank, decaying."""
    p = 2 * rows
    scale = jnp.arange(1, p + 1) ** -0.75
    phi = jax.random.normal(key, (rows, p)) * scale
    return phi @ phi.T


def _instances(fn, key, instances: int, batch_size: int | None = None):
    keys = jax.random.split(key, instances)
    if batch_size is None:
        return jax.jit(jax.vmap(fn))(keys)
    return jax.jit(lambda ks: jax.lax.map(fn, ks, batch_size=batch_size))(keys)


@dataclasses.dataclass(frozen=True)
class LinearisedGDSetting:
    """tanh MLP (2 hidden layers of width ``n``, SP), ``N`` Gaussian inputs, ``steps`` GD steps."""

    width: int = 256
    num_train: int = 16
    input_dim: int = 4
    steps: int = 100
    instances: int = 200

    def __post_init__(self):
        check_int_fields(self, ("width", "num_train", "input_dim", "steps", "instances"))


def simulate_linearised_gd(key: PRNGKey, setting: LinearisedGDSetting) -> Array:
    """Per instance, ``max_τ ‖f_τ(X) − [Y + (I − η_0K)^τ(f_0 − Y)]‖_∞ / ‖f_0 − Y‖_∞``.

    ``f_τ``: GD with ``ε = η_0/n`` on ``(1/2N)Σ(f − y)²`` of the network linearised at a
    random SP init; ``K = JJᵀ/(Nn)`` from the empirical NTK; ``η_0 = 1/λ̂_max(K)``.
    """
    check_setting_type("simulate_linearised_gd", setting, LinearisedGDSetting)
    check_key("simulate_linearised_gd", key)
    width, n, d, steps = setting.width, setting.num_train, setting.input_dim, setting.steps

    def instance(k):
        k_init, k_x, k_y = jax.random.split(k, 3)
        model = mlp((width, width), activation="tanh", parameterization="standard", b_std=0.1)
        x = jax.random.normal(k_x, (n, d))
        y = jax.random.normal(k_y, (n,))
        params = model.init(k_init, x[0])
        apply_lin = linearize(lambda p, xi: model.apply(p, xi)[0], params)
        ntk = empirical_ntk_fn(lambda p, xi: model.apply(p, xi)[0], trace_axes=())(x, None, params)
        kernel = empirical_kernel_matrix(ntk, width=width)  # K = JJᵀ/(N n)
        eta0 = 1.0 / jnp.linalg.eigvalsh(kernel)[-1]
        run = gradient_descent(
            mse_loss(apply_lin, x, y, loss_scale=0.5 / n),
            params,
            learning_rate=eta0 / width,  # ε = η_0/n
            num_steps=steps,
            record=Record(1, record_predictions(apply_lin, x)),
            throw=False,
        )
        f0 = run.records[0]
        closed = y + kernel_gd_residuals(kernel, f0 - y, eta0, run.steps)
        return jnp.max(jnp.abs(run.records - closed)) / jnp.max(jnp.abs(f0 - y))

    return _instances(instance, key, setting.instances)


@dataclasses.dataclass(frozen=True)
class ClosedFormSetting:
    """Random kernels on ``N`` train + ``M`` test points; ``τ = 0..steps``."""

    num_train: int = 60
    num_test: int = 20
    steps: int = 400
    instances: int = 200

    def __post_init__(self):
        check_int_fields(self, ("num_train", "num_test", "steps", "instances"))


class ClosedFormErrors(NamedTuple):
    """``max_τ`` errors relative to ``max|f|``, per instance: train predictions, test
    predictions (:func:`pretrained_kernel_gd`) and residuals (:func:`kernel_gd_residuals`)."""

    train: Array
    test: Array
    residual: Array


def simulate_kernel_closed_forms(key: PRNGKey, setting: ClosedFormSetting) -> ClosedFormErrors:
    """Kernel GD from ``f_PT`` iterated in function space (``f_{τ+1}(x) = f_τ(x) −
    (α/N)𝕂(x, X)(f_τ(X) − Y)``, train and test) against the closed forms; ``α = 1/λ̂_max``."""
    check_setting_type("simulate_kernel_closed_forms", setting, ClosedFormSetting)
    check_key("simulate_kernel_closed_forms", key)
    n, m, steps = setting.num_train, setting.num_test, setting.steps

    def instance(k):
        k_kernel, k_y, k_f = jax.random.split(k, 3)
        gram = random_kernel(k_kernel, n + m)
        y = jax.random.normal(k_y, (n,))
        f_pt = jax.random.normal(k_f, (n + m,))
        k_train, k_test = gram[:n, :n], gram[n:, :n]
        alpha = 1.0 / jnp.linalg.eigvalsh(k_train / n)[-1]

        def step(f, _):
            return f - alpha / n * gram[:, :n] @ (f[:n] - y), f

        _, path = jax.lax.scan(step, f_pt, None, length=steps + 1)
        taus = jnp.arange(steps + 1)
        pred = pretrained_kernel_gd(
            k_train, y, f_pt[:n], step_size=alpha, steps=taus, kernel_test_train=k_test,
            f_pt_test=f_pt[n:],
        )  # fmt: skip
        residual = kernel_gd_residuals(k_train / n, f_pt[:n] - y, alpha, taus)
        scale = jnp.max(jnp.abs(path))
        return ClosedFormErrors(
            jnp.max(jnp.abs(pred.train - path[:, :n])) / scale,
            jnp.max(jnp.abs(pred.test - path[:, n:])) / scale,
            jnp.max(jnp.abs(residual - (path[:, :n] - y))) / scale,
        )

    return _instances(instance, key, setting.instances)


@dataclasses.dataclass(frozen=True)
class MonteCarloSetting:
    """``N`` points, ``draws`` noise draws per instance, step counts ``taus`` (static)."""

    num_train: int = 60
    draws: int = 20_000
    taus: tuple[int, ...] = (1, 7, 60)
    instances: int = 200
    batch_size: int = 10

    def __post_init__(self):
        check_int_fields(self, ("num_train", "draws", "instances", "batch_size"))
        if not self.taus or any(not isinstance(t, int) or t < 1 for t in self.taus):
            raise ValueError(f"MonteCarloSetting.taus must be positive ints, got {self.taus}.")


def simulate_bias_variance_monte_carlo(key: PRNGKey, setting: MonteCarloSetting) -> Array:
    """z-scores ``(mean − closed form)/s.e.`` per instance, ``(instances, 2·len(taus))``:
    first ``E‖f_τ − f_tgt‖²_N`` against ``B²_τ + E V_τ``, then ``E V_τ`` alone (eq. (34)).

    Per instance: a random kernel, ``Δ* ~ N(0, I)``, ``σ ~ U[0.2, 2]``, ``α = 1/λ̂_max``;
    ``f_τ − f_tgt = −(I − αK)^τΔ* + [I − (I − αK)^τ]w`` by explicit matrix powers.
    """
    check_setting_type("simulate_bias_variance_monte_carlo", setting, MonteCarloSetting)
    check_key("simulate_bias_variance_monte_carlo", key)
    n, draws = setting.num_train, setting.draws

    def instance(k):
        k_kernel, k_gap, k_sigma, k_noise = jax.random.split(k, 4)
        kernel = random_kernel(k_kernel, n) / n
        lam = jnp.maximum(jnp.linalg.eigvalsh(kernel), 0)
        alpha = 1.0 / lam[-1]
        gap = jax.random.normal(k_gap, (n,))  # Δ* = f_tgt(X) − f_PT(X)
        sigma = jax.random.uniform(k_sigma, minval=0.2, maxval=2.0)
        noise = sigma * jax.random.normal(k_noise, (draws, n))
        taus = jnp.asarray(setting.taus)
        variance = expected_variance(lam, alpha, taus, sigma)
        total = squared_bias(kernel, gap, alpha, taus) + variance

        def z(samples, reference):
            return (samples.mean() - reference) / (samples.std(ddof=1) / np.sqrt(draws))

        z_total, z_variance = [], []
        for index, tau in enumerate(setting.taus):
            decay = jnp.linalg.matrix_power(jnp.eye(n) - alpha * kernel, tau)
            fitted_noise = noise - noise @ decay.T  # [I − (I − αK)^τ] w, one row per draw
            errors = jnp.mean((fitted_noise - decay @ gap) ** 2, axis=-1)
            z_total.append(z(errors, total[index]))
            z_variance.append(z(jnp.mean(fitted_noise**2, axis=-1), variance[index]))
        return jnp.stack(z_total + z_variance)

    return _instances(instance, key, setting.instances, setting.batch_size)


@dataclasses.dataclass(frozen=True)
class BoundsSetting:
    """``N`` points, ``num_taus`` geometric step counts in ``[1, 10⁴]``."""

    num_train: int = 60
    num_taus: int = 30
    instances: int = 200

    def __post_init__(self):
        check_int_fields(self, ("num_train", "num_taus", "instances"))


class BiasVarianceBounds(NamedTuple):
    """Per instance and step count ``(instances, num_taus)``: ``B²_τ`` and ``‖Δ*‖²_H/(2eη_τ)``,
    ``E V_τ`` and ``σ²η_τ R̂_K(η_τ^{−1/2})²`` (eq. (35)).

    And the same four on a hand instance (one row per random instance, ``(instances,
    num_taus)``), ``N = 2``, ``K = diag(2, 2x)`` (``x`` = :data:`BOUNDS_ANCHOR_X`), so
    ``α = 1/λ̂_max = ½`` and ``η_τ = τ/2``, at the step counts ``taus``: with ``Δ* = 𝕂e₂``,
    ``B²_τ/bound = 2eτx(1 − x)^{2τ}`` (near 1 at ``τ ≈ 1/(2x)``); with ``σ = 1``,
    ``E V_τ = ½[1 + (1 − (1 − x)^τ)²]`` and the bound ``½[1 + min(1, τx)]`` (both branches
    of ``min{1, ηλ̂}``)."""

    bias: Array
    bias_bound: Array
    variance: Array
    variance_bound: Array
    taus: Array
    anchor_bias: Array
    anchor_bias_bound: Array
    anchor_variance: Array
    anchor_variance_bound: Array


#: ``αλ̂`` of the hand instance's second direction: its bias ratio peaks near ``τ = 1/(2x)``.
BOUNDS_ANCHOR_X = 0.005


def _bounds_anchor(taus):
    """The hand instance of :class:`BiasVarianceBounds` (library functions only)."""
    x = BOUNDS_ANCHOR_X
    kernel = jnp.diag(jnp.asarray([2.0, 2.0 * x]))
    lam = jnp.asarray([2.0 * x, 2.0])  # ascending, as eigvalsh gives them
    alpha = 1.0 / lam[-1]
    coef = jnp.asarray([0.0, 1.0])
    gram = 2 * kernel  # 𝕂 = N K
    eta = alpha * taus
    return (
        squared_bias(kernel, gram @ coef, alpha, taus),
        bias_bound(coef @ gram @ coef, eta),
        expected_variance(lam, alpha, taus, 1.0),
        variance_bound(lam, eta, 1.0),
    )


def simulate_bias_variance_bounds(key: PRNGKey, setting: BoundsSetting) -> BiasVarianceBounds:
    """Random kernels, ``Δ* = 𝕂a`` with ``a ~ N(0, I)`` (``‖Δ*‖²_H = aᵀ𝕂a``),
    ``σ ~ U[0.2, 2]``, ``α = 1/λ̂_max``."""
    check_setting_type("simulate_bias_variance_bounds", setting, BoundsSetting)
    check_key("simulate_bias_variance_bounds", key)
    n, num_taus = setting.num_train, setting.num_taus

    def instance(k):
        k_kernel, k_coef, k_sigma = jax.random.split(k, 3)
        gram = random_kernel(k_kernel, n)
        kernel = gram / n
        lam = jnp.maximum(jnp.linalg.eigvalsh(kernel), 0)
        alpha = 1.0 / lam[-1]
        coef = jax.random.normal(k_coef, (n,))
        sigma = jax.random.uniform(k_sigma, minval=0.2, maxval=2.0)
        taus = jnp.unique(jnp.geomspace(1, 10_000, num_taus).round(), size=num_taus)
        eta = alpha * taus
        return BiasVarianceBounds(
            squared_bias(kernel, gram @ coef, alpha, taus),
            bias_bound(coef @ gram @ coef, eta),
            expected_variance(lam, alpha, taus, sigma),
            variance_bound(lam, eta, sigma),
            taus,
            *_bounds_anchor(taus),
        )

    return _instances(instance, key, setting.instances)
