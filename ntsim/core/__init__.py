"""Paper-agnostic numerics: models, kernels, linearised dynamics, training, sweeps, data.

Public names are re-exported here from the private ``_*.py`` modules; import from
``ntsim.core``, never from the underscore modules.
"""

from ntsim.core._analytic import (
    InfiniteWidthKernels,
    erf_mlp_kernels,
    linear_kernel,
    linear_mlp_kernels,
    relu_mlp_kernels,
    two_layer_relu_hinf,
)
from ntsim.core._attention import LOGIT_SCALINGS, attention_model, layer_norm
from ntsim.core._data import (
    covariance,
    gaussian_inputs,
    power_law_spectrum,
    random_orthogonal,
    two_level_spectrum,
)
from ntsim.core._flow import gradient_flow
from ntsim.core._kernel_dynamics import (
    LOSS_CONVENTIONS,
    Predictions,
    kernel_flow_predictions,
    kernel_gd_predictions,
    kernel_ridge_regression,
    mse_loss_scale,
)
from ntsim.core._kernels import (
    IMPLEMENTATIONS,
    empirical_ntk,
    empirical_ntk_fn,
    ntk_vector_product_fn,
)
from ntsim.core._linearize import linearize, taylor_expand
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
from ntsim.core._sweep import sweep, sweep_keys
from ntsim.core._train import (
    DivergenceError,
    Record,
    TrainResult,
    TrainState,
    check_finite,
    check_learning_rate,
    combine_recorders,
    gradient_descent,
    mse_loss,
    record_distance,
    record_loss,
    record_params,
    record_predictions,
    tree_distance,
)

__all__ = [
    "ACTIVATIONS",
    "IMPLEMENTATIONS",
    "LOGIT_SCALINGS",
    "LOSS_CONVENTIONS",
    "PARAMETERIZATIONS",
    "attention_model",
    "balanced_deep_linear_params",
    "batched",
    "check_finite",
    "check_learning_rate",
    "combine_recorders",
    "covariance",
    "deep_linear",
    "DivergenceError",
    "empirical_ntk",
    "empirical_ntk_fn",
    "end_to_end_vector",
    "erf_mlp_kernels",
    "gaussian_inputs",
    "gradient_descent",
    "gradient_flow",
    "InfiniteWidthKernels",
    "kernel_flow_predictions",
    "kernel_gd_predictions",
    "kernel_ridge_regression",
    "layer_norm",
    "linear",
    "linear_kernel",
    "linear_mlp_kernels",
    "linearize",
    "mlp",
    "Model",
    "mse_loss",
    "mse_loss_scale",
    "ntk_vector_product_fn",
    "power_law_spectrum",
    "Predictions",
    "random_orthogonal",
    "random_signs",
    "Record",
    "record_distance",
    "record_loss",
    "record_params",
    "record_predictions",
    "relu_mlp_kernels",
    "sweep",
    "sweep_keys",
    "taylor_expand",
    "TrainResult",
    "TrainState",
    "tree_distance",
    "two_layer_relu",
    "two_layer_relu_hinf",
    "two_level_spectrum",
]
