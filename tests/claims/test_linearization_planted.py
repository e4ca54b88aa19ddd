"""Planted bugs in the linearization claims' formulas change their outcome (contract v2).

Each refuted printed statement declares the counterexample its mechanism predicts, so an
error in the printed-side formula *in either direction* (×2, ×1/2) must leave the claim not
as expected; so must "fixing" the printed formula (the claim would then hold). The same
goes for the scale-free quantity of Thm 6 (η) and the corrected twins' formulas. Runs are
shared through one cache where the planted formula is evaluated in the check only.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import pytest

import ntsim.theory.linearization as lz
from ntsim.claims import RunCache, get_claim, run_claims
from ntsim.theory.linearization import _bounds

CACHE = RunCache(maxsize=8)


def _record(claim_id: str, *, cache=CACHE):
    (record,) = run_claims([get_claim(claim_id)], scale="quick", seeds=(0,), cache=cache)
    assert record.per_seed[0].error is None, record.per_seed[0].error
    return record


def _scaled(fn, factor):
    def planted(*args, **kwargs):
        out = fn(*args, **kwargs)
        return out * factor

    return planted


def _scaled_bounds(fn, factor):
    def planted(*args, **kwargs):
        b = fn(*args, **kwargs)
        return b._replace(lower=b.lower * factor, upper=b.upper * factor)

    return planted


@pytest.mark.parametrize(
    ("claim_id", "name", "plant"),
    [
        ("linearization.thm2.bound_printed", "thm2_bound_printed", _scaled),
        ("linearization.krr.reduction_printed", "ridge_from_proximal_printed", _scaled),
        ("linearization.thm5.bounds_printed", "thm5_bounds_printed", _scaled_bounds),
    ],
)
@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_printed_side_errors_in_either_direction_are_caught(monkeypatch, claim_id, name, plant,
                                                            factor):  # fmt: skip
    assert _record(claim_id).as_expected  # the unplanted claim matches its counterexample
    monkeypatch.setattr(lz, name, plant(getattr(lz, name), factor))
    record = _record(claim_id)
    assert not record.as_expected, (record.verdict, record.per_seed[0].counterexample_found)


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_thm4_printed_threshold_errors_are_caught(monkeypatch, factor):
    """The printed λ_o is evaluated inside the simulation: a fresh run per plant."""
    monkeypatch.setattr(
        _bounds, "thm4_lambda_o_printed", _scaled(_bounds.thm4_lambda_o_printed, factor)
    )
    record = _record("linearization.thm4.containment_printed", cache=RunCache())
    assert record.verdict == "refuted" and not record.as_expected, record.per_seed[0]


def test_fixing_a_printed_formula_makes_it_hold(monkeypatch):
    """Thm 2 with ‖y(0) − y*‖ (the proof's) in place of ‖y(t) − y*‖: no refutation left."""
    monkeypatch.setattr(
        lz, "thm2_bound_printed", lambda lip, residual, integral: lz.thm2_bound(
            lip, residual[:, :1], integral)
    )  # fmt: skip
    record = _record("linearization.thm2.bound_printed")
    assert record.verdict == "holds" and not record.as_expected


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_thm6_eta_errors_in_either_direction_are_caught(monkeypatch, factor):
    """η is scale-free; the tightness instance S = cK anchors it (λ_i((1 + c)K) = (1 + η)λ_i)."""
    assert _record("linearization.thm6.eigen_stability").verdict == "holds"
    monkeypatch.setattr(lz, "thm6_bounds", _eta_scaled(lz.thm6_bounds, factor))
    record = _record("linearization.thm6.eigen_stability")
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics


def _eta_scaled(fn, factor):
    def planted(kernel, extra):
        b = fn(kernel, extra)
        eta = b.eta * factor
        return b._replace(lower=(1 - eta) * b.base, upper=(1 + eta) * b.base, eta=eta)

    return planted


@pytest.mark.parametrize(
    ("claim_id", "name"),
    [
        ("linearization.thm2.bound_corrected", "thm2_bound"),
        ("linearization.krr.reduction", "ridge_from_proximal"),
    ],
)
def test_corrected_twins_catch_errors_in_their_formulas(monkeypatch, claim_id, name):
    monkeypatch.setattr(lz, name, _scaled(getattr(lz, name), 0.5))
    assert _record(claim_id).verdict == "refuted"


def test_kappa_rank_correlation_sign_error_is_caught(monkeypatch):
    """ρ is scale-free: a sign error in the rank correlation makes the κ figure reading hold
    (its counterexample is a CI wholly below 0, ρ ≈ −0.2 becomes +0.2) and refutes the Thm 5
    twin (ρ ≈ +0.6 becomes −0.6)."""
    cache = RunCache()
    assert _record("linearization.kappa.predicts_train_loss", cache=cache).as_expected
    assert _record("linearization.kappa.thm5_bound_orders_loss", cache=cache).verdict == "holds"
    original = lz.loss_rank_correlations
    monkeypatch.setattr(lz, "loss_rank_correlations", lambda run, p: -original(run, p))
    record = _record("linearization.kappa.predicts_train_loss", cache=cache)
    assert record.verdict == "holds" and not record.as_expected, record.per_seed[0]
    record = _record("linearization.kappa.thm5_bound_orders_loss", cache=cache)
    assert record.verdict == "refuted"


def test_kappa_inverted_condition_number_is_caught(monkeypatch):
    """κ evaluated as (λ_min + σ)/(λ_max + σ) (inside the simulation: a fresh run) turns the
    negative association into a positive one: the figure reading no longer matches its
    counterexample."""
    from ntsim.theory.linearization import _kappa

    original = _kappa.kernel_condition_number
    monkeypatch.setattr(_kappa, "kernel_condition_number", lambda k, s: 1 / original(k, s))
    record = _record("linearization.kappa.predicts_train_loss", cache=RunCache())
    assert not record.as_expected, record.per_seed[0]


@pytest.mark.parametrize("pull", [2.0, 0.5, 0.0])
def test_selective_step_pull_errors_are_caught(monkeypatch, pull):
    """The printed selective step's proximal pull ×2, ×1/2 or dropped: the worst relative
    increase leaves [498, 500] (≈ 1000, ≈ 250, or no increase at all)."""
    from ntsim.theory.linearization import _simulations

    original = _simulations.selective_step

    def planted(theta, theta0, grad, eta, lam):
        return original(theta, theta0, grad, eta, pull * lam)

    monkeypatch.setattr(_simulations, "selective_step", planted)
    record = _record("linearization.thm1.selective_step_printed", cache=RunCache())
    assert not record.as_expected, record.per_seed[0]


def test_thm3_quadratic_catches_a_halved_curvature_term(monkeypatch):
    """Thm 3's b with (2/λ)Lip(∇f)r_0 in place of (4/λ)Lip(∇f)r_0: the quadratic model's gap
    reaches 4Lip(f)²Lip(∇f)r_0²t² as t → 0, above the halved bound wherever λ < 2Lip(∇f)r_0;
    so does a bound halved as a whole."""
    claim_id = "linearization.thm3.bound_quadratic"
    assert _record(claim_id).verdict == "holds"
    original = _bounds.thm3_b
    monkeypatch.setattr(
        _bounds, "thm3_b", lambda lip_f, lip_grad, r0, lam: 2 * lip_f**2 * r0 * (
            2 / lam * lip_grad * r0 + 1)
    )  # fmt: skip
    record = _record(claim_id)
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics
    monkeypatch.setattr(_bounds, "thm3_b", _scaled(original, 0.5))
    assert _record(claim_id).verdict == "refuted"


def test_quadratic_closed_form_catches_a_dropped_linear_proximal_term(monkeypatch):
    """The linearised flow run without its λ-term (the step Thm 3's proof drops): the
    residual no longer matches ρ(λ + 2a²e^{−At})/A. The genuine run holds."""
    from ntsim.theory.linearization import _dynamics

    claim_id = "linearization.thm3.quadratic_closed_form"
    assert _record(claim_id).verdict == "holds"
    original = _dynamics.flow_path

    def planted(*args, proximal, linearised=False, **kwargs):
        return original(*args, proximal=0.0 * proximal if linearised else proximal,
                        linearised=linearised, **kwargs)  # fmt: skip

    monkeypatch.setattr(_dynamics, "flow_path", planted)
    record = _record(claim_id, cache=RunCache())
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics


def test_quadratic_closed_form_catches_a_wrong_network_flow(monkeypatch):
    """The network's flow run at 2λ: its path no longer reaches s at ∫_0^s du/g(u)."""
    from ntsim.theory.linearization import _dynamics

    original = _dynamics.flow_path

    def planted(*args, proximal, linearised=False, **kwargs):
        return original(*args, proximal=proximal if linearised else 2.0 * proximal,
                        linearised=linearised, **kwargs)  # fmt: skip

    monkeypatch.setattr(_dynamics, "flow_path", planted)
    record = _record("linearization.thm3.quadratic_closed_form", cache=RunCache())
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics


def test_a_state_outside_thm1s_branch_leaves_its_claims_undecided(monkeypatch):
    """The branch quantity recorded as ∇R̃·(θ + θ_0) instead of ∇R̃·(θ − θ_0) (a sign): its
    sign is random, so the premise fails and neither Thm 1 claim decides."""
    original = lz.simulate_selective_step

    def planted(key, setting):
        run = original(key, setting)
        return run._replace(inner=-run.inner)

    from ntsim.claims.linearization import _dynamics as claims_dynamics

    uses = dataclasses.replace(claims_dynamics.SELECTIVE_STEP, fn=planted)
    for claim_id in ("linearization.thm1.flow_monotone",
                     "linearization.thm1.selective_step_printed"):  # fmt: skip
        claim = dataclasses.replace(get_claim(claim_id), uses=uses)
        (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=RunCache())
        assert record.verdict == "inconclusive"


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_a_wrong_gradient_step_in_the_printed_scheme_leaves_it_undecided(monkeypatch, factor):
    """θ̃ = θ − 2η∇R̃ᵀ (or ½): the refutation's window [λη/ε − 2, λη/ε] cannot see the
    gradient part (‖I − 2ηK‖ ≤ 1 either way), so without its closed-form premise the printed
    claim stays 'refuted' on another scheme; with it the step is not the printed one and the
    claim decides nothing."""
    from ntsim.theory.linearization import _simulations

    def planted(theta, theta0, grad, eta, lam):
        return original(theta, theta0, factor * grad, eta, lam)

    original = _simulations.selective_step
    assert _record("linearization.thm1.selective_step_printed", cache=RunCache()).verdict == (
        "refuted"
    )
    monkeypatch.setattr(_simulations, "selective_step", planted)
    record = _record("linearization.thm1.selective_step_printed", cache=RunCache())
    assert record.verdict == "inconclusive", record.per_seed[0].result.diagnostics


@pytest.mark.parametrize("term", ["curvature", "proximal"])
def test_the_onset_of_the_quadratic_gap_pins_beta(monkeypatch, term):
    """β = (8/3)a² + (4/3)cρ + (5/6)λ with its cρ or λ term dropped: the gap's onset at the
    smallest time no longer matches αt²(1 − βt) to a tenth of the first-order terms."""
    from ntsim.theory.linearization import quadratic_gap as qg

    def planted(slope, curvature, residual0, proximal):
        alpha, beta = original(slope, curvature, residual0, proximal)
        dropped = 4 / 3 * curvature * residual0 if term == "curvature" else 5 / 6 * proximal
        return alpha, beta - dropped

    original = qg.quadratic_gap_onset
    monkeypatch.setattr(qg, "quadratic_gap_onset", planted)
    assert _record("linearization.thm3.quadratic_closed_form").verdict == "refuted"


def test_an_inflated_lipschitz_estimate_of_finetune_refutes_the_quadratic_closed_form(
    monkeypatch,
):
    """finetune's path estimate of Lip(∇f) inflated (×3 here; ``‖0.5J_t − J_0‖`` in place of
    ``‖J_t − J_0‖`` inflates it 3–50× on this model): on the network runs that only loosens
    Thm 3's and Thm 4's bounds, but on the quadratic model the estimate must be |c|."""
    source = lz.finetune

    def finetune(*args, **kwargs):
        run = source(*args, **kwargs)
        if run.grad_lip is None:
            return run
        return run._replace(grad_lip=run.grad_lip * 3.0)  # an inflated path estimate

    monkeypatch.setattr(lz, "finetune", finetune)
    record = _record("linearization.thm3.quadratic_closed_form", cache=RunCache())
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics


def test_a_frobenius_norm_in_finetunes_lipschitz_estimate_refutes_the_closed_form(monkeypatch):
    """‖·‖_F in place of ‖·‖_op (the trace of the Gram matrix for its top eigenvalue): on one
    input the Jacobian change is rank one and the two agree; on two orthogonal inputs the
    estimate becomes |c| instead of |c|/√2."""
    import ntsim.theory.linearization._dynamics as dynamics

    monkeypatch.setattr(dynamics, "_op_norm", lambda jac: jnp.sqrt(jnp.sum(jac**2)))
    record = _record("linearization.thm3.quadratic_closed_form", cache=RunCache())
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics


@pytest.mark.parametrize(
    "name, planted",
    [
        # the 2rLip(∇f) term doubled (a looser bound: Thm 4's own check cannot see it)
        ("thm4_simplified_bound",
         lambda lf, lg, r0, r, t: 2 * lf * r0 * (4 * jnp.asarray(r) * lg + lf) * t),
        # the Lip(f) term halved (a tighter bound that still holds on these runs)
        ("thm4_simplified_bound",
         lambda lf, lg, r0, r, t: 2 * lf * r0 * (2 * jnp.asarray(r) * lg + 0.5 * lf) * t),
        # Thm 3's (4/λ)Lip(∇f)r0 term halved
        ("thm3_b", lambda lf, lg, r0, lam: 2 * lf**2 * r0 * (2 / lam * lg * r0 + 1)),
        # λ_o doubled
        ("thm4_lambda_o", lambda r0, lf, r: 4 * r0 * lf / r),
    ],
)  # fmt: skip
def test_a_broken_thm4_formula_refutes_the_composition(monkeypatch, name, planted):
    """Each of the three printed formulas the derivation joins, broken alone: the simplified
    coefficient no longer equals Thm 3's b at λ_o."""
    monkeypatch.setattr(lz, name, planted)  # read by the check only, not the simulation
    record = _record("linearization.thm4.simplified_bound_composes")
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics


_PLANTED_KAPPA = RunCache()  # one planted simulation shared by the two κ claims


@pytest.mark.parametrize("claim_id", ["linearization.kappa.predicts_train_loss",
                                      "linearization.kappa.thm5_bound_orders_loss"])  # fmt: skip
def test_curves_that_do_not_start_at_the_pretrained_model_leave_kappa_undecided(
    monkeypatch, claim_id
):
    """fit_config's loss read from 0.5·f (a scaled model output): the curves no longer start
    at f_θ0's training MSE, so the runs are not fine-tuning from the pretrained model."""
    import ntsim.theory.linearization._kappa as kappa

    source = kappa.fit_config

    def planted(apply, *args, **kwargs):
        return source(lambda p, x: 0.5 * apply(p, x), *args, **kwargs)

    monkeypatch.setattr(kappa, "fit_config", planted)
    assert _record(claim_id, cache=_PLANTED_KAPPA).verdict == "inconclusive"


def test_algorithm_1_sampling_off_its_sphere_leaves_containment_undecided(monkeypatch):
    """sample_ball at half the radius: Lip(f) is then estimated on a smaller sphere than the
    r-ball the theorem's constant is about, so the containment runs decide nothing."""
    import ntsim.theory.linearization._lipschitz as lipschitz

    source = lipschitz.sample_ball
    monkeypatch.setattr(lipschitz, "sample_ball", lambda k, p, r, m: source(k, p, 0.5 * r, m))
    assert _record("linearization.thm4.containment", cache=RunCache()).verdict == "inconclusive"


def test_a_doubled_ridge_in_kappa_leaves_the_kappa_claims_undecided(monkeypatch):
    """κ(K + 2σI) in place of κ(K + σI): the rank correlations barely move, but the κ read
    is no longer (λ_max + σ)/(λ_min + σ) of the recorded spectrum and ridge."""
    import ntsim.theory.linearization._kappa as kappa

    source = kappa.kernel_condition_number
    monkeypatch.setattr(kappa, "kernel_condition_number", lambda k, s=0.0: source(k, 2 * s))
    assert _record("linearization.kappa.predicts_train_loss", cache=RunCache()).verdict == (
        "inconclusive"
    )


@pytest.mark.parametrize(
    "planted",
    [
        lambda lf, lg, r0, lam, t: lz.thm3_b(lf, lg, r0, lam) * t,  # −(1 − e^{−λt})/λ dropped
        lambda lf, lg, r0, lam, t: 0.5 * _bounds.thm3_bound(lf, lg, r0, lam, t),  # halved
    ],
)
def test_a_broken_thm3_bound_refutes_the_composition(monkeypatch, planted):
    """Thm 3's bound with its e^{−λt} term dropped, or halved: still below the simplified
    bound, but no longer (b(λ)/b(λ_o))·h(λt) of it (the referee's planted bugs)."""
    monkeypatch.setattr(lz, "thm3_bound", planted)
    record = _record("linearization.thm4.simplified_bound_composes")
    assert record.verdict == "refuted", record.per_seed[0].result.diagnostics


@pytest.mark.parametrize("factor", [2.0, 0.25])
def test_thm1_identity_off_its_stated_points_decides_nothing(factor):
    """The identity evaluated at θ0 + v/√p (or θ0 + v/(8√p)) instead of θ0 + 0.5v/√p: it
    holds at every θ, so only the premise on ‖θ − θ0‖ notices that the points are not the
    ones the claim's notes name."""
    from ntsim.claims.linearization import _dynamics as claims_dynamics

    original = claims_dynamics.THM1.fn

    def planted(key, setting):
        run = original(key, setting)
        return run._replace(distance=factor * run.distance)

    assert _record("linearization.thm1.identity").verdict == "holds"
    uses = dataclasses.replace(claims_dynamics.THM1, fn=planted)
    claim = dataclasses.replace(get_claim("linearization.thm1.identity"), uses=uses)
    (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=RunCache())
    assert record.verdict == "inconclusive", record.per_seed[0].result.diagnostics


def test_a_kl_off_by_a_term_leaves_the_tables_kl_band(monkeypatch):
    """bernoulli_kl with the second term's sign flipped (p₁ log(p₁/q₁) − p₀ log(p₀/q₀)): a
    first-order quantity in f − f̄, far outside the second-order band the gap column sets."""
    import jax
    import jax.numpy as jnp

    from ntsim.theory.linearization import _sweeps

    def planted(logits_p, logits_q):
        p, q = jnp.asarray(logits_p), jnp.asarray(logits_q)
        log_p1, log_p0 = jax.nn.log_sigmoid(p), jax.nn.log_sigmoid(-p)
        log_q1, log_q0 = jax.nn.log_sigmoid(q), jax.nn.log_sigmoid(-q)
        return jnp.mean(jnp.exp(log_p1) * (log_p1 - log_q1)
                        - jnp.exp(log_p0) * (log_p0 - log_q0))  # fmt: skip

    claim_id = "linearization.table.kl_within_logit_bound"
    assert _record(claim_id, cache=RunCache()).verdict == "holds"
    monkeypatch.setattr(_sweeps, "bernoulli_kl", planted)
    jax.clear_caches()
    assert _record(claim_id, cache=RunCache()).verdict == "refuted"
    monkeypatch.undo()
    jax.clear_caches()


@pytest.mark.parametrize(
    ("claim_id", "module_name", "simulation", "field"),
    [
        ("linearization.thm2.plateau", "_distance", "PLATEAU", "r0"),
        ("linearization.thm4.containment", "_gap", "CONTAINMENT", "network_r0"),
    ],
)
@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_a_residual_against_another_target_leaves_the_ball_claims_undecided(
    claim_id, module_name, simulation, field, factor
):
    """r_0 off by ×½ or ×2 (a residual taken against y*/2 or 2y*): Thm 2's plateau and Thm
    4's containment still hold with room, so only the second route to r_0 (the model's
    residual at θ0, or the run's first record) notices, and the claim is undecided."""
    import importlib

    claims_module = importlib.import_module(f"ntsim.claims.linearization.{module_name}")
    original = getattr(claims_module, simulation).fn

    def planted(key, setting):
        run = original(key, setting)
        return run._replace(**{field: factor * getattr(run, field)})

    assert _record(claim_id).verdict == "holds"
    uses = dataclasses.replace(getattr(claims_module, simulation), fn=planted)
    claim = dataclasses.replace(get_claim(claim_id), uses=uses)
    (record,) = run_claims([claim], scale="quick", seeds=(0,), cache=RunCache())
    assert record.verdict == "inconclusive", record.per_seed[0].result.diagnostics
