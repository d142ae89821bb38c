"""ONNX translations of cvzoo's layer functions: convolution, linear, normalisation,
pooling, unpooling and resizing (see ``onnx_ops`` for the calling convention).

Spatial sizes are the traced ones (only the batch axis is dynamic), so windows that
hang over the input's end (``cover_all``) become explicit end padding.
"""

import numpy

from cvzoo.core.functions.resize import resize_images
from cvzoo.export import onnx_ops

UntranslatableCall = onnx_ops.UntranslatableCall


def _end_pads(insize, outsize, ksize, stride, pad, dilate=(1, 1)):
    """Padding after the end of each axis that gives exactly ``outsize`` windows: the
    symmetric ``pad``, or more when the last window hangs over (cover_all)."""
    pads = []
    for n, o, k, s, p, d in zip(insize, outsize, ksize, stride, pad, dilate):
        span = (o - 1) * s + (k - 1) * d + 1
        pads.append(max(p, span - n - p))
    return pads


def _convolution(builder, call):
    f = call.function
    insize, outsize = call.in_shapes[0][2:], call.out_shapes[0][2:]
    ksize = call.in_shapes[1][2:]
    end = _end_pads(insize, outsize, ksize, f.stride, f.pad, f.dilate)
    builder.node('Conv', call.inputs, call.outputs, strides=list(f.stride),
                 pads=list(f.pad) + end, dilations=list(f.dilate), group=int(f.groups),
                 kernel_shape=list(ksize))


def _deconvolution(builder, call):
    f = call.function
    insize, ksize = call.in_shapes[0][2:], call.in_shapes[1][2:]
    default = [s * (n - 1) + (k - 1) * d + 1 - 2 * p
               for n, k, s, p, d in zip(insize, ksize, f.stride, f.pad, f.dilate)]
    extra = [o - n for o, n in zip(f.out_size, default)]
    builder.node('ConvTranspose', call.inputs, call.outputs, strides=list(f.stride),
                 pads=list(f.pad) * 2, dilations=list(f.dilate), group=int(f.groups),
                 kernel_shape=list(ksize), output_padding=extra)


def _linear(builder, call):
    if len(call.in_shapes[0]) == 2:
        builder.node('Gemm', call.inputs, call.outputs, transB=1)
        return
    weight_t, = builder.node('Transpose', [call.inputs[1]], perm=[1, 0])
    if len(call.inputs) == 2:
        builder.node('MatMul', [call.inputs[0], weight_t], call.outputs)
        return
    product, = builder.node('MatMul', [call.inputs[0], weight_t])
    builder.node('Add', [product, call.inputs[2]], call.outputs)


def _swapped_last(builder, name, ndim):
    perm = list(range(ndim - 2)) + [ndim - 1, ndim - 2]
    return builder.node('Transpose', [name], perm=perm)[0]


def _matmul(builder, call):
    a, b = call.inputs
    if call.function.transa:
        a = _swapped_last(builder, a, len(call.in_shapes[0]))
    if call.function.transb:
        b = _swapped_last(builder, b, len(call.in_shapes[1]))
    builder.node('MatMul', [a, b], call.outputs)


def _fixed_batch_normalization(builder, call):
    ndim = len(call.in_shapes[0])
    if tuple(call.function.axes) != (0,) + tuple(range(2, ndim)):
        raise UntranslatableCall(f'statistics over axes {call.function.axes} (only the '
                                 'channel axis 1 is written as BatchNormalization)')
    builder.node('BatchNormalization', call.inputs, call.outputs,
                 epsilon=float(call.function.eps))


def _channel_window_sum(builder, call):
    """Local response normalisation's sum over 2 * half_n + 1 channels: a 3-D
    convolution of ones over (channels, H, W) with the channels as its depth."""
    if len(call.in_shapes[0]) != 4:
        raise UntranslatableCall('an input that is not (N, C, H, W)')
    n = 2 * call.function.half_n + 1
    volume, = builder.node('Unsqueeze', [call.inputs[0], builder.int64s([1])])
    ones = builder.constant(numpy.ones((1, 1, n, 1, 1)), call.dtype)
    half = call.function.half_n
    summed, = builder.node('Conv', [volume, ones], kernel_shape=[n, 1, 1],
                           pads=[half, 0, 0, half, 0, 0])
    builder.node('Squeeze', [summed, builder.int64s([1])], call.outputs)


def _max_pooling(builder, call, with_indexes=False):
    """MaxPool; ``with_indexes`` pads the input to the whole canvas first, so that the
    indexes ONNX gives are flat positions in the canvas (see ``_upsampling``)."""
    window = call.function.window
    insize, outsize = call.in_shapes[0][2:], call.out_shapes[0][2:]
    end = _end_pads(insize, outsize, window.ksize, window.stride, window.pad)
    attributes = {'kernel_shape': list(window.ksize), 'strides': list(window.stride)}
    if not with_indexes:
        builder.node('MaxPool', call.inputs, call.outputs, pads=list(window.pad) + end,
                     **attributes)
        return None
    pads = [0, 0] + list(window.pad) + [0, 0] + end
    canvas, = builder.node('Pad', [call.inputs[0], builder.int64s(pads),
                                   builder.constant(-numpy.inf, call.dtype)])
    indexes = builder.fresh('max_indexes')
    builder.node('MaxPool', [canvas], call.outputs + [indexes], **attributes)
    return indexes


def _average_pooling(builder, call):
    window = call.function.window
    builder.node('AveragePool', call.inputs, call.outputs, kernel_shape=list(window.ksize),
                 strides=list(window.stride), pads=list(window.pad) * 2,
                 count_include_pad=int(call.function.pad_value is not None))


def _dynamic_size(builder, x, spatial):
    """(N, C) of ``x`` read at run time followed by the fixed ``spatial`` size."""
    shape, = builder.node('Shape', [x])
    batch_channels, = builder.node('Slice', [shape, builder.int64s([0]), builder.int64s([2])])
    return builder.node('Concat', [batch_channels, builder.int64s(spatial)], axis=0)[0]


def upsampling(builder, call, indexes):
    """SegNet's unpooling, given the ONNX indexes of the matching max pooling: scatter
    into the pooling's canvas with MaxUnpool, then cut the canvas to the output."""
    f = call.function
    window, outsize = f.window, f.outsize
    pooled = call.in_shapes[0][2:]
    canvas_size = [(o - 1) * s + k for o, s, k in zip(pooled, window.stride, window.ksize)]
    canvas_size = [max(c, n + 2 * p) for c, n, p in zip(canvas_size, outsize, window.pad)]
    canvas, = builder.node('MaxUnpool', [call.inputs[0], indexes,
                                         _dynamic_size(builder, call.inputs[0], canvas_size)],
                           kernel_shape=list(window.ksize), strides=list(window.stride))
    starts = list(window.pad)
    ends = [p + o for p, o in zip(window.pad, outsize)]
    builder.node('Slice', [canvas, builder.int64s(starts), builder.int64s(ends),
                           builder.int64s([2, 3])], call.outputs)


# (mode, align_corners) -> Resize attributes giving the same sampling (see
# resize_images.interpolation_matrix; checked against onnxruntime by the tests)
_RESIZE_MODES = {
    ('bilinear', True): {'mode': 'linear', 'coordinate_transformation_mode': 'align_corners'},
    ('bilinear', False): {'mode': 'linear', 'coordinate_transformation_mode': 'half_pixel'},
    ('nearest', True): {'mode': 'nearest', 'coordinate_transformation_mode': 'align_corners',
                        'nearest_mode': 'round_prefer_ceil'},
    ('nearest', False): {'mode': 'nearest', 'coordinate_transformation_mode': 'asymmetric',
                         'nearest_mode': 'floor'},
}


def _resize_mode(matrix_h, matrix_w):
    """The (mode, align_corners) whose interpolation matrices these are, or None."""
    matrices = [numpy.asarray(m) for m in (matrix_h, matrix_w)]
    for mode, align_corners in _RESIZE_MODES:
        if all(numpy.allclose(m, resize_images.interpolation_matrix(
                m.shape[1], m.shape[0], mode, align_corners), atol=1e-6) for m in matrices):
            return mode, align_corners
    return None


def _resize(builder, call):
    """Resize with the attributes of the node's interpolation; other matrices (made by
    hand) become the two products ``A_h x A_w^T`` themselves."""
    f = call.function
    matrix_h, matrix_w = (numpy.asarray(m, dtype=call.dtype) for m in (f.matrix_h, f.matrix_w))
    if call.in_shapes[0][2:] == call.out_shapes[0][2:] and numpy.array_equal(
            matrix_h, numpy.eye(len(matrix_h))) and numpy.array_equal(
            matrix_w, numpy.eye(len(matrix_w))):
        builder.node('Identity', call.inputs, call.outputs)
        return
    found = _resize_mode(matrix_h, matrix_w)
    if found is None:
        rows, = builder.node('MatMul', [call.inputs[0], builder.constant(matrix_w.T, call.dtype)])
        builder.node('MatMul', [builder.constant(matrix_h, call.dtype), rows], call.outputs)
        return
    sizes = _dynamic_size(builder, call.inputs[0], [len(matrix_h), len(matrix_w)])
    builder.node('Resize', [call.inputs[0], '', '', sizes], call.outputs,
                 **_RESIZE_MODES[found])


TRANSLATIONS = {
    'Convolution2D': _convolution, 'Deconvolution2D': _deconvolution, 'Linear': _linear,
    'MatMul': _matmul, 'FixedBatchNormalization': _fixed_batch_normalization,
    '_ChannelWindowSum': _channel_window_sum, 'MaxPooling2D': _max_pooling,
    'AveragePooling2D': _average_pooling, 'ResizeImages': _resize,
}
