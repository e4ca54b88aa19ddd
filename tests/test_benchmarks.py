"""The benchmark cases at toy sizes: every fast path agrees with its reference, the table rows
carry ratios, and the plain-JAX attention model is the same function on both sides."""

from __future__ import annotations

import pathlib
import sys

import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # the repo root

from benchmarks import attention_model, ntk  # noqa: E402
from ntsim.core import dense_leaves, empirical_ntk_fn  # noqa: E402


def test_attention_model_batched_call_is_the_per_example_call():
    params, ids = attention_model.problem(3, 4, 16)
    batched = attention_model.apply(params, ids)  # how neural-tangents calls it
    one_by_one = jnp.stack([attention_model.apply(params, row) for row in ids])
    np.testing.assert_allclose(batched, one_by_one, rtol=1e-5, atol=1e-6)
    assert batched.shape == (3, 1)


def test_attention_model_structured_ntk_and_which_leaves_it_takes():
    params, ids = attention_model.problem(5, 4, 16)
    flags = dense_leaves(attention_model.apply, params, ids[0])
    assert flags["word"] and flags["position"]  # row gathers
    assert all(flags["layers"][0][n]["w"] for n in ("query", "key", "value", "out", "mlp_in"))
    assert not flags["layers"][0]["query"]["b"]  # added: the same backward pass's Jacobian
    kernels = [
        empirical_ntk_fn(attention_model.apply, implementation=i)(ids, None, params)
        for i in ("structured", "jacobian_contraction")
    ]
    np.testing.assert_allclose(kernels[0], kernels[1], rtol=1e-5, atol=1e-5 * kernels[1].max())


def test_compare_rows_report_ratios_and_agreement():
    params, ids = attention_model.problem(4, 4, 16)
    nt_record = {"times": {"jacobian_contraction": 2.0, "ntk_vector_products": 1.0},
                 "versions": "neural-tangents x"}  # fmt: skip
    rows = ntk._compare("toy", attention_model.apply, params, ids, ["jacobian_contraction"],
                        nt_record)  # fmt: skip
    assert [r.reference for r in rows] == [
        "ntsim jacobian_contraction",
        "neural-tangents ntk_vector_products (its fastest working)",
    ]
    assert rows[1].ratio == 1.0 / rows[1].ntsim_s
    assert float(rows[0].notes.split()[-1]) < 1e-5  # "max rel. diff ..."


def test_memory_benchmark_reads_its_own_peak_not_its_parents():
    """The MiniLM NTK "regression" (4.7 → 8.7 GB) was the measurement: a child's
    ``ru_maxrss`` starts at its parent's peak on Linux, and ``make bench`` runs the memory
    case as a child of the process that had just fine-tuned MiniLM-L6. A parent that has
    touched 400 MB starts a child that allocates nothing."""
    import subprocess

    from benchmarks.memory import own_peak_rss_gb

    held = np.ones(400 * 2**20 // 8)  # touched: 400 MB resident in this process
    assert own_peak_rss_gb() > 0.39
    probe = (
        "import resource; from benchmarks.memory import own_peak_rss_gb; "
        "print(own_peak_rss_gb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)"
    )
    root = pathlib.Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=root).stdout  # fmt: skip
    own, inherited = map(float, out.split())
    del held
    assert own < 0.2  # a bare interpreter: tens of MB
    if sys.platform == "linux":  # the mechanism the benchmark used to measure
        assert inherited > 0.39
