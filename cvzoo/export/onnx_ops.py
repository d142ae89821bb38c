"""ONNX translations of cvzoo's elementwise, activation, array and reduction functions.

Each translation takes the builder and a ``Call`` (see ``onnx_builder``) and emits
nodes that write ``call.outputs``. ``TRANSLATIONS`` maps a FunctionNode class name to
its translation; the layers (convolution, pooling, resize, normalisation) are in
``onnx_layer_ops``.
"""

import math

import numpy

# NOTE: ONNX Slice clamps an end below -dim to "before the first element", which a
# negative step needs and which no real index can say.
_BEFORE_FIRST = -(2 ** 62)


class UntranslatableCall(Exception):
    """Raised by a translation for a call it cannot write (to_onnx names the model)."""


# --- elementwise ---

def _simple(op_type, **attributes):
    """A translation that is one ONNX node of the same inputs."""
    def translate(builder, call):
        builder.node(op_type, call.inputs, call.outputs, **attributes)
    return translate


def _with_constant(op_type, constant_first=False):
    """A translation ``x op value`` (or ``value op x``) for a function with ``.value``."""
    def translate(builder, call):
        value = builder.constant(call.function.value, call.dtype)
        inputs = [value, call.inputs[0]] if constant_first else [call.inputs[0], value]
        builder.node(op_type, inputs, call.outputs)
    return translate


def _square(builder, call):
    builder.node('Mul', [call.inputs[0], call.inputs[0]], call.outputs)


def _squared_difference(builder, call):
    difference, = builder.node('Sub', call.inputs)
    builder.node('Mul', [difference, difference], call.outputs)


def _clip(builder, call):
    bounds = [('' if v is None else builder.constant(v, call.dtype))
              for v in (call.function.x_min, call.function.x_max)]
    builder.node('Clip', [call.inputs[0]] + bounds, call.outputs)


def _add_relu(builder, call):
    """relu(a + b), the fused end of a ResNet bottleneck, as ONNX's Add then Relu."""
    total, = builder.node('Add', call.inputs)
    builder.node('Relu', [total], call.outputs)


def _relu6(builder, call):
    bounds = [builder.constant(0, call.dtype), builder.constant(6, call.dtype)]
    builder.node('Clip', [call.inputs[0]] + bounds, call.outputs)


def _normal_cdf(builder, call):
    """Phi(x) = (1 + erf(x / sqrt(2))) / 2, as gelu's node computes it."""
    scaled, = builder.node('Mul', [call.inputs[0],
                                   builder.constant(1 / math.sqrt(2), call.dtype)])
    erf, = builder.node('Erf', [scaled])
    shifted, = builder.node('Add', [erf, builder.constant(1, call.dtype)])
    builder.node('Mul', [shifted, builder.constant(0.5, call.dtype)], call.outputs)


def _prelu(builder, call):
    """ONNX PRelu broadcasts the slope from the right: give W trailing 1 axes."""
    x_ndim, w_shape = len(call.in_shapes[0]), call.in_shapes[1]
    shape = tuple(w_shape) + (1,) * (x_ndim - 1 - len(w_shape))
    slope, = builder.node('Reshape', [call.inputs[1], builder.int64s(shape)])
    builder.node('PRelu', [call.inputs[0], slope], call.outputs)


def _cast(builder, call):
    to = builder.helper.np_dtype_to_tensor_dtype(numpy.dtype(call.function.dtype))
    builder.node('Cast', call.inputs, call.outputs, to=to)


def _where(builder, call):
    condition, = builder.node('Cast', [call.inputs[0]], to=builder.helper.TensorProto.BOOL)
    builder.node('Where', [condition] + call.inputs[1:], call.outputs)


# --- shapes ---

def _reshape(builder, call):
    """Reshape; a batched input that keeps its batch axis keeps it dynamic (ONNX's 0
    copies the input's size)."""
    in_shape, out_shape = call.in_shapes[0], call.out_shapes[0]
    shape = [int(n) for n in out_shape]
    if call.batched[0] and shape and in_shape and shape[0] == in_shape[0]:
        shape[0] = 0
    builder.node('Reshape', [call.inputs[0], builder.int64s(shape)], call.outputs)


def _transpose(builder, call):
    axes = call.function.axes
    perm = list(reversed(range(len(call.in_shapes[0])))) if axes is None else list(axes)
    builder.node('Transpose', call.inputs, call.outputs, perm=perm)


def _broadcast_to(builder, call):
    """Expand; a batched input's axis 0 is expanded by 1, which keeps its own size."""
    shape = [int(n) for n in call.function.shape]
    in_shape = call.in_shapes[0]
    if call.batched[0] and len(shape) == len(in_shape) and shape[0] == in_shape[0]:
        shape[0] = 1
    builder.node('Expand', [call.inputs[0], builder.int64s(shape)], call.outputs)


def _reduce(builder, op_type, x, out, axes, keepdims):
    """One Reduce* node; the axes are an input from opset 13 (ReduceSum) or 18 (others)."""
    if op_type == 'ReduceSum' or builder.opset >= 18:
        builder.node(op_type, [x, builder.int64s(axes)], out, keepdims=int(keepdims))
    else:
        builder.node(op_type, [x], out, axes=list(axes), keepdims=int(keepdims))


def _reduction(op_type):
    def translate(builder, call):
        axes = call.function.axes
        axes = range(len(call.in_shapes[0])) if axes is None else axes
        _reduce(builder, op_type, call.inputs[0], call.outputs, list(axes),
                call.function.keepdims)
    return translate


def _sum_to(builder, call):
    in_shape, shape = call.in_shapes[0], tuple(call.function.shape)
    lead = len(in_shape) - len(shape)
    kept = [lead + i for i, n in enumerate(shape) if n == 1 and in_shape[lead + i] != 1]
    x = call.inputs[0]
    if kept:
        x, = builder.node('ReduceSum', [x, builder.int64s(kept)], keepdims=1)
    if lead:
        _reduce(builder, 'ReduceSum', x, call.outputs, list(range(lead)), False)
    else:
        builder.node('Identity', [x], call.outputs)


def _concat(builder, call):
    builder.node('Concat', call.inputs, call.outputs, axis=int(call.function.axis))


def _split_axis(builder, call):
    axis, indices = call.function.axis, call.function.indices
    length = call.in_shapes[0][axis]
    if isinstance(indices, (int, numpy.integer)):
        bounds = [length * i // int(indices) for i in range(1, int(indices))]
    else:
        bounds = [min(max(int(i), 0), length) for i in indices]
    edges = [0] + bounds + [length]
    sizes = [max(b - a, 0) for a, b in zip(edges, edges[1:])]
    builder.node('Split', [call.inputs[0], builder.int64s(sizes)], call.outputs, axis=axis)


def _pad(builder, call):
    widths = numpy.asarray(call.function.pad_width).reshape(-1, 2)
    pads = list(widths[:, 0]) + list(widths[:, 1])
    value = builder.constant(call.function.constant_values, call.dtype)
    builder.node('Pad', [call.inputs[0], builder.int64s(pads), value], call.outputs,
                 mode='constant')


def _expanded_items(slices, ndim):
    """The index as a tuple with its Ellipsis replaced by full slices."""
    items = slices if isinstance(slices, tuple) else (slices,)
    for item in items:
        if not (item is None or item is Ellipsis or isinstance(item, slice)
                or isinstance(item, (int, numpy.integer))):
            raise UntranslatableCall(f'an advanced index ({type(item).__name__})')
    n_real = sum(1 for item in items if item is not None and item is not Ellipsis)
    if Ellipsis not in items:
        return items + (slice(None),) * (ndim - n_real)
    at = items.index(Ellipsis)
    return items[:at] + (slice(None),) * (ndim - n_real) + items[at + 1:]


def _get_item(builder, call):
    """Basic indexing: one Slice over every sliced axis, then Squeeze and Unsqueeze."""
    shape = call.in_shapes[0]
    starts, ends, axes, steps, squeezed, inserted = [], [], [], [], [], []
    axis = out_axis = 0
    for item in _expanded_items(call.function.slices, len(shape)):
        if item is None:
            inserted.append(out_axis)
            out_axis += 1
            continue
        if isinstance(item, slice) and item == slice(None):
            axis, out_axis = axis + 1, out_axis + 1
            continue
        if isinstance(item, slice):
            start, stop, step = item.indices(shape[axis])
            stop = _BEFORE_FIRST if step < 0 and stop < 0 else stop
            out_axis += 1
        else:
            start = int(item) % shape[axis]
            stop, step = start + 1, 1
            squeezed.append(axis)
        starts, ends, axes, steps = starts + [start], ends + [stop], axes + [axis], steps + [step]
        axis += 1
    x = call.inputs[0]
    if axes:
        x, = builder.node('Slice', [x] + [builder.int64s(v) for v in (starts, ends, axes, steps)])
    if squeezed:
        x, = builder.node('Squeeze', [x, builder.int64s(squeezed)])
    if inserted:
        x, = builder.node('Unsqueeze', [x, builder.int64s(inserted)])
    builder.node('Identity', [x], call.outputs)


def _softmax(op_type):
    def translate(builder, call):
        builder.node(op_type, call.inputs, call.outputs, axis=int(call.function.axis))
    return translate


def _leaky_relu(builder, call):
    builder.node('LeakyRelu', call.inputs, call.outputs, alpha=float(call.function.slope))


def _elu(builder, call):
    builder.node('Elu', call.inputs, call.outputs, alpha=float(call.function.alpha))


TRANSLATIONS = {
    # arithmetic
    'Add': _simple('Add'), 'Sub': _simple('Sub'), 'Mul': _simple('Mul'),
    'Div': _simple('Div'), 'PowVarVar': _simple('Pow'),
    'AddConstant': _with_constant('Add'), 'SubFromConstant': _with_constant('Sub', True),
    'MulConstant': _with_constant('Mul'), 'DivFromConstant': _with_constant('Div', True),
    'PowVarConst': _with_constant('Pow'), 'PowConstVar': _with_constant('Pow', True),
    'Neg': _simple('Neg'), 'Absolute': _simple('Abs'), 'Exp': _simple('Exp'),
    'Log': _simple('Log'), 'Sqrt': _simple('Sqrt'), 'Square': _square,
    'SquaredDifference': _squared_difference, 'Maximum': _simple('Max'),
    'Minimum': _simple('Min'), 'Clip': _clip,
    # activations
    'ReLU': _simple('Relu'), 'AddReLU': _add_relu, 'LeakyReLU': _leaky_relu,
    'Sigmoid': _simple('Sigmoid'), 'Tanh': _simple('Tanh'), 'ELU': _elu, 'PReLU': _prelu,
    'ReLU6': _relu6,
    'HardSigmoid': _simple('HardSigmoid', alpha=0.2, beta=0.5), '_NormalCdf': _normal_cdf,
    'Softmax': _softmax('Softmax'), 'LogSoftmax': _softmax('LogSoftmax'),
    # arrays
    'Reshape': _reshape, 'Transpose': _transpose, 'BroadcastTo': _broadcast_to,
    'SumTo': _sum_to, 'Concat': _concat, 'SplitAxis': _split_axis, 'Pad': _pad,
    'GetItem': _get_item, 'Cast': _cast, 'Copy': _simple('Identity'), 'Where': _where,
    # reductions
    'Sum': _reduction('ReduceSum'), 'Max': _reduction('ReduceMax'),
    'Min': _reduction('ReduceMin'),
}
