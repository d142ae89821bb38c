"""Each function translation of cvzoo.export: a tiny graph exported and run by
onnxruntime on another input (batch 3, the dynamic batch axis) equals cvzoo's result."""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import config, links as L
from cvzoo.core.variable import Variable
from cvzoo.export import UnsupportedFunctionError, graph_trace, to_onnx

ort = pytest.importorskip('onnxruntime')
pytest.importorskip('onnx')

RNG = numpy.random.RandomState(0)


def _array(*shape):
    return RNG.standard_normal(shape).astype(numpy.float32)


W3 = _array(4, 3, 3, 3)
W_GROUPS = _array(6, 2, 3, 3)
W_DECONV = _array(3, 4, 4, 4)
W_LINEAR = _array(5, 48)
B4 = _array(4)
B5 = _array(5)
GAMMA, BETA, MEAN = _array(3), _array(3), _array(3)
VAR = numpy.abs(_array(3)) + 0.5
SLOPE = _array(3)
CONSTANT = _array(1, 3, 4, 4)


def _pool_unpool(x):
    y, indexes = F.max_pooling_2d(x, 2, 2, return_indices=True)
    return F.upsampling_2d(F.relu(y), indexes, 2, 2, outsize=x.shape[2:])


# name -> (function of one Variable, input shape)
CASES = {
    'convolution': (lambda x: F.convolution_2d(x, W3, B4, stride=2, pad=1), (3, 9, 9)),
    'convolution_dilate': (lambda x: F.convolution_2d(x, W3, pad=2, dilate=2), (3, 9, 9)),
    'convolution_groups': (
        lambda x: F.convolution_2d(F.concat([x, x], axis=1), W_GROUPS, groups=3), (3, 7, 7)),
    'convolution_cover_all': (
        lambda x: F.convolution_2d(x, W3, stride=2, cover_all=True), (3, 8, 8)),
    'deconvolution': (lambda x: F.deconvolution_2d(x, W_DECONV, stride=2, pad=1), (3, 5, 5)),
    'deconvolution_outsize': (
        lambda x: F.deconvolution_2d(x, W_DECONV, stride=2, pad=1, outsize=(11, 11)),
        (3, 5, 5)),
    'batch_normalization': (
        lambda x: F.fixed_batch_normalization(x, GAMMA, BETA, MEAN, VAR), (3, 4, 4)),
    'relu': (F.relu, (3, 4, 4)),
    'leaky_relu': (lambda x: F.leaky_relu(x, 0.1), (3, 4, 4)),
    'sigmoid': (F.sigmoid, (3, 4, 4)),
    'tanh': (F.tanh, (3, 4, 4)),
    'hard_swish': (F.hard_swish, (3, 4, 4)),
    'hard_sigmoid': (F.hard_sigmoid, (3, 4, 4)),
    'elu': (lambda x: F.elu(x, 0.5), (3, 4, 4)),
    'prelu': (lambda x: F.prelu(x, SLOPE), (3, 4, 4)),
    'relu6': (lambda x: F.relu6(x * 4.0), (3, 4, 4)),
    'swish': (lambda x: F.swish(x, 1.5), (3, 4, 4)),
    'max_pooling': (lambda x: F.max_pooling_2d(x, 3, 2, 1), (3, 8, 8)),
    'max_pooling_cover_all': (lambda x: F.max_pooling_2d(x, 3, 2, cover_all=True), (3, 8, 8)),
    'average_pooling': (lambda x: F.average_pooling_2d(x, 3, 2, 1), (3, 7, 7)),
    'average_pooling_pad_none': (
        lambda x: F.average_pooling_2d(x, 3, 2, 1, pad_value=None), (3, 7, 7)),
    'global_average_pooling': (F.global_average_pooling_2d, (3, 5, 6)),
    'upsampling': (_pool_unpool, (3, 6, 8)),
    'resize_bilinear_corners': (lambda x: F.resize_images(x, (9, 13)), (3, 5, 6)),
    'resize_bilinear_half_pixel': (
        lambda x: F.resize_images(x, (9, 4), align_corners=False), (3, 5, 6)),
    'resize_nearest_corners': (
        lambda x: F.resize_images(x, (11, 3), mode='nearest'), (3, 5, 6)),
    'resize_nearest': (
        lambda x: F.resize_images(x, (9, 13), mode='nearest', align_corners=False), (3, 5, 6)),
    'upsample_nearest': (lambda x: F.upsample_nearest_2d(x, 2), (3, 3, 4)),
    'concat_split': (
        lambda x: F.concat(F.split_axis(x, [1, 3], axis=1)[::-1], axis=1), (4, 3, 3)),
    'reshape_transpose': (
        lambda x: F.transpose(F.reshape(x, (x.shape[0], 3, 8)), (0, 2, 1)), (3, 4, 2)),
    'get_item': (lambda x: x[:, 1:, ::2, None, -1], (3, 4, 5)),
    'get_item_negative_step': (lambda x: x[..., ::-1, 1], (3, 4, 5)),
    'pad': (lambda x: F.pad(x, ((0, 0), (0, 0), (1, 2), (0, 1)), 'constant'), (3, 4, 4)),
    'linear': (lambda x: F.linear(x, W_LINEAR, B5), (3, 4, 4)),
    'matmul': (lambda x: F.matmul(x, x, transb=True), (4, 5)),
    'arithmetic': (lambda x: (x + CONSTANT) * x - x / (x * x + 1.0) + 2.0 ** x, (3, 4, 4)),
    'arithmetic_constants': (lambda x: abs(3.0 - x) / 2.0 - 1.0 / (x * x + 1.0), (3, 4, 4)),
    'pow': (lambda x: (x * x + 1.0) ** 0.75 + (x * x) ** (x * x + 1.0), (3, 4, 4)),
    'exp_log_sqrt': (lambda x: F.log(F.exp(x) + 1.0) + F.sqrt(x * x), (3, 4, 4)),
    'softmax': (lambda x: F.softmax(x, axis=1), (3, 4, 4)),
    'log_softmax': (lambda x: F.log_softmax(x, axis=1), (3, 4, 4)),
    'lrn': (F.local_response_normalization, (7, 4, 4)),
    'normalize': (F.normalize, (3, 4, 4)),
    'sum_mean': (lambda x: F.sum(x, axis=(2, 3)) + F.mean(x, axis=1, keepdims=True)[:, :, 0, 0],
                 (3, 4, 4)),
    'maximum_clip': (lambda x: F.maximum(x, x * 0.5) + F.clip(x, -0.5, 0.5), (3, 4, 4)),
    'broadcast': (lambda x: F.broadcast_to(F.sum(x, axis=1, keepdims=True), x.shape) * x,
                  (3, 4, 4)),
}


def _run(path, x):
    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    return session.run(None, {'input': x})


def _forward(function, x):
    with config.using_config('train', False), config.no_backprop_mode():
        outputs = function(Variable(x, requires_grad=False))
        return [y.array for y in graph_trace.flatten_outputs(outputs)]


@pytest.mark.parametrize('name', sorted(CASES))
def test_function_matches_onnxruntime(name, tmp_path):
    function, shape = CASES[name]
    path = to_onnx(function, _array(1, *shape), str(tmp_path / 'f.onnx'))
    x = _array(3, *shape)
    for got, want in zip(_run(path, x), _forward(function, x), strict=True):
        numpy.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_link_parameters_are_named_initializers(tmp_path):
    import onnx

    model = L.Convolution2D(3, 4, 3)
    path = to_onnx(model, _array(1, 3, 5, 5), str(tmp_path / 'conv.onnx'))
    graph = onnx.load(path).graph
    assert {i.name for i in graph.initializer} == {'W', 'b'}
    assert [i.name for i in graph.input] == ['input']
    assert [o.name for o in graph.output] == ['output']
    assert graph.input[0].type.tensor_type.shape.dim[0].dim_param == 'batch'


def test_several_outputs_are_numbered(tmp_path):
    path = to_onnx(lambda x: (F.relu(x), [F.sigmoid(x)]), _array(1, 3),
                   str(tmp_path / 'two.onnx'))
    x = _array(2, 3)
    relu, sigmoid = _run(path, x)
    numpy.testing.assert_allclose(relu, numpy.maximum(x, 0))
    numpy.testing.assert_allclose(sigmoid, 1 / (1 + numpy.exp(-x)), rtol=1e-6)


def test_unsupported_function_is_named(tmp_path):
    rois = numpy.array([[0, 0, 3, 3]], numpy.float32)
    indices = numpy.zeros(1, numpy.int32)

    def crop(x):
        return F.roi_pooling_2d(x, rois, indices, 2, 1.0)

    with pytest.raises(UnsupportedFunctionError, match='RoIPooling2D') as info:
        to_onnx(crop, _array(1, 3, 4, 4), str(tmp_path / 'roi.onnx'))
    assert info.value.function_name == 'RoIPooling2D'


def test_output_computed_outside_the_graph_is_refused(tmp_path):
    with pytest.raises(ValueError, match='does not depend on the input'):
        to_onnx(lambda x: F.relu(x.array * 2), _array(1, 3), str(tmp_path / 'y.onnx'))


@pytest.mark.parametrize('opset', [13, 17])
def test_file_declares_the_oldest_ir_version_of_its_opset(opset, tmp_path):
    """onnxruntime releases older than the onnx package refuse its newest IR version
    (onnxruntime 1.30 reads IR 13 at most, onnx 1.23 writes 14 by default)."""
    import onnx  # noqa: PLC0415

    path = to_onnx(L.Linear(3, 2), _array(1, 3), str(tmp_path / 'linear.onnx'), opset=opset)
    proto = onnx.load(path)
    assert proto.ir_version == onnx.helper.find_min_ir_version_for(proto.opset_import)
    assert proto.ir_version < onnx.IR_VERSION
