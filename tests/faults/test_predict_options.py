"""predict()'s cuda_graph and dtype options it cannot take: one UsageError naming the
argument, raised before any image is read."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.models.common import network_runtime
from cvzoo.testing.small_models import build_small_model


def _classifier():
    return build_small_model('small_cnn')[1]


def _image():
    return numpy.zeros((3, 32, 32), numpy.float32)


def test_cuda_graph_on_the_cpu_is_a_usage_error_before_any_image_is_read(tmp_path):
    model = _classifier()
    with pytest.raises(errors.UsageError, match=r"cuda_graph=True: .* is on cpu.*to_device"):
        model.predict([str(tmp_path / 'missing.jpg')], cuda_graph=True)


@pytest.mark.parametrize('kwargs, match', [
    ({'dtype': 'int8'}, r"dtype: expected one of \('float32', 'bfloat16', 'float16'\), got"),
    ({'dtype': numpy.float16}, 'dtype: expected one of'),
    ({'cuda_graph': 'yes'}, "cuda_graph: expected True or False, got 'yes'"),
])
def test_wrong_options_name_the_argument(kwargs, match):
    model = _classifier()
    with pytest.raises(errors.UsageError, match=match):
        model.predict([_image()], **kwargs)


def test_options_a_network_cannot_take_are_refused():
    pytest.importorskip('onnxruntime')
    model = _classifier()
    with pytest.raises(errors.UsageError, match="dtype='float16': only with runtime='cvzoo'"):
        model.predict([_image()], runtime='onnxruntime', dtype='float16')


def test_a_detector_that_feeds_its_network_more_than_the_batch_refuses_them():
    model = build_small_model('faster_rcnn_vgg16')[1]
    with pytest.raises(errors.UsageError, match=r"dtype='bfloat16': FasterRCNNVGG16 runs"):
        network_runtime.check_options(model, dtype='bfloat16')
