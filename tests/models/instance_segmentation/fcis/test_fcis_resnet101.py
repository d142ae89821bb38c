"""FCISResNet101: layers, weights in ChainerCV's layout through the zoo keys, predict()."""


import numpy
import pytest

from cvzoo.datasets.coco.coco_label_names import coco_instance_segmentation_label_names
from cvzoo.datasets.voc.voc_label_names import voc_bbox_label_names
from cvzoo.models import list_models
from cvzoo.models.detection import box_coding
from cvzoo.models.instance_segmentation.fcis import fcis_head, fcis_resnet101
from cvzoo.testing import model_checks
from tests.helpers import chainercv_reference_tools as tools


SMALL = {'min_size': 64, 'max_size': 96}


def _chainercv_layout(arrays):
    """cvzoo's arrays of an FCIS model as ChainerCV saves them (y-first offset layers)."""
    out = dict(arrays)
    for key in ('rpn/loc/W', 'rpn/loc/b'):
        out[key] = box_coding.swap_xy_channels(arrays[key])
    for key in ('head/ag_loc/W', 'head/ag_loc/b'):
        out[key] = fcis_head.swap_ag_loc_channels(arrays[key], 7)
    return out


def test_registered():
    assert 'fcis_resnet101' in list_models('instance_segmentation')


def test_layer_shapes():
    model = fcis_resnet101.FCISResNet101(n_fg_class=3, **SMALL)
    arrays = model.state_arrays()
    assert arrays['head/cls_seg/W'].shape == (7 * 7 * 4 * 2, 1024, 1, 1)
    assert arrays['head/ag_loc/W'].shape == (7 * 7 * 2 * 4, 1024, 1, 1)
    assert arrays['head/conv1/W'].shape == (1024, 2048, 1, 1)
    assert arrays['rpn/conv1/W'].shape == (512, 1024, 3, 3)
    assert arrays['rpn/score/W'].shape == (9 * 2, 512, 1, 1)
    assert arrays['extractor/res4/b22/conv3/bn/avg_var'].shape == (1024,)
    assert model.extractor.res5.a.conv2.conv.dilate in (2, (2, 2))
    assert model.extractor.conv1.bn.eps == 2e-5 and model.extractor.res2.a.conv1.bn.eps == 1e-5
    model.reset_head(5)
    assert model.head.cls_seg.W.shape[0] == 7 * 7 * 6 * 2 and model.n_fg_class == 5


def test_swap_ag_loc_channels_is_its_own_inverse(rng):
    W = rng.standard_normal((2 * 4 * 49, 3, 1, 1))
    swapped = fcis_head.swap_ag_loc_channels(W, 7)
    # group 5 of the foreground's dx (cvzoo channel 4 * 49 + 5) is ChainerCV's dx: index 1
    numpy.testing.assert_array_equal(swapped[(4 + 0) * 49 + 5], W[(4 + 1) * 49 + 5])
    numpy.testing.assert_array_equal(fcis_head.swap_ag_loc_channels(swapped, 7), W)


def test_key_settings():
    sbd = fcis_resnet101.FCISResNet101(n_fg_class=20)
    assert len(sbd.rpn.anchor_base) == 9 and sbd.min_drop_size == 16
    assert sbd.rpn.proposal_layer.min_size == 16
    assert sbd.rpn.proposal_layer.n_test_post_nms == 300
    assert sbd.head.iter2 and sbd.head.roi_size == 21


@pytest.mark.parametrize('key, n_fg_class, label_names, n_anchor, min_drop_size', [
    ('sbd', 20, voc_bbox_label_names, 9, 16),
    ('coco', 80, coco_instance_segmentation_label_names, 12, 2),
])
def test_loads_chainercv_file_through_key(tmp_path, monkeypatch, key, n_fg_class,
                                          label_names, n_anchor, min_drop_size):
    numpy.random.seed(1)
    settings = fcis_resnet101.KEY_SETTINGS[key]
    source = fcis_resnet101.FCISResNet101(
        n_fg_class=n_fg_class, anchor_scales=settings['anchor_scales'], **SMALL)
    want = source.state_arrays()
    raw = _chainercv_layout(want)
    mirror = tmp_path / 'mirror'
    mirror.mkdir()
    file_name = fcis_resnet101.FCISResNet101.weights[key].url.rsplit('/', 1)[1]
    numpy.savez(mirror / file_name, **raw)
    model = tools.load_from_mirror(monkeypatch, mirror, fcis_resnet101.FCISResNet101, key,
                                   **SMALL)
    got = model.state_arrays()
    assert sorted(got) == sorted(want)
    for name in want:
        numpy.testing.assert_array_equal(got[name], want[name], err_msg=name)
    assert not numpy.array_equal(raw['head/ag_loc/W'], got['head/ag_loc/W'])
    assert model.label_names == tuple(label_names) and model.n_fg_class == n_fg_class
    assert len(model.rpn.anchor_base) == n_anchor and model.min_drop_size == min_drop_size
    assert model.rpn.proposal_layer.min_size == settings['proposal_creator_params']['min_size']


def test_predict_contract_on_devices(device):
    numpy.random.seed(0)
    model = fcis_resnet101.FCISResNet101(n_fg_class=2, **SMALL).to_device(device)
    model.use_preset('evaluate')
    rng = numpy.random.RandomState(0)
    imgs = [rng.uniform(0, 255, (3, 48, 64)).astype(numpy.float32),
            rng.randint(0, 256, (80, 56, 3)).astype(numpy.uint8)]
    model_checks.assert_is_instance_segmentation_model(model, imgs, 2)


def test_host_syncs_per_predicted_image(stand_in):
    # RPN proposals, the RoI index range, the min-size filter, the pair selection, the
    # voted masks found, then predict()'s three results
    numpy.random.seed(0)
    model = fcis_resnet101.FCISResNet101(n_fg_class=2, **SMALL).to_device('cuda:0')
    model.use_preset('evaluate')
    img = numpy.random.RandomState(0).uniform(0, 255, (3, 40, 56)).astype(numpy.float32)
    model.predict([img])
    with stand_in.count_syncs() as syncs:
        model.predict([img])
    assert sum(syncs.values()) <= 8, syncs
