"""dropout: zero random units in training, scale the rest."""

import numbers

import numpy

from cvzoo.core import backend, device_random, function_node
from cvzoo.core import variable as variable_module
from cvzoo.core.config import config


class Dropout(function_node.FunctionNode):
    def __init__(self, ratio):
        self.ratio = ratio
        self.mask = None  # the scale of each unit, 0 or 1 / (1 - ratio); made in forward

    def forward(self, inputs):
        x, = inputs
        xp = backend.get_array_module(x)
        if xp is numpy:
            keep = numpy.random.random_sample(x.shape) >= self.ratio
        else:
            # from state on the device, which a captured CUDA graph advances on each replay
            keep = device_random.get_generator(x).uniform(x.shape) >= self.ratio
        self.mask = xp.asarray(keep, dtype=x.dtype) * x.dtype.type(1.0 / (1.0 - self.ratio))
        return x * self.mask,

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * variable_module.Variable(self.mask, requires_grad=False),


def dropout(x, ratio=0.5):
    """Drop each unit with probability ``ratio`` in training mode (Srivastava et al., 2014).

    Kept units are scaled by ``1 / (1 - ratio)``, so the expectation is unchanged. When
    ``config.train`` is False it is the identity: ``x`` comes back as a Variable, with no
    function node. The random mask is kept on the node (not as an input or output), so
    backward uses the same mask. Supports double backprop. On the CPU the mask comes from
    NumPy's global generator; on a GPU from :mod:`cvzoo.core.device_random` (seeded by
    ``device_random.seed``), whose state lives on the device, so that a training step
    captured as a CUDA graph draws a new mask on every replay.

    Args:
        x (Variable or array): float input of any shape.
        ratio (float): drop probability, in [0, 1).

    Returns:
        Variable: x's shape and dtype.

    Raises:
        ValueError: ``ratio`` is outside [0, 1).
    """
    if not isinstance(ratio, numbers.Real) or not 0 <= ratio < 1:
        raise ValueError(f'dropout: ratio must be a number in [0, 1), got {ratio!r}')
    if not config.train:
        return variable_module.as_variable(x)
    return Dropout(float(ratio)).apply((x,))[0]
