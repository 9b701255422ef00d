"""``jax.example_libraries`` for baton: ``stax`` (a small neural network
library) and ``optimizers`` (first-order optimizers), with JAX's API, so
programs written against them run by changing imports:

    from baton.example_libraries import optimizers, stax
"""

from baton.example_libraries import optimizers, stax

__all__ = ["optimizers", "stax"]
