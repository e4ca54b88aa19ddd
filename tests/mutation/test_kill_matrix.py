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
PENDING_TOPICS: dict[str, str] = {}

#: Topics below the floor, with the rate they are at (the test fails if a topic drops
#: below it, or rises above the floor while still listed).
PENDING_KILL_RATE: dict[str, float] = {}
# (intervals was listed at 0.778 after session 39's fresh draw: spearman's n − 1 survived,
# invisible at N = 20; session 40's Moran anchor at N = 5 kills it: 0.889, 8 killed, 1
# survived, 5 equivalent.)
# (overtraining fell to 0.839 in session 38's re-draw under per-function seeds; session 39's
# premises and the exact --resume brought it to 0.867: 65 killed, 10 survived, 39 equivalent.)
# (linearization was listed from session 26 at 0.674 to session 37 at 0.808; session 38's
# remake at 010420f, with a second route to r_0 in Thm 2's plateau and Thm 4's containment,
# reached 0.874: 90 killed, 13 survived, 115 equivalent.)

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
    "stability.soudry.direction_converges": "session 31's stability remake sampled "
    "simulate_soudry_directions afresh: its kills there (s.dim ± 1) are by errors; the "
    "e_aug/e_paper swap is killed (session 32) by paper_svm_direction's two-sided "
    "counterexample, which runs first; the earlier sample's verdict kills were of mutants not "
    "drawn this time",
    "overtraining.thm4_1.factor_alignment_printed": "remade under rule 2 (2026-11-30): a "
    "refuted printed statement; its kills are by raising only (session 40's --resume: 1 kill, "
    "6 mutants moved its numbers)",
    "linear_teachers.thm5_4.scale_invariance": "session 40's remake: an identity (R(β_∞) is "
    "invariant under θ_S → sθ_S and 2-homogeneous in θ_T, to 1e-10); its one kill is by "
    "raising; the 5 mutants that moved its numbers (eq. (6)'s bisection bracket, deep_risk's "
    "dropped P_∥θ_T, the task pair's distance, the swapped keys) keep both symmetries, which "
    "every eq. (6) built from norm ratios has, and were killed by Thm 5.2's root equation, "
    "Thm 5.4's bounds and Fig 2b's premise (cor6_2.bound, silent until session 39, kills)",
    "linearization.thm2.plateau_slope": "session 37's re-draw: a rate (the plateau falls like "
    "1/λ); its 2 kills are by raising; the mutants that moved its numbers were killed first "
    "by thm2.plateau (proximal_gd's sign, mse_loss's double) or keep the 1/λ slope "
    "(simulate_plateau's step 0.5/(λ − 1), with a reason)",
    "linearization.lora.ntk_at_init": "remade under rule 2 (2026-11-30): an identity (the LoRA "
    "NTK at B = 0 is the B-block alone); its 4 kills are by raising, the round-2 mutants of "
    "simulate_kernel_blocks were equivalent (guards that never fire, jac @ jac.T.T)",
    "linearization.ntk.additivity": "remade under rule 2 (2026-11-30): the same simulation as "
    "lora.ntk_at_init, with kills by raising only (3 in session 40's --resume) and "
    "equivalent round-2 mutants",
    **{
        f"linearization.minilm_kappa.{name}": "a smoke claim at quick scale (MiniLM-L3, a dozen "
        "sentences): its verdict decides nothing there, so it kills only by raising (3 kills "
        "in session 40's --resume)"
        for name in ("ntk_adamw", "ntk_gd", "sign_adamw", "sign_gd")
    },
    **{
        f"stability.fig8.init_distance_{name}": "remade under rule 2 (2026-11-30): a trend "
        "over the initial-head norm; its kills (10 in session 40's --resume) are by raising "
        "only (the panel's row/cell "
        "bookkeeping), and the 16 mutants that moved its numbers (the SVM solver, loo_cell's "
        "normaliser, the step size) moved them without reversing the trend"
        for name in ("gd", "weak")
    },
    **{
        f"early_stopping.minilm.{name}": "session 37's remake at 154335c: a bound on the fitted "
        "decay exponent β of MiniLM's NTK; its 8 kills are by raising (the power iteration's "
        "chunks, the Jacobian products' arguments, eigen_decay_exponent's n + 1), and the "
        "mutants that move β or its CI (the NTK's symmetrisation scaled, the eigenvalues' "
        "n − 1, mean_ci's half-width doubled) multiply every eigenvalue by one positive factor, "
        "which β cannot see, or were killed first by a sibling"
        for name in ("beta_above_half", "beta_above_half_intercept")
    },
    "early_stopping.cor1.negation_gap_printed": "session 37's remake: an identity (the "
    "printed eq. (9) gap on the linearised model); its one kill is by raising; the mutants "
    "that moved its numbers (the step size ×2 or ×½, the linearisation's dropped J·Δ, the "
    "gap's 2f_PT) were killed first by its corrected twin and the sibling negation claims",
    "early_stopping.thm3.pretraining_distance": "session 37's remake: a rate (the distance "
    "from pretraining grows like its bound); its 2 kills are by raising; of the mutants that "
    "moved its numbers, layer_norm's 2x − mean and the swapped source/target inputs have "
    "reasons, and mean_ci's and mse_loss's doubles were killed first by other claims",
    **{
        f"early_stopping.minilm.{name}": "not recorded yet at full scale (issue 22's MiniLM "
        "task vectors): at quick scale its baseline is a smoke run, so the mutants that moved "
        "its numbers (vector_cosines, _task_vector_seed, _gd_program) were not judged; its "
        "kills are by raising (1 and 0 in session 40's --resume: a smoke claim may be skipped "
        "after another claim's kill)"
        for name in ("cosine_matches_kernel", "cosine_order_matches_kernel")
    },
}

#: Survivors without a reason (blind spots) per topic: at most this many.
PENDING_BLIND_SPOTS: dict[str, int] = {
    # the perturbation centred at θ/2 (0.5·p + γ·s·ε): progressive sensitivity decides only
    # the sign of the last-minus-first budget gain and does not notice (PENDING_UNPINNED)
    "overtraining": 1,
}


#: Theory functions with a blind spot and no kill by a claim (see PENDING_BLIND_SPOTS).
PENDING_UNPINNED: dict[str, str] = {
    "ntsim.theory.overtraining._budget._perturbation": "a blind spot: its one mutant centres "
    "the noise at θ/2 (0.5·p + γ·s·ε) and progressive sensitivity, which decides only the "
    "sign of the last-minus-first budget gain, does not notice; the unit tests kill it",
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
