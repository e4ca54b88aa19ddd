"""ntsim: a JAX numerical theory simulator for the theory of fine-tuning pretrained models.

Layers (imports only point down): ``cli`` → ``experiments`` → ``claims`` → ``theory`` →
``transformers`` (Flax, optional) → ``core``. ``import ntsim`` never imports Flax.
"""

__version__ = "0.1.0"
