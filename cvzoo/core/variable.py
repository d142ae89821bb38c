"""Variable (an array in the graph) and Parameter (a Variable that a Link owns).

>>> import numpy as np
>>> import cvzoo.core.functions as F
>>> x = Variable(np.array([1.0, 2.0], dtype=np.float32))
>>> y = F.sum(x * x)
>>> y.backward()
>>> x.grad
array([2., 4.], dtype=float32)
"""

import operator

import numpy

from cvzoo.core import backend, variable_node


def _check_array(array, what='array'):
    if array is None or isinstance(array, numpy.ndarray) or backend.is_gpu_array(array):
        return
    raise TypeError(
        f'{what}: expected a NumPy or GPU ndarray, got {type(array).__name__}; '
        'wrap scalars and lists with numpy.asarray(..., dtype=numpy.float32) first'
    )


class Variable:
    """An array with a place in the computational graph.

    Args:
        array: a NumPy or GPU ndarray (or None for a Parameter not yet initialised).
        name (str): optional, shown in error messages.
        requires_grad (bool): whether backward computes a gradient for it.

    Attributes:
        array: the value.
        grad: the gradient array after backward(), or None.
        creator: the FunctionNode that produced it, or None for a leaf.
    """

    # NOTE: makes ``ndarray + Variable`` call Variable.__radd__ rather than numpy's add.
    __array_priority__ = 200

    def __init__(self, array=None, *, name=None, requires_grad=True):
        if not isinstance(array, numpy.ndarray):
            _check_array(array)
        self._array = array
        self._grad_var = None
        self.name = name
        self._node = variable_node.VariableNode(self, requires_grad, array)

    @classmethod
    def _output(cls, array, requires_grad):
        """A new Variable of a function's output (the engine's fast path of ``__init__``)."""
        if not isinstance(array, numpy.ndarray) and not backend.is_gpu_array(array):
            _check_array(array)  # raises, unless None
        variable = cls.__new__(cls)
        variable._array = array
        variable._grad_var = None
        variable.name = None
        variable._node = variable_node.VariableNode(variable, requires_grad, array)
        return variable

    @classmethod
    def _from_node(cls, node, array):
        variable = cls.__new__(cls)
        variable._array = array
        variable._grad_var = None
        variable.name = None
        variable._node = node
        return variable

    # --- value ---

    def _set_array(self, value):
        _check_array(value)
        self._array = value
        self._node.shape = None if value is None else value.shape
        self._node.dtype = None if value is None else value.dtype

    # NOTE: the getters are operator.attrgetter, read without a Python frame: the engine
    # and the layers read them thousands of times per training step.
    array = property(operator.attrgetter('_array'), _set_array,
                     doc='The array this variable holds.')
    data = property(operator.attrgetter('_array'), _set_array,
                    doc="Alias of ``array`` (Chainer's name).")
    shape = property(operator.attrgetter('_array.shape'), doc="The array's shape.")
    ndim = property(operator.attrgetter('_array.ndim'), doc="The array's number of axes.")
    size = property(operator.attrgetter('_array.size'), doc="The array's number of elements.")
    dtype = property(operator.attrgetter('_array.dtype'), doc="The array's dtype.")

    @property
    def xp(self):
        """The array module (NumPy, or the GPU one) that holds the array."""
        return backend.get_array_module(self._array)

    @property
    def device(self):
        """The Device the array lives on."""
        return backend.get_device_from_array(self._array)

    def __len__(self):
        return len(self._array)

    def __repr__(self):
        name = f' {self.name!r}' if self.name else ''
        return f'variable{name}({self._array!r})'

    def item(self):
        """Return the value of a one-element variable as a Python scalar."""
        return self._array.item()

    # --- gradient ---

    @property
    def grad(self):
        """The gradient array, or None."""
        return None if self._grad_var is None else self._grad_var._array

    @grad.setter
    def grad(self, value):
        if not isinstance(value, numpy.ndarray):
            _check_array(value, 'grad')
        self._grad_var = None if value is None else Variable._output(value, False)

    def _set_grad_var(self, value):
        self._grad_var = value

    grad_var = property(
        operator.attrgetter('_grad_var'), _set_grad_var,
        doc='The gradient as a Variable (with a graph after double backprop), or None.')

    def cleargrad(self):
        """Set the gradient to None."""
        self._grad_var = None

    def zerograd(self):
        """Set the gradient to zeros (allocating if needed)."""
        if self._array is None:
            return
        with backend.using_device_of(self._array):
            self.grad = self.xp.zeros_like(self._array)

    # --- graph ---

    def _set_requires_grad(self, value):
        self._node.requires_grad = bool(value)

    node = property(operator.attrgetter('_node'), doc='The graph node of this variable.')
    creator = property(operator.attrgetter('_node.creator'),
                       doc='The FunctionNode that produced this variable, or None.')
    requires_grad = property(operator.attrgetter('_node.requires_grad'), _set_requires_grad,
                             doc='Whether backward computes a gradient for it.')
    rank = property(operator.attrgetter('_node.rank'),
                    doc="The creator's rank + 1 (0 for a leaf).")

    def backward(self, retain_grad=False, enable_double_backprop=False, retain_graph=None):
        """Compute gradients of this variable with respect to every leaf behind it.

        Gradients are added into the leaves' ``grad`` (clear them first with
        ``cleargrads``). A variable of more than one element needs ``grad`` set first.

        Args:
            retain_grad (bool): also keep ``grad`` on intermediate variables.
            enable_double_backprop (bool): record the graph of the backward pass so the
                gradients can be differentiated again.
            retain_graph (bool): keep the graph for another backward; defaults to
                ``enable_double_backprop``. Otherwise each function releases what it
                retained as soon as backward has passed it.
        """
        from cvzoo.core import backprop  # noqa: PLC0415 - import cycle

        backprop.backward(
            [self],
            retain_grad=retain_grad,
            enable_double_backprop=enable_double_backprop,
            retain_graph=retain_graph,
        )

    def unchain(self):
        """Cut the link to this variable's creator; it becomes a leaf."""
        self._node.creator = None
        self._node.rank = 0

    def unchain_backward(self):
        """Cut every link in the graph behind this variable, freeing what it retains."""
        stack = [self._node]
        seen = set()
        while stack:
            node = stack.pop()
            creator = node.creator
            node.creator = None
            node.rank = 0
            if creator is None or id(creator) in seen:
                continue
            seen.add(id(creator))
            if creator.inputs is not None:
                stack.extend(creator.inputs)
            creator._release()

    def to_device(self, device):
        """Move the array (and gradient) to ``device`` in place; return self."""
        self._array = backend.to_device(self._array, device)
        if self._grad_var is not None:
            self._grad_var._array = backend.to_device(self._grad_var._array, device)
        return self


class Parameter(Variable):
    """A Variable owned by a Link; it may be created before its shape is known.

    Args:
        initializer: an array (used as the value), an initializer from
            ``cvzoo.core.initializers``, a scalar (a constant), or None (filled with NaN,
            so that using a parameter nobody initialised shows at once).
        shape (tuple): when given, the array is created now; otherwise at
            ``initialize(shape)`` (lazy shape inference).
        name (str): the attribute name under its Link.
    """

    def __init__(self, initializer=None, shape=None, name=None):
        from cvzoo.core import initializers  # noqa: PLC0415 - initializers imports backend only

        if isinstance(initializer, numpy.ndarray) or (
            initializer is not None and backend.get_array_module(initializer) is not numpy
        ):
            array, self.initializer = initializer, initializers.Constant(initializer)
        else:
            self.initializer = initializers.as_initializer(initializer)
            array = None
        super().__init__(array, name=name)
        self._device = backend.CPU if array is None else backend.get_device_from_array(array)
        self.update_rule = None
        if array is None and shape is not None:
            self.initialize(shape)

    @property
    def is_initialized(self):
        return self._array is not None

    @property
    def device(self):
        return self._device if self._array is None else super().device

    def initialize(self, shape):
        """Create the array of ``shape`` with the initializer, on the parameter's device."""
        from cvzoo.core import initializers  # noqa: PLC0415

        array = initializers.generate_array(self.initializer, tuple(shape), self._device)
        self.array = array

    def to_device(self, device):
        """Move value, gradient and optimizer state to ``device`` in place; return self."""
        self._device = backend.get_device(device)
        super().to_device(self._device)
        if self.update_rule is not None:
            self.update_rule.to_device(self._device)
        return self


def as_variable(x):
    """Return ``x`` if it is a Variable, else a Variable wrapping it that needs no gradient."""
    if isinstance(x, Variable):
        return x
    return Variable(x, requires_grad=False)


def as_array(x):
    """Return the array inside ``x`` if it is a Variable, else ``x``."""
    return x.array if isinstance(x, Variable) else x
