"""SSD300VGG16 weights: torchvision files (written here with torchvision's names and real
shapes, no torch needed), the COCO head layout, cvzoo .npz round trips, bad files."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core.serializers import npz
from cvzoo.datasets.coco.coco_label_names import coco_label_to_category_id
from cvzoo.models.detection.ssd import ssd_vgg16_torchvision as tv_ssd
from cvzoo.models.detection.ssd import torchvision_names
from tests.helpers import pth_writer

N_ANCHOR = (4, 6, 6, 6, 4, 4)


def _conv(state, prefix, out_channels, in_channels, ksize):
    state[f'{prefix}.weight'] = (out_channels, in_channels, ksize, ksize)
    state[f'{prefix}.bias'] = (out_channels,)


def torchvision_shapes(n_class=91):
    """name -> shape of torchvision's ssd300_vgg16 state_dict (VGG16 features, extra
    blocks, heads; the architecture of torchvision's models/detection/ssd.py)."""
    state = {'backbone.scale_weight': (512,)}
    in_channels = 3
    for index, channels in zip((0, 2, 5, 7, 10, 12, 14, 17, 19, 21),
                               (64, 64, 128, 128, 256, 256, 256, 512, 512, 512)):
        _conv(state, f'backbone.features.{index}', channels, in_channels, 3)
        in_channels = channels
    for index in (1, 3, 5):
        _conv(state, f'backbone.extra.0.{index}', 512, 512, 3)
    _conv(state, 'backbone.extra.0.7.1', 1024, 512, 3)
    _conv(state, 'backbone.extra.0.7.3', 1024, 1024, 1)
    in_channels = 1024
    for block, (mid, out) in enumerate(((256, 512), (128, 256), (128, 256), (128, 256))):
        _conv(state, f'backbone.extra.{block + 1}.0', mid, in_channels, 1)
        _conv(state, f'backbone.extra.{block + 1}.2', out, mid, 3)
        in_channels = out
    for k, (channels, n_anchor) in enumerate(zip((512, 1024, 512, 256, 256, 256), N_ANCHOR)):
        _conv(state, f'head.classification_head.module_list.{k}', n_anchor * n_class,
              channels, 3)
        _conv(state, f'head.regression_head.module_list.{k}', n_anchor * 4, channels, 3)
    return state


def test_parameter_count_is_torchvisions():
    # torchvision's docs: SSD300_VGG16_Weights.COCO_V1 num_params 35,641,826
    count = sum(int(numpy.prod(shape)) for shape in torchvision_shapes().values())
    assert count == 35_641_826
    assert set(torchvision_shapes()) == set(torchvision_names.NAMES)


def test_coco_column_order():
    order = torchvision_names.COCO_COLUMN_ORDER
    assert sorted(order) == list(range(91)) and order[0] == 0
    assert order[1:81] == tuple(coco_label_to_category_id)
    assert torchvision_names.COCO_UNUSED_IDS == (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)


@pytest.fixture(scope='module')
def coco_file(tmp_path_factory):
    """A torchvision-named file with the real shapes and random values, and its arrays."""
    rng = numpy.random.default_rng(5)
    arrays = {key: rng.standard_normal(shape, dtype=numpy.float32)
              for key, shape in torchvision_shapes().items()}
    path = tmp_path_factory.mktemp('ssd_tv') / 'ssd300_vgg16.pth'
    pth_writer.write_state_dict(path, arrays)
    return path, arrays


def test_torchvision_file_loads_every_key(coco_file):
    path, arrays = coco_file
    model = tv_ssd.SSD300VGG16(pretrained_model=str(path))
    assert (model.n_fg_class, model.n_unused_class, model.label_names) == (80, 10, None)
    for torchvision_key, cvzoo_key in torchvision_names.NAMES.items():
        if '.classification_head.' not in torchvision_key:
            numpy.testing.assert_array_equal(_param(model, cvzoo_key), arrays[torchvision_key])
    conf_b = arrays['head.classification_head.module_list.2.bias'].reshape(6, 91)
    ours = model.multibox.conf[2].b.array.reshape(6, 91)
    # label 11 ('stop sign') is COCO category 13: column 12 (after the background)
    numpy.testing.assert_array_equal(ours[:, 12], conf_b[:, 13])
    numpy.testing.assert_array_equal(ours[:, 0], conf_b[:, 0])
    numpy.testing.assert_array_equal(ours[:, 81:], conf_b[:, [12, 26, 29, 30, 45, 66, 68, 69,
                                                             71, 83]])
    conf_W = arrays['head.classification_head.module_list.0.weight'].reshape(4, 91, 512, 3, 3)
    numpy.testing.assert_array_equal(
        model.multibox.conf[0].W.array.reshape(4, 91, 512, 3, 3)[:, 1:81],
        conf_W[:, list(coco_label_to_category_id)])


@pytest.mark.slow
def test_coco_layout_through_npz_and_a_new_class_count(coco_file, tmp_path):
    path, arrays = coco_file
    model = tv_ssd.SSD300VGG16(pretrained_model=str(path))
    # the same model from a cvzoo .npz: the file's head layout is read before building
    saved = tmp_path / 'ssd300_vgg16_coco.npz'
    npz.save_npz(str(saved), model, compression=False)
    again = tv_ssd.SSD300VGG16(pretrained_model=str(saved))
    assert (again.n_fg_class, again.n_unused_class) == (80, 10)
    numpy.testing.assert_array_equal(again.multibox.conf[4].W.array,
                                     model.multibox.conf[4].W.array)
    # another class count re-makes the heads; the extractor keeps the file's weights
    fine_tune = tv_ssd.SSD300VGG16(n_fg_class=20, pretrained_model=str(path))
    assert (fine_tune.n_fg_class, fine_tune.n_unused_class) == (20, 0)
    assert fine_tune.multibox.conf[0].b.shape == (4 * 21,)
    numpy.testing.assert_array_equal(fine_tune.extractor.conv9_2.W.array,
                                     arrays['backbone.extra.2.2.weight'])


def _param(model, key):
    link = model
    *path, leaf = key.split('/')
    for name in path:
        link = link[int(name)] if name.isdigit() else getattr(link, name)
    return getattr(link, leaf).array


def test_random_model_round_trip_through_npz(tmp_path):
    model = tv_ssd.SSD300VGG16(n_fg_class=3)
    saved = tmp_path / 'three.npz'
    npz.save_npz(str(saved), model, compression=False)
    again = tv_ssd.SSD300VGG16(pretrained_model=str(saved))
    assert (again.n_fg_class, again.n_unused_class) == (3, 0)
    numpy.testing.assert_array_equal(again.multibox.loc[1].W.array,
                                     model.multibox.loc[1].W.array)


def test_other_torchvision_class_counts_keep_their_order(rng):
    arrays = {key: rng.standard_normal(shape, dtype=numpy.float32)
              for key, shape in torchvision_shapes(n_class=21).items()
              if key.startswith('head.')}
    converted, n_unused_class = torchvision_names.convert_torchvision(arrays)
    assert n_unused_class == 0 and len(converted) == len(arrays)
    assert converted['multibox/conf/1/W'] is arrays[
        'head.classification_head.module_list.1.weight']


def test_wrong_file_names_every_bad_key(tmp_path):
    shapes = torchvision_shapes()
    arrays = {key: numpy.zeros(1, numpy.float32) for key in shapes}
    arrays['backbone.features.3.weight'] = numpy.zeros(1, numpy.float32)
    arrays['backbone.extra.5.0.weight'] = numpy.zeros(1, numpy.float32)
    arrays['head.classification_head.module_list.6.bias'] = numpy.zeros(1, numpy.float32)
    path = tmp_path / 'wrong.pth'
    pth_writer.write_state_dict(path, arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        tv_ssd.SSD300VGG16(pretrained_model=str(path))
    message = str(info.value)
    for key in ('backbone.features.3.weight', 'backbone.extra.5.0.weight',
                'head.classification_head.module_list.6.bias'):
        assert key in message
    assert '3 keys' in message and 'backbone.features.0.weight' not in message


def test_missing_and_misshaped_keys_are_named_together(tmp_path):
    arrays = {key: numpy.zeros(1, numpy.float32) for key in torchvision_shapes()}
    del arrays['backbone.extra.3.2.bias']
    path = tmp_path / 'missing.pth'
    pth_writer.write_state_dict(path, arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        tv_ssd.SSD300VGG16(pretrained_model=str(path))
    message = str(info.value)
    assert 'extractor/conv10_2/b' in message and 'extractor/conv1_1/W' in message


def test_unknown_source_is_refused():
    with pytest.raises(ValueError, match='source'):
        tv_ssd.SSD300VGG16(n_fg_class=1).convert_weights({}, 'chainercv')
