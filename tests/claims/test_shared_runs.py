"""One run shared by an experiment and the claims (``ntsim._shared_runs``): inside
``sharing`` the experiment computes the claims' run (their key, their float64 mode) and the
claims take it instead of computing it again; outside, ``shared_run`` is the plain call."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim import _shared_runs
from ntsim.claims import Claim, Simulation, claim_key, printed, run_claims
from ntsim.claims._decisions import compare
from ntsim.experiment import shared_run


class _Size(NamedTuple):
    n: int


CALLS: list = []


def _draws(key, setting: _Size, memo=None):
    """A simulation that records each call: (key data, n, float64 on, the memo it got)."""
    CALLS.append((np.asarray(key).tobytes(), setting.n, jax.config.jax_enable_x64, memo))
    return jax.random.normal(
        key, (setting.n,), dtype=jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
    )


SIM = Simulation("demo.shared", _draws, {"quick": _Size(8), "full": _Size(16)}, x64=True)


def _claim() -> Claim:
    check = lambda run: compare(
        np.abs(np.asarray(run)), np.full(len(run), 100.0), relation="upper_bound"
    )  # noqa: E731
    return Claim("demo.shared.bound", "Demo 2020", "|x| ≤ 100", uses=SIM, check=check,
                 kind="bound", reading=printed("“|x| ≤ 100”"))  # fmt: skip


@pytest.fixture(autouse=True)
def _fresh():
    CALLS.clear()
    yield
    CALLS.clear()


def test_outside_sharing_it_is_the_plain_call_with_the_own_key():
    own = jax.random.PRNGKey(7)
    out = shared_run(_draws, own, _Size(3), memo=lambda k: ("memo for", np.asarray(k).tobytes()))
    np.testing.assert_array_equal(out, jax.random.normal(own, (3,)))
    ((key, n, _, memo),) = CALLS
    assert key == np.asarray(own).tobytes() and n == 3
    assert memo == ("memo for", key)  # the memo is built with the key actually used


def test_inside_sharing_the_claims_take_the_experiments_run_computed_with_their_key():
    claims_key = claim_key(0, SIM.key)
    plan = {(SIM.fn, SIM.setting("quick")): (claims_key, SIM.x64)}
    with _shared_runs.sharing(plan) as taken:
        own = jax.random.PRNGKey(123)
        first = shared_run(_draws, own, _Size(8), memo=lambda k: np.asarray(k).tobytes())
        again = shared_run(_draws, own, _Size(8))  # a second experiment: no recompute
        np.testing.assert_array_equal(again, first)
        assert len(CALLS) == 1
        ((key, n, x64, memo),) = CALLS
        assert key == np.asarray(claims_key).tobytes() != np.asarray(own).tobytes()
        assert n == 8 and x64 and memo == key  # the claims' float64 mode and key
        other = shared_run(_draws, own, _Size(5))  # not the claims' setting: own key, not kept
        assert CALLS[-1][0] == np.asarray(own).tobytes() and other.shape == (5,)
        (record,) = run_claims([_claim()], scale="quick", seeds=(0,))
        assert len(CALLS) == 2, "the claims computed the run again"
        assert taken == [_shared_runs.function_id(_draws)]
        assert record.per_seed[0].verdict == "holds"
        np.testing.assert_array_equal(record.per_seed[0].result.measured, np.abs(first))
    assert not _shared_runs._PLAN and not _shared_runs._RUNS  # closed: nothing kept


def test_the_taken_run_equals_the_run_the_claims_compute_alone():
    (alone,) = run_claims([_claim()], scale="quick", seeds=(3,))
    plan = {(SIM.fn, SIM.setting("quick")): (claim_key(3, SIM.key), SIM.x64)}
    with _shared_runs.sharing(plan):
        shared_run(_draws, jax.random.PRNGKey(0), _Size(8))
        (shared,) = run_claims([_claim()], scale="quick", seeds=(3,))
    a, b = alone.per_seed[0].result.measured, shared.per_seed[0].result.measured
    assert a.dtype == b.dtype == np.float64
    np.testing.assert_array_equal(a, b)


def test_another_seeds_claims_do_not_take_the_run_and_sharing_is_not_reentrant():
    plan = {(SIM.fn, SIM.setting("quick")): (claim_key(0, SIM.key), SIM.x64)}
    with _shared_runs.sharing(plan) as taken:
        shared_run(_draws, jax.random.PRNGKey(0), _Size(8))
        run_claims([_claim()], scale="quick", seeds=(1,))  # seed 1: another key
        assert taken == [] and len(CALLS) == 2
        with pytest.raises(RuntimeError, match="already open"):
            with _shared_runs.sharing(plan):
                pass


def test_an_experiment_drawing_several_runs_at_one_setting_keeps_them_independent():
    plan = {(SIM.fn, SIM.setting("quick")): (claim_key(0, SIM.key), SIM.x64)}
    with _shared_runs.sharing(plan):
        keys = jax.random.split(jax.random.PRNGKey(1), 3)
        runs = [shared_run(_draws, k, _Size(8)) for k in keys]
        assert shared_run(_draws, keys[0], _Size(8)) is runs[0]  # same key, same run
    assert len(CALLS) == 3  # three different runs, the first with the claims' key
    assert CALLS[0][0] == np.asarray(claim_key(0, SIM.key)).tobytes()
    assert [c[0] for c in CALLS[1:]] == [np.asarray(k).tobytes() for k in keys[1:]]
    assert not np.allclose(runs[1], runs[2])


def test_reproduce_shares_at_quick_scale_only_with_the_claims_keys_of_its_seed():
    import argparse

    from ntsim import _reproduce
    from ntsim.claims import select_claims

    args = argparse.Namespace(scale="full", topic="intervals", seed=0)
    with _reproduce.sharing_quick_runs(args):
        assert not _shared_runs._PLAN  # full scale: the committed figures keep their keys
    args.scale, args.seed = "quick", 5
    with _reproduce.sharing_quick_runs(args):
        sims = {c.uses.name: c.uses for c in select_claims("intervals")}
        assert len(_shared_runs._PLAN) == len(sims) > 0
        for sim in sims.values():
            key, x64 = _shared_runs._PLAN[
                (_shared_runs.function_id(sim.fn), repr(sim.setting("quick")))
            ]
            assert (
                np.array_equal(np.asarray(key), np.asarray(claim_key(5, sim.key)))
                and x64 == sim.x64
            )
    assert not _shared_runs._PLAN


def _numpy_draws(key, setting: _Size):
    CALLS.append(setting.n)
    return {"values": np.asarray(jax.random.normal(key, (setting.n,))), "n": setting.n}


def test_an_experiment_editing_its_run_in_place_leaves_the_claims_run_alone():
    numpy_sim = Simulation("demo.numpy", _numpy_draws, {"quick": _Size(4), "full": _Size(4)})
    claims_key = claim_key(0, numpy_sim.key)
    plan = {(numpy_sim.fn, numpy_sim.setting("quick")): (claims_key, False)}
    with _shared_runs.sharing(plan):
        mine = shared_run(_numpy_draws, jax.random.PRNGKey(0), _Size(4))
        original = mine["values"].copy()
        mine["values"][:] = 0.0  # an experiment normalising in place
        mine["n"] = -1
        found, run = _shared_runs.take(_numpy_draws, claims_key, _Size(4))
    assert found and len(CALLS) == 1
    np.testing.assert_array_equal(run["values"], original)
    assert run["n"] == 4
