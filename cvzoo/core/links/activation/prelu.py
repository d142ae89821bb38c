"""PReLU: the parametric ReLU with learned slopes."""

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.variable import Parameter


class PReLU(link.Link):
    """Parametric ReLU (He et al., ICCV 2015): ``x`` if ``x > 0`` else ``W * x``.

    Args:
        shape (tuple): shape of the slopes; () is one slope for everything, (C,) one per
            channel (axis 1).
        init (float): initial slope.

    Attributes:
        W (Parameter): the slopes, float32.
    """

    def __init__(self, shape=(), init=0.25):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(initializers.Constant(init), tuple(shape))

    def forward(self, x):
        """Apply the activation to ``x`` (N, C, ...)."""
        if self.W.ndim > 0:
            return F.prelu(x, self.W)
        # NOTE: F.prelu wants per-axis slopes; a single slope is relu(x) - W relu(-x).
        return F.relu(x) - F.broadcast_to(self.W, x.shape) * F.relu(-x)
