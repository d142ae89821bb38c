"""Per-box reference targets of the YOLO losses and a batch that exercises them (a later
box on the same cell and anchor, another head's box, an image without boxes, padding)."""

import math

import numpy

from cvzoo.core.training.convert import pad_boxes


def padded(bboxes, labels, n_box=1):
    """Per-image boxes (fractions) and labels as the head losses take them, in float64."""
    return pad_boxes(bboxes, labels, n_box, dtype=numpy.float64)


GRID = (2, 3)  # h x w: rows and columns differ


def assignment_batch(seed=0):
    """Per-image boxes (fractions) and labels: image 0 with two boxes on one cell and
    anchor (labels 0 then 2) and a small box (another [yolo] head's), image 1 without boxes,
    image 2 with random boxes (some sharing a cell and anchor)."""
    rng = numpy.random.RandomState(seed)
    corner = rng.uniform(0, 0.8, (9, 2))
    random = numpy.concatenate([corner, corner + rng.uniform(0.03, 0.5, (9, 2))], axis=1)
    bboxes = [numpy.array([[0.05, 0.05, 0.4, 0.4], [0.1, 0.08, 0.42, 0.43],
                           [0.5, 0.6, 0.53, 0.62]]), numpy.zeros((0, 4)), random]
    labels = [numpy.array([0, 2, 1]), numpy.zeros(0, int), rng.randint(0, 3, 9)]
    return bboxes, labels


def with_junk_padding(bboxes, labels, n_box=12):
    """The padded form, with a real-looking box on a padding row (label -1 marks padding,
    whatever its box)."""
    bbox, label = padded(bboxes, labels, n_box)
    bbox[1, 0] = [0.1, 0.1, 0.5, 0.6]
    return bbox, label


def _cell(center, n):
    return min(max(int(center * n), 0), n - 1)


def _best_shape(size, anchors):
    ious = [min(size[0], a_w) * min(size[1], a_h)
            / (size[0] * size[1] + a_w * a_h - min(size[0], a_w) * min(size[1], a_h))
            for a_w, a_h in anchors]
    return int(numpy.argmax(ious))


def reference_targets(head, grid, bboxes, labels, region=False):
    """Targets written one box at a time, in order: a later box on the same cell and
    anchor overwrites an earlier one ([yolo] class targets add up)."""
    (h, w), (H, W) = grid, head['insize']
    shape = (len(bboxes), h, w, len(head['anchors']))
    targets = {'assigned': numpy.zeros(shape, bool), 'xy': numpy.zeros(shape + (2,)),
               'wh': numpy.zeros(shape + (2,)), 'scale': numpy.zeros(shape)}
    if region:
        targets.update(bbox=numpy.zeros(shape + (4,)), label=numpy.full(shape, -1))
        anchors = [(a_w / w, a_h / h) for a_w, a_h in head['anchors']]
    else:
        targets['cls'] = numpy.zeros(shape + (head['n_class'],))
        anchors = [(a_w / W, a_h / H) for a_w, a_h in head['all_anchors']]
    for b, (boxes, box_labels) in enumerate(zip(bboxes, labels)):
        for box, label in zip(boxes, box_labels):
            size = (box[2] - box[0], box[3] - box[1])
            center = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            best = _best_shape(size, anchors)
            if not region and best not in head['mask']:
                continue
            a = best if region else list(head['mask']).index(best)
            i, j = _cell(center[0], w), _cell(center[1], h)
            at = (b, j, i, a)
            targets['assigned'][at] = True
            targets['xy'][at] = [center[0] * w - i, center[1] * h - j]
            targets['wh'][at] = [math.log(size[0] / anchors[best][0]),
                                 math.log(size[1] / anchors[best][1])]
            targets['scale'][at] = 2 - size[0] * size[1]
            if region:
                targets['bbox'][at], targets['label'][at] = box, label
            else:
                targets['cls'][at + (label,)] = 1
    return targets


def assert_targets_equal(got, expected):
    assert sorted(got) == sorted(expected)
    for key, value in expected.items():
        assert got[key].shape == value.shape, key
        numpy.testing.assert_allclose(got[key], value, rtol=1e-6, atol=1e-7, err_msg=key)
