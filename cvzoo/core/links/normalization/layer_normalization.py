"""LayerNormalization: normalise each sample over its units."""

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.variable import Parameter


class LayerNormalization(link.Link):
    """Layer normalisation layer (Ba et al., 2016) over the last axis.

    Args:
        size (int or None): units (the last axis); None infers them from the first input.
        eps (float): added to the variance (Chainer's default 1e-6).
        initial_gamma, initial_beta: initializers (default 1 and 0).

    Attributes:
        gamma, beta (Parameter): (size,) float32.
    """

    def __init__(self, size=None, eps=1e-6, initial_gamma=None, initial_beta=None):
        super().__init__()
        self.eps = eps
        with self.init_scope():
            self.gamma = Parameter(initializers.One() if initial_gamma is None else initial_gamma)
            self.beta = Parameter(initializers.Zero() if initial_beta is None else initial_beta)
        if size is not None:
            self._initialize_params(size)

    def _initialize_params(self, size):
        self.gamma.initialize((size,))
        self.beta.initialize((size,))

    def forward(self, x):
        """Normalise ``x`` (..., size)."""
        if self.gamma.array is None:
            self._initialize_params(x.shape[-1])
        return F.layer_normalization(x, self.gamma, self.beta, self.eps)
