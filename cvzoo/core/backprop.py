"""The backward pass: ``backward()`` into leaves' ``.grad`` and ``grad()`` returning them.

Functions are visited from the highest rank down, so each runs once, after every
consumer of its outputs. Gradients are Variables; unless double backprop is asked for,
the backward pass runs in no-backprop mode and records nothing. It runs with autocast
(cvzoo.core.mixed_precision) off.
"""

import heapq
import itertools

import numpy

from cvzoo.core import backend
from cvzoo.core import config as config_module
from cvzoo.core import parallel
from cvzoo.core import variable as variable_module


def backward(outputs, grad_outputs=None, *, retain_grad=False, enable_double_backprop=False,
             retain_graph=None):
    """Backpropagate from ``outputs`` and add the gradients into the leaves' ``.grad``.

    Args:
        outputs (list of Variable): where to start.
        grad_outputs (list): their gradients (arrays or Variables); None entries use
            the output's own ``grad``, or ones for a one-element output.
        retain_grad (bool): keep ``grad`` on intermediate variables too.
        enable_double_backprop (bool): record the backward graph.
        retain_graph (bool): keep the forward graph; defaults to enable_double_backprop.
    """
    output_grads = _initial_grads(outputs, grad_outputs)
    grads = _run(outputs, output_grads, (), enable_double_backprop, retain_graph, retain_grad)
    for node, gx in grads.items():
        variable = node.get_variable()
        if variable is None or not node.requires_grad:
            continue
        if node.creator is not None and not retain_grad:
            continue
        old = variable._grad_var  # the attribute behind grad_var, without its property
        variable._grad_var = gx if old is None else _add(old, gx, enable_double_backprop)


def grad(outputs, inputs, grad_outputs=None, enable_double_backprop=False, retain_graph=None):
    """Return the gradients of ``outputs`` with respect to ``inputs``; ``.grad`` untouched.

    Args:
        outputs (list of Variable): the values to differentiate.
        inputs (list of Variable): with respect to these.
        grad_outputs (list): gradients of the outputs (default: ones for one-element
            outputs).
        enable_double_backprop (bool): record the graph of the result, so it can be
            differentiated again.
        retain_graph (bool): keep the forward graph; defaults to enable_double_backprop.

    Returns:
        list: one Variable (or None where no path exists) per input.
    """
    outputs = list(outputs)
    inputs = list(inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, variable_module.Variable):
            raise TypeError(f'inputs[{i}]: expected a Variable, got {type(x).__name__}')
    output_grads = _initial_grads(outputs, grad_outputs)
    targets = tuple(x.node for x in inputs)
    grads = _run(outputs, output_grads, targets, enable_double_backprop, retain_graph, False)
    return [grads.get(node) for node in targets]


def _initial_grads(outputs, grad_outputs):
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(
            f'grad_outputs: expected {len(outputs)} entries (one per output), '
            f'got {len(grad_outputs)}'
        )
    result = []
    for i, (y, gy) in enumerate(zip(outputs, grad_outputs)):
        if gy is None:
            gy = y.grad_var
        if gy is None:
            if y.size != 1:
                raise ValueError(
                    f'outputs[{i}]: backward from a variable of shape {y.shape} needs its '
                    'gradient; set y.grad or pass grad_outputs'
                )
            with backend.using_device_of(y.array):
                gy = y.xp.ones_like(y.array)
        result.append(variable_module.as_variable(gy))
    return result


def _add(a, b, enable_double_backprop):
    if enable_double_backprop:
        return a + b
    with backend.using_device_of(a.array):
        total = parallel.add(a.array, b.array)
    if isinstance(total, numpy.generic):  # 0-d + 0-d gives a numpy scalar
        total = numpy.asarray(total)
    return variable_module.Variable(total, requires_grad=False)


def _run(outputs, output_grads, targets, enable_double_backprop, retain_graph, retain_grad):
    """Run the backward loop; return {VariableNode: grad Variable} for leaves and targets."""
    if retain_graph is None:
        retain_graph = enable_double_backprop
    mode = config_module.using_config('enable_backprop', enable_double_backprop)
    # NOTE: each backward computes in the dtypes its forward saw; autocast's casts were
    # recorded as F.cast nodes, so it must not cast the gradients a second time.
    with mode, config_module.using_config('autocast', None):
        return _loop(outputs, output_grads, set(targets), enable_double_backprop, retain_graph,
                     retain_grad)


def _loop(outputs, output_grads, targets, enable_double_backprop, retain_graph, retain_grad):
    # NOTE: written in plain loops, as FunctionNode.apply: this runs once per function of
    # the graph, and each generator or helper call is one more Python call each time.
    variable_class = variable_module.Variable
    grads = {}
    heap = []
    counter = itertools.count()
    queued = set()

    for y, gy in zip(outputs, output_grads):
        _accumulate(grads, y.node, gy, enable_double_backprop)
        _push(heap, queued, counter, y.creator)

    while heap:
        function_node = heapq.heappop(heap)[2]
        if function_node._released:
            function_node._check_not_released()
        grad_outputs = _take_output_grads(function_node, grads, targets, retain_grad)
        if grad_outputs.count(None) == len(grad_outputs):
            continue
        inputs = function_node.inputs
        target_indexes = []
        for i, x in enumerate(inputs):
            if x.requires_grad:
                target_indexes.append(i)
        if target_indexes:
            target_indexes = tuple(target_indexes)
            grad_inputs = _call_backward(function_node, target_indexes, grad_outputs)
            for i, gx in zip(target_indexes, grad_inputs):
                if gx is None:
                    continue
                node = inputs[i]
                if node in grads:
                    _accumulate(grads, node, gx, enable_double_backprop, function_node)
                else:  # the first gradient of this input: _accumulate inline
                    if not isinstance(gx, variable_class):
                        gx = variable_class._output(gx, False)
                    if node.shape is not None and gx._array.shape != node.shape:
                        _raise_shape_mismatch(function_node, gx, node)
                    grads[node] = gx
                creator = node.creator
                if creator is not None and id(creator) not in queued:
                    _push(heap, queued, counter, creator)
        if not retain_graph:
            function_node._release()
    return grads


def _push(heap, queued, counter, function_node):
    """Queue ``function_node`` (once) to run after every function of a higher rank."""
    if function_node is not None and id(function_node) not in queued:
        queued.add(id(function_node))
        heapq.heappush(heap, (-function_node.rank, next(counter), function_node))


def _take_output_grads(function_node, grads, targets, retain_grad):
    """Collect the gradients of a function's outputs, freeing those nobody else needs."""
    result = []
    for ref in function_node.outputs:
        node = ref()
        if node is None:
            result.append(None)
        elif node in targets or (retain_grad and node.get_variable() is not None):
            result.append(grads.get(node))
        else:
            result.append(grads.pop(node, None))
    return tuple(result)


def _raise_shape_mismatch(function_node, gx, node):
    where = f'{function_node.label}.backward' if function_node else 'backward'
    raise ValueError(f'{where}: gradient of shape {gx.shape} for an input of shape {node.shape}')


def _call_backward(function_node, target_indexes, grad_outputs):
    scope = backend.device_scope(grad_outputs)
    if scope is None:
        grad_inputs = function_node.backward(target_indexes, grad_outputs)
    else:
        with scope:
            grad_inputs = function_node.backward(target_indexes, grad_outputs)
    if not isinstance(grad_inputs, (tuple, list)):
        raise TypeError(f'{function_node.label}.backward must return a tuple')
    n_input = len(function_node.inputs)
    n_target = len(target_indexes)
    n_grad = len(grad_inputs)
    if n_grad == n_input and n_input != n_target:
        grad_inputs = [grad_inputs[i] for i in target_indexes]
        n_grad = n_target
    if n_grad != n_target:
        raise ValueError(
            f'{function_node.label}.backward returned {n_grad} gradients for '
            f'{n_target} requested inputs'
        )
    return grad_inputs


def _accumulate(grads, node, gx, enable_double_backprop, function_node=None):
    if not isinstance(gx, variable_module.Variable):
        gx = variable_module.Variable._output(gx, False)
    if node.shape is not None and gx._array.shape != node.shape:
        _raise_shape_mismatch(function_node, gx, node)
    old = grads.get(node)
    grads[node] = gx if old is None else _add(old, gx, enable_double_backprop)
