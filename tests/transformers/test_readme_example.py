"""The README's "Fine-tuning real checkpoints" example runs as printed (slow: ~20 s)."""

from __future__ import annotations

import pathlib

import pytest

README = pathlib.Path(__file__).parents[2] / "README.md"


@pytest.mark.slow
def test_readme_finetuning_example_runs():
    text = README.read_text()
    start = text.index("```python\nimport jax, jax.numpy as jnp, optax\nfrom ntsim.transformers")
    code = text[start + len("```python\n") : text.index("```", start + 10)]
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    out = namespace["out"]
    assert out.records["loss"].shape == (3, 20)
    assert float(out.records["loss"][:, -1].mean()) < float(out.records["loss"][:, 0].mean())
