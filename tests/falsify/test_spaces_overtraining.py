"""Search spaces of the overtraining claims: small searches held against theory.

Oracles: Lemma A.28's contraction (holds) and its printed fixed point, whose excess tends to
``|σ*_corrected − σ*_printed|`` (the claim's counterexample: at least 0.1, at most √3);
Thm 4.6's increments, squares ``(x_n(K)² − σ^pre_n)²`` that vanish when ``σ^ft_1 = σ^pre_1``;
Lemma A.15's proof, whose chain gives ``2η‖θ − A‖ε‖W2‖ ≤ 2η·5Γ·ε·2√Γ = 20ηεΓ^{3/2}`` on
well-conditioned factors, so its ratio cannot pass 20/32; and the identities' round-off.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.falsify import falsify, get_space
from ntsim.falsify.spaces import overtraining as spaces
from ntsim.theory import overtraining as ot


def _search(name, restarts=8, steps=200, seed=0):
    return falsify(get_space(name), jax.random.PRNGKey(seed), restarts=restarts, steps=steps)


def test_every_space_is_registered_under_an_overtraining_claim():
    from ntsim.claims.overtraining import CLAIMS

    kinds = {c.id: c.kind for c in CLAIMS}
    for space in spaces.SPACES:
        assert kinds[space.claim_id] in ("bound", "identity"), space.name
        assert get_space(space.name) is space


def test_lemma_a28_contraction_survives_and_the_printed_fixed_point_fails():
    """Corrected σ*: the excess and the distance outside [√min, √max] stay ≤ 0 (ratio ≤
    1 + round-off/S). Printed σ*: the iterates converge to the corrected σ*, so the excess
    tends to |σ*_corrected − σ*_printed| > 0.1 (the claim's counterexample) and never passes
    √3 (both lie in [√0.05, √3])."""
    scale, tol = spaces.A28_SCALE, spaces.A28_ROUND_OFF / spaces.A28_SCALE
    distance = _search("overtraining.lemma_a28.contraction:distance", 6, 100)
    interval = _search("overtraining.lemma_a28.contraction:interval", 6, 100)
    printed = _search("overtraining.lemma_a28.contraction_printed", 6, 100)
    assert distance.worst_ratio <= 1 + tol
    assert interval.worst_ratio <= 1 + tol
    assert interval.worst_ratio > interval.start_worst_ratio
    assert 1 + 0.1 / scale < printed.worst_ratio <= 1 + np.sqrt(3.0) / scale
    assert printed.worst_ratio > printed.start_worst_ratio
    worst = printed.worst_instance  # replay: the hypothesis of the lemma holds there
    assert bool(ot.contraction_condition(worst["pre"], worst["ft"], worst["learning_rate"],
                                         worst["reg"]))  # fmt: skip


def test_thm4_6_reaches_its_equality_case_and_no_further():
    """Increments are (x_n(K)² − σ^pre_n)² ≥ 0, zero when σ^ft_1 = σ^pre_1 (mode 1 is not
    misaligned under (α, 1)): the search must reach ratio 1 to within 1e-6 and not pass the
    claim's round-off; the worst instance keeps the misalignment."""
    result = _search("overtraining.thm4_6.progressive_sensitivity", restarts=4, steps=120)
    assert 1 - 1e-6 < result.worst_ratio <= 1 + spaces.THM4_6_ROUND_OFF
    assert result.worst_ratio > result.start_worst_ratio
    pre, ft = result.worst_instance["pre"], result.worst_instance["ft"]
    assert np.all(ft[1:] > pre[1:]) and np.all(np.diff(pre) <= 0) and np.all(np.diff(ft) <= 0)


def test_lemma_a15_stays_below_its_proof_chain():
    """On well-conditioned factors the one-step gap is at most 20ηεΓ^{3/2}: ratio ≤ 0.625."""
    result = _search("overtraining.lemma_a15.one_step_batch_gap", steps=250)
    assert result.start_worst_ratio < result.worst_ratio <= 20 / 32 + 1e-12
    worst = result.worst_instance
    gamma = float(worst["gamma"])
    for w in (worst["w1"], worst["w2"]):
        assert np.linalg.norm(w, 2) <= 2 * np.sqrt(gamma) * (1 + 1e-12)


def test_lemma_a16_growth_survives_and_beats_its_random_starts():
    """Lemma A.16 as printed (1 + 16ηΓ) on any two well-conditioned parameters, searched as
    the rate (growth − 1)/(16ηΓ) ≤ 1 (ratio (4 + r)/5 ≤ 1), not the degenerate η → 0 limit."""
    result = _search("overtraining.lemma_a16_a18.per_step_growth:a16", steps=150)
    assert result.start_worst_ratio < result.worst_ratio <= 1.0


@pytest.mark.parametrize(
    "name", ["overtraining.prop4_3.increment", "overtraining.prop_d1.hessian_trace"]
)
def test_identities_stay_within_their_round_off(name):
    """Exact identities: the searched error stays below the claim's tolerance (ratio ≤ 1)."""
    result = _search(name, restarts=4, steps=100)
    assert result.worst_ratio <= 1.0
    assert result.worst_ratio >= result.start_worst_ratio


def test_prop4_3_space_replays_through_the_closed_form():
    """The space's instance gives the increments (2dγ² − σ_n)σ_n computed independently."""
    space = get_space("overtraining.prop4_3.increment")
    with jax.enable_x64(True):
        instance = space.to_instance(space.draw(jax.random.PRNGKey(3)))
        s, g = np.asarray(instance["spectrum"]), float(instance["gamma"])
        d = s.shape[0]
        losses = [np.sum(s[n:] ** 2) + 2 * d * g**2 * np.sum(s[:n]) + d**3 * g**4
                  for n in range(d + 1)]  # fmt: skip
        assert np.allclose(np.diff(losses), (2 * d * g**2 - s) * s, rtol=1e-12)
        lhs, rhs = space.sides(instance)
        assert float(lhs / rhs) < 1.0
        assert np.all(np.diff(s) < 0) and float(jnp.min(s)) > 0
