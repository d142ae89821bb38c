"""Record the graph of one forward pass, for exporters.

A forward pass with a graph keeps every FunctionNode (a Variable's creator keeps its
inputs' nodes), but not the arrays of values that only existed for a moment: a
constant array a model adds to an activation is wrapped in a Variable that nothing
holds once the function ran. While tracing, the inputs of every function applied on
this thread are kept alive when they are leaves (no creator), so that their arrays can
be read afterwards. Parameters are leaves too; they are alive anyway.

>>> import numpy as np
>>> import cvzoo.core.functions as F
>>> graph = trace(lambda x: F.relu(x * 2.0 + 1.0), np.ones((1, 3), np.float32))
>>> [type(f).__name__ for f in graph.functions]
['MulConstant', 'AddConstant', 'ReLU']
"""

import contextlib
import dataclasses
import threading

from cvzoo.core import config, function_node, variable


@dataclasses.dataclass
class TracedGraph:
    """The recorded graph of one call.

    Attributes:
        input (Variable): the traced input.
        outputs (list of Variable): the call's outputs, flattened in order.
        functions (list of FunctionNode): every function between them, each after
            the functions producing its inputs.
        leaves (dict): ``id(VariableNode)`` -> the live leaf Variable (parameters and
            constants) read by some function.
        result: what the call returned, as it returned it (a Variable or nested lists
            and tuples of Variables and other values).
    """

    input: variable.Variable
    outputs: list
    functions: list
    leaves: dict
    result: object = None


@contextlib.contextmanager
def _keeping_leaves(kept):
    """Inside the block, FunctionNode.apply on this thread appends its leaf inputs to
    ``kept`` (other threads are left alone)."""
    original = function_node.FunctionNode.apply
    owner = threading.get_ident()

    def apply(self, inputs):
        if threading.get_ident() != owner:
            return original(self, inputs)
        inputs = [variable.as_variable(x) for x in inputs]
        kept.extend([v for v in inputs if v.creator is None])
        return original(self, inputs)

    function_node.FunctionNode.apply = apply
    try:
        yield
    finally:
        function_node.FunctionNode.apply = original


def flatten_outputs(result):
    """The Variables of a forward's result (a Variable, or nested lists/tuples), in order;
    arrays and other values, computed outside the graph, are left out."""
    if isinstance(result, variable.Variable):
        return [result]
    if isinstance(result, (list, tuple)):
        return [v for item in result for v in flatten_outputs(item)]
    return []


def _functions_behind(outputs):
    """Every FunctionNode the outputs depend on, sorted so producers come first."""
    found = {}
    stack = [v.node for v in outputs]
    while stack:
        creator = stack.pop().creator
        if creator is None or id(creator) in found:
            continue
        found[id(creator)] = creator
        stack.extend(creator.inputs)
    # NOTE: a function's rank is the largest rank of its inputs, and an input's rank is
    # its creator's rank + 1, so producers always have a smaller rank.
    return sorted(found.values(), key=lambda f: f.rank)


def trace(call, example_input):
    """Run ``call(x)`` once in test mode with the graph recorded.

    Args:
        call: a callable taking one Variable, e.g. a model's ``forward``.
        example_input (array): the input, e.g. (B, 3, H, W) float32.

    Returns:
        TracedGraph: the graph from the input to the outputs.
    """
    x = variable.Variable(example_input, requires_grad=True)
    kept = []
    with config.using_config('train', False), config.force_backprop_mode(), \
            _keeping_leaves(kept):
        result = call(x)
    outputs = flatten_outputs(result)
    leaves = {id(v.node): v for v in kept}
    return TracedGraph(x, outputs, _functions_behind(outputs), leaves, result)
