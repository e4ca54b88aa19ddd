"""Simulations behind Thm 4.1 of Shachaf et al. 2021 (fine-tuning linear regression).

Random instances: ``Σ = V diag(λ) Vᵀ`` with Haar ``V`` and ``λ ~ U[0.2, 2]`` (condition number
up to 10, so nothing relies on isotropy), Gaussian rows ``x ~ N(0, Σ)``, ``θ_S, θ_T ~ N(0, I)``
independent, and a shift ``u ~ N(0, shift²I)``. ``draws_per_n`` instances per sample size
``n`` (drawn once with ``max(n_values)`` rows; group ``j`` sees the first ``n_values[j]``).

* :func:`simulate_thm4_1_closed_form` — eq. (1) by QR projectors vs the SVD pseudo-inverse
  form, and the risk after shifting both tasks by ``u``.
* :func:`simulate_thm4_1_gd` — GD from ``θ_S`` on ``(1/n)‖Xw − y‖²``: its limit, its iterates
  against the closed form, and ``P_⊥w(t)``.
* :func:`simulate_thm4_1_monte_carlo` — ``R(γ)`` by eq. (2) and a fresh-sample Monte Carlo
  estimate with its standard error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import jax
import jax.numpy as jnp

from ntsim._types import Array, PRNGKey
from ntsim._validation import check_key, check_setting_type
from ntsim.core import (
    Record,
    covariance,
    gaussian_inputs,
    gradient_descent,
    mse_loss,
    random_orthogonal,
    record_params,
)
from ntsim.theory.linear_teachers import _common, _regression

__all__ = [
    "ClosedFormRun",
    "GDRun",
    "MonteCarloRun",
    "Thm41Setting",
    "simulate_thm4_1_closed_form",
    "simulate_thm4_1_gd",
    "simulate_thm4_1_monte_carlo",
]


@dataclass(frozen=True)
class Thm41Setting:
    """Sizes of the Thm 4.1 simulations (ours; the paper gives none).

    Attributes:
      d: input dimension.
      n_values: sample sizes (``n < d``).
      draws_per_n: instances per sample size.
      shift: scale of the common shift ``u`` (translation check).
      mc_samples: fresh samples per Monte Carlo estimate.
      gd_steps, gd_record_every: GD length and recording stride.
    """

    d: int = 40
    n_values: tuple[int, ...] = (1, 10, 20, 30, 39)
    draws_per_n: int = 45
    shift: float = 10.0
    mc_samples: int = 20_000
    gd_steps: int = 600
    gd_record_every: int = 50

    def __post_init__(self):
        if not self.n_values or min(self.n_values) < 1 or max(self.n_values) >= self.d:
            raise ValueError(f"Thm41Setting: n_values must lie in [1, d − 1], got {self.n_values}.")


def _instance(key, n: int, d: int, shift: float) -> dict:
    k_spec, k_basis, k_x, k_s, k_t, k_u = jax.random.split(key, 6)
    spectrum = jnp.sort(jax.random.uniform(k_spec, (d,), minval=0.2, maxval=2.0))[::-1]
    basis = random_orthogonal(k_basis, d)
    return {
        "sigma": covariance(spectrum, basis),
        "sqrt": basis * jnp.sqrt(spectrum)[None, :],  # A with AAᵀ = Σ
        "x": gaussian_inputs(k_x, n, spectrum, basis),
        "theta_s": jax.random.normal(k_s, (d,)),
        "theta_t": jax.random.normal(k_t, (d,)),
        "u": shift * jax.random.normal(k_u, (d,)),
    }


def _over_sizes(key, fn, setting: Thm41Setting):
    ns, per_n = setting.n_values, setting.draws_per_n
    keys = jax.random.split(key, len(ns) * per_n)
    instances = jax.jit(jax.vmap(lambda k: _instance(k, max(ns), setting.d, setting.shift)))(keys)
    outs = []
    for j, n in enumerate(ns):
        group = jax.tree.map(lambda a, j=j: a[j * per_n : (j + 1) * per_n], instances)
        outs.append(jax.jit(jax.vmap(fn))({**group, "x": group["x"][:, :n]}))
    return jax.tree.map(lambda *a: jnp.concatenate(a), *outs)


class ClosedFormRun(NamedTuple):
    """Per instance: ``‖γ_(1) − γ_pinv‖/‖γ_pinv‖``, and ``R`` with and without the shift."""

    relative_error: Array
    risk_shifted: Array
    risk: Array


def simulate_thm4_1_closed_form(key: PRNGKey, setting: Thm41Setting) -> ClosedFormRun:
    """Eq. (1) two ways, and fine-tuning risk with both tasks shifted (module doc)."""
    check_setting_type("simulate_thm4_1_closed_form", setting, Thm41Setting)
    check_key("simulate_thm4_1_closed_form", key)

    def terms(inst):
        x, ts, tt, sigma, u = (inst[k] for k in ("x", "theta_s", "theta_t", "sigma", "u"))
        gamma = _regression.fine_tuned_linear(x, ts, tt)
        gamma_pinv = _regression.fine_tuned_linear_pinv(x, x @ tt, ts)

        def fine_tune_risk(theta_s, theta_t):  # the whole pipeline: labels, fine-tuning, risk
            g = _regression.fine_tuned_linear_pinv(x, x @ theta_t, theta_s)
            return _regression.population_risk(g, theta_t, sigma)

        return {
            "relative_error": jnp.linalg.norm(gamma - gamma_pinv) / jnp.linalg.norm(gamma_pinv),
            "risk_shifted": fine_tune_risk(ts + u, tt + u),
            "risk": fine_tune_risk(ts, tt),
        }

    return ClosedFormRun(**_over_sizes(key, terms, setting))


class GDRun(NamedTuple):
    """Per instance, relative to ``‖θ_S‖ + ‖θ_T‖``: ``‖w(T) − γ‖``, ``max_t ‖w(t) − closed
    form‖``, ``max_t ‖P_⊥(w(t) − θ_S)‖``; and the first non-finite GD step (−1: none)."""

    limit: Array
    iterates: Array
    null_space: Array
    first_nonfinite: Array


def simulate_thm4_1_gd(key: PRNGKey, setting: Thm41Setting) -> GDRun:
    """GD from ``θ_S`` with ``η = 0.9n/λ_max(XᵀX)`` (module doc)."""
    check_setting_type("simulate_thm4_1_gd", setting, Thm41Setting)
    check_key("simulate_thm4_1_gd", key)
    steps, every = setting.gd_steps, setting.gd_record_every

    def terms(inst):
        x, ts, tt = inst["x"], inst["theta_s"], inst["theta_t"]
        y = x @ tt
        n = x.shape[0]
        eta = 0.9 * n / jnp.linalg.eigvalsh(x @ x.T)[-1]  # λ_max(XᵀX) = λ_max(XXᵀ)
        loss = mse_loss(lambda w, xi: xi @ w, x, y, loss_scale=1.0 / n)  # (1/n)‖Xw − y‖²
        run = gradient_descent(
            loss, ts, learning_rate=eta, num_steps=steps, record=Record(every, record_params()),
            throw=False,
        )  # fmt: skip
        scale = jnp.linalg.norm(ts) + jnp.linalg.norm(tt)
        gamma = _regression.fine_tuned_linear(x, ts, tt)
        closed = _regression.gd_iterate_closed_form(x, y, ts, learning_rate=eta, steps=run.steps)
        p_perp = _common.null_space_projector(x)
        return {
            "limit": jnp.linalg.norm(run.params - gamma) / scale,
            "iterates": jnp.max(jnp.linalg.norm(run.records - closed, axis=-1)) / scale,
            "null_space": jnp.max(jnp.linalg.norm((run.records - ts) @ p_perp, axis=-1)) / scale,
            "first_nonfinite": run.first_nonfinite_step,
        }

    return GDRun(**_over_sizes(key, terms, setting))


class MonteCarloRun(NamedTuple):
    """Per instance: ``R(γ)`` by eq. (2), the Monte Carlo estimate and its standard error."""

    risk: Array
    estimate: Array
    stderr: Array


def simulate_thm4_1_monte_carlo(key: PRNGKey, setting: Thm41Setting) -> MonteCarloRun:
    """γ by the pseudo-inverse form; ``R(γ)`` by eq. (2) and by fresh samples (module doc)."""
    check_setting_type("simulate_thm4_1_monte_carlo", setting, Thm41Setting)
    check_key("simulate_thm4_1_monte_carlo", key)
    k_inst, k_mc = jax.random.split(key)

    def terms(inst):
        x, ts, tt = inst["x"], inst["theta_s"], inst["theta_t"]
        return {
            "gamma": _regression.fine_tuned_linear_pinv(x, x @ tt, ts),
            "risk": _regression.risk_thm4_1(x, ts, tt, inst["sigma"]),
            "theta_t": tt,
            "sqrt": inst["sqrt"],
        }

    t = _over_sizes(k_inst, terms, setting)
    mc = jax.jit(jax.vmap(lambda k, w, tt, a: _regression.monte_carlo_risk(
        k, w, tt, a, num_samples=setting.mc_samples, batch_size=2000)))  # fmt: skip
    keys = jax.random.split(k_mc, t["risk"].shape[0])
    estimate, stderr = mc(keys, t["gamma"], t["theta_t"], t["sqrt"])
    return MonteCarloRun(t["risk"], estimate, stderr)
