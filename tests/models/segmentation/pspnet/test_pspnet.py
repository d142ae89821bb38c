"""Tests of PSPNet: shapes, predict(), head re-make, ChainerCV weights, zoo entries."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.segmentation.pspnet import dilated_resnet, pspnet
from cvzoo.testing import assert_is_semantic_segmentation_model

INPUT_SIZE = 48  # the smallest window: feat_size 6, the 6x6 level pools 1x1 windows


@pytest.fixture(scope='module')
def model():
    numpy.random.seed(0)  # NOTE: the same random weights whatever ran before
    return pspnet.PSPNetResNet50(n_class=5, input_size=INPUT_SIZE)


def _forward(model, x):
    with config.using_config('train', False), config.no_backprop_mode():
        return model(x)


def test_forward_shapes_and_feature_stride(model, rng):
    x = rng.uniform(-100, 100, (2, 3, 48, 56)).astype(numpy.float32)
    with config.using_config('train', False), config.no_backprop_mode():
        res4, res5 = model.extractor(x)
        y = model(x)
    # NOTE: pool1 covers every pixel (cover_all), so even sizes gain one: 48 -> 24 -> 13 -> 7.
    assert res4.shape == (2, 1024, 7, 8) and res5.shape == (2, 2048, 7, 8)
    assert y.shape == (2, 5, 48, 56) and y.dtype == numpy.float32


def test_predict_contract_small_and_large_images(model, rng):
    # NOTE: 30x40 fits the 48x48 window (centred canvas); 50x67 is tiled (2 x 2 windows).
    imgs = [rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for size in ((30, 40), (50, 67))]
    assert_is_semantic_segmentation_model(model, imgs, 5)


def test_predict_of_an_image_of_the_window_size_is_the_forward(model, rng):
    img = rng.uniform(0, 255, (3, 48, 48)).astype(numpy.float32)
    model.flip = False
    try:
        label = model.predict([img])[0]
    finally:
        model.flip = True
    x = (img - numpy.array(pspnet.presets.MEAN, numpy.float32)[:, None, None])[None]
    numpy.testing.assert_array_equal(label, _forward(model, x).array[0].argmax(axis=0))


def test_multiscale_predict_averages_the_scales(model, rng):
    img = rng.uniform(0, 255, (3, 40, 44)).astype(numpy.float32)
    with config.using_config('train', False), config.no_backprop_mode():
        single = model.scores(img)
        small = pspnet._resize(img, (30, 33), align_corners=False)
        back = pspnet._resize(model.scores(small), (40, 44), align_corners=True)
        model.scales = (1.0, 0.75)
        try:
            both = model.scores(img)
        finally:
            model.scales = None
    assert both.shape == single.shape == (5, 40, 44)
    numpy.testing.assert_allclose(both, (single + back) / 2, rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(both.sum(axis=0), 1, rtol=1e-4)


def test_dilated_resnet_output_stride_on_odd_sizes():
    # NOTE: conv1_1 (stride 2, pad 1), pool1 (3x3, stride 2, pad 1, cover_all), res3
    # (stride 2): 713 -> 357 -> 179 -> 90, ChainerCV's 90x90 Cityscapes features.
    net = dilated_resnet.DilatedResNet(50)
    assert net.layer_names == ['conv1_1', 'conv1_2', 'conv1_3', 'pool1', 'res2', 'res3',
                               'res4', 'res5']
    assert net.res4.a.conv2.conv.dilate == 2 and net.res5.b2.conv2.conv.dilate == 4
    net.pick = 'res3'
    x = numpy.zeros((1, 3, 65, 33), numpy.float32)
    assert _forward(net, x).shape == (1, 512, 9, 5)


def test_reset_head_and_argument_errors(model):
    head = model.head_conv2
    model.reset_head(3)
    try:
        assert model.n_class == 3 and model.head_conv2.W.shape == (3, 512, 1, 1)
    finally:
        model.head_conv2 = head
        model.n_class = 5
    with pytest.raises(ValueError, match='n_class'):
        model.reset_head(0)
    with pytest.raises(ValueError, match='n_class'):
        pspnet.PSPNetResNet50()
    with pytest.raises(ValueError, match='input_size'):
        pspnet.PSPNetResNet50(n_class=2, input_size=40)  # NOTE: 40 // 8 < 6
    with pytest.raises(ValueError, match='scales'):
        pspnet.PSPNetResNet50(n_class=2, input_size=48, scales=(0,))


def _chainercv_conv_bn(prefix, out_channels, in_channels, ksize, with_n=True):
    shapes = {f'{prefix}/conv/W': (out_channels, in_channels, ksize, ksize)}
    shapes.update({f'{prefix}/bn/{leaf}': (out_channels,)
                   for leaf in ('gamma', 'beta', 'avg_mean', 'avg_var')})
    if with_n:
        shapes[f'{prefix}/bn/N'] = ()
    return shapes


def chainercv_pspnet_shapes(n_layer, n_class, with_n=True):
    """The keys and shapes of ChainerCV's PSPNetResNet{50,101} .npz, written out from its
    architecture (deep stem, bottleneck stages, 4 pyramid branches, 2 head layers)."""
    shapes = {}
    for name, out_channels, in_channels in (('conv1_1', 64, 3), ('conv1_2', 64, 64),
                                            ('conv1_3', 128, 64)):
        shapes.update(_chainercv_conv_bn(f'extractor/{name}', out_channels, in_channels, 3,
                                         with_n))
    in_channels = 128
    n_blocks = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}[n_layer]
    for stage, n_block in enumerate(n_blocks):
        mid, out = 64 * 2 ** stage, 256 * 2 ** stage
        for k in range(n_block):
            block = f'extractor/res{stage + 2}/' + ('a' if k == 0 else f'b{k}')
            first_in = in_channels if k == 0 else out
            for conv, (o, i, ksize) in {'conv1': (mid, first_in, 1), 'conv2': (mid, mid, 3),
                                        'conv3': (out, mid, 1)}.items():
                shapes.update(_chainercv_conv_bn(f'{block}/{conv}', o, i, ksize, with_n))
            if k == 0:
                shapes.update(_chainercv_conv_bn(f'{block}/residual_conv', out, in_channels, 1,
                                                 with_n))
        in_channels = out
    for k in range(4):
        shapes.update(_chainercv_conv_bn(f'ppm/{k}', 512, 2048, 1, with_n))
    shapes.update(_chainercv_conv_bn('head_conv1', 512, 4096, 3, with_n))
    shapes.update({'head_conv2/W': (n_class, 512, 1, 1), 'head_conv2/b': (n_class,)})
    return shapes


def _zeros(shapes):
    return {key: numpy.zeros(shape, numpy.int64 if key.endswith('/N') else numpy.float32)
            for key, shape in shapes.items()}


@pytest.mark.parametrize('with_n', [True, False], ids=['with_N', 'without_N'])
def test_convert_consumes_every_chainercv_key(model, with_n):
    raw = _zeros(chainercv_pspnet_shapes(50, 5, with_n))
    arrays = model.convert_weights(raw, 'chainercv')
    assert set(raw) <= set(arrays)
    assert arrays['extractor/res5/b2/conv3/bn/gamma'].shape == (2048,)


def test_convert_names_every_bad_key(model):
    raw = _zeros(chainercv_pspnet_shapes(50, 5))
    del raw['extractor/res3/b1/conv2/conv/W']
    raw['aux_conv1/conv/W'] = numpy.zeros((512, 1024, 3, 3), numpy.float32)
    raw['head_conv2/W'] = numpy.zeros((19, 512, 1, 1), numpy.float32)
    with pytest.raises(errors.WeightLoadError) as info:
        model.convert_weights(raw, 'chainercv')
    message = str(info.value)
    for key in ('extractor/res3/b1/conv2/conv/W', 'aux_conv1/conv/W', 'head_conv2/W'):
        assert key in message
    with pytest.raises(ValueError, match='source'):
        model.convert_weights(raw, 'torch')


def test_load_a_chainercv_file_with_the_real_shapes_and_re_make_the_head(tmp_path, rng):
    shapes = chainercv_pspnet_shapes(50, 19)
    arrays = _zeros(shapes)
    key = 'extractor/res4/b5/conv2/conv/W'
    arrays[key] = rng.standard_normal(shapes[key]).astype(numpy.float32)
    numpy.savez(tmp_path / 'pspnet.npz', **arrays)
    model = pspnet.PSPNetResNet50(n_class=19, pretrained_model=str(tmp_path / 'pspnet.npz'),
                                  input_size=INPUT_SIZE)
    numpy.testing.assert_array_equal(model.extractor.res4.b5.conv2.conv.W.array, arrays[key])
    model.reset_head(4)
    assert model.head_conv2.W.shape == (4, 512, 1, 1) and model.n_class == 4


def test_resnet101_keys_are_all_consumed():
    model = pspnet.PSPNetResNet101(n_class=19, input_size=INPUT_SIZE)
    raw = _zeros(chainercv_pspnet_shapes(101, 19))
    assert set(model.convert_weights(raw, 'chainercv')) == set(raw)


ENTRIES = [(cls, key) for cls in (pspnet.PSPNetResNet50, pspnet.PSPNetResNet101)
           for key in cls.weights]


@pytest.mark.parametrize('cls, key', ENTRIES, ids=[f'{c.__name__}-{k}' for c, k in ENTRIES])
def test_weights_entries(cls, key):
    entry = cls.weights[key]
    assert zoo.schema_problems(entry) == []
    assert entry.source_format == 'chainercv_npz' and entry.sha256 == zoo.UNPUBLISHED
    expected = {'cityscapes': (19, (713, 713), 'cityscapes_val'),
                'ade20k': (150, (473, 473), 'ade20k_val')}[key]
    assert (entry.n_class, entry.preset.size, entry.reported.dataset) == expected
    assert entry.preset.mean == (123.68, 116.779, 103.939) and entry.preset.std == (1, 1, 1)
    n_layer = 50 if cls is pspnet.PSPNetResNet50 else 101
    assert entry.url.endswith('.npz') and f'pspnet_resnet{n_layer}_{key}_' in entry.url
    assert set(zoo.list_models('semantic_segmentation')) >= {'pspnet_resnet50',
                                                             'pspnet_resnet101'}
