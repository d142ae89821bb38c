"""Tests of ProposalCreator on hand-made anchors and scores."""

import numpy
import pytest

from cvzoo.core import config
from cvzoo.models.detection.faster_rcnn import proposal_creator

ANCHOR = numpy.array([[0, 0, 20, 20], [1, 1, 21, 21], [40, 40, 60, 60], [0, 0, 5, 5],
                      [50, -10, 90, 30]], numpy.float32)
SCORE = numpy.array([0.5, 0.9, 0.8, 0.99, 0.1], numpy.float32)


def _creator(**kwargs):
    settings = {'n_test_pre_nms': 100, 'n_test_post_nms': 100, 'min_size': 10}
    settings.update(kwargs)
    return proposal_creator.ProposalCreator(**settings)


def test_decode_clip_min_size_nms():
    loc = numpy.zeros((5, 4), numpy.float32)
    with config.using_config('train', False):
        roi = _creator()(loc, SCORE, ANCHOR, (50, 80))
    # anchor 3 is too small, anchor 0 overlaps the better anchor 1, anchor 2 and 4 are
    # clipped to the 50 x 80 image
    expected = [[1, 1, 21, 21], [40, 40, 60, 50], [50, 0, 80, 30]]
    numpy.testing.assert_allclose(roi, expected)


def test_min_size_scales_with_the_image():
    loc = numpy.zeros((5, 4), numpy.float32)
    with config.using_config('train', False):
        roi = _creator()(loc, SCORE, ANCHOR, (100, 100), scale=0.4)  # min side 4
    assert [0, 0, 5, 5] in roi.tolist()


def test_offsets_are_decoded_x_first():
    loc = numpy.zeros((5, 4), numpy.float32)
    loc[1] = [0.5, 0, 0, 0]  # anchor 1 moves by 10 in x
    with config.using_config('train', False):
        roi = _creator()(loc, SCORE, ANCHOR, (100, 100))
    assert roi[0].tolist() == [11, 1, 31, 21]  # the best box after anchor 3 (too small)


@pytest.mark.parametrize('train, n_roi', [(True, 1), (False, 2)], ids=['train', 'test'])
def test_counts_follow_the_mode(train, n_roi):
    loc = numpy.zeros((5, 4), numpy.float32)
    creator = _creator(n_train_pre_nms=2, n_train_post_nms=1, n_test_post_nms=2)
    with config.using_config('train', train):
        roi = creator(loc, SCORE, ANCHOR, (100, 100))
    assert len(roi) == n_roi


def test_rejects_bad_thresh():
    with pytest.raises(ValueError, match='nms_thresh'):
        proposal_creator.ProposalCreator(nms_thresh=1.5)
