"""Bias: add a learned (or given) array, broadcast from an axis."""

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.links import link
from cvzoo.core.variable import Parameter


def broadcast_from_axis(y, shape, axis, what):
    """Broadcast ``y`` onto ``shape``, matching y's axes with shape[axis:axis + y.ndim]."""
    if tuple(shape[axis:axis + y.ndim]) != tuple(y.shape):
        raise ValueError(f'{what}: expected shape {tuple(shape[axis:axis + y.ndim])} '
                         f'(x.shape[{axis}:{axis + y.ndim}]), got {tuple(y.shape)}')
    expanded = (1,) * axis + tuple(y.shape) + (1,) * (len(shape) - axis - y.ndim)
    return F.broadcast_to(F.reshape(y, expanded), shape)


class Bias(link.Link):
    """Add ``b`` to ``x``, b's axes matching x's from ``axis`` on.

    With ``shape`` the bias is a learned parameter (initialised to 0); without it the
    layer takes it as a second input, ``bias(x, b)``.

    Args:
        axis (int): first axis of x that b covers.
        shape (tuple or None): shape of the learned bias.

    Attributes:
        b (Parameter or None): the bias, float32.
    """

    def __init__(self, axis=1, shape=None):
        super().__init__()
        self.axis = axis
        with self.init_scope():
            self.b = None if shape is None else Parameter(initializers.Zero(), tuple(shape))

    def forward(self, *xs):
        """``forward(x)`` with a learned bias or ``forward(x, b)``."""
        x = xs[0]
        b = self.b if self.b is not None else xs[1]
        return x + broadcast_from_axis(b, x.shape, self.axis, 'Bias: b')
