"""The "Fine-tuning real checkpoints" guide's example runs as printed (slow: ~20 s)."""

from __future__ import annotations

import pathlib
import textwrap

import numpy as np
import pytest

README = pathlib.Path(__file__).parents[2] / "docs" / "guides" / "real-checkpoints.md"


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
    # the LoRA snippet continues the same session: the adapted model equals the checkpoint
    start = text.index("  ```python\n  from ntsim.core import lora")
    snippet = text[start + len("  ```python\n") : text.index("  ```\n", start + 10)]
    exec(compile(textwrap.dedent(snippet), "README.md", "exec"), namespace)  # noqa: S102
    tokens = namespace["tokens"]
    batch = (tokens["input_ids"], tokens["attention_mask"])
    adapted, factors = namespace["adapted"], namespace["factors"]
    assert len(factors) == 2 * namespace["config"].num_hidden_layers  # query and value
    np.testing.assert_allclose(
        adapted.apply(factors, batch), namespace["apply"](namespace["encoder"], batch), rtol=1e-6
    )
