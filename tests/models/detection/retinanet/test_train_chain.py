"""RetinaNetTrainChain: finite loss, gradients, reported parts, targets, normalisation."""

import numpy
import pytest

from cvzoo.core.training import reporter as reporter_module
from cvzoo.models.detection import anchor_matching, box_coding
from cvzoo.models.detection.retinanet import focal_loss, retinanet, train_chain


@pytest.fixture(scope='module')
def chain():
    model = retinanet.RetinaNetResNet50FPN(n_fg_class=3)
    return train_chain.RetinaNetTrainChain(model)


BBOXES = [numpy.array([[5, 6, 40, 50], [30, 20, 90, 60]], numpy.float32),
          numpy.zeros((0, 4), numpy.float32)]
LABELS = [numpy.array([0, 2], numpy.int32), numpy.zeros(0, numpy.int32)]


def test_finite_loss_and_gradients_reach_every_trainable_parameter(chain, rng):
    x = rng.standard_normal((2, 3, 64, 96)).astype(numpy.float32)
    chain.cleargrads()
    reporter = reporter_module.Reporter()
    reporter.add_observer('main', chain)
    observation = {}
    with reporter.scope(observation):
        loss = chain(x, BBOXES, LABELS)
    assert loss.shape == () and loss.dtype == numpy.float32 and numpy.isfinite(loss.array)
    assert {'main/loss', 'main/loss/loc', 'main/loss/conf'} <= set(observation)
    numpy.testing.assert_allclose(float(observation['main/loss']),
                                  float(observation['main/loss/loc'])
                                  + float(observation['main/loss/conf']), rtol=1e-6)
    loss.backward()
    missing = [name for name, p in chain.namedparams() if p.requires_grad and p.grad is None]
    assert missing == []
    frozen = [name for name, p in chain.namedparams() if not p.requires_grad]
    assert frozen and all(p.grad is None for p in chain.params() if not p.requires_grad)
    assert any(float(abs(p.grad).max()) > 0 for p in chain.model.head.conf.params())


def test_targets_by_hand():
    anchor = numpy.array([[0, 0, 10, 10], [0, 0, 10, 4], [50, 50, 60, 60], [50, 50, 60, 57]],
                         numpy.float32)
    chain = train_chain.RetinaNetTrainChain(None)
    bboxes = [numpy.array([[0, 0, 10, 9]], numpy.float32),
              numpy.array([[50, 50, 60, 60]], numpy.float32)]
    labels = [numpy.array([1], numpy.int32), numpy.array([0], numpy.int32)]
    gt_label, fg_index, gt_loc, weight = chain.targets(anchor, bboxes, labels, 2)
    # image 0: anchor 0 fg (class 1), anchor 1 ignored (IoU 0.44), 2 and 3 background
    numpy.testing.assert_array_equal(gt_label[0], [[0, 1], [-1, -1], [0, 0], [0, 0]])
    # image 1: anchor 2 (IoU 1) and anchor 3 (IoU 0.7) fg, class 0
    numpy.testing.assert_array_equal(gt_label[1], [[0, 0], [0, 0], [1, 0], [1, 0]])
    numpy.testing.assert_array_equal(fg_index, [0, 4 + 2, 4 + 3])
    numpy.testing.assert_allclose(gt_loc[0], box_coding.encode(anchor[:1], bboxes[0])[0])
    numpy.testing.assert_allclose(weight, [1 / (2 * 1), 1 / (2 * 2)])
    assert gt_label.dtype == numpy.int32 and gt_loc.dtype == weight.dtype == numpy.float32
    assert anchor_matching.IGNORED == -2 and focal_loss.IGNORE_LABEL == -1


def test_loss_is_torchvisions_normalisation(chain, rng):
    """loss = mean over images of (focal sum + L1 sum) / max(1, n_fg), recomputed here."""
    x = rng.standard_normal((2, 3, 64, 64)).astype(numpy.float32)
    model = chain.model
    locs, confs, anchors = model(x)
    loc = numpy.concatenate([v.array for v in locs], 1)
    conf = numpy.concatenate([v.array for v in confs], 1)
    anchor = numpy.concatenate(anchors)
    bboxes = [numpy.array([[4, 4, 40, 44]], numpy.float32),
              numpy.array([[0, 0, 30, 20], [20, 30, 60, 60]], numpy.float32)]
    labels = [numpy.array([1], numpy.int32), numpy.array([0, 2], numpy.int32)]
    expected = 0.0
    for i in range(2):
        match = anchor_matching.match_anchors(anchor, bboxes[i])
        fg = numpy.nonzero(match >= 0)[0]
        t = numpy.zeros(conf.shape[1:], numpy.int32)
        t[fg, labels[i][match[fg]]] = 1
        valid = match != -2
        focal = focal_loss.sigmoid_focal_loss(conf[i][valid], t[valid]).array
        l1 = numpy.abs(loc[i][fg] - box_coding.encode(anchor[fg], bboxes[i][match[fg]])).sum()
        expected += (focal + l1) / max(1, len(fg)) / 2
    loss = chain(x, bboxes, labels)
    numpy.testing.assert_allclose(loss.array, expected, rtol=1e-5)


def test_smooth_l1_option_and_argument_check(chain, rng):
    x = rng.standard_normal((2, 3, 64, 64)).astype(numpy.float32)
    smooth = train_chain.RetinaNetTrainChain(chain.model, smooth_l1_beta=0.11)
    assert numpy.isfinite(smooth(x, BBOXES, LABELS).array)
    with pytest.raises(ValueError, match='bboxes, labels'):
        chain(x, BBOXES[:1], LABELS)


def test_inclusive_model_matches_its_boxes_as_they_are(chain, monkeypatch):
    """The recipe's transform gave the boxes in the model's box convention, once."""
    seen = []

    def recording_match(anchor, bbox, fg_thresh, bg_thresh):
        seen.append(bbox.copy())
        return real_match(anchor, bbox, fg_thresh, bg_thresh)

    real_match = anchor_matching.match_anchors
    monkeypatch.setattr(anchor_matching, 'match_anchors', recording_match)
    monkeypatch.setattr(chain.model, 'box_convention', 'inclusive')
    chain(numpy.zeros((2, 3, 64, 96), numpy.float32), BBOXES, LABELS)
    assert len(seen[0])
    for bbox, got in zip(BBOXES, seen):
        numpy.testing.assert_array_equal(got, bbox)
