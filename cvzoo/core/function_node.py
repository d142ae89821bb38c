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
  When ``config.enable_backprop`` is False (a first-order backward, the common case) it
  may compute arrays instead, e.g. by calling another node's ``forward`` directly: no
  graph is recorded then, and the engine wraps the arrays.

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

import operator
import weakref

import numpy

from cvzoo.core import backend
from cvzoo.core import variable as variable_module
from cvzoo.core.config import config

_array_of = operator.attrgetter('_array')  # of a Variable
_node_of = operator.attrgetter('_node')


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
        # NOTE: this runs once per function call, hundreds of times per training step, so
        # it is written in plain loops: each comprehension, generator or property is one
        # more Python call per use (see bench/count_step_calls.py).
        variable_class = variable_module.Variable
        input_vars = []
        requires_grad = False
        for x in inputs:
            if not isinstance(x, variable_class):
                x = variable_class(x, requires_grad=False)
            input_vars.append(x)
            if x._node.requires_grad:
                requires_grad = True
        in_data = tuple(map(_array_of, input_vars))  # map calls the getter from C: no call
        self._input_indexes_to_retain = ()
        self._output_indexes_to_retain = ()
        scope = backend.device_scope(in_data, type(self).__name__)
        if scope is None:
            out_data = self.forward(in_data)
        else:
            with scope:
                out_data = self.forward(in_data)
        if not isinstance(out_data, tuple):
            raise TypeError(f'{self.label}.forward must return a tuple, got {type(out_data)}')
        requires_grad = requires_grad and config.enable_backprop
        outputs = []
        for y in out_data:
            if isinstance(y, numpy.generic):  # a NumPy reduction's scalar; the graph holds arrays
                y = numpy.asarray(y)
            outputs.append(variable_class._output(y, requires_grad))
        outputs = tuple(outputs)
        if requires_grad:
            self._record(input_vars, in_data, outputs, out_data)
        return outputs

    def _record(self, input_vars, in_data, outputs, out_data):
        inputs = tuple(map(_node_of, input_vars))
        rank = 0
        for node in inputs:
            if node.rank > rank:
                rank = node.rank
        self.inputs = inputs
        self.rank = rank
        refs = []
        for y in outputs:
            node = y._node
            node.creator = self
            node.rank = rank + 1
            refs.append(weakref.ref(node))
        self.outputs = tuple(refs)
        retained = {}
        for i in self._input_indexes_to_retain:
            retained[i] = in_data[i]
        self._retained_inputs = retained
        retained = {}
        for i in self._output_indexes_to_retain:
            retained[i] = outputs[i]._array
        self._retained_outputs = retained

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

    def retained_input_arrays(self):
        """Return the retained inputs as arrays (for a backward that records no graph)."""
        self._check_not_released()
        return tuple([self._retained_inputs[i] for i in self._input_indexes_to_retain])

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
                self.outputs = (self.outputs[:i] + (weakref.ref(variable._node),)
                                + self.outputs[i + 1:])
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
