"""Width-scaling pieces of ``ntsim.theory.early_stopping`` (attention model, Lemma 5 blocks).

Oracles: numpy re-evaluation of eq. (3)'s logits from the parameters, autodiff Jacobians
(``jax.jacrev`` on flattened parameters, not ``ntsim.core``'s NTK), LayerNorm's zero-mean
property, and the order of the Taylor remainder (kernel drift first order, linearisation gap
second order in the step size).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.theory import early_stopping as es


def test_attention_logits_match_eq3(x64, key):
    width = 12
    model = es.paper_attention_model(width, num_heads=3)
    x = jax.random.normal(key, (5, 7))
    params = jax.tree.map(np.asarray, model.init(key, x))
    h = np.asarray(x) @ params["embed"]["w"]
    for scaling, s in (("1/d", 1 / width), ("1/sqrt(d)", 1 / math.sqrt(width))):
        logits = np.asarray(es.attention_logits(params, x, logit_scaling=scaling))
        for head in range(3):
            q, k = h @ params["attention"]["query"][head], h @ params["attention"]["key"][head]
            np.testing.assert_allclose(logits[head], s * q @ k.T, rtol=1e-12)
    with pytest.raises(ValueError, match="logit_scaling"):
        es.attention_logits(params, x, logit_scaling="1/d^2")


def test_backbone_features_feed_the_linear_head(x64, key):
    width = 10
    model = es.paper_attention_model(width, num_heads=2)
    x = jax.random.normal(key, (6, 4, 5))
    params = model.init(key, x[0])
    features = np.asarray(es.backbone_features(model, params, x))
    outputs = np.asarray(jax.vmap(model.apply, in_axes=(None, 0))(params, x))
    np.testing.assert_allclose(outputs, features @ np.asarray(params["head"]["w"]), rtol=1e-12)
    # LayerNorm with γ = 1, β = 0: every token is zero-mean over features, so is the pool
    np.testing.assert_allclose(features.sum(axis=1), 0, atol=1e-12)
    assert np.all(np.abs(features) > 0)


def test_source_target_data_labels_are_the_teachers_of_their_inputs(key):
    """Equal sample sizes (where inputs of the two tasks could be exchanged unnoticed): each
    label is its teacher at its own input, y_src = f_src(x_src), y_tgt = f_src(x_tgt) +
    Δ(x_tgt)/2, with the teachers drawn from the 4th and 5th of five split keys."""
    from ntsim.theory.early_stopping._width_scaling import _teacher

    setting = es.WidthScalingSetting(num_source=16, num_target=16, num_test=2)
    data = es.source_target_data(key, setting)
    keys = jax.random.split(key, 5)
    source, delta = (lambda x: _teacher(keys[3], x)), (lambda x: _teacher(keys[4], x))
    np.testing.assert_allclose(data.y_source, source(data.x_source), rtol=1e-6)
    expected = source(data.x_target) + 0.5 * delta(data.x_target)
    np.testing.assert_allclose(data.y_target, expected, rtol=1e-6, atol=1e-7)
    assert not np.allclose(data.y_source, source(data.x_target))  # the pairing matters


@pytest.mark.slow  # > 20 s at quick sizes (compilation); runs in make test-full
def test_lemma5_blocks_match_autodiff(x64, key):
    width, n = 6, 4
    model = es.paper_attention_model(width, num_heads=2)
    x = jax.random.normal(key, (n, 3, 5))
    params = model.init(key, x[0])
    backbone = {k: v for k, v in params.items() if k != "head"}
    flat_bb, unravel = jax.flatten_util.ravel_pytree(backbone)
    head = params["head"]["w"]

    def f(p_bb, w, xi):
        return model.apply({**unravel(p_bb), "head": {"w": w}}, xi)[0]

    j_head = jax.vmap(lambda xi: jax.jacrev(f, argnums=1)(flat_bb, head, xi))(x).reshape(n, -1)
    j_bb = jax.vmap(lambda xi: jax.jacrev(f)(flat_bb, head, xi))(x)
    features = es.backbone_features(model, params, x)
    np.testing.assert_allclose(
        np.asarray(es.head_kernel_block(features)), j_head @ j_head.T / width, rtol=1e-12
    )
    # multi-output backbone NTK ⟨∂f_BB,a(x_i), ∂f_BB,b(x_j)⟩ from autodiff
    j_feat = jax.vmap(
        lambda xi: jax.jacrev(
            lambda p: es.backbone_features(model, {**unravel(p), "head": params["head"]}, xi[None])[
                0
            ]
        )(flat_bb)
    )(x)  # (n, width, P)
    ntk_bb = jnp.einsum("iap,jbp->ijab", j_feat, j_feat)
    np.testing.assert_allclose(
        np.asarray(es.backbone_kernel_block(ntk_bb, head)),
        np.asarray(j_bb @ j_bb.T) / width,
        rtol=1e-10,
    )


def test_relative_kernel_drift():
    ref = np.array([[2.0, 0.0], [0.0, 2.0]])
    assert float(es.relative_kernel_drift(ref + np.array([[0, 1], [1, 0]]), ref)) == pytest.approx(
        math.sqrt(2) / math.sqrt(8)
    )


@pytest.mark.parametrize(
    "field, value", [("seq_len", 0), ("num_target", 2.5), ("eta0", -1.0), ("logit_scaling", "x")]
)
def test_setting_validation_names_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        es.WidthScalingSetting(**{field: value})


def test_source_target_data_is_deterministic_gaussian_and_related(key):
    setting = es.WidthScalingSetting(num_source=200, num_target=7, num_test=3)
    data = es.source_target_data(key, setting)
    assert data.x_source.shape == (200, 4, 8) and data.x_target.shape == (7, 4, 8)
    again = es.source_target_data(key, setting)
    np.testing.assert_array_equal(np.asarray(data.y_target), np.asarray(again.y_target))
    x = np.asarray(data.x_source).ravel()  # 6400 i.i.d. N(0, 1) entries
    assert abs(x.mean()) < 4 / np.sqrt(x.size)  # 4 standard errors
    assert abs(x.var() - 1) < 4 * np.sqrt(2 / x.size)
    # the source teacher is a mean of tanh features: |y| ≤ Σ|a_k|, and not constant
    y = np.asarray(data.y_source)
    assert y.std() > 0.05 and np.all(np.abs(y) < 8)


@pytest.mark.slow  # > 20 s at quick sizes (compilation); runs in make test-full
def test_width_run_orders_of_the_taylor_remainder(key):
    """Halving η_0 halves the kernel drift (first order) and quarters the linearisation gap."""
    base = dict(
        pretrain_steps=3, finetune_steps=6, record_every=3, num_source=4, num_target=4, num_test=4
    )
    runs = [
        es.width_scaling_run(key, 8, es.WidthScalingSetting(eta0=eta, **base))
        for eta in (0.02, 0.01)
    ]
    drift = float(runs[0].kernel_drift) / float(runs[1].kernel_drift)
    gap = float(runs[0].linearisation_error) / float(runs[1].linearisation_error)
    assert drift == pytest.approx(2.0, rel=0.1)  # O(η²) corrections at η_0 = 0.02
    assert gap == pytest.approx(4.0, rel=0.15)
    for run in runs:
        assert float(run.target_loss_end) < float(run.target_loss_start)
        assert float(run.pretrain_distance) > 0 and float(run.max_logit_init) > 0


@pytest.mark.slow  # > 20 s at quick sizes (compilation); runs in make test-full
def test_taylor_remainder_is_second_order_in_the_step(key, x64):
    """Eq. (14)'s remainder ``f(θ_τ) − f_PT − J_PT Δθ`` is second order in ``Δθ ∝ η_0`` (its
    ratio at η_0 and η_0/2 → 4, with an O(η_0) correction; a wrong sign or scale of the
    linear term leaves a first-order error, ratio 2), the linear term and the displacement
    are first order (ratio 2)."""
    base = dict(
        pretrain_steps=3, finetune_steps=6, record_every=3, num_source=4, num_target=4, num_test=4
    )
    runs = [
        es.taylor_remainder_run(key, 8, es.WidthScalingSetting(eta0=eta, **base))
        for eta in (0.005, 0.0025)
    ]
    ratio = {
        f: float(getattr(runs[0], f)) / float(getattr(runs[1], f))
        for f in ("remainder", "linear_term", "displacement")
    }
    assert ratio["remainder"] == pytest.approx(4.0, rel=0.1)  # seen 3.84
    assert ratio["linear_term"] == pytest.approx(2.0, rel=0.05)
    assert ratio["displacement"] == pytest.approx(2.0, rel=0.05)
    for run in runs:  # the path starts at θ_PT, where the expansion is taken
        assert float(run.remainder_at_start) <= 1e-12 * float(run.linear_term)
        assert float(run.target_loss_end) < float(run.target_loss_start)


# --- sweeps and rates -----------------------------------------------------------------------


def test_fit_log_log_rate_matches_per_seed_polyfit_and_the_t_interval():
    from scipy import stats

    rng = np.random.default_rng(0)
    n = np.array([16.0, 32.0, 64.0, 128.0])
    values = np.exp(rng.normal(size=(4, 7)) * 0.2) * n[:, None] ** -0.8
    fit = es.fit_log_log_rate(n, values)
    slopes = np.array([np.polyfit(np.log(n), np.log(v), 1)[0] for v in values.T])
    np.testing.assert_allclose(fit.slopes, slopes, rtol=1e-12)
    lo, hi = stats.t.interval(0.95, 6, loc=slopes.mean(), scale=stats.sem(slopes))
    assert fit.slope == pytest.approx(slopes.mean()) and fit.interval == pytest.approx((lo, hi))
    # exact power laws with different constants: the interval collapses onto the exponent
    exact = es.fit_log_log_rate(n, np.stack([2 * n**-1.0, 9 * n**-1.0], axis=1))
    assert exact.lo == pytest.approx(-1.0, abs=1e-12) and exact.hi == pytest.approx(-1.0, abs=1e-12)
    for bad in (values[:1], values[:, :1], -values):
        with pytest.raises(ValueError, match="fit_log_log_rate"):
            es.fit_log_log_rate(n[: bad.shape[0]], bad)


def test_sweep_settings_validate_widths():
    with pytest.raises(ValueError, match="widths"):
        es.WidthScalingSetting(widths=(64, 32))
    with pytest.raises(ValueError, match="widths"):
        es.InitLogitSetting(widths=(8,))
    with pytest.raises(ValueError, match="num_seeds"):
        es.InitLogitSetting(num_seeds=0)


def test_init_logits_scale_exactly_by_sqrt_width_and_match_numpy(x64, key):
    """1/√d logits are exactly √n × the 1/d logits (d = n); the 1/d ones match eq. (3)."""
    setting = es.InitLogitSetting(widths=(4, 16), num_seeds=3)
    run = es.simulate_init_logits(key, setting)
    assert run.inverse.shape == run.inverse_sqrt.shape == (2, 3)
    np.testing.assert_allclose(
        np.asarray(run.inverse_sqrt), np.asarray(run.inverse) * np.sqrt([[4.0], [16.0]]), rtol=1e-12
    )
    # seed 1 at width 16, recomputed with numpy from the same keys
    k_data, k_init = jax.random.split(jax.random.split(key, 3)[1])
    x = np.asarray(es.source_target_data(k_data, setting.data).x_source)
    params = es.paper_attention_model(16, num_heads=2).init(k_init, x[0])
    attn = jax.tree.map(np.asarray, params["attention"])
    h = x @ np.asarray(params["embed"]["w"])  # (N, T, n)
    q = np.einsum("ntd,hde->nhte", h, attn["query"])
    k = np.einsum("ntd,hde->nhte", h, attn["key"])
    expected = np.abs(np.einsum("nhte,nhse->nhts", q, k) / 16).max()
    assert float(run.inverse[1, 1]) == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow  # > 20 s (one compilation per width); runs in make test-full
def test_width_sweep_is_the_per_width_run_with_shared_seed_keys(key):
    setting = es.WidthScalingSetting(
        num_source=3, num_target=3, num_test=2, pretrain_steps=2, finetune_steps=4,
        record_every=2, widths=(4, 8), num_seeds=2,
    )  # fmt: skip
    sweep = es.simulate_width_scaling(key, setting)
    assert np.asarray(sweep.widths).tolist() == [4, 8]
    keys = jax.random.split(key, 2)
    for i, width in enumerate(setting.widths):
        for s in range(2):
            one = es.width_scaling_run(keys[s], width, setting)
            for name, value in one._asdict().items():
                np.testing.assert_allclose(  # float32: vmapped vs unbatched round-off
                    np.asarray(getattr(sweep, name))[i, s], np.asarray(value), rtol=1e-4,
                    atol=1e-7,
                )  # fmt: skip
