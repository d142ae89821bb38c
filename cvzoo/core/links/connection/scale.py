"""Scale: multiply by a learned (or given) array broadcast from an axis, plus a bias."""

from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.links.connection import bias as bias_module
from cvzoo.core.variable import Parameter


class Scale(link.Chain):
    """Multiply ``x`` by ``W``, W's axes matching x's from ``axis`` on; optionally add a bias.

    With ``W_shape`` the scale is a learned parameter (initialised to 1); without it the
    layer takes it as a second input, ``scale(x, W)``.

    Args:
        axis (int): first axis of x that W covers.
        W_shape (tuple or None): shape of the learned scale.
        bias_term (bool): add a learned Bias child.
        bias_shape (tuple or None): its shape (default W_shape).

    Attributes:
        W (Parameter or None): the scale, float32.
        bias (Bias): present when ``bias_term``.
    """

    def __init__(self, axis=1, W_shape=None, bias_term=False, bias_shape=None):
        super().__init__()
        self.axis = axis
        with self.init_scope():
            self.W = None if W_shape is None else Parameter(initializers.One(), tuple(W_shape))
            if bias_term:
                shape = W_shape if bias_shape is None else bias_shape
                if shape is None:
                    raise ValueError('bias_shape: needed with bias_term when W_shape is None')
                self.bias = bias_module.Bias(axis, shape)

    def forward(self, *xs):
        """``forward(x)`` with a learned scale or ``forward(x, W)``."""
        x = xs[0]
        W = self.W if self.W is not None else xs[1]
        y = x * bias_module.broadcast_from_axis(W, x.shape, self.axis, 'Scale: W')
        if hasattr(self, 'bias'):
            y = self.bias(y)
        return y
