"""Pretraining-budget analogue (Springer et al. 2025, Figs 3-5, 8): the training loops."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import causal_decoder, next_token_loss, sample_windows, tree_distance
from ntsim.theory import overtraining as ot

DATA = jnp.asarray(np.frombuffer(b"abcabcabd" * 400, dtype=np.uint8))
MODEL = causal_decoder(vocab_size=256, context=8, width=8, depth=1, num_heads=2)
INIT = MODEL.init(jax.random.PRNGKey(0))
SETTINGS = {"batch_size": 4, "context": 8, "peak_lr": 1e-2, "warmup": 4}


def test_cosine_to_zero_shape():
    lr = np.asarray([float(ot.cosine_to_zero(s, 40, 2.0, 8)) for s in range(0, 60)])
    assert lr[0] == 0 and lr[8] == pytest.approx(2.0 * 0.5 * (1 + math.cos(math.pi * 0.2)))
    assert np.all(np.diff(lr[8:41]) <= 1e-7) and np.all(lr[40:] == 0)


def test_pretraining_learns_and_chunking_does_not_change_the_run():
    key = jax.random.PRNGKey(1)
    a = ot.pretrain_for_budget(MODEL.apply, INIT, DATA, key, budget=64, chunk=16, **SETTINGS)
    b = ot.pretrain_for_budget(MODEL.apply, INIT, DATA, key, budget=64, chunk=32, **SETTINGS)
    assert float(tree_distance(a, b)) < 1e-5 * float(tree_distance(a, INIT))
    windows = sample_windows(jax.random.PRNGKey(2), DATA, 16, 9)
    before, after = (float(next_token_loss(MODEL.apply, p, windows)) for p in (INIT, a))
    assert before == pytest.approx(math.log(256), abs=0.05)  # GPT-2 init: near uniform
    assert after < 0.6 * before
    with pytest.raises(ValueError, match="multiple of chunk"):
        ot.pretrain_for_budget(MODEL.apply, INIT, DATA, key, budget=50, chunk=16, **SETTINGS)


def test_replicated_pretraining_matches_separate_runs():
    """Each replicate of the vmapped run is the single run from its own init and key."""
    keys = jax.random.split(jax.random.PRNGKey(7), 3)
    inits = jax.vmap(MODEL.init)(jax.random.split(jax.random.PRNGKey(8), 3))
    many = ot.pretrain_replicates_for_budget(
        MODEL.apply, inits, DATA, keys, budget=64, chunk=32, **SETTINGS
    )
    for r in range(3):
        init = jax.tree.map(lambda a, r=r: a[r], inits)
        one = ot.pretrain_for_budget(MODEL.apply, init, DATA, keys[r], budget=64, chunk=16,
                                     **SETTINGS)  # fmt: skip
        got = jax.tree.map(lambda a, r=r: a[r], many)
        assert float(tree_distance(got, one)) < 1e-4 * float(tree_distance(one, init))
    first, second = (jax.tree.map(lambda a, r=r: a[r], many) for r in (0, 1))
    assert float(tree_distance(first, second)) > 0.1  # independent runs differ
    with pytest.raises(ValueError, match="multiple of chunk"):
        ot.pretrain_replicates_for_budget(
            MODEL.apply, inits, DATA, keys, budget=50, chunk=16, **SETTINGS
        )


def test_perturbation_is_zero_at_zero_noise_and_grows_with_gamma():
    windows = sample_windows(jax.random.PRNGKey(3), DATA, 16, 9)
    params = ot.pretrain_for_budget(
        MODEL.apply, INIT, DATA, jax.random.PRNGKey(1), budget=64, chunk=32, **SETTINGS
    )
    inc = np.asarray(
        ot.perturbation_loss_increase(
            MODEL.apply, params, INIT, windows, [0.0, 1.0, 4.0], jax.random.PRNGKey(4), num_draws=6
        )
    )
    assert inc.shape == (3, 6)
    np.testing.assert_array_equal(inc[0], 0.0)
    assert 0 < inc[1].mean() < inc[2].mean()


def test_finetuning_distance_is_zero_at_zero_rate_and_grows_with_it():
    tuned, dist = ot.finetune_at_learning_rates(
        MODEL.apply, INIT, DATA, jax.random.PRNGKey(5), learning_rates=[0.0, 1e-3, 1e-2],
        steps=10, batch_size=4, context=8,
    )  # fmt: skip
    assert float(dist[0]) == 0.0 and 0 < float(dist[1]) < float(dist[2])
    first = jax.tree.map(lambda a: a[2], tuned)
    assert float(tree_distance(first, INIT)) == pytest.approx(float(dist[2]), rel=1e-5)
    # Adam's first step moves every weight that gets a gradient by about lr: a bound on 10 steps.
    assert float(dist[1]) <= 1e-3 * 10 * math.sqrt(sum(a.size for a in jax.tree.leaves(INIT)))
    with pytest.raises(ValueError, match="non-negative"):
        ot.finetune_at_learning_rates(
            MODEL.apply, INIT, DATA, jax.random.PRNGKey(5), learning_rates=[-1.0], steps=2,
            batch_size=4, context=8,
        )  # fmt: skip


@pytest.mark.slow  # ≥ 20 s on 2 cores: make test-full (the kill matrix covers CI)
def test_simulate_budget_sweep_records_the_protocol():
    setting = ot.BudgetSetting(
        width=8, depth=1, num_heads=2, context=8, batch_size=4, budgets=(32, 64), warmup=4,
        chunk=32, gammas=(1.0,), noise_draws=2, pretrain_replicates=2,
        finetune_lrs=(1e-4, 1e-3),
        finetune_steps=4, eval_windows=8, arithmetic_lines=200,
    )  # fmt: skip
    run = ot.simulate_budget_sweep(jax.random.PRNGKey(0), setting)
    assert run.perturbed_increase.shape == (2, 2, 1, 2) and run.distance.shape == (2, 2)
    assert np.all(np.isfinite(run.perturbed_increase)) and np.all(run.distance > 0)
    # Adam moves each weight by about the learning rate per step: ≤ lr·steps·√(parameters)
    assert np.all(run.distance <= np.asarray(setting.finetune_lrs) * 4 * np.sqrt(run.num_params))
    tokens = np.asarray(setting.budgets) * setting.batch_size * setting.context
    np.testing.assert_allclose(run.tokens_per_parameter, tokens / run.num_params)


@pytest.mark.slow  # ≥ 20 s on 2 cores: make test-full (the kill matrix covers CI)
def test_budget_sweep_pretrains_extra_replicates_at_the_ends_only():
    """The cheaper default pretrains replicates 1..R−1 at the first and last budgets only, and
    what it computes there (and for replicate 0 everywhere) is what the full grid computes."""
    setting = ot.BudgetSetting(
        width=8, depth=1, num_heads=2, context=8, batch_size=4, budgets=(32, 64, 96), warmup=4,
        chunk=32, gammas=(1.0,), noise_draws=2, pretrain_replicates=2, finetune_lrs=(1e-3,),
        finetune_steps=2, eval_windows=8, arithmetic_lines=200,
    )  # fmt: skip
    steps = []
    ends = ot.simulate_budget_sweep(jax.random.PRNGKey(1), setting, progress=steps.append)
    every = ot.simulate_budget_sweep(
        jax.random.PRNGKey(1), dataclasses.replace(setting, replicate_every_budget=True)
    )
    assert sum(steps) == sum(setting.budgets) and ends.distance.shape == (3, 1)
    assert np.all(np.isnan(ends.perturbed_increase[1, 1]))  # replicate 1, middle budget
    assert np.all(np.isfinite(every.perturbed_increase))
    for name in ("perturbed_increase", "distance", "base_loss", "finetuned_pretrain_loss"):
        a, b = np.asarray(getattr(ends, name)), np.asarray(getattr(every, name))
        np.testing.assert_allclose(a[np.isfinite(a)], b[np.isfinite(a)], rtol=1e-5, atol=1e-6)
