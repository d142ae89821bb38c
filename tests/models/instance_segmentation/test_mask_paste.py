"""paste_masks against a straightforward reference: ChainerCV's segm_to_mask, one instance
at a time, with OpenCV's bilinear resize written out pixel by pixel."""

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.models.instance_segmentation import mask_paste


def _resize_bilinear(img, out_H, out_W):
    """OpenCV's INTER_LINEAR of a 2-D float32 array, one output pixel at a time."""
    in_H, in_W = img.shape
    out = numpy.zeros((out_H, out_W), numpy.float32)

    def taps(d, n_in, n_out):
        s = numpy.float32((d + 0.5) * (n_in / n_out) - 0.5)
        low = int(numpy.floor(s))
        frac = s - low
        if low < 0:
            low, frac = 0, 0.0
        if low >= n_in - 1:
            low, frac = n_in - 1, 0.0
        return low, min(low + 1, n_in - 1), frac

    for y in range(out_H):
        y0, y1, fy = taps(y, in_H, out_H)
        for x in range(out_W):
            x0, x1, fx = taps(x, in_W, out_W)
            top = img[y0, x0] * (1 - fx) + img[y0, x1] * fx
            bottom = img[y1, x0] * (1 - fx) + img[y1, x1] * fx
            out[y, x] = top * (1 - fy) + bottom * fy
    return out


def _reference_paste(prob, bbox, size):
    """ChainerCV 0.13.1's segm_to_mask (x-first boxes), instance by instance."""
    pad = 1
    H, W = size
    R, M, _ = prob.shape
    masks = numpy.zeros((R, H, W), bool)
    scale = (M + 2 * pad) / M
    for i in range(R):
        x_min, y_min, x_max, y_max = (float(v) for v in bbox[i])
        cx, cy = (x_min + x_max) / 2, (y_min + y_max) / 2
        half_w, half_h = (x_max - x_min) / 2 * scale, (y_max - y_min) / 2 * scale
        bb = numpy.round(numpy.array([cy - half_h, cx - half_w, cy + half_h, cx + half_w]))
        bb = bb.astype(int)
        bb_h, bb_w = bb[2] - bb[0], bb[3] - bb[1]
        if bb_h <= 0 or bb_w <= 0:
            continue
        canvas = numpy.zeros((M + 2 * pad, M + 2 * pad), numpy.float32)
        canvas[pad:-pad, pad:-pad] = prob[i]
        crop = _resize_bilinear(canvas, bb_h, bb_w) > 0.5
        y0, x0 = max(bb[0], 0), max(bb[1], 0)
        y1, x1 = max(min(bb[2], H), 0), max(min(bb[3], W), 0)
        if y1 <= y0 or x1 <= x0:
            continue
        masks[i, y0:y1, x0:x1] = crop[y0 - bb[0]:y1 - bb[0], x0 - bb[1]:x1 - bb[1]]
    return masks


def _case(seed, R=7, M=6, size=(23, 31)):
    rng = numpy.random.RandomState(seed)
    prob = rng.uniform(0, 1, (R, M, M)).astype(numpy.float32)
    H, W = size
    start = rng.uniform(-8, [W, H], (R, 2))
    side = rng.uniform(0.3, 20, (R, 2))
    bbox = numpy.concatenate([start, start + side], axis=1).astype(numpy.float32)
    return prob, bbox, size


@pytest.mark.parametrize('seed', range(4))
def test_paste_equals_the_reference(seed):
    prob, bbox, size = _case(seed)
    numpy.testing.assert_array_equal(mask_paste.paste_masks(prob, bbox, size),
                                     _reference_paste(prob, bbox, size))


def test_paste_of_boxes_larger_than_the_grid_and_exact_halves():
    # boxes of 2x the padded grid (exact factors) and boxes half its size
    prob = numpy.random.RandomState(5).uniform(0, 1, (3, 4, 4)).astype(numpy.float32)
    bbox = numpy.array([[2, 3, 14, 15], [0, 0, 2, 2], [5.5, 1.5, 9.5, 4.5]], numpy.float32)
    numpy.testing.assert_array_equal(mask_paste.paste_masks(prob, bbox, (20, 18)),
                                     _reference_paste(prob, bbox, (20, 18)))


def test_paste_of_no_instance():
    masks = mask_paste.paste_masks(numpy.zeros((0, 28, 28), numpy.float32),
                                   numpy.zeros((0, 4), numpy.float32), (5, 7))
    assert masks.shape == (0, 5, 7) and masks.dtype == bool


def test_paste_in_chunks_equals_one_pass(monkeypatch):
    prob, bbox, size = _case(7, R=9)
    whole = mask_paste.paste_masks(prob, bbox, size)
    monkeypatch.setattr(mask_paste, '_CHUNK_ELEMENTS', 2 * size[0] * size[1])
    numpy.testing.assert_array_equal(mask_paste.paste_masks(prob, bbox, size), whole)


def test_paste_on_the_device(device):
    prob, bbox, size = _case(1)
    on_device = backend.to_device(prob, device)
    masks = mask_paste.paste_masks(on_device, backend.to_device(bbox, device), size)
    assert backend.get_device_from_array(masks) == backend.get_device(device)
    numpy.testing.assert_array_equal(backend.to_numpy(masks), _reference_paste(prob, bbox, size))


@pytest.mark.parametrize('prob_shape, bbox_shape, size, match', [
    ((2, 4), (2, 4), (5, 5), 'prob'),
    ((2, 4, 4), (3, 4), (5, 5), 'bbox'),
    ((2, 4, 4), (2, 4), (5,), 'size'),
])
def test_bad_arguments_are_named(prob_shape, bbox_shape, size, match):
    with pytest.raises(ValueError, match=match):
        mask_paste.paste_masks(numpy.zeros(prob_shape, numpy.float32),
                               numpy.zeros(bbox_shape, numpy.float32), size)
