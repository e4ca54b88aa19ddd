"""The Flax path: real pretrained transformer checkpoints, fine-tuned with optax.

Importing this subpackage imports Flax (``pip install 'ntsim[flax]'``, which ``make`` does);
``import ntsim`` alone never does. Pieces:

* parameter selection by path patterns (:func:`param_mask`, :func:`find_paths`) — the tuning
  modes full / head-only / selected layers / LoRA are masks;
* an optax fine-tuning loop (:func:`finetune`, :func:`adamw`, :func:`learning_rate_schedule`)
  with per-step recorders, a proximal term, early stopping, seeds as an axis and atomic,
  resumable checkpoints;
* the empirical NTK w.r.t. a parameter subset, streamed in tiles (:func:`subset_ntk_fn`).
"""

from ntsim.transformers._finetune import (
    FinetuneResult,
    FinetuneState,
    adamw,
    finetune,
    learning_rate_schedule,
    load_checkpoint,
    save_checkpoint,
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

__all__ = [
    "FinetuneResult",
    "FinetuneState",
    "adamw",
    "count_params",
    "finetune",
    "find_paths",
    "learning_rate_schedule",
    "load_checkpoint",
    "merge_params",
    "param_mask",
    "path_string",
    "save_checkpoint",
    "split_params",
    "subset_ntk_fn",
]
