"""copy: differentiable transfer of an array to a device."""

from cvzoo.core import backend, function_node


class Copy(function_node.FunctionNode):
    def __init__(self, dst):
        self.dst = dst

    def forward(self, inputs):
        x, = inputs
        self.src = backend.get_device_from_array(x)
        if self.src == self.dst:
            return x.copy(),
        return backend.to_device(x, self.dst),

    def backward(self, indexes, grad_outputs):
        return copy(grad_outputs[0], self.src),


def copy(x, dst):
    """Copy ``x`` to device ``dst``; backward moves the gradient back to x's device.

    This is the one function whose input and output may live on different devices
    (model parallelism). On the same device it returns a fresh copy. Supports double
    backprop.

    Args:
        x (Variable or array): input.
        dst: ``'cpu'``, ``'cuda:N'``, an int (-1 is the CPU) or a Device.

    Returns:
        Variable: a copy of x on ``dst``.

    >>> import numpy as np
    >>> copy(np.ones(2), 'cpu').device
    Device('cpu')
    """
    dst = backend.get_device(dst)
    return Copy(dst).apply((x,))[0]
