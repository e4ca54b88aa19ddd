"""ntsim's Flax BERT on the shipped MiniLM checkpoints vs independent implementations.

Oracles (tests/fixtures/hf, written by `make hf-fixtures` in a separate environment):
Hugging Face transformers' torch ``BertModel`` for all-MiniLM-L6-v2 (hidden states, mean
pooling, gradients) and onnxruntime running the paraphrase-MiniLM-L3-v2 ONNX graph.
Agreement required: 1e-4 absolute on hidden states (entries are O(1)) and pooled outputs,
1e-4 relative (to the largest entry) on gradients — fp32 round-off through 3–6 layers is
~1e-6.
"""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ntsim.core import get_path
from ntsim.transformers import (
    BertClassifier,
    BertEncoder,
    load_pretrained,
    load_tokenizer,
    mean_pool,
    tokenize,
)
from ntsim.transformers._checkpoints import torch_name_to_path

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "hf"
TOL = 1e-4
SENTENCES = [  # the fixture script's sentences (scripts/make_hf_fixtures.py)
    "Fine-tuning a pretrained model is surprisingly stable.",
    "The movie was dull, long and predictable!",
    "Kernels, margins and leave-one-out distances.",
    "ok",
]


def _reference(name):
    path = FIXTURES / f"{name}_reference.npz"
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make hf-fixtures` and commit it.")
    return dict(np.load(path))


@pytest.fixture(scope="module")
def minilm_l6():
    return load_pretrained("minilm-l6")


def test_tokenizer_matches_reference_ids():
    ref = _reference("minilm_l6")
    tokens = tokenize(load_tokenizer(max_length=16), SENTENCES)
    np.testing.assert_array_equal(tokens["input_ids"], ref["input_ids"])
    np.testing.assert_array_equal(tokens["attention_mask"], ref["attention_mask"])


def test_l6_hidden_states_pooling_and_gradients(minilm_l6):
    config, params = minilm_l6
    ref = _reference("minilm_l6")
    model = BertEncoder(config)
    ids, mask = jnp.asarray(ref["input_ids"]), jnp.asarray(ref["attention_mask"])

    def score(p):
        pooled = mean_pool(model.apply({"params": p}, ids, mask), mask)
        return jnp.sum(pooled * ref["direction"]), pooled

    (value, pooled), grads = jax.value_and_grad(score, has_aux=True)(params)
    hidden = model.apply({"params": params}, ids, mask)
    keep = ref["attention_mask"].astype(bool)  # padded positions are not compared (unused)
    np.testing.assert_allclose(np.asarray(hidden)[keep], ref["last_hidden"][keep], atol=TOL)
    np.testing.assert_allclose(pooled, ref["pooled"], atol=TOL)
    names = [k.removeprefix("grad/") for k in ref if k.startswith("grad/")]
    assert len(names) == 5
    for name in names:
        ours = np.asarray(get_path(grads, torch_name_to_path(name)))
        if ours.ndim == 2:
            ours = ours.T[:4]  # (in, out) -> torch (out, in), rows stored by the fixture
        theirs = ref[f"grad/{name}"]
        scale = np.max(np.abs(theirs))
        np.testing.assert_allclose(ours / scale, theirs / scale, atol=TOL, err_msg=name)


def test_l3_hidden_states_match_onnxruntime():
    config, params = load_pretrained("minilm-l3")
    assert config.num_hidden_layers == 3
    ref = _reference("minilm_l3")
    hidden = BertEncoder(config).apply({"params": params}, ref["input_ids"], ref["attention_mask"])
    keep = ref["attention_mask"].astype(bool)
    np.testing.assert_allclose(np.asarray(hidden)[keep], ref["last_hidden"][keep], atol=TOL)


def test_padding_does_not_change_the_real_tokens(minilm_l6):
    config, params = minilm_l6
    model = BertEncoder(config)
    texts = [SENTENCES[1], SENTENCES[3]]  # 12 and 3 tokens: not truncated at length 14
    short = tokenize(load_tokenizer(max_length=14), texts)
    long = tokenize(load_tokenizer(max_length=24), texts)
    assert short["attention_mask"].sum() == long["attention_mask"].sum()
    h_short = model.apply({"params": params}, short["input_ids"], short["attention_mask"])
    h_long = model.apply({"params": params}, long["input_ids"], long["attention_mask"])
    keep = short["attention_mask"].astype(bool)
    np.testing.assert_allclose(np.asarray(h_long)[:, :14][keep], np.asarray(h_short)[keep],
                               atol=1e-5)  # fmt: skip


def test_classifier_uses_the_checkpoint_and_dropout_needs_a_key(minilm_l6):
    config, params = minilm_l6
    classifier = BertClassifier(config, num_labels=3)
    tokens = tokenize(load_tokenizer(max_length=8), SENTENCES[:2])
    variables = classifier.init(
        jax.random.PRNGKey(0), tokens["input_ids"], tokens["attention_mask"]
    )
    variables = {"params": {**variables["params"], "encoder": params}}
    logits = classifier.apply(variables, tokens["input_ids"], tokens["attention_mask"])
    pooled = mean_pool(BertEncoder(config).apply({"params": params}, tokens["input_ids"],
                                                 tokens["attention_mask"]),
                       tokens["attention_mask"])  # fmt: skip
    head = variables["params"]["head"]
    np.testing.assert_allclose(logits, pooled @ head["kernel"] + head["bias"], atol=1e-5)
    rngs = {"dropout": jax.random.PRNGKey(1)}
    noisy = classifier.apply(variables, tokens["input_ids"], tokens["attention_mask"],
                             deterministic=False, rngs=rngs)  # fmt: skip
    assert not np.allclose(noisy, logits)


def test_bad_inputs_raise_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="unknown checkpoint"):
        load_pretrained("bert-large")
    from ntsim.transformers import _checkpoints

    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the checkpoint")
    monkeypatch.setattr(_checkpoints, "checkpoint_path", lambda name: fake)
    with pytest.raises(ValueError, match="SHA-256"):
        load_pretrained("minilm-l3")
    with pytest.raises(TypeError, match="list of strings"):
        tokenize(load_tokenizer(), "one string")
    with pytest.raises(TypeError, match=r"texts must be strings, got a int at index 1 \(2\)"):
        tokenize(load_tokenizer(), ["a", 2])
