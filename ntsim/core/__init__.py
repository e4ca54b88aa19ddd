"""Paper-agnostic numerics: models, kernels, linearised dynamics, training, sweeps, data.

Public names are re-exported here from the private ``_*.py`` modules; import from
``ntsim.core``, never from the underscore modules.
"""

from ntsim.core._attention import LOGIT_SCALINGS, attention_model, layer_norm
from ntsim.core._kernels import (
    IMPLEMENTATIONS,
    empirical_ntk,
    empirical_ntk_fn,
    ntk_vector_product_fn,
)
from ntsim.core._models import (
    ACTIVATIONS,
    PARAMETERIZATIONS,
    Model,
    balanced_deep_linear_params,
    batched,
    deep_linear,
    end_to_end_vector,
    linear,
    mlp,
    random_signs,
    two_layer_relu,
)

__all__ = [
    "IMPLEMENTATIONS",
    "empirical_ntk",
    "empirical_ntk_fn",
    "ntk_vector_product_fn",
    "ACTIVATIONS",
    "LOGIT_SCALINGS",
    "PARAMETERIZATIONS",
    "Model",
    "attention_model",
    "balanced_deep_linear_params",
    "batched",
    "deep_linear",
    "end_to_end_vector",
    "layer_norm",
    "linear",
    "mlp",
    "random_signs",
    "two_layer_relu",
]
