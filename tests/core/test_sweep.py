"""Sweeps: chunked, sharded vmap equals a Python loop over instances."""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import sweep, sweep_keys
from ntsim.core._sweep import _chunk_runner

FORCED_DEVICES = "--xla_force_host_platform_device_count=4" in os.environ.get("XLA_FLAGS", "")
K = 7


def _instance_fn(inst):
    """A small random problem per instance: data from the key, one shrunk gradient step."""
    x = jax.random.normal(inst["key"], (12, 3))
    w = x.T @ jnp.sin(x[:, 0]) / (1.0 + inst["lam"])
    return {"w": w, "norm": jnp.linalg.norm(w), "lam": inst["lam"]}


def _inputs(key):
    return {"key": jax.random.split(key, K), "lam": jnp.linspace(0.1, 1.0, K)}


def _loop(fn, inputs):
    outs = [fn(jax.tree.map(lambda a, i=i: a[i], inputs)) for i in range(K)]
    return jax.tree.map(lambda *leaves: np.stack(leaves), *outs)


@pytest.mark.parametrize("chunk_size", [None, 1, 2, 3, 4, 7, 100])
def test_sweep_equals_python_loop(key, chunk_size):
    inputs = _inputs(key)
    expected = _loop(_instance_fn, inputs)
    got = sweep(_instance_fn, inputs, chunk_size=chunk_size)
    assert jax.tree.structure(got) == jax.tree.structure(expected)
    for name in expected:
        assert got[name].shape == expected[name].shape
        # float32: the jitted batched program may round differently from eager calls (ulps)
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-5, atol=1e-6)


def test_sweep_keys_equals_loop_over_split_keys(key):
    got = sweep_keys(lambda k, n, scale: scale * jax.random.normal(k, (n,)), key, 5, n=3, scale=2.0)
    keys = jax.random.split(key, 5)
    expected = np.stack([2.0 * jax.random.normal(k, (3,)) for k in keys])
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.skipif(
    not FORCED_DEVICES,
    reason="needs XLA_FLAGS=--xla_force_host_platform_device_count=4 (set by `make test`)",
)
def test_sharded_sweep_runs_on_four_devices_and_equals_unsharded(key):
    assert jax.local_device_count() == 4
    inputs = _inputs(key)
    # A padded chunk of 8 instances goes through the runner: each of the 4 devices computes
    # its own slice of 2 instances as an independent program (no collectives).
    run, num_devices = _chunk_runner(_instance_fn, None)
    assert num_devices == 4
    chunk = jax.tree.map(lambda a: a[np.minimum(np.arange(8), K - 1)], inputs)
    per_device = run.dispatch(chunk)
    assert [out[next(iter(out))].devices() for out in per_device] == [
        {d} for d in jax.local_devices()
    ]
    for i, out in enumerate(per_device):
        expected = jax.vmap(_instance_fn)(jax.tree.map(lambda a, i=i: a[2 * i : 2 * i + 2], chunk))
        for name in out:  # float32: jit vs eager batches may differ in the last ulp
            assert out[name].shape[0] == 2
            np.testing.assert_allclose(out[name], expected[name], rtol=1e-6)
    one_device = sweep(_instance_fn, inputs, chunk_size=3, devices=jax.local_devices()[:1])
    for devices, chunk_size in ((None, None), (None, 3), (jax.local_devices()[:2], 5)):
        got = sweep(_instance_fn, inputs, chunk_size=chunk_size, devices=devices)
        for name in got:  # other chunk sizes are other programs: equal up to the last ulp
            np.testing.assert_allclose(got[name], one_device[name], rtol=1e-6)


def test_progress_bar_on_stderr_only_when_enabled(key, capsys):
    sweep(_instance_fn, _inputs(key), chunk_size=3, progress=True, description="ridge seeds")
    captured = capsys.readouterr()
    assert "ridge seeds" in captured.err and f"{K}/{K}" in captured.err
    assert captured.out == ""
    sweep(_instance_fn, _inputs(key), chunk_size=3)
    assert capsys.readouterr().err == ""


def test_bad_inputs_raise(key):
    fn = lambda x: x
    with pytest.raises(ValueError, match="same leading"):
        sweep(fn, {"a": jnp.ones(3), "b": jnp.ones(4)})
    with pytest.raises(ValueError, match="same leading"):
        sweep(fn, {"a": jnp.ones(3), "b": jnp.array(1.0)})
    with pytest.raises(ValueError, match="at least one array"):
        sweep(fn, {})
    with pytest.raises(ValueError, match="at least one instance"):
        sweep(fn, jnp.ones((0, 2)))
    with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
        sweep(fn, jnp.ones(3), chunk_size=0)
    with pytest.raises(ValueError, match="num must be a positive integer"):
        sweep_keys(lambda k: k, key, 0)


_LAPACK_SWEEP = """
import jax, jax.numpy as jnp, numpy as np
from ntsim.core import sweep
assert jax.local_device_count() == 4
def fn(key):  # batched LAPACK in every device's program at once: eigh, QR and SVD
    a = jax.random.normal(key, (24, 24))
    q, r = jnp.linalg.qr(a)
    return {"eigh": jnp.linalg.eigvalsh(a @ a.T), "qr": jnp.abs(jnp.diag(r)),
            "svd": jnp.linalg.svd(q @ a, compute_uv=False)}
keys = jax.random.split(jax.random.PRNGKey(0), 64)
expected = jax.jit(jax.vmap(fn), device=jax.local_devices()[0])(keys)
for _ in range(10):
    got = sweep(fn, keys, chunk_size=16)
for name in got:
    np.testing.assert_allclose(got[name], expected[name], rtol=1e-4, atol=1e-4)
print("ok")
"""


def test_concurrent_lapack_on_four_host_devices_finishes():
    """jaxlib 0.10.0–0.10.2 were pinned out for a CPU deadlock when several device programs
    ran batched LAPACK at once (a sharded sweep on forced host devices). This runs exactly
    that, 10 sweeps × 4 devices, in a child process with a time limit: a deadlock fails the
    test instead of hanging the suite."""
    import subprocess
    import sys

    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    done = subprocess.run([sys.executable, "-c", _LAPACK_SWEEP], env=env, capture_output=True,
                          text=True, timeout=240)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


_FREEZING_DRAWS = """
import jax
from ntsim.claims import get_claim
from ntsim.theory.linear_teachers._freezing import _freezing_draw
setting = get_claim("linear_teachers.fig3.frozen_expectation").uses.setting("quick")
keys = jax.random.split(jax.random.PRNGKey(0), 16)
with jax.enable_x64(True):
    out = jax.block_until_ready(jax.jit(jax.vmap(lambda k: _freezing_draw(k, setting)))(keys))
print("ok")
"""


def test_vmapped_float64_freezing_draws_finish_on_one_device():
    """jaxlib 0.10.2 hangs (0% CPU, waiting in BlockUntilReady) on this program, 16 of the
    Fig 3 draws (GD on deep linear networks and spectral norms, vmapped, float64) on ONE
    CPU device: the deadlock that keeps the pin below 0.10 is not only a sharding one. Run
    in a child process with a time limit, so a deadlock fails the test instead of hanging
    the suite (jax 0.9.2: about 10-20 s)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    done = subprocess.run([sys.executable, "-c", _FREEZING_DRAWS], env=env,
                          capture_output=True, text=True, timeout=240)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
