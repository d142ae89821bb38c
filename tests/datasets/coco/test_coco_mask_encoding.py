"""mask_to_rle: the inverse of the decoder, and pycocotools' strings."""

import numpy
import pytest

from cvzoo.datasets.coco.coco_mask_decoding import rle_string_to_counts, rle_to_mask
from cvzoo.datasets.coco.coco_mask_encoding import counts_to_rle_string, mask_to_rle


def _masks():
    rng = numpy.random.RandomState(0)
    masks = [numpy.zeros((3, 4), bool), numpy.ones((3, 4), bool), numpy.zeros((0, 5), bool)]
    for _ in range(30):
        H, W = rng.randint(1, 30, 2)
        masks.append(rng.rand(H, W) < rng.rand())
        block = numpy.zeros((H, W), bool)
        block[rng.randint(H):, rng.randint(W):] = True  # long runs: multi-group counts
        masks.append(block)
    return masks


@pytest.mark.parametrize('compressed', [True, False])
def test_encoding_round_trips(compressed):
    for mask in _masks():
        rle = mask_to_rle(mask, compressed)
        assert rle['size'] == list(mask.shape)
        numpy.testing.assert_array_equal(rle_to_mask(rle, mask.shape), mask)


def test_counts_round_trip_through_the_string():
    counts = [0, 5, 3, 1000, 2, 70000, 1, 1, 64, 0]  # differences of either sign
    assert rle_string_to_counts(counts_to_rle_string(counts)).tolist() == counts


@pytest.mark.reference
def test_strings_are_pycocotools():
    mask_utils = pytest.importorskip('pycocotools.mask')
    for mask in _masks():
        if not mask.size:
            continue
        expected = mask_utils.encode(numpy.asfortranarray(mask.astype(numpy.uint8)))
        assert mask_to_rle(mask)['counts'] == expected['counts'].decode()
