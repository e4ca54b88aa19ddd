"""Binary sentiment train/test splits of the shipped text data, tokenised for the encoder."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ntsim._types import PRNGKey, PyTree
from ntsim.transformers._checkpoints import load_tokenizer, tokenize
from ntsim.transformers._text_data import load_text_dataset

__all__ = ["BINARY_DATASETS", "binary_sentiment_split"]

#: Rotten Tomatoes (rotten 0 / fresh 1) and tweets reduced to negative (0) vs positive (1).
BINARY_DATASETS = ("rotten_tomatoes", "tweets")


def binary_sentiment_split(
    dataset: str, key: PRNGKey, *, train_size: int, test_size: int, max_length: int
) -> tuple[PyTree, PyTree]:
    """Disjoint random train and test subsets: ``{"input_ids", "attention_mask", "label"}``.

    Labels are ``0.0``/``1.0`` (float32). Tweets keep only the negative and positive ones
    (the neutral class is dropped). The subsets are the first ``train_size`` and the next
    ``test_size`` examples of one permutation drawn from ``key``.

    Raises:
      ValueError: an unknown dataset, or more examples asked for than the dataset holds.
    """
    if dataset not in BINARY_DATASETS:
        raise ValueError(f"dataset must be one of {BINARY_DATASETS}, got {dataset!r}.")
    texts, labels = load_text_dataset(dataset)
    labels = np.asarray(labels)
    if dataset == "tweets":  # binary: negative (0) vs positive (2)
        keep = labels != 1
        texts, labels = [t for t, k in zip(texts, keep, strict=True) if k], labels[keep] == 2
    needed = train_size + test_size
    if needed > len(texts):
        raise ValueError(f"train_size + test_size = {needed} exceeds the {len(texts)} examples.")
    order = np.asarray(jax.random.permutation(key, len(texts)))
    tokenizer = load_tokenizer(max_length)
    out = []
    for index in (order[:train_size], order[train_size:needed]):
        tokens = tokenize(tokenizer, [texts[i] for i in index])
        out.append({"input_ids": jnp.asarray(tokens["input_ids"]),
                    "attention_mask": jnp.asarray(tokens["attention_mask"]),
                    "label": jnp.asarray(labels[index], jnp.float32)})  # fmt: skip
    return out[0], out[1]
