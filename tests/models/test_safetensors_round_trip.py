"""Every registered model's weights go through a .safetensors file and back unchanged.

Parametrised over ``list_models()``, as tests/models/test_registry_contract.py: each model
is built small with random weights (``cvzoo.testing.small_models``) and predicts one small
image (which also sets the parameters a first forward sizes). Its parameters and
persistent arrays are written with cvzoo's safetensors writer, the file is read back with
the ``safetensors`` package itself (every array, scalars such as a batch norm's ``N``
included, keeps its shape, dtype and values), and ``get_model(name, pretrained_model=
file)``, built from another seed, predicts the image exactly as the original did.

The models with the largest weights (VGG-16's fully connected layers, SSD512, the v2
R-CNNs; 10 to 25 s each on 2 busy CPU cores) are left to the slow run; the rest take
about two minutes (one of CPU time).
"""

import inspect

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.core.serializers import dictionary
from cvzoo.models import list_models
from cvzoo.testing import small_models

LOW_SCORE_THRESH = 0.005  # as the contract test: random weights still give detections
SLOW = {'vgg16', 'faster_rcnn_vgg16', 'ssd512', 'fasterrcnn_resnet50_fpn_v2',
        'maskrcnn_resnet50_fpn_v2'}


def _cases():
    for name in list_models():
        yield pytest.param(name, id=name, marks=[pytest.mark.slow] if name in SLOW else [])


def _arrays(model):
    serializer = dictionary.DictionarySerializer()
    model.serialize(serializer)
    return {name: backend.to_numpy(value) for name, value in serializer.target.items()}


def _predict(task, model, img):
    if task in small_models.FG_CLASS_TASKS:
        model.use_preset('evaluate')
        model.score_thresh = LOW_SCORE_THRESH
    return model.predict([img])


def _loading_overrides(name, model):
    """Constructor arguments that a weight file alone does not carry.

    A Darknet cfg model reads a weights-only file as its cfg's heads (and re-makes them
    at random for another ``n_fg_class``), so its file is written with the cfg's
    classes. The torchvision ports set their batch norms' eps to ~0 for a loaded file
    (as torchvision's weights need); the random model keeps 1e-5.
    """
    overrides = {}
    if name in small_models.NEEDS_CFG:
        overrides['n_fg_class'] = None
    if 'bn_eps' in inspect.signature(type(model)).parameters:  # torchvision's ResNets
        overrides['bn_eps'] = next(link.eps for link in model.extractor.base.links()
                                   if hasattr(link, 'eps'))
    return overrides


def _assert_same_outputs(got, expected, where='output'):
    if isinstance(expected, (list, tuple)):
        assert len(got) == len(expected), where
        for i, (mine, theirs) in enumerate(zip(got, expected)):
            _assert_same_outputs(mine, theirs, f'{where}[{i}]')
        return
    numpy.testing.assert_array_equal(numpy.asarray(got), numpy.asarray(expected),
                                     err_msg=where)


@pytest.mark.parametrize('name', _cases())
def test_weights_round_trip_through_safetensors(name, build_small_model, tmp_path):
    safetensors_numpy = pytest.importorskip('safetensors.numpy')
    from cvzoo.models.weights.converters import safetensors_file

    cfg_classes = {'n_fg_class': None} if name in small_models.NEEDS_CFG else {}
    task, model = build_small_model(name, **cfg_classes)
    img = numpy.random.RandomState(0).uniform(0, 255, (3, 48, 64)).astype(numpy.float32)
    expected_output = _predict(task, model, img)
    path = tmp_path / f'{name}.safetensors'
    safetensors_file.save_safetensors(path, model)

    written = safetensors_numpy.load_file(str(path))
    expected = _arrays(model)
    assert sorted(written) == sorted(expected)
    for key, array in expected.items():
        assert (written[key].shape, written[key].dtype) == (array.shape, array.dtype), key
        numpy.testing.assert_array_equal(written[key], array, err_msg=key)

    _, loaded = build_small_model(name, seed=1, pretrained_model=str(path),
                                  **_loading_overrides(name, model))
    _assert_same_outputs(_predict(task, loaded, img), expected_output)
