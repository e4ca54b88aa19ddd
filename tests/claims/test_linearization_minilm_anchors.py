"""The λ table's absolute anchors decide runs built by hand: logits f and their
linearisation f̄ = f − r(s) along the trained step (r a second-order remainder a·s²(1 + b·s)
per sentence), with the KL column from the library's bernoulli_kl. The planted columns
that survived the λ table's orderings (a gap ‖f + f̄‖, a KL with its log q₁ halved) and a
linearisation with a wrong first-order term are refuted."""

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


def _run(*, gap_sign=-1.0, kl=bernoulli_kl, n=12, seeds=3, first_order=0.0, cubic=0.3):
    """Remainders a·s²(1 + cubic·s) + first_order·s per sentence (first_order ≠ 0: a
    linearisation whose gradient term is off), at s = 1, ½, ¼."""
    rng = np.random.default_rng(0)
    distance = np.array([0.09, 0.066, 0.024])[None, :, None] * (1 + 0.1 * rng.random((1, 1, seeds)))
    f = rng.normal(scale=0.3, size=(1, 3, seeds, 2 * n))
    direction = rng.normal(size=(1, 1, seeds, 2 * n))

    def remainder(fraction):
        step = fraction * distance[..., None]
        return (0.2 * step**2 * (1 + cubic * fraction) + first_order * step) * direction

    f_lin = f - remainder(1.0)
    with jax.enable_x64(True):
        kl_test = np.asarray(jax.vmap(jax.vmap(jax.vmap(kl)))(f[..., n:], f_lin[..., n:]))

    def gaps(fraction, part):
        f_s = f + (remainder(fraction) - remainder(1.0))  # f moves; f̄'s constant stays
        f_lin_s = f_s - remainder(fraction)
        return np.linalg.norm(part(f_s) + gap_sign * part(f_lin_s), axis=-1)

    train, test = (lambda a: a[..., :n]), (lambda a: a[..., n:])
    scaled = lambda part: np.stack([gaps(c, part) for c in (0.5, 0.25)], axis=-1)  # noqa: E731
    zeros = np.zeros_like(distance)
    logit_max = np.maximum(np.abs(f[..., n:]), np.abs(f_lin[..., n:])).max(axis=-1)
    targets = np.broadcast_to(np.where(np.arange(n) % 2 == 0, 1.0, -1.0), (1, 3, seeds, n))
    return lz.MiniLMLambdaRun(distance, gaps(1.0, train), gaps(1.0, test), kl_test, logit_max,
                              zeros, zeros, targets, scaled(train), scaled(test), LAMBDAS, n,
                              n)  # fmt: skip


def test_second_order_gap_holds_and_a_sum_for_the_difference_is_refuted():
    run = _run()
    assert anchors.check_gap_second_order(run).outcome == "holds"
    summed = _run(gap_sign=1.0)
    assert anchors.check_gap_second_order(summed).outcome == "refuted"
    only_test = run._replace(gap_test=summed.gap_test, gap_test_scaled=summed.gap_test_scaled)
    assert anchors.check_gap_second_order(only_test).outcome == "refuted"


@pytest.mark.parametrize(
    ("first_order", "outcome"), [(0.0, "holds"), (0.002, "refuted"), (0.05, "refuted")]
)
def test_a_linearisation_with_a_first_order_error_is_refuted(first_order, outcome):
    """f̄ off by c·‖Δ‖ along the step: the remainder's exponent tends to 1. At c = 0.002 (a
    tenth to a half of the second-order term at s = ¼) it passed before the allowance was
    capped (a referee's case)."""
    run = _run(first_order=first_order)
    assert anchors.check_gap_second_order(run).outcome == outcome


def test_a_linearisation_expanded_at_the_trained_point_is_refuted():
    """f̄ expanded at θ_T instead of θ_0: R(s) ∝ (1 − s)², R(1) ≈ 0, e_1 ≈ −11 (a referee's
    case: an uncapped allowance 2|e_1 − e_2| let it pass)."""
    run = _run()
    for split in ("train", "test"):
        scaled = getattr(run, f"gap_{split}_scaled")
        at_one = scaled[..., 0] * 4.0  # a second-order curve's R(1), as the unplanted run has
        expanded_at_end = at_one[..., None] * np.array([0.25, 0.5625])  # (1 − s)² at s = ½, ¼
        run = run._replace(**{f"gap_{split}": 1e-6 * at_one,
                              f"gap_{split}_scaled": expanded_at_end})  # fmt: skip
    assert anchors.check_gap_second_order(run).outcome == "refuted"


@pytest.mark.parametrize(("factor", "outcome"), [(1.0, "holds"), (3.0, "refuted")])
def test_the_tables_own_gap_column_must_continue_the_curve(factor, outcome):
    """R(1) alone ×3 (the table's column wrong, the extra points right): e_1 = 2 + log₂ 3."""
    run = _run()
    run = run._replace(gap_train=factor * run.gap_train, gap_test=factor * run.gap_test)
    assert anchors.check_gap_second_order(run).outcome == outcome


def test_a_gap_below_the_round_off_floor_everywhere_is_an_error_not_a_verdict():
    run = _run()
    tiny = run._replace(
        gap_train=run.gap_train * 1e-9, gap_train_scaled=run.gap_train_scaled * 1e-9
    )
    with pytest.raises(ValueError, match="floor"):
        anchors.check_gap_second_order(tiny)


@pytest.mark.parametrize(("kl", "outcome"), [(bernoulli_kl, "holds"), (_half_log_q_kl, "refuted")])
def test_kl_column_lies_between_zero_and_the_squared_gap_over_eight(kl, outcome):
    assert anchors.check_kl_within_logit_bound(_run(kl=kl)).outcome == outcome


@pytest.mark.parametrize(
    ("factor", "outcome"), [(1.0, "holds"), (1.5, "refuted"), (0.7, "refuted")]
)
def test_a_gap_column_off_by_a_constant_factor_breaks_the_kl_band(factor, outcome):
    """A gap column ×c (which the exponents cannot see, a referee's point): with logits
    near 0 the band [σ′(M)/2, 1/8]·‖f − f̄‖²/n is narrow, so c = 1.5 falls below it and
    c = 0.7 above it."""
    run = _run()
    scaled = run._replace(gap_test=factor * run.gap_test)
    assert anchors.check_kl_within_logit_bound(scaled).outcome == outcome


@pytest.mark.parametrize(("factor", "outcome"), [(1.0, "holds"), (2.0, "refuted")])
def test_a_kl_column_twice_too_large_breaks_the_mean_bound(factor, outcome):
    """Logits near 0 (p ≈ ½, where A'' = 1/4): the KL is nearly (f − f̄)²/8 per sentence, so
    the mean bound ‖f − f̄‖²/(8n) is nearly attained and a doubled KL breaks it."""
    run = _run()
    assert anchors.check_kl_within_logit_bound(
        run._replace(kl_test=factor * run.kl_test)
    ).outcome == (outcome)


def test_the_lambda_tables_orderings_need_the_cross_entropy_targets():
    """The λ table's runs train softplus(−y·f), the cross-entropy of labels {0, 1} only for
    y = 2·label − 1 = ±1. Targets 2·label − 2 ∈ {−2, 0} (another loss, still trainable, whose
    distances may still fall in λ) leave both orderings undecided."""
    from ntsim.claims.linearization import _minilm
    from ntsim.theory.linearization._minilm_training import _signed

    run = _run()
    labels = (np.arange(run.train_targets.shape[-1]) % 2).astype(np.float32)
    run = run._replace(train_targets=np.broadcast_to(np.asarray(_signed(labels)),
                                                     run.train_targets.shape))  # fmt: skip
    checks = (_minilm.check_distance_decreasing, _minilm.check_gap_below_unregularised)
    assert [check(run).outcome for check in checks] == ["holds", "holds"]
    shifted = run._replace(train_targets=np.broadcast_to(2.0 * labels - 2.0,
                                                         run.train_targets.shape))  # fmt: skip
    assert [check(shifted).outcome for check in checks] == ["inconclusive", "inconclusive"]
