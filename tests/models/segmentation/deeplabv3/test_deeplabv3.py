"""Tests of DeepLabV3-ResNet50/101, DeepLabHead and ASPP: shapes, branches, weights."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.segmentation.deeplabv3 import deeplabv3
from cvzoo.models.segmentation.deeplabv3.aspp import ASPP
from cvzoo.testing import assert_is_semantic_segmentation_model
from tests.helpers import segmenter_layout


def _test_mode(call, *args):
    with config.using_config('train', False), config.no_backprop_mode():
        return call(*args)


@pytest.fixture(scope='module')
def model():
    import dataclasses

    net = deeplabv3.DeepLabV3ResNet50(n_class=6)
    net.preset = dataclasses.replace(net.preset, size=48)
    return net


def test_aspp_branches_and_rates(rng):
    aspp = ASPP(8, (1, 2, 3), out_channels=4)
    assert [aspp[f'atrous_conv{k}'].conv.dilate for k in (1, 2, 3)] == [1, 2, 3]
    x = rng.standard_normal((2, 8, 9, 11)).astype(numpy.float32)
    assert _test_mode(aspp, x).shape == (2, 4, 9, 11)
    # NOTE: a projection that reads only the fifth (image pooling) branch must give a
    # spatially constant map: the branch order is torchvision's.
    W = numpy.zeros((4, 20, 1, 1), numpy.float32)
    W[numpy.arange(4), 16 + numpy.arange(4)] = 1
    aspp.project.conv.W.array[...] = W
    aspp.image_pooling.bn.beta.array[...] = 1  # keep the ReLU open
    y = _test_mode(aspp, x).array
    numpy.testing.assert_allclose(y, numpy.broadcast_to(y[:, :, :1, :1], y.shape), rtol=1e-6)
    W[:] = 0
    W[numpy.arange(4), 4 + numpy.arange(4)] = 1  # atrous_conv1: varies over the map
    aspp.project.conv.W.array[...] = W
    y = _test_mode(aspp, x).array
    assert not numpy.allclose(y, y[:, :, :1, :1])


SIZES = {'square': (48, 48), 'odd': (37, 53), 'tiny': (3, 5)}


@pytest.mark.parametrize('size', list(SIZES.values()), ids=list(SIZES))
def test_scores_at_the_input_size(model, size, rng):
    x = rng.standard_normal((2, 3) + size).astype(numpy.float32)
    main, aux = _test_mode(model.forward_with_aux, x)
    assert main.shape == aux.shape == (2, 6) + size and main.dtype == numpy.float32


def test_predict_contract(model, rng):
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for size in ((48, 64), (31, 17))]
    imgs.append(rng.integers(0, 255, (20, 30, 3), dtype=numpy.uint8))
    assert_is_semantic_segmentation_model(model, imgs, 6)
    x = model.prepare(imgs[0])
    assert x.shape == (3, 48, 64)
    expected = _test_mode(model, x[None]).array[0].argmax(axis=0)
    numpy.testing.assert_array_equal(model.predict(imgs[:1])[0], expected)


def test_reset_head(model):
    model.reset_head(2)
    assert model.classifier.classifier.W.shape == (2, 256, 1, 1)
    assert model.aux_classifier.classifier.W.shape == (2, 256, 1, 1)
    assert _test_mode(model, numpy.zeros((1, 3, 16, 16), numpy.float32)).shape == (1, 2, 16, 16)
    model.reset_head(6)


DEEPLAB_PAIRS = {
    'backbone/res5/b2/conv2/conv/W': 'backbone.layer4.2.conv2.weight',
    'classifier/aspp/conv/conv/W': 'classifier.0.convs.0.0.weight',
    'classifier/aspp/conv/bn/avg_mean': 'classifier.0.convs.0.1.running_mean',
    'classifier/aspp/atrous_conv2/conv/W': 'classifier.0.convs.2.0.weight',
    'classifier/aspp/atrous_conv3/bn/gamma': 'classifier.0.convs.3.1.weight',
    'classifier/aspp/image_pooling/conv/W': 'classifier.0.convs.4.1.weight',
    'classifier/aspp/image_pooling/bn/avg_var': 'classifier.0.convs.4.2.running_var',
    'classifier/aspp/project/conv/W': 'classifier.0.project.0.weight',
    'classifier/aspp/project/bn/beta': 'classifier.0.project.1.bias',
    'classifier/conv/conv/W': 'classifier.1.weight',
    'classifier/conv/bn/gamma': 'classifier.2.weight',
    'classifier/classifier/W': 'classifier.4.weight',
    'classifier/classifier/b': 'classifier.4.bias',
    'aux_classifier/conv/conv/W': 'aux_classifier.0.weight',
    'aux_classifier/classifier/W': 'aux_classifier.4.weight',
}


def _check_pairs(net, values, pairs):
    for path, torch_key in pairs.items():
        *names, leaf = path.split('/')
        target = net
        for name in names:
            target = target[name]
        array = getattr(target, leaf)
        assert numpy.all(getattr(array, 'array', array) == values[torch_key]), path


def test_load_a_torchvision_file_with_the_real_shapes(tmp_path):
    shapes = segmenter_layout.segmenter_shapes(50, 'deeplab')
    values = segmenter_layout.write_constant_pth(tmp_path / 'deeplabv3.pth', shapes)
    net = deeplabv3.DeepLabV3ResNet50(n_class=21, pretrained_model=tmp_path / 'deeplabv3.pth')
    _check_pairs(net, values, DEEPLAB_PAIRS)
    assert sum(p.size for p in net.params()) == 42004074  # torchvision's num_params


def test_an_fcn_file_is_refused_with_every_key_named(tmp_path):
    segmenter_layout.write_constant_pth(tmp_path / 'fcn.pth',
                                        segmenter_layout.segmenter_shapes(50, 'fcn'))
    with pytest.raises(errors.WeightLoadError) as info:
        deeplabv3.DeepLabV3ResNet50(n_class=21, pretrained_model=tmp_path / 'fcn.pth')
    message = str(info.value)
    for part in ('classifier.0.convs.4.1.weight', 'classifier.2.running_var',
                 'classifier.0.weight', 'classifier.1.weight (512,) (expected (256, 256, 3, 3))'):
        assert part in message, message


@pytest.mark.slow
def test_load_deeplabv3_resnet101_with_the_real_shapes(tmp_path):
    values = segmenter_layout.write_constant_pth(tmp_path / 'd101.pth',
                                       segmenter_layout.segmenter_shapes(101, 'deeplab'))
    net = deeplabv3.DeepLabV3ResNet101(n_class=21, pretrained_model=tmp_path / 'd101.pth')
    _check_pairs(net, values, DEEPLAB_PAIRS)
    assert sum(p.size for p in net.params()) == 60996202


@pytest.mark.parametrize('cls', [deeplabv3.DeepLabV3ResNet50, deeplabv3.DeepLabV3ResNet101],
                         ids=['r50', 'r101'])
def test_entries(cls):
    entry = cls.weights['coco_voc']
    assert zoo.schema_problems(entry) == []
    assert entry.n_class == 21 and entry.convert_from == 'torchvision'
    assert entry.reported.metric == 'miou' and entry.url.endswith(entry.sha256 + '.pth')
