"""The graph node behind a Variable (private).

The graph is made of FunctionNodes and VariableNodes, not of the user's Variables. A
VariableNode refers to its Variable only weakly, so an array the user dropped and no
function retained is freed at once even while the graph lives on.
"""

import weakref


class VariableNode:
    """One value in the computational graph.

    Attributes:
        creator: the FunctionNode that produced it, or None for a leaf.
        rank (int): 0 for leaves, creator's rank + 1 otherwise; backward visits
            functions from the highest rank down.
        requires_grad (bool): whether gradients flow into it.
        shape, dtype: of the array, kept for gradient checks after the array is gone.
    """

    __slots__ = ('_variable', 'creator', 'rank', 'requires_grad', 'shape', 'dtype', '__weakref__')

    def __init__(self, variable, requires_grad, array):
        self._variable = weakref.ref(variable)
        self.creator = None
        self.rank = 0
        self.requires_grad = requires_grad
        self.shape = None if array is None else array.shape
        self.dtype = None if array is None else array.dtype

    def set_creator(self, function_node):
        """Record the function that produced this value."""
        self.creator = function_node
        self.rank = function_node.rank + 1

    def get_variable(self):
        """Return the user's Variable if it is still alive, else None."""
        return self._variable()

    def get_variable_or_make(self, array):
        """Return the live Variable, or a new one bound to this node that holds ``array``."""
        variable = self._variable()
        if variable is not None:
            return variable
        from cvzoo.core import variable as variable_module  # noqa: PLC0415 - import cycle

        variable = variable_module.Variable._from_node(self, array)
        self._variable = weakref.ref(variable)
        return variable
