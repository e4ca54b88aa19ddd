"""Batched linear SVMs against scikit-learn, a scipy primal solve, and the KKT conditions."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize
from sklearn.svm import SVC, LinearSVC

from ntsim.core import hard_margin_svm, separable_dataset, soft_margin_svm, svm_primal_objective

# The interior-point solutions are certified to KKT error 1e-9 (float64). scikit-learn's
# libsvm stops at its own tolerance (tol=1e-12 requested; the hard-margin emulation C = 1e8
# leaves ~1e-6 relative, measured 5e-7), so ‖ours − sklearn‖ ≤ 1e-5·‖sklearn‖.
SKLEARN_RTOL = 1e-5
# scipy's SLSQP on the primal (d + 1 ≤ 6 variables) converges to ~1e-9; 1e-6 leaves room.
SLSQP_ATOL = 1e-6


def _problem(key, n=40, d=4, offset=0.6, margin=0.15):
    data = separable_dataset(key, n, d, margin=margin, radius=1.0, offset=offset)
    return np.asarray(data.x), np.asarray(data.y)


def _primal_slsqp(x, y, *, penalize_bias, upper=None):
    """Independent oracle: the primal QP in (v, b[, ξ]) by scipy SLSQP."""
    n, d = x.shape
    soft = upper is not None
    size = d + 1 + (n if soft else 0)

    def objective(p):
        v, b = p[:d], p[d]
        reg = 0.5 * (v @ v + (b * b if penalize_bias else 0.0))
        return reg + (upper * p[d + 1 :]).sum() if soft else reg

    def margins(p):
        slack = p[d + 1 :] if soft else 0.0
        return y * (x @ p[:d] - p[d]) - 1.0 + slack

    constraints = [{"type": "ineq", "fun": margins}]
    bounds = [(None, None)] * (d + 1) + [(0.0, None)] * (n if soft else 0)
    start = np.zeros(size)
    start[:d] = 10 * (x[y > 0].mean(0) - x[y < 0].mean(0))  # SLSQP needs no feasible start
    res = scipy.optimize.minimize(
        objective, start, method="SLSQP", constraints=constraints, bounds=bounds,
        options={"ftol": 1e-13, "maxiter": 2000},
    )  # fmt: skip
    # Status 8 ("positive directional derivative") means SLSQP hit its precision limit; accept
    # it when the point is feasible (the comparison tolerance then decides).
    assert res.success or (res.status == 8 and margins(res.x).min() >= -1e-9), res.message
    return res.x[:d], res.x[d]


@pytest.mark.parametrize("seed", range(4))
def test_hard_margin_bias_free_matches_sklearn_svc(x64, seed):
    x, y = _problem(jax.random.key(seed))
    sol = hard_margin_svm(x, y, penalize_bias=False)
    ref = SVC(kernel="linear", C=1e8, tol=1e-12).fit(x, y)  # hard margin as C → ∞
    # sklearn's decision function is coef·x + intercept = v·x − b.
    ours = np.append(sol.weights, sol.bias)
    theirs = np.append(ref.coef_[0], -ref.intercept_[0])
    assert np.linalg.norm(ours - theirs) <= SKLEARN_RTOL * np.linalg.norm(theirs)
    assert float(sol.kkt_residual) <= 1e-9
    # The support vectors are the points libsvm reports with α > 0.
    assert set(np.flatnonzero(np.asarray(sol.support))) == set(ref.support_.tolist())


@pytest.mark.parametrize("penalize_bias", [False, True])
def test_hard_margin_matches_scipy_primal(x64, penalize_bias):
    x, y = _problem(jax.random.key(7), n=30, d=3)
    sol = hard_margin_svm(x, y, penalize_bias=penalize_bias)
    v, b = _primal_slsqp(x, y, penalize_bias=penalize_bias)
    np.testing.assert_allclose(sol.weights, v, atol=SLSQP_ATOL)
    np.testing.assert_allclose(sol.bias, b, atol=SLSQP_ATOL)


# liblinear may warn that it stopped at max_iter; the 1e-6 agreement below is what counts.
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_augmented_form_matches_liblinear_with_penalised_intercept(x64):
    # liblinear treats the intercept as a weight on a constant feature (penalised): with
    # intercept_scaling = 1 it solves the augmented problem on [x; 1], so b = −intercept.
    x, y = _problem(jax.random.key(3))
    sol = hard_margin_svm(x, y, penalize_bias=True)
    ref = LinearSVC(loss="hinge", C=1e6, tol=1e-12, max_iter=10**7).fit(x, y)
    np.testing.assert_allclose(sol.weights, ref.coef_[0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(sol.bias, -ref.intercept_[0], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("penalize_bias", [False, True])
def test_hard_margin_kkt_conditions(x64, penalize_bias):
    x, y = _problem(jax.random.key(11), n=60, d=5)
    sol = hard_margin_svm(x, y, penalize_bias=penalize_bias)
    alpha = np.asarray(sol.dual)
    functional = y * (x @ np.asarray(sol.weights) - float(sol.bias))
    assert alpha.min() >= -1e-12  # dual feasibility
    assert functional.min() >= 1 - 1e-8  # primal feasibility
    assert np.max(alpha * (functional - 1)) <= 1e-8  # complementary slackness
    np.testing.assert_allclose(sol.weights, (alpha * y) @ x, atol=1e-8)  # stationarity in v
    if penalize_bias:
        np.testing.assert_allclose(sol.bias, -(alpha @ y), atol=1e-8)  # stationarity in b
    else:
        assert abs(alpha @ y) <= 1e-8  # the equality constraint of the dual
    np.testing.assert_allclose(sol.margin, 1 / np.linalg.norm(sol.weights), rtol=1e-8)


@pytest.mark.parametrize("penalize_bias", [False, True])
def test_soft_margin_matches_oracles(x64, penalize_bias):
    # Soft margin with points inside the margin: λ large enough that C binds.
    x, y = _problem(jax.random.key(5), n=30, d=3)
    lam = 0.02
    c = 1.0 / (2 * lam * len(y))
    sol = soft_margin_svm(x, y, regularization=lam, penalize_bias=penalize_bias)
    alpha = np.asarray(sol.dual)
    assert np.any(np.isclose(alpha, c, rtol=1e-6)), "the box constraint should bind"
    assert alpha.max() <= c * (1 + 1e-9)
    v, b = _primal_slsqp(x, y, penalize_bias=penalize_bias, upper=np.full(len(y), c))
    np.testing.assert_allclose(sol.weights, v, atol=SLSQP_ATOL)
    np.testing.assert_allclose(sol.bias, b, atol=SLSQP_ATOL)
    if not penalize_bias:  # SVC(C) solves ½‖v‖² + C Σ hinge = (λ‖v‖² + mean hinge)/(2λ)
        ref = SVC(kernel="linear", C=c, tol=1e-12).fit(x, y)
        diff = np.linalg.norm(np.asarray(sol.weights) - ref.coef_[0])
        assert diff <= SKLEARN_RTOL * np.linalg.norm(ref.coef_[0])
    # The solution minimises the primal objective: perturbations only increase it.
    obj = lambda w, bb: float(
        svm_primal_objective(w, bb, x, y, regularization=lam, penalize_bias=penalize_bias)
    )
    best = obj(sol.weights, sol.bias)
    rng = np.random.default_rng(0)
    for _ in range(20):
        dv, db = 1e-4 * rng.normal(size=x.shape[1]), 1e-4 * rng.normal()
        assert obj(sol.weights + dv, sol.bias + db) >= best - 1e-12


def test_sample_mask_equals_removing_the_point(x64):
    x, y = _problem(jax.random.key(2))
    full = hard_margin_svm(x, y, penalize_bias=False)
    i = int(np.flatnonzero(np.asarray(full.support))[0])  # removing a support vector matters
    masked = hard_margin_svm(x, y, penalize_bias=False, sample_mask=np.arange(len(y)) != i)
    removed = hard_margin_svm(np.delete(x, i, 0), np.delete(y, i), penalize_bias=False)
    np.testing.assert_allclose(masked.weights, removed.weights, atol=1e-8)
    np.testing.assert_allclose(masked.bias, removed.bias, atol=1e-8)
    assert float(masked.dual[i]) == 0.0
    assert np.linalg.norm(masked.weights) < np.linalg.norm(full.weights)  # Lemma A.2.4


def test_vmap_and_jit_agree_with_single_calls(x64):
    keys = jax.random.split(jax.random.key(9), 3)
    data = jax.vmap(lambda k: separable_dataset(k, 30, 3, margin=0.2, radius=1.0, offset=0.3))(keys)
    batched = jax.jit(jax.vmap(lambda a, b: hard_margin_svm(a, b)))(data.x, data.y)
    for j in range(3):
        single = hard_margin_svm(data.x[j], data.y[j])
        np.testing.assert_allclose(batched.weights[j], single.weights, atol=1e-9)
        np.testing.assert_allclose(batched.bias[j], single.bias, atol=1e-9)


def test_soft_margin_normalizer_convention(x64):
    # m = n on S^i (rigorous Cor 2.5) is the same as λ' = λ·n/(n − 1) with m = n − 1.
    x, y = _problem(jax.random.key(4), n=20, d=3)
    mask = np.arange(20) != 3
    a = soft_margin_svm(x, y, regularization=0.05, sample_mask=mask, normalizer=20)
    b = soft_margin_svm(x, y, regularization=0.05 * 20 / 19, sample_mask=mask)
    np.testing.assert_allclose(a.weights, b.weights, atol=1e-9)


def test_input_validation():
    x = jnp.ones((4, 2))
    with pytest.raises(ValueError, match="labels ±1"):
        hard_margin_svm(x, jnp.array([1.0, 0.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="shape"):
        hard_margin_svm(x, jnp.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="both classes"):
        hard_margin_svm(x, jnp.array([1.0, 1.0, -1.0, 1.0]), sample_mask=[True, True, False, True])
    with pytest.raises(ValueError, match="regularization"):
        soft_margin_svm(x, jnp.array([1.0, -1.0, 1.0, -1.0]), regularization=-1.0)
    with pytest.raises(ValueError, match="ndim"):
        hard_margin_svm(jnp.ones(4), jnp.array([1.0, -1.0, 1.0, -1.0]))


def test_hard_margin_does_not_cycle_on_a_planar_leave_one_out_problem(x64):
    """A regression instance: 7 planar points (one of 1,500 datasets of the Lemma A.2.4
    claims, seed 1, with point 1 removed) on which uncapped Mehrotra centring cycles with
    period 4 and stalls at KKT error 8e-2, returning a margin *below* the full set's."""
    x = np.array([
        [-0.44371655002637334, 0.896167184867139], [0.1692959631203851, -0.3432979570637553],
        [-0.5433584882966003, 0.8042581298696273], [-0.01614731116811718, 0.1267893626111845],
        [-0.47400547478497446, 0.8805218963057483], [-0.748503171000032, 0.6631312110004299],
        [-0.5343719797439408, 0.8452494231080797], [-0.07571459658536778, -0.5007024930067496],
    ])  # fmt: skip
    y = np.array([1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0, -1.0])
    keep = np.arange(8) != 1
    sol = hard_margin_svm(x, y, penalize_bias=False, sample_mask=keep)
    assert float(sol.kkt_residual) <= 1e-9
    v, b = _primal_slsqp(x[keep], y[keep], penalize_bias=False)
    np.testing.assert_allclose(sol.weights, v, atol=SLSQP_ATOL)
    np.testing.assert_allclose(sol.bias, b, atol=SLSQP_ATOL)
    # Removing a point cannot shrink the margin (Lemma A.2.3's feasibility argument).
    full = hard_margin_svm(x, y, penalize_bias=False)
    assert float(sol.margin) >= float(full.margin) - 1e-9
