"""predict(..., runtime='onnxruntime') of every registered model against the default path.

Each classifier, semantic segmenter and detector is built small with random weights
(cvzoo.testing.small_models), its batch normalisations given the statistics of the
test images (tests/export/batch_statistics.py), and predict() runs on two images of
different sizes with both runtimes: classifiers' probabilities agree to 1e-4,
segmenters' label maps are equal wherever cvzoo's best two classes are not within
1e-3 of each other, detectors' boxes (to 1e-4 of the image side), labels and scores
(to 1e-4) agree. Models that run only in cvzoo (their class's ``runtimes``) are listed with the
reason and refuse the runtime with a UsageError.
"""

import dataclasses

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo import errors
from cvzoo.core import backend, config
from cvzoo.models import get_model_class, list_models, model_info
from cvzoo.models.common import network_runtime
from tests.export import batch_statistics, same_detections

pytest.importorskip('onnxruntime')
pytest.importorskip('onnx')

TASKS = ('classification', 'semantic_segmentation', 'detection')
# classifiers run at this side unless their head fixes it (as in test_onnx_registry.py)
CLASSIFIER_SIDE = {'vgg16': 224, 'resnet152': 64, 'se_resnet152': 64}
DEFAULT_CLASSIFIER_SIDE = 32
# these models run only in cvzoo (their class's ``runtimes``), with the reason
CVZOO_ONLY = {
    'pspnet_resnet50': 'sliding windows and flips (pspnet.py)',
    'pspnet_resnet101': 'sliding windows and flips (pspnet.py)',
    'deeplab_v3plus_xception65': 'scales and flips (deeplab_v3_plus.py)',
    'retinanet_resnet50_fpn': 'the network takes the sizes too (torchvision_resnet_fpn.py)',
    'fasterrcnn_resnet50_fpn': 'a two-stage detector (torchvision_resnet_fpn.py)',
    'fasterrcnn_resnet50_fpn_v2': 'a two-stage detector (torchvision_resnet_fpn.py)',
    'faster_rcnn_vgg16': 'a two-stage detector (detect() crops RoIs)',
    'faster_rcnn_fpn_resnet50': 'a two-stage detector (detect() crops RoIs)',
    'faster_rcnn_fpn_resnet101': 'a two-stage detector (detect() crops RoIs)',
}
SLOW = {'vgg16', 'ssd512'}
TOL = 1e-4
MARGIN = 1e-3
IMAGE_SIZES = ((48, 64), (40, 56))


def _names():
    return sorted(name for name in set(list_models()) if model_info(name)['task'] in TASKS)


def _cases():
    for name in _names():
        if name not in CVZOO_ONLY:
            yield pytest.param(name, id=name,
                               marks=[pytest.mark.slow] if name in SLOW else [])


def _images():
    rng = numpy.random.RandomState(1)
    return [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in IMAGE_SIZES]


def _network_input(task, model, imgs):
    """The batch the model's network sees for ``imgs`` (the first image's size)."""
    prepared = [model.prepare(img) for img in imgs]
    if task == 'detection':
        return model.pad_batch(prepared)
    return numpy.stack([x for x in prepared if x.shape == prepared[0].shape])


def _small(task, model, name):
    if task == 'classification':
        side = CLASSIFIER_SIDE.get(name, DEFAULT_CLASSIFIER_SIDE)
        model.preset = dataclasses.replace(model.preset, size=side)
    if task == 'detection':
        model.use_preset('evaluate')
    return model


def _score_margins(model, img):
    """cvzoo's gap between the best two classes of each pixel, at the image's size."""
    with config.using_config('train', False), config.no_backprop_mode():
        score = model.forward(model.prepare(img)[None])
        score = F.resize_images(score, img.shape[1:], align_corners=False).array
    top = numpy.sort(backend.to_numpy(score)[0, :model.n_class], axis=0)
    return top[-1] - top[-2]


@pytest.mark.parametrize('name', _cases())
def test_onnxruntime_predict_matches_cvzoo(name, build_small_model):
    task, model = build_small_model(name)
    model = _small(task, model, name)
    imgs = _images()
    batch_statistics.set_batch_statistics(model, _network_input(task, model, imgs))
    want = model.predict(imgs)
    got = model.predict(imgs, runtime='onnxruntime')
    if task == 'classification':
        assert got.shape == want.shape and got.dtype == numpy.float32
        numpy.testing.assert_allclose(got, want, atol=TOL)
    elif task == 'semantic_segmentation':
        for i, img in enumerate(imgs):
            assert got[i].dtype == numpy.int32 and got[i].shape == img.shape[1:]
            clear = _score_margins(model, img) > MARGIN
            assert clear.mean() > 0.5, 'too few pixels with a clear best class'
            numpy.testing.assert_array_equal(got[i][clear], want[i][clear])
    else:
        sizes = [img.shape[1:] for img in imgs]
        n_detection = same_detections.assert_same_detections(want, got, sizes, TOL)
        assert n_detection > 0, 'no detection to compare: lower score_thresh'


def test_the_runtimes_of_every_model_are_declared():
    """Exactly the listed models run only in cvzoo; the others in every runtime."""
    for name in _names():
        want = ('cvzoo',) if name in CVZOO_ONLY else network_runtime.RUNTIMES
        assert tuple(network_runtime.runtimes_of(get_model_class(name))) == want, name


@pytest.mark.parametrize('name', sorted(CVZOO_ONLY))
def test_models_that_run_only_in_cvzoo_refuse_onnxruntime(name, build_small_model):
    _, model = build_small_model(name)
    with pytest.raises(errors.UsageError, match=type(model).__name__):
        model.predict(_images()[:1], runtime='onnxruntime')


@pytest.mark.parametrize('runtime', ['onnx', None, 'CVZOO'])
def test_unknown_runtime_is_named(runtime, build_small_model):
    _, model = build_small_model('small_cnn')
    with pytest.raises(errors.UsageError, match='runtime'):
        model.predict(_images(), runtime=runtime)
