"""YOLOv2 region loss: targets by hand, the terms against a loop reference, the gradient
against central differences, and YOLOTrainChain on a region model."""

import math

import numpy
import pytest

from cvzoo.core import backend, gradient_check, optimizers
from cvzoo.core.training.convert import pad_boxes
from cvzoo.core.variable import Variable
from cvzoo.models.detection.darknet import region_loss
from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector
from cvzoo.models.detection.darknet.train_chain import YOLOTrainChain
from tests.helpers.yolo_targets import (
    GRID,
    assert_targets_equal,
    assignment_batch,
    reference_targets,
    with_junk_padding,
)

# anchors in grid cells; a 4 x 4 grid on a 64 x 64 input: 16 px cells
HEAD = {'kind': 'region', 'n_class': 3, 'anchors': numpy.array([[1.0, 1.5], [2.5, 2.0]]),
        'scale_x_y': 1.0, 'insize': (64, 64)}
N_ENTRY = 5 + 3


def padded(bboxes, labels):
    """Per-image boxes (fractions) and labels as the head losses take them, in float64."""
    return pad_boxes(bboxes, labels, dtype=numpy.float64)


def test_targets_by_hand():
    # a 36 x 20 px box centred at (22, 50): 2.25 x 1.25 cells; shape IoU with anchor 0
    # (1 x 1.5) is 1.25 / 3.0625 = 0.41, with anchor 1 (2.5 x 2) 2.8125 / 5 = 0.56, so
    # anchor 1 of the cell in column 1 (22 / 16), row 3 (50 / 16).
    bbox = numpy.array([[4, 40, 40, 60]], numpy.float64) / 64
    tall = numpy.array([[0, 0, 12, 24]], numpy.float64) / 64  # 0.75 x 1.5 cells: anchor 0
    targets = region_loss.assign_region_targets(HEAD, (4, 4), *padded([bbox, tall], [[2], [1]]))
    assert targets['assigned'].sum() == 2
    assert targets['assigned'][0, 3, 1, 1] and targets['assigned'][1, 0, 0, 0]
    numpy.testing.assert_allclose(targets['xy'][0, 3, 1, 1], [0.375, 0.125])
    numpy.testing.assert_allclose(targets['wh'][0, 3, 1, 1],
                                  [math.log(2.25 / 2.5), math.log(1.25 / 2)], rtol=1e-6)
    numpy.testing.assert_allclose(targets['scale'][0, 3, 1, 1], 2 - (36 / 64) * (20 / 64))
    numpy.testing.assert_allclose(targets['bbox'][0, 3, 1, 1], bbox[0], rtol=1e-6)
    assert targets['label'][0, 3, 1, 1] == 2 and targets['label'][1, 0, 0, 0] == 1
    assert (targets['label'] >= 0).sum() == 2


def _sigmoid(v):
    return 1 / (1 + numpy.exp(-v))


def _iou(a, b):
    inter = max(min(a[2], b[2]) - max(a[0], b[0]), 0) * max(min(a[3], b[3]) - max(a[1], b[1]), 0)
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def _loop_loss(raw, head, bboxes, labels):
    """The four terms with loops over images, cells and anchors, Darknet's defaults."""
    B, _, h, w = raw.shape
    targets = region_loss.assign_region_targets(head, (h, w), *padded(bboxes, labels))
    total = numpy.zeros(4)
    for b in range(B):
        for j in range(h):
            for i in range(w):
                for a, (anchor_w, anchor_h) in enumerate(head['anchors']):
                    t = raw[b, a * N_ENTRY:(a + 1) * N_ENTRY, j, i]
                    x, y = (i + _sigmoid(t[0])) / w, (j + _sigmoid(t[1])) / h
                    half = numpy.exp(t[2:4]) * [anchor_w / w, anchor_h / h] / 2
                    box = [x - half[0], y - half[1], x + half[0], y + half[1]]
                    if targets['assigned'][b, j, i, a]:
                        s = targets['scale'][b, j, i, a] / 2
                        total[0] += s * ((_sigmoid(t[:2]) - targets['xy'][b, j, i, a]) ** 2).sum()
                        total[1] += s * ((t[2:4] - targets['wh'][b, j, i, a]) ** 2).sum()
                        rescore = _iou(box, targets['bbox'][b, j, i, a])
                        total[2] += 5 / 2 * (_sigmoid(t[4]) - rescore) ** 2
                        logits = t[5:] - t[5:].max()
                        log_softmax = logits - numpy.log(numpy.exp(logits).sum())
                        total[3] -= log_softmax[targets['label'][b, j, i, a]]
                    elif max([_iou(box, gt) for gt in bboxes[b]] + [0]) <= 0.6:
                        total[2] += 1 / 2 * _sigmoid(t[4]) ** 2
    return total / B


BBOXES = [numpy.array([[4, 40, 40, 60], [10, 6, 50, 30], [30, 30, 33, 34]]) / 64,
          numpy.array([[20, 20, 60, 44]]) / 64]
LABELS = [numpy.array([2, 0, 1]), numpy.array([1])]


def _raw(rng):
    raw = rng.standard_normal((2, 2 * N_ENTRY, 4, 4))
    raw[:, [2, 3, 10, 11]] *= 0.2
    return raw


def test_terms_match_loop_reference(rng):
    raw = _raw(rng)
    terms = region_loss.region_head_loss(Variable(raw), HEAD, *padded(BBOXES, LABELS))
    expected = _loop_loss(raw, HEAD, BBOXES, LABELS)
    numpy.testing.assert_allclose([float(t.array) for t in terms], expected, rtol=1e-6)
    assert (expected > 0).all()


def test_some_anchors_overlap_a_truth_above_thresh(rng):
    # so that the reference above also exercises the no-object exemption
    raw = _raw(rng)
    raw[0, 2:4, 3, 1] = numpy.log([2.25 / 1.0, 1.25 / 1.5])  # anchor 0 shaped as box 0
    raw[0, 0:2, 3, 1] = numpy.log([0.375 / 0.625, 0.125 / 0.875])  # centred on it
    weighted = region_loss.region_head_loss(Variable(raw), HEAD, *padded(BBOXES, LABELS))[2]
    expected = _loop_loss(raw, HEAD, BBOXES, LABELS)[2]
    numpy.testing.assert_allclose(float(weighted.array), expected, rtol=1e-6)
    moved = raw.copy()
    moved[0, 4, 3, 1] += 3  # its objectness: exempt, so the loss does not change
    moved_obj = region_loss.region_head_loss(Variable(moved), HEAD, *padded(BBOXES, LABELS))[2]
    numpy.testing.assert_allclose(float(moved_obj.array), expected, rtol=1e-6)


def _grads(raw, head, bboxes, labels, which):
    """Analytic and central-difference gradients of the sum of the terms ``which``."""
    variable = Variable(raw.copy())
    terms = region_loss.region_head_loss(variable, head, *padded(bboxes, labels))
    sum(terms[k] for k in which).backward()

    def loss():
        parts = region_loss.region_head_loss(Variable(raw), head, *padded(bboxes, labels))
        return (numpy.asarray(sum(float(parts[k].array) for k in which)),)
    numeric, = gradient_check.numerical_grad(loss, (raw,), (numpy.ones(()),), eps=1e-5)
    return variable.grad, numeric


def test_gradient_matches_central_differences(rng):
    raw = _raw(rng)[:1, :, :3, :3]
    head = dict(HEAD, insize=(48, 48))
    bboxes, labels = [numpy.array([[4, 20, 40, 40], [10, 6, 30, 16]]) / 48], [[2, 0]]
    analytic, numeric = _grads(raw, head, bboxes, labels, (0, 1, 3))
    numpy.testing.assert_allclose(analytic, numeric, atol=1e-6, rtol=1e-4)
    # obj: the rescore target (the IoU of the decoded box) is a constant, as in Darknet,
    # so on the box entries of assigned anchors obj has no gradient while the IoU moves
    analytic, numeric = _grads(raw, head, bboxes, labels, (2,))
    assigned = region_loss.assign_region_targets(head, (3, 3), *padded(bboxes, labels))[
        'assigned']
    box = numpy.zeros(raw.shape, bool).reshape(1, 2, N_ENTRY, 3, 3)
    box[:, :, :4] = assigned.transpose(0, 3, 1, 2)[:, :, None]
    box = box.reshape(raw.shape)
    assert box.sum() == 8 and (analytic[box] == 0).all() and (numeric[box] != 0).any()
    numpy.testing.assert_allclose(analytic[~box], numeric[~box], atol=1e-6, rtol=1e-4)


@pytest.fixture
def chain(tiny_cfg):
    return YOLOTrainChain(DarknetDetector(tiny_cfg('region')))


def test_train_chain_loss_and_gradients(chain, train_batch,
                                        assert_loss_reaches_every_param):
    assert_loss_reaches_every_param(chain, train_batch(2))


def test_a_few_steps_overfit_one_image(chain, train_batch):
    x, bboxes, labels = train_batch(2)
    batch = (x[:1], bboxes[:1], labels[:1])
    optimizer = optimizers.Adam(alpha=1e-2)
    optimizer.setup(chain)
    first = float(chain(*batch).array)
    for _ in range(15):
        optimizer.update(chain, *batch)
    assert float(chain(*batch).array) < 0.5 * first


# --- the assignment on padded boxes, against a loop over the boxes ---------------------

WIDE_HEAD = dict(HEAD, insize=(64, 96))


def test_assignment_equals_a_loop_over_the_boxes():
    bboxes, labels = assignment_batch()
    targets = region_loss.assign_region_targets(WIDE_HEAD, GRID,
                                                 *with_junk_padding(bboxes, labels))
    assert_targets_equal(targets, reference_targets(WIDE_HEAD, GRID, bboxes, labels,
                                                    region=True))
    # image 0's second box overwrote its first: its label and box are the second's
    assert targets['assigned'][0].sum() == 2 and not targets['assigned'][1].any()
    assert sorted(targets['label'][0][targets['assigned'][0]]) == [1, 2]
    assert targets['assigned'].sum() < sum(len(b) for b in bboxes) - 1


def test_assignment_on_the_device_has_no_sync_and_equals_the_host(stand_in):
    bbox, label = with_junk_padding(*assignment_batch())
    host = region_loss.assign_region_targets(WIDE_HEAD, GRID, bbox, label)
    bbox, label = backend.to_device(bbox, 'cuda:0'), backend.to_device(label, 'cuda:0')
    region_loss.assign_region_targets(WIDE_HEAD, GRID, bbox, label)  # anchors go there
    with backend.get_device('cuda:0'), stand_in.count_syncs() as syncs:
        device = region_loss.assign_region_targets(WIDE_HEAD, GRID, bbox, label)
    assert sum(syncs.values()) == 0, dict(syncs)
    for key, value in host.items():
        numpy.testing.assert_array_equal(backend.to_numpy(device[key]), value, err_msg=key)


def test_lists_and_padded_arrays_give_the_same_loss(chain, train_batch):
    x, bboxes, labels = train_batch(2)
    from_lists = float(chain(x, bboxes, labels).array)
    bbox, label = pad_boxes(bboxes, labels, 4)
    bbox[1, 0] = [3, 4, 20, 28]  # a padding row (label -1) is padding whatever its box
    assert float(chain(x, bbox, label).array) == from_lists
