"""assert_same_detections: two runtimes' detections agree, whatever order near-ties took."""

import numpy

TOL = 1e-4


def canonical_order(bbox, label, reference_score, tol=TOL):
    """Detections by decreasing score, those within ``tol`` of their neighbour's score
    (as ``reference_score`` says) sorted among themselves by label and box, so that the
    order of near-ties, which rounding may swap, does not count."""
    group = numpy.cumsum(numpy.diff(reference_score, prepend=numpy.inf) < -tol)
    return numpy.lexsort((bbox[:, 1], bbox[:, 0], label, group))


def assert_same_detections(want, got, sizes, tol=TOL):
    """Per image, the same number of detections, equal labels, scores to ``tol`` and
    boxes to ``tol`` times the image's longer side.

    Args:
        want, got: ``(bboxes, labels, scores)`` lists as predict() returns them.
        sizes (list of (H, W)): the images' sizes.

    Returns:
        int: the number of detections compared.
    """
    n_detection = 0
    for i, size in enumerate(sizes):
        assert len(got[1][i]) == len(want[1][i]), f'image {i}: detection count'
        order_want = canonical_order(want[0][i], want[1][i], want[2][i], tol)
        order_got = canonical_order(got[0][i], got[1][i], want[2][i], tol)
        bbox, label, score = (got[k][i][order_got] for k in range(3))
        numpy.testing.assert_array_equal(label, want[1][i][order_want],
                                         err_msg=f'image {i} labels')
        numpy.testing.assert_allclose(score, want[2][i][order_want], atol=tol,
                                      err_msg=f'image {i} scores')
        numpy.testing.assert_allclose(bbox, want[0][i][order_want], atol=tol * max(size),
                                      err_msg=f'image {i} boxes')
        n_detection += len(want[1][i])
    return n_detection
