"""YOLOv3 loss: targets by hand, the four terms against a loop reference, the TrainChain."""

import math

import numpy
import pytest

from cvzoo import errors
from cvzoo.core import backend, optimizers
from cvzoo.core.training.convert import pad_boxes
from cvzoo.core.variable import Variable
from cvzoo.models.detection.darknet import train_chain, yolo_loss
from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector
from cvzoo.models.detection.darknet.train_chain import YOLOTrainChain
from tests.helpers.yolo_targets import (
    GRID,
    assert_targets_equal,
    assignment_batch,
    padded,
    reference_targets,
    with_junk_padding,
)

HEAD = {'kind': 'yolo', 'n_class': 3, 'anchors': numpy.array([[16.0, 16.0], [40.0, 24.0]]),
        'all_anchors': numpy.array([[4.0, 4.0], [16.0, 16.0], [40.0, 24.0]]),
        'mask': (1, 2), 'scale_x_y': 1.0, 'ignore_thresh': 0.5, 'insize': (64, 64)}


def test_targets_by_hand():
    # a 36 x 20 px box centred at (22, 50) of a 64 x 64 input: best anchor 2 (40 x 24),
    # the second of this head; on a 4 x 4 grid its centre is in column 1, row 3.
    bbox = numpy.array([[4, 40, 40, 60]], numpy.float64) / 64
    small = numpy.array([[0, 0, 4, 4]], numpy.float64) / 64  # anchor 0: another head's
    targets = yolo_loss.assign_targets(HEAD, (4, 4), *padded([bbox, small], [[2], [0]]))
    assert targets['assigned'].sum() == 1 and targets['assigned'][0, 3, 1, 1]
    numpy.testing.assert_allclose(targets['xy'][0, 3, 1, 1], [22 / 16 - 1, 50 / 16 - 3])
    numpy.testing.assert_allclose(targets['wh'][0, 3, 1, 1],
                                  [math.log(36 / 40), math.log(20 / 24)], rtol=1e-6)
    numpy.testing.assert_allclose(targets['scale'][0, 3, 1, 1], 2 - (36 / 64) * (20 / 64))
    numpy.testing.assert_array_equal(targets['cls'][0, 3, 1, 1], [0, 0, 1])


def _sigmoid(v):
    return 1 / (1 + numpy.exp(-v))


def _bce(x, t):
    return numpy.log1p(numpy.exp(-abs(x))) + max(x, 0) - x * t


def _loop_loss(raw, head, bboxes, labels):
    """The four terms with loops over images, cells and anchors."""
    B, _, h, w = raw.shape
    targets = yolo_loss.assign_targets(head, (h, w), *padded(bboxes, labels))
    total = numpy.zeros(4)
    for b in range(B):
        for j in range(h):
            for i in range(w):
                for a, (anchor_w, anchor_h) in enumerate(head['anchors']):
                    t = raw[b, a * 8:(a + 1) * 8, j, i]
                    if targets['assigned'][b, j, i, a]:
                        s = targets['scale'][b, j, i, a]
                        total[0] += s * ((_sigmoid(t[:2]) - targets['xy'][b, j, i, a]) ** 2).sum()
                        total[1] += s * ((t[2:4] - targets['wh'][b, j, i, a]) ** 2).sum()
                        total[2] += _bce(t[4], 1)
                        total[3] += sum(_bce(t[5 + c], targets['cls'][b, j, i, a, c])
                                        for c in range(3))
                        continue
                    x = (i + _sigmoid(t[0])) / w
                    y = (j + _sigmoid(t[1])) / h
                    half = numpy.exp(t[2:4]) * [anchor_w, anchor_h] / 64 / 2
                    box = [x - half[0], y - half[1], x + half[0], y + half[1]]
                    best = max([_iou(box, gt) for gt in bboxes[b]] + [0])
                    if best <= head['ignore_thresh']:
                        total[2] += _bce(t[4], 0)
    return total / B


def _iou(a, b):
    inter = max(min(a[2], b[2]) - max(a[0], b[0]), 0) * max(min(a[3], b[3]) - max(a[1], b[1]), 0)
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def test_terms_match_loop_reference(rng):
    raw = rng.standard_normal((2, 16, 4, 4))
    raw[:, 2:4] *= 0.2
    raw[:, 10:12] *= 0.2
    bboxes = [numpy.array([[4, 40, 40, 60], [10, 6, 50, 30], [30, 30, 33, 34]]) / 64,
              numpy.array([[20, 20, 60, 44]]) / 64]
    labels = [numpy.array([2, 0, 1]), numpy.array([1])]
    terms = yolo_loss.yolo_head_loss(Variable(raw), HEAD, *padded(bboxes, labels))
    expected = _loop_loss(raw, HEAD, bboxes, labels)
    numpy.testing.assert_allclose([float(t.array) for t in terms], expected, rtol=1e-6)
    assert expected[2] > 0 and expected[0] > 0


@pytest.fixture
def chain(tiny_cfg):
    return YOLOTrainChain(DarknetDetector(tiny_cfg()))


def test_train_chain_loss_and_gradients(chain, train_batch,
                                        assert_loss_reaches_every_param):
    assert_loss_reaches_every_param(chain, train_batch(1))


def test_a_few_steps_lower_the_loss(chain, train_batch):
    batch = train_batch(1)
    optimizer = optimizers.Adam(alpha=1e-2)
    optimizer.setup(chain)
    first = float(chain(*batch).array)
    for _ in range(15):
        optimizer.update(chain, *batch)
    assert float(chain(*batch).array) < 0.7 * first



def test_inclusive_model_takes_its_boxes_as_they_are(chain, train_batch, monkeypatch):
    """The head losses of a model whose weights learned inclusive boxes (Yolo-Fastest VOC)
    get the boxes as fractions of the input, unchanged: YOLOTransform gave them in the
    model's box convention, once."""
    seen = []

    def recording_loss(raw, head, bboxes, labels):
        seen.append([bbox[label >= 0] for bbox, label in zip(bboxes, labels)])
        return yolo_loss.yolo_head_loss(raw, head, bboxes, labels)

    monkeypatch.setitem(train_chain.HEAD_LOSSES, 'yolo', recording_loss)
    x, bboxes, labels = train_batch(1)
    chain(x, bboxes, labels)
    n_head = len(seen)
    chain.model.box_convention = 'inclusive'
    chain(x, bboxes, labels)
    for continuous, inclusive in zip(seen[:n_head], seen[n_head:]):
        for bbox, got_continuous, got_inclusive in zip(bboxes, continuous, inclusive):
            numpy.testing.assert_allclose(got_continuous * 32, bbox, rtol=1e-6)
            numpy.testing.assert_allclose(got_inclusive * 32, bbox, rtol=1e-6)


# --- the assignment on padded boxes, against a loop over the boxes ---------------------

# a 2 x 3 grid (GRID) on a 64 x 96 input (H x W): rows and columns, heights and widths differ
WIDE_HEAD = dict(HEAD, insize=(64, 96))


def test_assignment_equals_a_loop_over_the_boxes():
    bboxes, labels = assignment_batch()
    targets = yolo_loss.assign_targets(WIDE_HEAD, GRID, *with_junk_padding(bboxes, labels))
    expected = reference_targets(WIDE_HEAD, GRID, bboxes, labels)
    assert_targets_equal(targets, expected)
    # the cases the batch is made of: image 0's second box overwrote its first (both
    # classes set), its third belongs to another head, image 1 has nothing
    assert targets['assigned'][0].sum() == 1 and targets['cls'][0].sum() == 2
    numpy.testing.assert_allclose(targets['scale'][0][targets['assigned'][0]],
                                  [2 - 0.32 * 0.35])
    assert not targets['assigned'][1].any()
    overwritten = sum(len(b) for b in bboxes) - targets['assigned'].sum()
    assert overwritten >= 3  # image 2 shares a cell and anchor too


def test_assignment_on_the_device_has_no_sync_and_equals_the_host(stand_in):
    bbox, label = with_junk_padding(*assignment_batch())
    host = yolo_loss.assign_targets(WIDE_HEAD, GRID, bbox, label)
    bbox, label = backend.to_device(bbox, 'cuda:0'), backend.to_device(label, 'cuda:0')
    yolo_loss.assign_targets(WIDE_HEAD, GRID, bbox, label)  # the anchor tables go there
    with backend.get_device('cuda:0'), stand_in.count_syncs() as syncs:
        device = yolo_loss.assign_targets(WIDE_HEAD, GRID, bbox, label)
    assert sum(syncs.values()) == 0, dict(syncs)
    for key, value in host.items():
        numpy.testing.assert_array_equal(backend.to_numpy(device[key]), value, err_msg=key)


def test_padding_boxes_never_overlap_a_prediction():
    pred = numpy.array([[[0.1, 0.1, 0.5, 0.5], [-0.1, -0.1, 0.1, 0.1], [0, 0, 0, 0]],
                        [[0.1, 0.1, 0.5, 0.5], [-0.1, -0.1, 0.1, 0.1], [0, 0, 0, 0]]])
    bbox, _ = padded([numpy.array([[0.1, 0.1, 0.5, 0.3]]), numpy.zeros((0, 4))],
                     [[0], []], n_box=4)
    best = yolo_loss.best_truth_iou(numpy, pred, bbox)
    numpy.testing.assert_allclose(best, [[0.5, 0, 0], [0, 0, 0]], rtol=1e-6)


def test_lists_and_padded_arrays_give_the_same_loss(chain, train_batch):
    x, bboxes, labels = train_batch(1)
    from_lists = float(chain(x, bboxes, labels).array)
    bbox, label = pad_boxes(bboxes, labels, 5)
    bbox[1, 2] = [3, 4, 20, 28]  # a padding row (label -1) is padding whatever its box
    assert float(chain(x, bbox, label).array) == from_lists


@pytest.mark.parametrize('bad', ['bboxes', 'labels'])
def test_boxes_of_another_shape_are_named(chain, train_batch, bad):
    x, bboxes, labels = train_batch(1)
    arguments = dict(zip(('bboxes', 'labels'), pad_boxes(bboxes, labels, 5)))
    arguments[bad] = arguments[bad][..., :3] if bad == 'bboxes' else arguments[bad][:, :4]
    with pytest.raises(errors.UsageError, match=f'YOLOTrainChain: {bad}: expected'):
        chain(x, **arguments)
