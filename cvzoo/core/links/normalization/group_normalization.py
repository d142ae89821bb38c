"""GroupNormalization: normalise groups of channels of each sample."""

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.variable import Parameter


class GroupNormalization(link.Link):
    """Group normalisation layer (Wu and He, ECCV 2018).

    Args:
        groups (int): number of channel groups.
        size (int or None): channels; None infers them from the first input.
        eps (float): added to the variance.
        initial_gamma, initial_beta: initializers (default 1 and 0).

    Attributes:
        gamma, beta (Parameter): (C,) float32.
    """

    def __init__(self, groups, size=None, eps=1e-5, initial_gamma=None, initial_beta=None):
        super().__init__()
        if not isinstance(groups, int) or groups < 1:
            raise ValueError(f'groups: expected a positive int, got {groups!r}')
        if size is not None and size % groups:
            raise ValueError(f'size: expected a multiple of groups={groups}, got {size}')
        self.groups, self.eps = groups, eps
        with self.init_scope():
            self.gamma = Parameter(initializers.One() if initial_gamma is None else initial_gamma)
            self.beta = Parameter(initializers.Zero() if initial_beta is None else initial_beta)
        if size is not None:
            self._initialize_params(size)

    def _initialize_params(self, size):
        self.gamma.initialize((size,))
        self.beta.initialize((size,))

    def forward(self, x):
        """Normalise ``x`` (N, C, ...)."""
        if self.gamma.array is None:
            self._initialize_params(x.shape[1])
        return F.group_normalization(x, self.groups, self.gamma, self.beta, self.eps)
