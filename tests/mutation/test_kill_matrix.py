"""Power as a rule, read from the committed kill matrix (``figures/MUTATION.json``).

The matrix is made by ``ntsim mutate`` (hours for all topics on 2 cores), so these
tests read the committed file rather than rerun it; ``ntsim report --stale`` and the first
test below say when it no longer matches the claims. What is not met yet is listed in the
``PENDING_*`` tables, each with its reason; an entry must go when it is met (the tests fail
on a stale entry), so the tables only shrink.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from ntsim.claims import REGISTRY
from ntsim.mutation import CHECKED_KINDS, blind_spots, markdown_matrix, stale_matrix

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIGURES = ROOT / "figures"
MATRIX = FIGURES / "MUTATION.json"
TOPICS = sorted({c.topic for c in REGISTRY})

#: The claim kill rate every topic must reach (issue: "at least 0.85 in every topic").
KILL_RATE_FLOOR = 0.85

#: Topics the committed matrix does not hold yet (or holds partially), with why.
PENDING_TOPICS: dict[str, str] = {
    "early_stopping": "session 35 (2026-12-01) re-drew the sample once under the per-function "
    "seeds (checkpointed after round 3: 0.821), then capped the SVM solver's centring (on this "
    "topic's paths through ntsim.core) and added eq. (35)'s hand instance, which date 22 of "
    "its claims; the rest of the entry is reused by `ntsim mutate --topic early_stopping "
    "--jobs 2 --resume`",
    "linearization": "session 34 (2026-12-01) aimed checks at five of the ten blind spots "
    "(the plateau's Lipschitz premise, the λ table's ±1 targets, Thm 3's λη ≤ ½ design, Thm 7's "
    "a = c/(1 − η)² and its printed step formulas by numpy) and gave four reasons; the draws "
    "are now seeded per function, so the remake re-draws the sample once: `ntsim mutate "
    "--topic linearization --jobs 2 --resume`",
}

#: Topics below the floor, with the rate they are at (the test fails if a topic drops
#: below it, or rises above the floor while still listed).
PENDING_KILL_RATE: dict[str, float] = {
    # Remade under rule 2 (sessions 28–30, finished 2026-12-01): 82 killed, 19 survived
    # (0.812), every survivor with a reason. Session 29's lemma1.taylor_remainder_bound killed
    # the linearize sign flips; session 30's swap probes (a reading in an enclosing frame is
    # left out) made three never-firing swaps equivalent. The 19 are draws of the same
    # families (transposed or sign-flipped Gaussians, another target or overlap), positive
    # factors a slope or decay fit cannot see, and diagnostics no verdict reads.
    # Session 33's --resume (after the NTK check's power-iteration route, 2026-12-01, 49 min
    # idle at --jobs 2): 83 killed, 21 survived (0.798). The new function on the MiniLM path
    # re-drew the seeded sample of many others, so 15 survivors are new draws without a
    # reason yet (below). Session 35: re-drawn once under the per-function seeds (checkpoint
    # after round 3, 2 h wall at --jobs 2 beside the stability run; round 4 left for --resume):
    # 96 killed, 21 survived (0.821), before eq. (35)'s hand instance and the SVM cap.
    "early_stopping": 0.82,
    # Remade under rule 2 (sessions 26–28, 0.674), finished in session 31 (0.703). Session 33
    # (2026-12-01): every claim was dated (theory package imports), so --resume re-ran all 153
    # first-round mutants and 36 of round 2 at the Thm 1 design check, the table KL band and
    # the λ anchors: 65 killed, 21 survived (0.756) in 42 min at --jobs 2, idle.
    "linearization": 0.75,
}

#: Claims of a checked kind that kill no mutant yet, with why.
PENDING_SILENT_CLAIMS: dict[str, str] = {
    **{
        f"stability.{name}": "session 36's --resume at a5c8844 (rounds up to 4 of its own "
        f"mutants for a silent claim): {kills} kills, all by raising, and {moved} mutants "
        "moved its numbers without its verdict (fig9.radius_svm_limit, lemma_a2_3.bias_bound "
        "and lemma_a2_5.paper_setting, silent in session 35, now kill by their verdicts)"
        for name, kills, moved in (
            ("cor3_1.heads_saturate", 4, 14),
            ("fig9.radius_gd", 13, 18),
            ("lemma_a1_3.logistic", 2, 6),
            ("thm2_2.bound_corrected_small_radius", 4, 6),
            ("thm2_2.bound_printed", 4, 7),
            ("thm2_2.certificate", 4, 4),
        )
    },
    "linearization.thm3.bound_quadratic": "session 33's remake: its one mutant that moved its "
    "numbers is simulate_quadratic_gap's 2·2a² + λ (a blind spot above), which leaves Thm 3's "
    "bound holding on the quadratic model",
    "early_stopping.sec6_2.ridge_sandwich_printed": "session 33's --resume re-drew "
    "simulate_shrinkage_sandwich's mutants (pair.gd − pair.krr ×2, dropped): both moved only "
    "its corrected twin's numbers and are new survivors without a reason; no mutant moved "
    "this printed claim's numbers",
    "stability.soudry.direction_converges": "session 31's stability remake sampled "
    "simulate_soudry_directions afresh: its kills there (s.dim ± 1) are by errors; the "
    "e_aug/e_paper swap is killed (session 32) by paper_svm_direction's two-sided "
    "counterexample, which runs first; the earlier sample's verdict kills were of mutants not "
    "drawn this time",
    "overtraining.lemma_a7.dead_units": "remade under rule 2 (2026-11-30): an identity (dead "
    "units stay exactly 0); 6 mutants moved its numbers, none its verdict, round 2 included",
    "overtraining.thm4_1.factor_alignment_printed": "remade under rule 2 (2026-11-30): a "
    "refuted printed statement; its 2 kills were by raising only (9 mutants moved its numbers)",
    "linear_teachers.cor6_2.bound": "remade in session 27 (2026-11-30): its one kill is by "
    "raising (the input check); _hinf's arccos ×½ moved its numbers, not its verdict (Cor "
    "6.2's bound holds with room on these draws), and its path's other mutants were killed "
    "first by the two-input closed form and Thm 6.1's claims (a mutant runs only on claims "
    "that have killed nothing yet); the session-25 matrix had one kill by its verdict",
    "linearization.lora.ntk_at_init": "remade under rule 2 (2026-11-30): an identity (the LoRA "
    "NTK at B = 0 is the B-block alone); its 4 kills are by raising, the round-2 mutants of "
    "simulate_kernel_blocks were equivalent (guards that never fire, jac @ jac.T.T)",
    "linearization.ntk.additivity": "remade under rule 2 (2026-11-30): the same simulation as "
    "lora.ntk_at_init, with the same 4 kills by raising and equivalent round-2 mutants",
    **{
        f"linearization.minilm_kappa.{name}": "a smoke claim at quick scale (MiniLM-L3, a dozen "
        "sentences): its verdict decides nothing there, so it kills only by raising (5 kills)"
        for name in ("ntk_adamw", "ntk_gd", "sign_adamw", "sign_gd")
    },
    "linearization.minilm_lambda.gap_shrinks": "an ordering (the gap to the linearisation "
    "falls with λ) that reads the gap only through its trend: ‖f + f̄‖ and ½f − f̄ fall with λ "
    "too (the blind spots above; the fix is the anchor planned there)",
    **{
        f"stability.fig8.init_distance_{name}": "remade under rule 2 (2026-11-30): a trend "
        "over the initial-head norm; its 7 kills are by raising only (the panel's row/cell "
        "bookkeeping), and the 16 mutants that moved its numbers (the SVM solver, loo_cell's "
        "normaliser, the step size) moved them without reversing the trend"
        for name in ("gd", "weak")
    },
    "early_stopping.minilm.beta_above_half": "remade under rule 2 (2026-12-01): a bound on "
    "the fitted decay exponent β of MiniLM's NTK; its 3 kills are by raising; the mutants "
    "that move β (eigen_decay_exponent's −slope/2 doubled, _weighted_slope's n − 1) were "
    "killed first by its sibling beta_above_half_intercept, and its round-2 mutants (the NTK's "
    "symmetrisation scaled) multiply every eigenvalue by a positive factor β cannot see",
    **{
        f"early_stopping.minilm.{name}": "not recorded yet at full scale (issue 22's MiniLM "
        "task vectors): at quick scale its baseline is a smoke run, so the mutants that moved "
        "its numbers (vector_cosines, _task_vector_seed, _gd_program) were not judged; 5 "
        "kills by raising"
        for name in ("cosine_matches_kernel", "cosine_order_matches_kernel")
    },
    "early_stopping.thm1.learning_curve_tail_rate": "remade under rule 2 (2026-12-01): a "
    "refuted derived reading (the error of the kernel stopping rule flattens at an "
    "approximation floor for a target outside the NTK's span); 16 mutants moved its numbers "
    "and none lifted the floor, and its 4 kills are by raising; its twin "
    "thm1.learning_curve_rate kills by its verdict",
}

#: Survivors without a reason (blind spots) per topic: at most this many.
PENDING_BLIND_SPOTS: dict[str, int] = {
    # Session 35's early-stopping run (the once-per-topic re-draw under per-function seeds,
    # checkpointed after round 3; round 4 was left running at the stop): 14 survivors without
    # a reason. Session 36 gave 11 of them reasons (_survivors_early_stopping.py) and a check
    # to heldout_mse_curve's ½Y (the MiniLM test curve's step 0 against f_PT's test MSE from
    # the scores); bias_bound and variance_bound ×2 are killed by eq. (35)'s hand instance
    # (2c45ff2). The entry predates both, so 3 stay until the remake.
    "early_stopping": 3,
    # Session 33's remake (0.756) kills the Thm 1 evaluation points and bernoulli_kl's
    # mutants, and leaves 10 blind spots: simulate_plateau's max → min Lipschitz estimate,
    # the MiniLM λ simulation's label coding (2y − ½) and its 2000 + d sentence offset,
    # _signed's 2y − 2, _constant_run's max(λ, 1e-30) → min, random_instance's target sign,
    # simulate_selective_step's 0.1/(μ − 1), thm7_bounds' 1 − ½η, thm7_step_bounds' 1 − η → 1,
    # simulate_quadratic_gap's 2·2a² + λ. Session 34: checks for the plateau's max → min, the
    # label coding (the λ simulation now calls _signed, whose ±1 is a premise of the table's
    # orderings), _constant_run's max → min (λη ≤ ½) and the two Thm 7 bounds; reasons for
    # the sentence offset, random_instance's sign and simulate_quadratic_gap's time grid.
    # The recorded entry's outcomes stay as they were until the remake: 10 − 4 = 6.
    "linearization": 6,
}


#: Theory functions with a blind spot and no kill by a claim (see PENDING_BLIND_SPOTS).
PENDING_UNPINNED: dict[str, str] = {
    **{
        f"ntsim.theory.early_stopping.{name}": "a survivor of session 35's re-draw without a "
        "reason or a claim kill yet (PENDING_BLIND_SPOTS above)"
        for name in ("_real_kernel.heldout_mse_curve",)
    },
    **{
        f"ntsim.theory.linearization.{name}": "a blind spot of session 33's remake with no "
        "claim kill yet (PENDING_BLIND_SPOTS above)"
        for name in (
            "_minilm_training._signed",
            "_simulations._constant_run",
            "_spectral.thm7_step_bounds",
        )
    },
}


@pytest.fixture(scope="module")
def matrix() -> dict:
    if not MATRIX.exists():
        pytest.fail(f"{MATRIX} is missing: run `ntsim mutate --jobs 2` and commit it")
    return json.loads(MATRIX.read_text(encoding="utf-8"))["topics"]


def _pending(topic: str) -> None:
    if topic in PENDING_TOPICS:
        pytest.skip(f"{topic} is not in the matrix yet: {PENDING_TOPICS[topic]}")


def _recorded(matrix: dict, topic: str) -> None:
    """Skip only a topic with no entry: the survivor tests read the recorded outcomes and
    the current reasons, so they hold a pending topic's committed entry to its tables too."""
    if topic not in matrix:
        _pending(topic)


def test_the_matrix_covers_every_topic_at_the_current_claims(matrix):
    stale_topics = {row["id"][len("mutation:") :] for row in stale_matrix(FIGURES)}
    assert stale_topics <= set(PENDING_TOPICS), f"stale: {sorted(stale_topics)}"
    for topic in TOPICS:
        entry = matrix.get(topic)
        if topic in PENDING_TOPICS:  # absent, partial, or made at other code
            assert entry is None or entry.get("partial") or topic in stale_topics, (
                f"{topic} is complete and current: drop it from PENDING"
            )
        else:
            assert not entry.get("partial"), f"{topic}: the committed entry is partial"


def test_the_markdown_is_drawn_from_the_json_and_the_current_reasons(matrix):
    text = (FIGURES / "MUTATION.md").read_text(encoding="utf-8")
    assert text == markdown_matrix(matrix), "run `ntsim mutate --rewrite` and commit MUTATION.md"


@pytest.mark.parametrize("topic", TOPICS)
def test_claim_kill_rate_reaches_the_floor(matrix, topic):
    _pending(topic)
    rate = matrix[topic]["claim_kill_rate"]
    if topic in PENDING_KILL_RATE:
        assert rate < KILL_RATE_FLOOR, f"{topic} reached the floor: drop it from PENDING"
        assert rate >= PENDING_KILL_RATE[topic] - 1e-9, f"{topic}'s kill rate fell to {rate}"
    else:
        assert rate >= KILL_RATE_FLOOR, f"{topic}: claim kill rate {rate:.3f}"


@pytest.mark.parametrize("topic", TOPICS)
def test_every_claim_of_a_checked_kind_kills_a_mutant(matrix, topic):
    _pending(topic)
    silent = {  # the topic's own claims: another topic's (the intervals claims join every
        # topic's plan) are held to this rule in their own topic's entry
        cid
        for cid, row in matrix[topic]["claims"].items()
        if cid.startswith(f"{topic}.")
        and row["kind"] in CHECKED_KINDS
        and row.get("killed_by_verdict", row["killed"]) == 0
    }
    pending = {cid for cid in PENDING_SILENT_CLAIMS if cid.startswith(f"{topic}.")}
    assert silent <= pending, f"claims that kill nothing: {sorted(silent - pending)}"
    assert pending <= silent, f"no longer silent, drop from PENDING: {sorted(pending - silent)}"


@pytest.mark.parametrize("topic", TOPICS)
def test_survivors_have_reasons(matrix, topic):
    _recorded(matrix, topic)
    blind = blind_spots(matrix[topic])
    allowed = PENDING_BLIND_SPOTS.get(topic, 0)
    listed = [f"{o['function']}:{o['line']} {o['operator']} `{o['before']}`" for o in blind]
    assert len(blind) <= allowed, f"{topic}: survivors without a reason: {listed}"
    if topic in PENDING_BLIND_SPOTS and not matrix[topic].get("partial"):  # a partial entry
        # (a remake checkpointed mid-way) may not have reached the pending survivors yet
        assert len(blind) == allowed, f"{topic}: {len(blind)} blind spots now, update PENDING"


@pytest.mark.parametrize("topic", TOPICS)
def test_every_theory_function_on_a_claim_path_is_pinned_by_a_claim(matrix, topic):
    """A theory function whose mutants some claim could see (non-equivalent) has a mutant
    killed by a claim, or all its survivors have a reason."""
    _recorded(matrix, topic)
    functions = matrix[topic]["functions"]
    unpinned = sorted(
        {
            name
            for o in blind_spots(matrix[topic])
            if (name := f"{o['module']}.{o['function']}").startswith("ntsim.theory.")
            and not functions[name]["killed"]
        }
    )
    pending = {name for name in PENDING_UNPINNED if name.startswith(f"ntsim.theory.{topic}.")}
    assert set(unpinned) <= pending, f"{topic}: theory functions no claim pins: {unpinned}"
    if not matrix[topic].get("partial"):  # a partial remake may not have reached them yet
        assert pending <= set(unpinned), f"pinned now, drop from PENDING: {pending - set(unpinned)}"


@pytest.mark.slow
def test_a_sample_of_mutants_replays_as_recorded(tmp_path, matrix):
    """``ntsim mutate --sample 20`` on the cheapest topic runs to the end (3.4 minutes at
    ``--jobs 1`` beside another job on 2 cores, 2026-11-27), and the mutants the committed
    matrix also holds get the same status there: the matrix is reproducible."""
    topic = "linear_teachers"
    if stale_matrix(FIGURES, topic):  # a stale entry was made on other code: nothing to replay
        pytest.skip(f"the committed {topic} matrix is stale (ntsim report --stale): remake it")
    done = subprocess.run(
        [sys.executable, "-m", "ntsim.cli", "mutate", "--topic", topic, "--sample", "20",
         "--jobs", "2", "--tests", "none", "--out", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    fresh = json.loads((tmp_path / "MUTATION.json").read_text())["topics"][topic]["outcomes"]
    recorded = {
        (o["module"], o["function"], o["operator"], o["index"]): o["status"]
        for o in matrix[topic]["outcomes"]
    }
    for o in fresh:
        key = (o["module"], o["function"], o["operator"], o["index"])
        if key in recorded:
            assert o["status"] == recorded[key], f"{key}: {o['status']} now, {recorded[key]} then"
    assert len(fresh) == 20
    # every mutant reached an outcome (an ill-typed one is "invalid", a legitimate outcome)
    statuses = {o["status"] for o in fresh}
    assert statuses <= {"killed", "survived", "equivalent", "invalid"}, statuses


@pytest.mark.slow
def test_negative_controls_are_still_noticed():
    """Every bound/identity claim of one topic replays its negative control (the recorded
    mutant nearest its own formula, ``ntsim mutate --controls``) and still notices it."""
    done = subprocess.run(
        [sys.executable, "-m", "ntsim.cli", "mutate", "--controls", "--topic", "overtraining"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    replayed = [line for line in done.stdout.splitlines() if line.startswith("ok  ")]
    assert len(replayed) >= 10, done.stdout[-3000:]  # overtraining has 20+ bound/identity claims
    assert "0 negative controls no longer noticed" in done.stdout.splitlines(), done.stdout[-3000:]
