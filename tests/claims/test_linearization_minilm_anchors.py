"""The λ table's absolute anchors decide runs built by hand: logits f and their
linearisation f̄ = f − c·d²·u (a second-order remainder at distance d), with the KL column
from the library's bernoulli_kl. The two planted columns that survived the λ table's
orderings (a gap ‖f + f̄‖, a KL with its log q₁ halved) are refuted."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.claims.linearization import _minilm_anchors as anchors
from ntsim.theory.linearization import bernoulli_kl
from ntsim.theory.linearization import minilm as lz

LAMBDAS = np.array([0.0, 1.0, 50.0])


def _half_log_q_kl(p, q):
    log_p1, log_p0 = jax.nn.log_sigmoid(p), jax.nn.log_sigmoid(-p)
    log_q1, log_q0 = jax.nn.log_sigmoid(q), jax.nn.log_sigmoid(-q)
    return jnp.mean(jnp.exp(log_p1) * (log_p1 - 0.5 * log_q1) + jnp.exp(log_p0) * (log_p0 - log_q0))


def _run(*, gap_sign=-1.0, kl=bernoulli_kl, n=12, seeds=3) -> lz.MiniLMLambdaRun:
    rng = np.random.default_rng(0)
    distance = np.array([0.09, 0.066, 0.024])[None, :, None] * (1 + 0.1 * rng.random((1, 1, seeds)))
    f = rng.normal(scale=0.3, size=(1, 3, seeds, 2 * n))
    remainder = 0.2 * distance[..., None] ** 2 * rng.normal(size=(1, 1, seeds, 2 * n))
    f_lin = f - remainder
    with jax.enable_x64(True):
        kl_test = np.asarray(jax.vmap(jax.vmap(jax.vmap(kl)))(f[..., n:], f_lin[..., n:]))
    gap = lambda part: np.linalg.norm(part(f) + gap_sign * part(f_lin), axis=-1)  # noqa: E731
    zeros = np.zeros_like(distance)
    return lz.MiniLMLambdaRun(distance, gap(lambda a: a[..., :n]), gap(lambda a: a[..., n:]),
                              kl_test, zeros, zeros, LAMBDAS)  # fmt: skip


def test_second_order_gap_holds_and_a_sum_for_the_difference_is_refuted():
    run = _run()
    assert anchors.check_gap_second_order(run).outcome == "holds"
    assert anchors.check_gap_second_order(_run(gap_sign=1.0)).outcome == "refuted"
    summed = _run(gap_sign=1.0)  # the sum on the test sentences only
    only_test = run._replace(gap_test=summed.gap_test)
    assert anchors.check_gap_second_order(only_test).outcome == "refuted"


def test_a_gap_that_falls_only_like_the_square_root_of_the_distance_is_refuted():
    run = _run()
    slow = run.gap_train[:, :1] * np.sqrt(run.distance / run.distance[:, :1])
    assert anchors.check_gap_second_order(run._replace(gap_train=slow)).outcome == "refuted"


@pytest.mark.parametrize(("kl", "outcome"), [(bernoulli_kl, "holds"), (_half_log_q_kl, "refuted")])
def test_kl_column_lies_between_zero_and_the_squared_gap_over_eight(kl, outcome):
    assert anchors.check_kl_within_logit_bound(_run(kl=kl)).outcome == outcome


def test_a_kl_column_nine_times_too_large_breaks_the_upper_bound_on_one_sentence():
    run = _run(n=1)  # one test sentence: mean (f − f̄)²/8 is the bound itself
    assert anchors.check_kl_within_logit_bound(run).outcome == "holds"
    assert anchors.check_kl_within_logit_bound(run._replace(kl_test=9 * run.kl_test)).outcome == (
        "refuted"
    )
