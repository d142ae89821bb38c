"""FunctionNode: one differentiable operation, and the graph it records.

A subclass implements two methods:

- ``forward(inputs)`` takes a tuple of arrays and returns a tuple of arrays. It calls
  ``self.retain_inputs(indexes)`` / ``self.retain_outputs(indexes)`` for exactly the
  values backward needs; nothing else is kept.
- ``backward(target_input_indexes, grad_outputs)`` takes the output gradients as
  Variables (None for an output that got no gradient, possible only with several
  outputs) and returns the gradients of the inputs listed in ``target_input_indexes``,
  as Variables built with differentiable functions, so double backprop comes free. It
  may instead return one entry per input; entries not asked for are ignored.

>>> import numpy as np
>>> class Square(FunctionNode):
...     def forward(self, inputs):
...         self.retain_inputs((0,))
...         return inputs[0] ** 2,
...     def backward(self, indexes, grad_outputs):
...         x, = self.get_retained_inputs()
...         return 2 * x * grad_outputs[0],
>>> y, = Square().apply((np.array([3.0]),))
>>> y.array
array([9.])
"""

import weakref

import numpy

from cvzoo.core import backend
from cvzoo.core import variable as variable_module
from cvzoo.core.config import config


class FunctionNode:
    """Base class of differentiable operations; see the module docstring."""

    rank = 0
    inputs = None  # tuple of VariableNode, set when the graph is recorded
    outputs = None  # tuple of weakrefs to VariableNode
    _retained_inputs = None  # {index: array}
    _retained_outputs = None  # {index: array}
    _input_indexes_to_retain = ()
    _output_indexes_to_retain = ()
    _released = False

    @property
    def label(self):
        """A short name for messages: the class name."""
        return type(self).__name__

    def apply(self, inputs):
        """Run forward on ``inputs`` (Variables or arrays) and record the graph.

        Returns:
            tuple of Variable: the outputs.
        """
        input_vars = [variable_module.as_variable(x) for x in inputs]
        in_data = tuple([v.array for v in input_vars])
        backend.check_same_device(in_data, self.label)
        self._input_indexes_to_retain = ()
        self._output_indexes_to_retain = ()
        with backend.using_device_of(in_data):
            out_data = self.forward(in_data)
        if not isinstance(out_data, tuple):
            raise TypeError(f'{self.label}.forward must return a tuple, got {type(out_data)}')

        # NOTE: numpy reductions return numpy scalars; the graph holds arrays only.
        out_data = tuple([numpy.asarray(y) if isinstance(y, numpy.generic) else y
                          for y in out_data])
        requires_grad = config.enable_backprop and any(v.requires_grad for v in input_vars)
        outputs = tuple([variable_module.Variable(y, requires_grad=requires_grad) for y in out_data])
        if requires_grad:
            self._record(input_vars, in_data, outputs, out_data)
        return outputs

    def _record(self, input_vars, in_data, outputs, out_data):
        self.inputs = tuple([v._node for v in input_vars])
        self.rank = max(node.rank for node in self.inputs)
        for y in outputs:
            y._node.set_creator(self)
        self.outputs = tuple([weakref.ref(y._node) for y in outputs])
        self._retained_inputs = {i: in_data[i] for i in self._input_indexes_to_retain}
        self._retained_outputs = {i: out_data[i] for i in self._output_indexes_to_retain}

    def forward(self, inputs):
        """Compute the outputs from a tuple of arrays; return a tuple of arrays."""
        raise NotImplementedError(f'{self.label} does not implement forward')

    def backward(self, target_input_indexes, grad_outputs):
        """Return the input gradients (Variables or None) for ``target_input_indexes``."""
        raise NotImplementedError(f'{self.label} does not implement backward')

    def retain_inputs(self, indexes):
        """Declare, inside forward, which inputs backward will read."""
        self._input_indexes_to_retain = tuple(indexes)

    def retain_outputs(self, indexes):
        """Declare, inside forward, which outputs backward will read."""
        self._output_indexes_to_retain = tuple(indexes)

    def get_retained_inputs(self):
        """Return the retained inputs as Variables linked to the original graph."""
        self._check_not_released()
        return tuple([
            self.inputs[i].get_variable_or_make(self._retained_inputs[i])
            for i in self._input_indexes_to_retain
        ])

    def get_retained_outputs(self):
        """Return the retained outputs as Variables whose creator is this node."""
        self._check_not_released()
        result = []
        for i in self._output_indexes_to_retain:
            array = self._retained_outputs[i]
            node = self.outputs[i]()
            if node is None:
                # The output is gone from the user's graph; make a fresh one so a
                # double backward can still reach this node through it.
                variable = variable_module.Variable(array, requires_grad=True)
                variable._node.set_creator(self)
                self.outputs = self.outputs[:i] + (weakref.ref(variable._node),) + self.outputs[i + 1:]
                result.append(variable)
            else:
                result.append(node.get_variable_or_make(array))
        return tuple(result)

    def _check_not_released(self):
        if self._released:
            raise RuntimeError(
                f'{self.label}: backward already released this part of the graph; '
                'pass retain_graph=True to the first backward() to run backward twice'
            )

    def _release(self):
        """Drop retained arrays and the links to inputs (after backward passed here)."""
        self._retained_inputs = None
        self._retained_outputs = None
        self.inputs = None
        self._released = True
