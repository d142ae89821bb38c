"""Elementwise arithmetic with broadcasting: add, sub, mul, div, pow, neg, absolute.

These are also Variable's operators (``x + y``, ``2 * x``, ``x ** 2``, ``-x``, ``abs(x)``).
Two array operands must have the same dtype; a Python scalar takes the array's dtype.
Under ``cvzoo.core.autocast``, add, sub, mul and div first cast two float operands of
different dtypes to the widest of them (cvzoo.core.mixed_precision).
Backward is written with differentiable functions, so every op here supports double
backprop.
"""

import numbers

import numpy

from cvzoo.core import backend, function_node, mixed_precision, parallel
from cvzoo.core import variable as variable_module
from cvzoo.core.functions.array import broadcast


def _check_dtypes(op, a, b):
    if a.dtype != b.dtype:
        raise TypeError(
            f'{op}: operands have different dtypes, {a.dtype} and {b.dtype}; '
            'cast one with F.cast first'
        )


def _reduce_to(gx, shape):
    return gx if gx.shape == shape else broadcast.sum_to(gx, shape)


# --- two variables ---


class Add(function_node.FunctionNode):
    def forward(self, inputs):
        a, b = inputs
        _check_dtypes('add', a, b)
        self.shapes = (a.shape, b.shape)
        return parallel.add(a, b),

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        return tuple(_reduce_to(gy, self.shapes[i]) for i in indexes)



class Sub(function_node.FunctionNode):
    def forward(self, inputs):
        a, b = inputs
        _check_dtypes('sub', a, b)
        self.shapes = (a.shape, b.shape)
        return a - b,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        signed = {0: gy, 1: -gy}
        return tuple(_reduce_to(signed[i], self.shapes[i]) for i in indexes)


class Mul(function_node.FunctionNode):
    def forward(self, inputs):
        a, b = inputs
        _check_dtypes('mul', a, b)
        self.retain_inputs((0, 1))
        return a * b,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        result = []
        if 0 in indexes:
            result.append(_reduce_to(gy * b, a.shape))
        if 1 in indexes:
            result.append(_reduce_to(gy * a, b.shape))
        return tuple(result)


class Div(function_node.FunctionNode):
    def forward(self, inputs):
        a, b = inputs
        _check_dtypes('div', a, b)
        self.retain_inputs((0, 1))
        return a / b,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        ga = gy / b
        result = []
        if 0 in indexes:
            result.append(_reduce_to(ga, a.shape))
        if 1 in indexes:
            result.append(_reduce_to(-ga * a / b, b.shape))
        return tuple(result)


class PowVarVar(function_node.FunctionNode):
    def forward(self, inputs):
        a, b = inputs
        _check_dtypes('pow', a, b)
        self.retain_inputs((0, 1))
        return a ** b,

    def backward(self, indexes, grad_outputs):
        from cvzoo.core.functions.math import exponential  # noqa: PLC0415 - import cycle

        gy, = grad_outputs
        a, b = self.get_retained_inputs()
        result = []
        if 0 in indexes:
            result.append(_reduce_to(gy * b * a ** (b - 1), a.shape))
        if 1 in indexes:
            result.append(_reduce_to(gy * exponential.log(a) * a ** b, b.shape))
        return tuple(result)


# --- a variable and a constant scalar ---


class AddConstant(function_node.FunctionNode):
    def __init__(self, value):
        self.value = value

    def forward(self, inputs):
        return inputs[0] + inputs[0].dtype.type(self.value),

    def backward(self, indexes, grad_outputs):
        return grad_outputs


class SubFromConstant(function_node.FunctionNode):
    def __init__(self, value):
        self.value = value

    def forward(self, inputs):
        return inputs[0].dtype.type(self.value) - inputs[0],

    def backward(self, indexes, grad_outputs):
        return -grad_outputs[0],


class MulConstant(function_node.FunctionNode):
    def __init__(self, value):
        self.value = value

    def forward(self, inputs):
        return inputs[0] * inputs[0].dtype.type(self.value),

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * self.value,


class DivFromConstant(function_node.FunctionNode):
    def __init__(self, value):
        self.value = value

    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0].dtype.type(self.value) / inputs[0],

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * (-self.value) / (x * x),


class PowVarConst(function_node.FunctionNode):
    def __init__(self, value):
        self.value = value

    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0] ** inputs[0].dtype.type(self.value),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return grad_outputs[0] * self.value * x ** (self.value - 1),


class PowConstVar(function_node.FunctionNode):
    def __init__(self, value):
        self.value = value

    def forward(self, inputs):
        self.retain_outputs((0,))
        return inputs[0].dtype.type(self.value) ** inputs[0],

    def backward(self, indexes, grad_outputs):
        y, = self.get_retained_outputs()
        return grad_outputs[0] * float(numpy.log(self.value)) * y,


# --- unary ---


class Neg(function_node.FunctionNode):
    def forward(self, inputs):
        return -inputs[0],

    def backward(self, indexes, grad_outputs):
        return -grad_outputs[0],


class Absolute(function_node.FunctionNode):
    def forward(self, inputs):
        self.retain_inputs((0,))
        return abs(inputs[0]),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        # NOTE: the second derivative is 0 almost everywhere, so a constant sign array
        # keeps double backprop right.
        sign = backend.get_array_module(x).sign(x.array)
        return grad_outputs[0] * variable_module.Variable(sign, requires_grad=False),


# --- public functions ---


def _operand(value):
    """A Variable for an array-like operand; numbers stay numbers."""
    if isinstance(value, numbers.Number):
        return value
    if isinstance(value, (variable_module.Variable,)):
        return value
    if isinstance(value, numpy.generic):
        return value.item()
    xp = backend.get_array_module(value)
    if isinstance(value, (numpy.ndarray,)) or xp is not numpy:
        return variable_module.Variable(value, requires_grad=False)
    raise TypeError(f'operand: expected a Variable, an array or a number, got {type(value).__name__}')


def add(x0, x1):
    """Elementwise ``x0 + x1`` with broadcasting; either may be a Python number."""
    x0, x1 = mixed_precision.promote(_operand(x0), _operand(x1))
    if isinstance(x1, numbers.Number):
        return AddConstant(x1).apply((x0,))[0]
    if isinstance(x0, numbers.Number):
        return AddConstant(x0).apply((x1,))[0]
    return Add().apply((x0, x1))[0]


def sub(x0, x1):
    """Elementwise ``x0 - x1`` with broadcasting; either may be a Python number."""
    x0, x1 = mixed_precision.promote(_operand(x0), _operand(x1))
    if isinstance(x1, numbers.Number):
        return AddConstant(-x1).apply((x0,))[0]
    if isinstance(x0, numbers.Number):
        return SubFromConstant(x0).apply((x1,))[0]
    return Sub().apply((x0, x1))[0]


def mul(x0, x1):
    """Elementwise ``x0 * x1`` with broadcasting; either may be a Python number."""
    x0, x1 = mixed_precision.promote(_operand(x0), _operand(x1))
    if isinstance(x1, numbers.Number):
        return MulConstant(x1).apply((x0,))[0]
    if isinstance(x0, numbers.Number):
        return MulConstant(x0).apply((x1,))[0]
    return Mul().apply((x0, x1))[0]


def div(x0, x1):
    """Elementwise ``x0 / x1`` with broadcasting; either may be a Python number."""
    x0, x1 = mixed_precision.promote(_operand(x0), _operand(x1))
    if isinstance(x1, numbers.Number):
        return MulConstant(1.0 / x1).apply((x0,))[0]
    if isinstance(x0, numbers.Number):
        return DivFromConstant(x0).apply((x1,))[0]
    return Div().apply((x0, x1))[0]


def pow(x0, x1):  # noqa: A001 - Chainer's name
    """Elementwise ``x0 ** x1`` with broadcasting; either may be a Python number."""
    x0, x1 = _operand(x0), _operand(x1)
    if isinstance(x1, numbers.Number):
        return PowVarConst(x1).apply((x0,))[0]
    if isinstance(x0, numbers.Number):
        return PowConstVar(x0).apply((x1,))[0]
    return PowVarVar().apply((x0, x1))[0]


def neg(x):
    """Elementwise ``-x``."""
    return Neg().apply((x,))[0]


def absolute(x):
    """Elementwise ``|x|`` (gradient 0 at 0 is taken as sign(0) = 0)."""
    return Absolute().apply((x,))[0]


def _swap(function):
    return lambda self, other: function(other, self)


def install_variable_arithmetics():
    """Make Variable's operators call these functions."""
    Variable = variable_module.Variable
    Variable.__neg__ = neg
    Variable.__abs__ = absolute
    Variable.__add__ = add
    Variable.__radd__ = _swap(add)
    Variable.__sub__ = sub
    Variable.__rsub__ = _swap(sub)
    Variable.__mul__ = mul
    Variable.__rmul__ = _swap(mul)
    Variable.__truediv__ = div
    Variable.__rtruediv__ = _swap(div)
    Variable.__pow__ = pow
    Variable.__rpow__ = _swap(pow)
