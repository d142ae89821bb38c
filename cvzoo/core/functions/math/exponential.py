"""exp and log."""

from cvzoo.core import backend, function_node


class Exp(function_node.FunctionNode):
    def forward(self, inputs):
        xp = backend.get_array_module(*inputs)
        self.retain_outputs((0,))
        return xp.exp(inputs[0]),

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return y * grad_outputs[0],


class Log(function_node.FunctionNode):
    def forward(self, inputs):
        xp = backend.get_array_module(*inputs)
        self.retain_inputs((0,))
        return xp.log(inputs[0]),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] / x,


def exp(x):
    """Elementwise exponential ``e ** x``."""
    return Exp().apply((x,))[0]


def log(x):
    """Elementwise natural logarithm."""
    return Log().apply((x,))[0]
