"""torchvision Faster R-CNN FPN files (written here with torchvision's names and real
shapes, no torch needed) converted and loaded by FasterRCNNResNet50FPN."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.core.serializers import dictionary, npz
from cvzoo.datasets.coco.coco_label_names import coco_label_to_category_id
from cvzoo.models.detection.faster_rcnn import torchvision_fpn
from tests.helpers import pth_writer

UNUSED_IDS = (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)  # COCO's ids of no category


def _bn(prefix, n, state):
    for leaf in ('weight', 'bias', 'running_mean', 'running_var'):
        state[f'{prefix}.{leaf}'] = (n,)


def torchvision_shapes(new_names=False):
    """name -> shape of torchvision's fasterrcnn_resnet50_fpn state_dict (91 classes)."""
    state = {'backbone.body.conv1.weight': (64, 3, 7, 7)}
    _bn('backbone.body.bn1', 64, state)
    in_channels = 64
    for stage, (n_block, mid) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512))):
        for k in range(n_block):
            prefix = f'backbone.body.layer{stage + 1}.{k}'
            shapes = ((mid, in_channels, 1, 1), (mid, mid, 3, 3), (mid * 4, mid, 1, 1))
            for j, shape in enumerate(shapes):
                state[f'{prefix}.conv{j + 1}.weight'] = shape
                _bn(f'{prefix}.bn{j + 1}', shape[0], state)
            if k == 0:
                state[f'{prefix}.downsample.0.weight'] = (mid * 4, in_channels, 1, 1)
                _bn(f'{prefix}.downsample.1', mid * 4, state)
            in_channels = mid * 4
    inner = '.0' if new_names else ''
    for i, c in enumerate((256, 512, 1024, 2048)):
        state[f'backbone.fpn.inner_blocks.{i}{inner}.weight'] = (256, c, 1, 1)
        state[f'backbone.fpn.inner_blocks.{i}{inner}.bias'] = (256,)
        state[f'backbone.fpn.layer_blocks.{i}{inner}.weight'] = (256, 256, 3, 3)
        state[f'backbone.fpn.layer_blocks.{i}{inner}.bias'] = (256,)
    conv = 'conv.0.0' if new_names else 'conv'
    for name, shape in ((conv, (256, 256, 3, 3)), ('cls_logits', (3, 256, 1, 1)),
                        ('bbox_pred', (12, 256, 1, 1))):
        state[f'rpn.head.{name}.weight'] = shape
        state[f'rpn.head.{name}.bias'] = shape[:1]
    for name, shape in (('box_head.fc6', (1024, 256 * 7 * 7)), ('box_head.fc7', (1024, 1024)),
                        ('box_predictor.cls_score', (91, 1024)),
                        ('box_predictor.bbox_pred', (91 * 4, 1024))):
        state[f'roi_heads.{name}.weight'] = shape
        state[f'roi_heads.{name}.bias'] = shape[:1]
    return state


def test_parameter_count_is_torchvisions():
    # torchvision's docs: FasterRCNN_ResNet50_FPN_Weights.COCO_V1 num_params 41,755,286
    # (FrozenBatchNorm's weight and bias are buffers there, not parameters)
    shapes = torchvision_shapes()
    bn = {k.rsplit('.', 1)[0] for k in shapes if k.endswith('running_mean')}
    count = sum(int(numpy.prod(s)) for k, s in shapes.items() if k.rsplit('.', 1)[0] not in bn)
    assert count == 41_755_286


# NOTE: slow: a 41.8M-parameter file is written, converted and loaded twice (~12 s here).
@pytest.mark.slow
def test_real_shape_file_loads_every_key(tmp_path, rng):
    shapes = torchvision_shapes()
    arrays = {k: rng.standard_normal(s, dtype=numpy.float32) for k, s in shapes.items()}
    for key, value in arrays.items():
        if key.endswith('running_var'):
            value[...] = numpy.abs(value) + 0.5
    path = tmp_path / 'fasterrcnn.pth'
    pth_writer.write_state_dict(path, arrays)
    model = torchvision_fpn.FasterRCNNResNet50FPN(pretrained_model=str(path))
    assert (model.n_fg_class, model.n_unused_class, model.label_names) == (80, 10, None)
    assert model.extractor.base.res2.a.conv1.bn.eps == torchvision_fpn.PRETRAINED_BN_EPS
    numpy.testing.assert_array_equal(model.extractor.base.res2.b2.conv3.conv.W.array,
                                     arrays['backbone.body.layer1.2.conv3.weight'])
    numpy.testing.assert_array_equal(model.extractor.outer[3].b.array,
                                     arrays['backbone.fpn.layer_blocks.3.bias'])
    numpy.testing.assert_array_equal(model.rpn.conv.W.array, arrays['rpn.head.conv.weight'])
    numpy.testing.assert_array_equal(model.rpn.loc.b.array, arrays['rpn.head.bbox_pred.bias'])
    numpy.testing.assert_array_equal(model.head.fc2.W.array,
                                     arrays['roi_heads.box_head.fc7.weight'])
    # label 11 ('stop sign') is COCO category 13: class row 12 here (background first)
    score_b = arrays['roi_heads.box_predictor.cls_score.bias']
    assert int(coco_label_to_category_id[11]) == 13
    assert model.head.conf.b.array[0] == score_b[0] and model.head.conf.b.array[12] == score_b[13]
    numpy.testing.assert_array_equal(model.head.conf.b.array[81:], score_b[list(UNUSED_IDS)])
    loc_W = arrays['roi_heads.box_predictor.bbox_pred.weight'].reshape(91, 4, 1024)
    numpy.testing.assert_array_equal(model.head.loc.W.array.reshape(91, 4, 1024)[12], loc_W[13])
    # the same model from a cvzoo .npz: the predictor's layout is read before building
    saved = tmp_path / 'fasterrcnn_coco.npz'
    npz.save_npz(str(saved), model, compression=False)
    again = torchvision_fpn.FasterRCNNResNet50FPN(pretrained_model=str(saved))
    assert (again.n_fg_class, again.n_unused_class) == (80, 10)
    numpy.testing.assert_array_equal(again.head.conf.W.array, model.head.conf.W.array)
    # another class count: the file loads (converted once, cached), the predictor is new
    other = torchvision_fpn.FasterRCNNResNet50FPN(n_fg_class=7, pretrained_model=str(path))
    assert (other.n_fg_class, other.n_unused_class) == (7, 0)
    assert other.head.loc.W.shape == (32, 1024)
    numpy.testing.assert_array_equal(other.head.fc1.b.array,
                                     arrays['roi_heads.box_head.fc6.bias'])


def test_every_key_of_both_name_forms_maps(rng):
    """Old (v1 file) and new torchvision names give the same cvzoo keys, each model key
    once, and the 91-class rows are cut to the background and the 80 COCO classes."""
    model = torchvision_fpn.FasterRCNNResNet50FPN()
    own = dictionary.DictionarySerializer()
    model.serialize(own)
    results = []
    for new_names in (False, True):
        raw = {k: numpy.zeros(s, numpy.float32) for k, s in torchvision_shapes(new_names).items()}
        raw['roi_heads.box_predictor.cls_score.bias'] = numpy.arange(91, dtype=numpy.float32)
        results.append(model.convert_weights(raw, 'torchvision'))
    assert set(results[0]) == set(results[1])
    assert set(results[0]) == {key.removeprefix('/') for key in own.target}
    numpy.testing.assert_array_equal(
        results[0]['head/conf/b'],
        [0] + [int(i) for i in coco_label_to_category_id] + list(UNUSED_IDS))
    assert results[0]['head/loc/W'].shape == (364, 1024)
    assert int(results[0]['n_unused_class']) == 10


def _write_npz(path, arrays):
    with open(path, 'wb') as handle:
        numpy.savez(handle, **arrays)


def test_a_files_predictor_layout_is_read_before_building(tmp_path):
    '''torchvision's 91 COCO classes are 80 labels and 10 unused ones, any other count
    has none; a cvzoo file says how many it has (none when it does not say).'''
    cases = {'coco.pth': ({'roi_heads.box_predictor.cls_score.bias': 91}, (80, 10)),
             'voc.pth': ({'roi_heads.box_predictor.cls_score.bias': 21}, (20, 0)),
             'coco.npz': ({'/head/conf/b': 91, 'n_unused_class': 10}, (80, 10)),
             'seven.npz': ({'head/conf/b': 8, 'n_unused_class': 0}, (7, 0)),
             'old.npz': ({'head/conf/b': 81}, (80, 0)),
             'other.npz': ({'head/fc1/b': 1024}, None)}
    for name, (sizes, expected) in cases.items():
        arrays = {key: numpy.zeros(n, numpy.float32) if key != 'n_unused_class'
                  else numpy.asarray(n) for key, n in sizes.items()}
        path = tmp_path / name
        if name.endswith('.pth'):
            pth_writer.write_state_dict(path, arrays)
        else:
            _write_npz(path, arrays)
        assert torchvision_fpn._file_layout(str(path)) == expected, name
    assert torchvision_fpn._file_layout(str(tmp_path / 'absent.npz')) is None


def test_wrong_file_names_every_missing_and_unexpected_key(tmp_path):
    shapes = torchvision_shapes()
    # NOTE: names are checked before shapes, so one number per key is enough here
    arrays = {k: numpy.zeros(1, numpy.float32) for k in shapes
              if not k.startswith('rpn.head.cls_logits')
              and k != 'backbone.body.layer3.2.bn1.running_var'}
    bad = {'backbone.body.layer9.0.conv1.weight', 'backbone.fpn.extra_blocks.p6.weight',
           'rpn.head.conv.1.weight', 'roi_heads.mask_head.0.weight'}
    arrays.update({key: numpy.zeros(1, numpy.float32) for key in bad})
    path = tmp_path / 'wrong.pth'
    pth_writer.write_state_dict(path, arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        torchvision_fpn.FasterRCNNResNet50FPN(pretrained_model=str(path))
    message = str(info.value)
    for key in bad | {'rpn/conf/W', 'rpn/conf/b', 'extractor/base/res4/b2/conv1/bn/avg_var'}:
        assert key in message
    assert 'backbone.body.conv1.weight' not in message and 'rpn/loc/W' not in message
