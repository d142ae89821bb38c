"""torchvision RetinaNet files (written here with torchvision's names and real shapes)."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.models.detection.retinanet import retinanet
from tests.helpers import pth_writer


def _bn(prefix, n, state):
    for leaf in ('weight', 'bias', 'running_mean', 'running_var'):
        state[f'{prefix}.{leaf}'] = (n,)


def torchvision_shapes(new_names=False):
    """name -> shape of torchvision's retinanet_resnet50_fpn state_dict (91 classes)."""
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
    for i, c in enumerate((512, 1024, 2048)):
        state[f'backbone.fpn.inner_blocks.{i}{inner}.weight'] = (256, c, 1, 1)
        state[f'backbone.fpn.inner_blocks.{i}{inner}.bias'] = (256,)
        state[f'backbone.fpn.layer_blocks.{i}{inner}.weight'] = (256, 256, 3, 3)
        state[f'backbone.fpn.layer_blocks.{i}{inner}.bias'] = (256,)
    for name in ('p6', 'p7'):
        state[f'backbone.fpn.extra_blocks.{name}.weight'] = (256, 256, 3, 3)
        state[f'backbone.fpn.extra_blocks.{name}.bias'] = (256,)
    for head, last, n_out in (('classification', 'cls_logits', 9 * 91),
                              ('regression', 'bbox_reg', 9 * 4)):
        for k in range(4):
            index = f'{k}.0' if new_names else f'{2 * k}'
            state[f'head.{head}_head.conv.{index}.weight'] = (256, 256, 3, 3)
            state[f'head.{head}_head.conv.{index}.bias'] = (256,)
        state[f'head.{head}_head.{last}.weight'] = (n_out, 256, 3, 3)
        state[f'head.{head}_head.{last}.bias'] = (n_out,)
    return state


def test_parameter_count_is_torchvisions():
    # torchvision's docs: RetinaNet_ResNet50_FPN_Weights.COCO_V1 num_params 34,014,999
    # (FrozenBatchNorm's weight and bias are buffers there, not parameters)
    shapes = torchvision_shapes()
    bn = {k.rsplit('.', 1)[0] for k in shapes if k.endswith('running_mean')}
    count = sum(int(numpy.prod(s)) for k, s in shapes.items() if k.rsplit('.', 1)[0] not in bn)
    assert count == 34_014_999
    model = retinanet.RetinaNetResNet50FPN()
    trainable = sum(p.size for p in model.params() if p.requires_grad)
    frozen_stages = sum(p.size for name in ('conv1', 'res2')
                        for p in getattr(model.extractor.base, name).params()
                        if p.requires_grad is False and p.ndim == 4)
    # the 80-class head lacks 11 of the 91 outputs per anchor
    assert trainable + frozen_stages == count - 11 * 9 * (256 * 9 + 1)


@pytest.mark.parametrize('new_names', [False, True], ids=['v1_names', 'new_names'])
def test_real_shape_file_loads_every_key(tmp_path, rng, new_names):
    shapes = torchvision_shapes(new_names)
    arrays = {k: rng.standard_normal(s, dtype=numpy.float32) for k, s in shapes.items()}
    for key, value in arrays.items():
        if key.endswith('running_var'):
            value[...] = numpy.abs(value) + 0.5
    path = tmp_path / 'retinanet.pth'
    pth_writer.write_state_dict(path, arrays)
    model = retinanet.RetinaNetResNet50FPN(pretrained_model=str(path))
    assert model.n_fg_class == 80
    numpy.testing.assert_array_equal(
        model.extractor.base.res3.b1.conv2.conv.W.array,
        arrays['backbone.body.layer2.1.conv2.weight'])
    numpy.testing.assert_array_equal(model.extractor.p6.b.array,
                                     arrays['backbone.fpn.extra_blocks.p6.bias'])
    tower = '3.0' if new_names else '6'
    numpy.testing.assert_array_equal(model.head.loc_tower[3].W.array,
                                     arrays[f'head.regression_head.conv.{tower}.weight'])
    conf_b = arrays['head.classification_head.cls_logits.bias'].reshape(9, 91)
    # label 11 ('stop sign') is COCO category 13, the 14th output of each anchor
    numpy.testing.assert_array_equal(model.head.conf.b.array.reshape(9, 80)[:, 11],
                                     conf_b[:, 13])


def test_small_file_maps_and_cuts_the_class_layer(tmp_path, rng):
    shapes = torchvision_shapes()
    arrays = {k: rng.standard_normal(s, dtype=numpy.float32) for k, s in shapes.items()
              if k.startswith('head.')}
    model = retinanet.RetinaNetResNet50FPN()
    converted = model.convert_weights(arrays, 'torchvision')
    assert converted['head/conf/W'].shape == (720, 256, 3, 3)
    assert converted['head/loc_tower/2/b'] is arrays['head.regression_head.conv.4.bias']
    assert len(converted) == len(arrays)


def test_wrong_file_names_every_bad_key(tmp_path, rng):
    arrays = {'backbone.body.conv1.weight': numpy.zeros((64, 3, 7, 7), numpy.float32),
              'backbone.body.layer9.0.conv1.weight': numpy.zeros(1, numpy.float32),
              'backbone.fpn.extra_blocks.p8.weight': numpy.zeros(1, numpy.float32),
              'head.classification_head.conv.1.weight': numpy.zeros(1, numpy.float32),
              'roi_heads.box_predictor.bbox_pred.weight': numpy.zeros(1, numpy.float32)}
    path = tmp_path / 'wrong.pth'
    pth_writer.write_state_dict(path, arrays)
    with pytest.raises(errors.WeightLoadError) as info:
        retinanet.RetinaNetResNet50FPN(pretrained_model=str(path))
    message = str(info.value)
    for key in list(arrays)[1:]:
        assert key in message
    assert 'backbone.body.conv1.weight' not in message


def test_unknown_source_is_refused():
    with pytest.raises(ValueError, match='source'):
        retinanet.RetinaNetResNet50FPN().convert_weights({}, 'chainercv')
