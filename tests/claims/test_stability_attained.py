"""The two attained cases of Fu et al. 2023 (Thm 2.2 corrected at μ = β, Lemma A.5.1 at
η = 1/β) hold on their quick runs and go red under the planted bugs they exist for: a bound
doubled, a descent right side with 2f(w) (both kill-matrix survivors before these claims)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.claims import REGISTRY
from ntsim.claims.stability import _full_finetuning as claims
from ntsim.claims.stability import _full_finetuning_lemmas as lemma_claims
from ntsim.theory.stability import LemmaSides
from ntsim.theory.stability import descent_attained as da


def _claim(claim_id):
    (claim,) = [c for c in REGISTRY if c.id == claim_id]
    return claim


@pytest.fixture(scope="module")
def grid_run():
    claim = _claim("stability.thm2_2.bound_corrected_attained")
    with jax.enable_x64(True):
        return claim.uses.fn(jax.random.PRNGKey(3), claim.uses.scales["quick"])


def test_thm2_2_corrected_bound_is_attained_and_a_doubled_bound_is_refuted(grid_run):
    assert claims.check_bound_corrected_attained(grid_run).outcome == "holds"
    doubled = grid_run._replace(bound_corrected=2 * grid_run.bound_corrected)
    assert claims.check_bound_corrected_attained(doubled).outcome == "refuted"
    halved_step = grid_run._replace(sup_distance=0.5 * grid_run.sup_distance)
    assert claims.check_bound_corrected_attained(halved_step).outcome == "refuted"
    # √(2L/β) for √(2LR/β): right at R = 1 only, which the claim's grid goes beyond
    radius = np.asarray(grid_run.radius)[:, None]
    no_radius = grid_run._replace(bound_corrected=grid_run.bound_corrected / np.sqrt(radius))
    assert claims.check_bound_corrected_attained(no_radius).outcome == "refuted"


def test_thm2_2_attained_sees_a_bound_blind_to_beta(monkeypatch, grid_run):
    """The grid has β ∈ {0.5, 1, 4}: a corrected bound evaluated at β = 1 whatever the run's β
    (√(2L·R)/n with L = βR: off by √β) is right at β = 1 only, and refuted."""
    from ntsim.theory.stability import _full_finetuning as ff

    assert set(np.asarray(grid_run.beta).tolist()) == {0.5, 1.0, 4.0}
    original = ff.thm2_2_bound_corrected

    def at_beta_one(n, mu, beta, lipschitz, radius):
        return original(n, mu / beta, 1.0, lipschitz, radius)

    monkeypatch.setattr(ff, "thm2_2_bound_corrected", at_beta_one)
    claim = _claim("stability.thm2_2.bound_corrected_attained")
    with jax.enable_x64(True):
        planted = claim.uses.fn(jax.random.PRNGKey(3), claim.uses.scales["quick"])
    assert claims.check_bound_corrected_attained(planted).outcome == "refuted"


def _looser_descent_sides(loss, w, learning_rate):
    value, grad = jax.value_and_grad(loss)(jnp.asarray(w))
    return LemmaSides(loss(w - learning_rate * grad), 2 * value - learning_rate / 2 * grad @ grad)


@pytest.mark.parametrize("planted", [False, True])
def test_descent_lemma_is_attained_and_a_looser_right_side_is_refuted(monkeypatch, planted):
    if planted:
        monkeypatch.setattr(da, "lemma_a5_1_sides", _looser_descent_sides)
    with jax.enable_x64(True):
        run = da.simulate_descent_attained(jax.random.PRNGKey(5), da.DescentAttainedSetting(64))
    outcome = lemma_claims.check_descent_attained(run).outcome
    assert outcome == ("refuted" if planted else "holds")


def test_descent_setting_rejects_a_single_instance():
    with pytest.raises(ValueError, match="instances"):
        da.DescentAttainedSetting(instances=1)
