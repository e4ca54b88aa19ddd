"""The optax fine-tuning loop against closed forms and against itself (seeds, resume)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from ntsim.transformers import (
    adamw,
    finetune,
    learning_rate_schedule,
    load_finetune_state,
    param_mask,
    save_finetune_state,
)


def _regression(key, n=12, d=3):
    kx, kw = jax.random.split(key)
    x = jax.random.normal(kx, (n, d))
    return {"x": x, "y": x @ jax.random.normal(kw, (d,))}


def _mse(params, batch, key):
    del key
    residual = batch["x"] @ params["w"] + params["b"] - batch["y"]
    return 0.5 * jnp.mean(residual**2), {"max_residual": jnp.max(jnp.abs(residual))}


def test_schedule_shapes():
    cosine = learning_rate_schedule(2.0, total_steps=12, warmup_steps=2)
    assert float(cosine(1)) == pytest.approx(1.0)
    assert float(cosine(2)) == pytest.approx(2.0)
    assert float(cosine(7)) == pytest.approx(1.0, abs=1e-6)  # half-way through the cosine
    assert float(cosine(12)) == pytest.approx(0.0, abs=1e-6)
    assert float(learning_rate_schedule(0.5, total_steps=3, decay="constant")(3)) == 0.5
    with pytest.raises(ValueError, match="warmup_steps"):
        learning_rate_schedule(1.0, total_steps=3, warmup_steps=4)
    with pytest.raises(ValueError, match="decay"):
        learning_rate_schedule(1.0, total_steps=3, decay="step")


def test_full_batch_proximal_gd_reaches_closed_form(key):
    """argmin ½‖Xw − y‖²/n + (λ/2)‖w − w₀‖² = (XᵀX/n + λI)⁻¹(Xᵀy/n + λw₀), bias frozen."""
    data = _regression(key)
    n, lam = 12, 0.3
    params0 = {"w": jnp.array([1.0, -2.0, 0.5]), "b": jnp.zeros(())}
    mask = param_mask(params0, "w")
    opt = optax.multi_transform(
        {"train": optax.sgd(0.2), "freeze": optax.set_to_zero()},
        jax.tree.map(lambda m: "train" if m else "freeze", mask),
    )
    out = finetune(_mse, params0, data, optimizer=opt, num_steps=600, batch_size=n, keys=key,
                   mask=mask, proximal=lam)  # fmt: skip
    x, y = np.asarray(data["x"], float), np.asarray(data["y"], float)
    w0 = np.asarray(params0["w"], float)
    expected = np.linalg.solve(x.T @ x / n + lam * np.eye(3), x.T @ y / n + lam * w0)
    np.testing.assert_allclose(out.params["w"], expected, rtol=1e-4)
    assert float(out.params["b"]) == 0.0  # frozen
    # records: one per step; distance is ‖w_t − w₀‖ before step t
    assert out.records["loss"].shape == (600,)
    assert float(out.records["distance"][0]) == 0.0
    assert float(out.records["distance"][-1]) == pytest.approx(
        np.linalg.norm(expected - w0), rel=1e-3
    )
    assert out.records["loss"][-1] < out.records["loss"][0]
    assert out.stopped_step == -1 and out.best_step == 600


def test_minibatches_cover_each_epoch_once(key):
    """Within every epoch each example is drawn exactly once (sum of ids = n(n−1)/2)."""
    n, batch = 12, 4
    data = {"id": jnp.arange(n, dtype=jnp.float32)}
    loss = lambda p, b, k: (p["w"] * jnp.mean(b["id"]), {"id_sum": jnp.sum(b["id"])})
    out = finetune(loss, {"w": jnp.zeros(())}, data, optimizer=optax.sgd(0.0), num_steps=9,
                   batch_size=batch, keys=key)  # fmt: skip
    sums = np.asarray(out.records["id_sum"]).reshape(3, 3).sum(axis=1)
    np.testing.assert_array_equal(sums, [n * (n - 1) / 2] * 3)
    orders = np.asarray(out.records["id_sum"]).reshape(3, 3)
    assert not np.all(orders == orders[0])  # a fresh permutation per epoch


def test_seed_axis_equals_separate_runs(key):
    data = _regression(key, n=16)
    params0 = {"w": jnp.zeros(3), "b": jnp.zeros(())}
    keys = jax.random.split(key, 3)
    kwargs = dict(optimizer=adamw(0.05, weight_decay=0.0), num_steps=20, batch_size=4)
    together = finetune(_mse, params0, data, keys=keys, **kwargs)
    assert together.params["w"].shape == (3, 3)
    assert together.records["loss"].shape == (3, 20)
    for s in range(3):
        alone = finetune(_mse, params0, data, keys=keys[s], **kwargs)
        np.testing.assert_allclose(together.params["w"][s], alone.params["w"], rtol=1e-5)
    assert not np.allclose(together.params["w"][0], together.params["w"][1])  # orders differ


def test_adamw_peak_as_data_is_the_same_optimiser_in_one_program(key):
    """``peak · shape(t)`` with the peak in the state: the runs of a baked-in
    ``peak · shape`` schedule, and one lowered program for every peak."""
    data = _regression(key, n=16)
    params0 = {"w": jnp.zeros(3), "b": jnp.zeros(())}
    shape = learning_rate_schedule(1.0, total_steps=20, warmup_steps=2, decay="linear")
    baked = lambda peak: learning_rate_schedule(  # noqa: E731
        peak, total_steps=20, warmup_steps=2, decay="linear"
    )
    kwargs = dict(num_steps=20, batch_size=4, keys=key, mask=param_mask(params0, "w"))
    for peak in (0.05, 0.2):
        mask = kwargs["mask"]
        as_data = finetune(_mse, params0, data, optimizer=adamw(shape, mask=mask, peak=peak),
                           **kwargs)  # fmt: skip
        compiled_in = finetune(_mse, params0, data, optimizer=adamw(baked(peak), mask=mask),
                               **kwargs)  # fmt: skip
        np.testing.assert_allclose(as_data.params["w"], compiled_in.params["w"], rtol=2e-5)
        assert float(as_data.params["b"]) == 0.0  # the mask still freezes
    grads = jax.tree.map(jnp.ones_like, params0)

    def lowered(optimizer):
        update = lambda g, s, p: optimizer.update(g, s, p)[0]  # noqa: E731
        return jax.jit(update).lower(grads, optimizer.init(params0), params0).as_text()

    assert lowered(adamw(shape, peak=0.05)) == lowered(adamw(shape, peak=0.2))
    assert lowered(adamw(baked(0.05))) != lowered(adamw(baked(0.2)))
    with pytest.raises(ValueError, match="peak"):
        adamw(shape, peak=0.0)


def test_adamw_mask_freezes_leaves_exactly(key):
    data = _regression(key)
    params0 = {"w": jnp.ones(3), "b": jnp.ones(())}
    mask = param_mask(params0, "b")
    out = finetune(_mse, params0, data, optimizer=adamw(0.1, mask=mask), num_steps=10,
                   batch_size=6, keys=key)  # fmt: skip
    np.testing.assert_array_equal(out.params["w"], params0["w"])  # no update, no decay
    assert float(out.params["b"]) != 1.0


def test_early_stopping_keeps_best_dev_params(key):
    """GD on (w − 2)² from 0 passes w = 1, the dev optimum (w − 1)²: best ≈ 1, then stop."""
    data = {"x": jnp.zeros((4, 1))}
    loss = lambda p, b, k: ((p["w"] - 2.0) ** 2, {})
    dev_eval = lambda p, dev: {"loss": (p["w"] - 1.0) ** 2}
    out = finetune(loss, {"w": jnp.zeros(())}, data, optimizer=optax.sgd(0.05), num_steps=60,
                   batch_size=4, keys=key, dev_data=data, eval_fn=dev_eval, eval_every=2,
                   patience=3)  # fmt: skip
    # w_t = 2(1 − 0.9^t): dev optimum crossed between t = 6 (0.937) and t = 8 (1.139)
    w = lambda t: 2 * (1 - 0.9**t)
    assert int(out.best_step) == 6
    assert float(out.best_params["w"]) == pytest.approx(w(6), rel=1e-5)
    assert int(out.stopped_step) == 12  # evaluations at 8, 10, 12 did not improve
    assert float(out.params["w"]) == pytest.approx(w(12), rel=1e-5)  # frozen after stopping
    assert out.dev_records["loss"].shape == (30,)


def test_checkpoint_resume_reproduces_run(key, tmp_path):
    data = _regression(key, n=16)
    params0 = {"w": jnp.zeros(3), "b": jnp.zeros(())}
    kwargs = dict(optimizer=adamw(0.05), batch_size=4, keys=key, eval_every=5)
    straight = finetune(_mse, params0, data, num_steps=20, **kwargs)
    path = tmp_path / "run.npz"
    finetune(_mse, params0, data, num_steps=10, state_path=path, **kwargs)
    resumed = finetune(_mse, params0, data, num_steps=20, state_path=path, **kwargs)
    np.testing.assert_array_equal(resumed.params["w"], straight.params["w"])
    assert resumed.records["loss"].shape == (10,)  # only the segments run by this call
    assert resumed.segment_seconds.shape == (2,) and straight.segment_seconds.shape == (4,)
    assert np.all(straight.segment_seconds > 0)
    state = load_finetune_state(path, resumed_state_like(params0, kwargs["optimizer"], key))
    assert int(state.step) == 20
    with pytest.raises(ValueError, match="does not match"):
        load_finetune_state(path, resumed_state_like({"v": jnp.zeros(2)}, optax.sgd(0.1), key))
    (tmp_path / "notes.txt").write_text("not a state")
    np.save(tmp_path / "one.npy", np.zeros(3))
    for wrong in (tmp_path / "notes.txt", tmp_path / "one.npy"):
        with pytest.raises(ValueError, match="is not a state written by save_finetune_state"):
            load_finetune_state(wrong, state)
    save_finetune_state(tmp_path / "sub" / "again.npz", state)  # creates the directory
    assert not list((tmp_path / "sub").glob("*.tmp"))


def resumed_state_like(params, optimizer, key):
    from ntsim.transformers import FinetuneState

    return FinetuneState(params, params, optimizer.init(params), params, jnp.inf, jnp.int32(0),
                         jnp.bool_(False), jnp.int32(0), key)  # fmt: skip


def test_bad_arguments(key):
    data = _regression(key)
    params0 = {"w": jnp.zeros(3), "b": jnp.zeros(())}
    run = lambda **kw: finetune(_mse, params0, data, optimizer=optax.sgd(0.1), keys=key,
                                **{"num_steps": 4, "batch_size": 4, **kw})  # fmt: skip
    with pytest.raises(ValueError, match="exceeds"):
        run(batch_size=100)
    with pytest.raises(ValueError, match="multiple of eval_every"):
        run(eval_every=3)
    with pytest.raises(ValueError, match="needs dev_data"):
        run(patience=2)
    with pytest.raises(ValueError, match="no 'accuracy' metric"):
        run(dev_data=data, eval_fn=lambda p, d: {"loss": 0.0}, monitor="accuracy")
    with pytest.raises(ValueError, match="matches no parameter"):
        param_mask(params0, "head/*")


def test_params0_built_per_seed(key):
    """``params0(key)``: each seed starts (and is anchored) at its own random head."""
    data = _regression(key, n=16)
    build = lambda k: {"w": jax.random.normal(k, (3,)), "b": jnp.zeros(())}
    keys = jax.random.split(key, 2)
    out = finetune(_mse, build, data, optimizer=optax.sgd(0.0), num_steps=2, batch_size=4,
                   keys=keys, proximal=1.0)  # fmt: skip
    assert not np.allclose(out.params["w"][0], out.params["w"][1])  # different inits
    np.testing.assert_array_equal(out.records["distance"], 0.0)  # anchored at its own init
    single = finetune(_mse, build, data, optimizer=optax.sgd(0.0), num_steps=2, batch_size=4,
                      keys=keys[1])  # fmt: skip
    np.testing.assert_array_equal(single.params["w"], out.params["w"][1])


def test_closed_over_arrays_become_arguments(key):
    """An array the loss closes over (MixOut's pretrained encoder, a teacher) reaches the
    compiled step as an argument: the lowered program holds no copy of it (the plain jit of
    the same loss does), and the value is unchanged."""
    import re

    from ntsim.transformers._programs import hoist_constants

    teacher = jax.random.normal(key, (512, 3))
    data = _regression(key, n=16)

    def loss(params, batch, key):
        del key
        return jnp.mean((batch["x"] @ params["w"] - teacher[:16] @ params["w"]) ** 2), {}

    params = {"w": jnp.ones(3)}
    args = (params, data, jax.random.PRNGKey(1))
    hoisted, consts, _, _ = hoist_constants(loss, *args)
    assert any(c.shape == (512, 3) for c in consts)
    np.testing.assert_array_equal(hoisted(consts, *args)[0], loss(*args)[0])
    embedded = re.compile(r"constant dense<.*tensor<512x3xf32>")
    assert embedded.search(jax.jit(loss).lower(*args).as_text())  # what the hoisting avoids
    assert not embedded.search(jax.jit(hoisted).lower(consts, *args).as_text())


def _count_segment_traces(monkeypatch) -> list:
    """Record one entry each time a segment is traced: the step calls the hoisted loss once
    per trace (a compiled segment reused without tracing calls it not at all)."""
    from ntsim.transformers import _finetune
    from ntsim.transformers._programs import hoist_constants

    traces = []

    def counting(fn, *args):
        hoisted = hoist_constants(fn, *args)
        if fn.__name__ != "loss":
            return hoisted

        def counted(*a):
            traces.append(1)
            return hoisted.fn(*a)

        return hoisted._replace(fn=counted)

    monkeypatch.setattr(_finetune, "hoist_constants", counting)
    return traces


def _runs_per_teacher(key, share_program, teachers):
    """One ``finetune`` call per teacher (an array the loss closes over), AdamW at another
    peak each time (held in its state), with a dev evaluation, two seeds."""
    from ntsim.transformers import adamw

    data = _regression(key, n=16)
    dev = _regression(jax.random.fold_in(key, 1), n=8)
    results = []
    for index, teacher in enumerate(teachers):

        def loss(params, batch, key, teacher=teacher):
            del key
            return jnp.mean((batch["x"] @ (params["w"] - teacher)) ** 2), {}

        def evaluate(params, batch):
            return {"loss": jnp.mean((batch["x"] @ params["w"] - batch["y"]) ** 2)}

        results.append(finetune(
            loss, {"w": jnp.zeros(3)}, data, optimizer=adamw(1.0, peak=0.01 * (1 + index)),
            num_steps=6, batch_size=4, keys=jax.random.split(key, 2), dev_data=dev,
            eval_fn=evaluate, eval_every=3, share_program=share_program,
        ))  # fmt: skip
    return results


def test_a_shared_program_is_traced_once_and_gives_the_unshared_numbers(key, monkeypatch):
    """Calls under one ``share_program`` whose losses differ only in a closed-over array and
    whose optimisers differ only in the peak held in their state trace one segment, and
    give the numbers of the same calls built separately."""
    traces = _count_segment_traces(monkeypatch)
    teachers = [jax.random.normal(jax.random.fold_in(key, i), (3,)) for i in range(3)]
    alone = _runs_per_teacher(key, None, teachers)
    assert len(traces) == 3  # a segment per call
    shared = _runs_per_teacher(key, ("test", "one segment"), teachers)
    assert len(traces) == 3 + 1
    for a, b in zip(alone, shared, strict=True):
        np.testing.assert_allclose(a.params["w"], b.params["w"], rtol=1e-6)
        np.testing.assert_allclose(a.dev_records["loss"], b.dev_records["loss"], rtol=1e-6)
    # the teachers and peaks are data: three different runs, not the first one three times
    assert not np.allclose(shared[0].params["w"], shared[1].params["w"])
    assert not np.allclose(shared[1].params["w"], shared[2].params["w"])


def test_a_program_differing_in_more_than_its_arrays_is_not_shared(key, monkeypatch):
    """A loss with another literal prints another jaxpr, so the same ``share_program`` name
    builds a second segment rather than reusing the first (SGD: the scale moves the step)."""
    traces = _count_segment_traces(monkeypatch)
    data = _regression(key, n=16)

    def run(scale):
        def loss(params, batch, key):
            del key
            return scale * jnp.mean((batch["x"] @ params["w"] - batch["y"]) ** 2), {}

        return finetune(loss, {"w": jnp.zeros(3)}, data, optimizer=optax.sgd(0.01), num_steps=4,
                        batch_size=4, keys=key, share_program="test: literals")  # fmt: skip

    one, two = run(1.0), run(2.0)
    assert len(traces) == 2
    assert not np.allclose(one.params["w"], two.params["w"])


def _cross_entropy(params, batch, key):
    del key
    logits = batch["x"] @ params["w"]  # (B, 2): a two-class head
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, batch["label"])), {}


def test_a_label_outside_the_head_stops_training_with_the_step_and_the_cause(key):
    """Label 7 for a 2-class head makes optax's cross-entropy NaN: finetune stops at the first
    such step and says why, instead of training on NaNs (throw=False keeps the old way)."""
    x = jax.random.normal(key, (8, 3))
    labels = jnp.array([0, 1, 0, 1, 0, 1, 0, 7])
    params0 = {"w": jnp.zeros((3, 2))}
    options = dict(optimizer=optax.sgd(0.1), num_steps=4, batch_size=8, eval_every=2)
    with pytest.raises(FloatingPointError, match=r"at step 0\. Usual causes: a label outside"):
        finetune(_cross_entropy, params0, {"x": x, "label": labels}, keys=key, **options)
    with pytest.raises(FloatingPointError, match=r"at step 0 \(seed 0\)"):
        finetune(_cross_entropy, params0, {"x": x, "label": labels},
                 keys=jax.random.split(key, 2), **options)  # fmt: skip
    out = finetune(_cross_entropy, params0, {"x": x, "label": labels}, keys=key, throw=False,
                   **options)  # fmt: skip
    assert np.isnan(np.asarray(out.records["loss"])).all()
    good = finetune(_cross_entropy, params0, {"x": x, "label": labels % 2}, keys=key, **options)
    assert np.isfinite(np.asarray(good.records["loss"])).all()


def test_seed_batching_loop_and_vmap_agree_and_resume_across(key, tmp_path):
    """Seeds run one at a time (the CPU default) or vmapped: the same runs to round-off,
    early stopping included, and a state saved by one resumes under the other."""
    data, dev = _regression(key, n=16), _regression(jax.random.fold_in(key, 1), n=8)
    build = lambda k: {"w": jax.random.normal(k, (3,)), "b": jnp.zeros(())}  # noqa: E731
    kwargs = dict(optimizer=adamw(0.05), batch_size=4, keys=jax.random.split(key, 3),
                  dev_data=dev, eval_fn=lambda p, d: {"loss": _mse(p, d, None)[0]},
                  eval_every=2, patience=2, proximal=0.1)  # fmt: skip
    loop = finetune(_mse, build, data, num_steps=40, seed_batching="loop", **kwargs)
    vmap = finetune(_mse, build, data, num_steps=40, seed_batching="vmap", **kwargs)
    assert loop.params["w"].shape == (3, 3) and loop.records["loss"].shape == (3, 40)
    for ours, theirs in zip(jax.tree.leaves(loop[:6]), jax.tree.leaves(vmap[:6]), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)
    assert np.any(np.asarray(loop.stopped_step) > 0)  # early stopping fired: that path ran
    path = tmp_path / "seeds.npz"
    finetune(_mse, build, data, num_steps=20, seed_batching="loop", state_path=path, **kwargs)
    resumed = finetune(_mse, build, data, num_steps=40, seed_batching="vmap", state_path=path,
                       **kwargs)  # fmt: skip
    np.testing.assert_allclose(resumed.params["w"], loop.params["w"], rtol=1e-5, atol=1e-7)


def test_seed_batching_auto_is_loop_on_the_cpu_and_vmap_on_accelerators():
    from ntsim.transformers import resolve_seed_batching

    assert resolve_seed_batching("auto", "cpu") == "loop"
    assert resolve_seed_batching("auto", "gpu") == resolve_seed_batching("auto", "tpu") == "vmap"
    assert resolve_seed_batching("vmap", "cpu") == "vmap"
    assert resolve_seed_batching("loop", "gpu") == "loop"
    with pytest.raises(ValueError, match="seed_batching"):
        resolve_seed_batching("pmap")


def _record_lowered_programs(monkeypatch) -> list[str]:
    """Patch ``jax.jit`` so every call of a jitted function appends its lowered program."""
    lowered, real_jit = [], jax.jit

    def recording_jit(fn, *args, **kwargs):
        jitted = real_jit(fn, *args, **kwargs)

        def call(*call_args):
            lowered.append(jitted.lower(*call_args).as_text())
            return jitted(*call_args)

        return call

    monkeypatch.setattr(jax, "jit", recording_jit)
    return lowered


@pytest.mark.parametrize("seed_batching", ["loop", "vmap"])
def test_every_segment_of_a_run_is_one_program(key, monkeypatch, seed_batching):
    """The state the first segment receives (from init) has the types the segments return:
    an init-time weakly typed ``best_score`` made the second segment a second compilation of
    every run (13 programs for the quick MiniLM study instead of 7)."""
    lowered = _record_lowered_programs(monkeypatch)
    data = _regression(key, n=16)
    dev = lambda p, d: {"accuracy": jnp.mean(jnp.abs(d["x"] @ p["w"] - d["y"]) < 1.0)}  # noqa: E731
    finetune(_mse, {"w": jnp.zeros(3), "b": jnp.zeros(())}, data, optimizer=adamw(0.05),
             num_steps=6, batch_size=4, keys=jax.random.split(key, 2), eval_every=2,
             dev_data=data, eval_fn=dev, monitor="accuracy", higher_is_better=True,
             seed_batching=seed_batching)  # fmt: skip
    monkeypatch.undo()
    assert len(lowered) == (6 if seed_batching == "loop" else 3)  # segments × calls
    assert len(set(lowered)) == 1


def test_proximal_and_peak_learning_rate_are_arguments_of_one_program(key, monkeypatch):
    """Runs that differ in λ and the peak learning rate lower to the same segment program
    (λ = 0 included): a λ table or a learning-rate sweep compiles once."""
    lowered = _record_lowered_programs(monkeypatch)
    data = _regression(key, n=16)
    shape = learning_rate_schedule(1.0, total_steps=4, warmup_steps=1, decay="linear")
    for proximal, peak in ((0.0, 0.05), (0.5, 0.05), (3.0, 0.2)):
        finetune(_mse, {"w": jnp.zeros(3), "b": jnp.zeros(())}, data, num_steps=4,
                 optimizer=adamw(shape, peak=peak), batch_size=4, keys=key,
                 proximal=proximal)  # fmt: skip
    monkeypatch.undo()
    assert len(lowered) == 3 and len(set(lowered)) == 1
