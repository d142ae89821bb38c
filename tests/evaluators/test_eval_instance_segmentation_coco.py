"""eval_instance_segmentation_coco: hand-computed cases and pycocotools 'segm'."""

import numpy
import pytest

from cvzoo.evaluators.metrics.eval_instance_segmentation_coco import (
    eval_instance_segmentation_coco)

SUMMARY_KEYS = [
    'map/iou=0.50:0.95/area=all/max_dets=100', 'map/iou=0.50/area=all/max_dets=100',
    'map/iou=0.75/area=all/max_dets=100', 'map/iou=0.50:0.95/area=small/max_dets=100',
    'map/iou=0.50:0.95/area=medium/max_dets=100', 'map/iou=0.50:0.95/area=large/max_dets=100',
    'mar/iou=0.50:0.95/area=all/max_dets=1', 'mar/iou=0.50:0.95/area=all/max_dets=10',
    'mar/iou=0.50:0.95/area=all/max_dets=100', 'mar/iou=0.50:0.95/area=small/max_dets=100',
    'mar/iou=0.50:0.95/area=medium/max_dets=100', 'mar/iou=0.50:0.95/area=large/max_dets=100',
]


def _random_masks(rng, n, size=(60, 80)):
    masks = numpy.zeros((n,) + size, bool)
    for mask in masks:
        y0, x0 = rng.integers(0, size[0] - 5), rng.integers(0, size[1] - 5)
        mask[y0:y0 + rng.integers(3, 40), x0:x0 + rng.integers(3, 50)] = True
        mask &= rng.random(size) < 0.9
    return masks


def test_perfect():
    rng = numpy.random.default_rng(0)
    gt = [_random_masks(rng, 3), _random_masks(rng, 2)]
    label = [numpy.array([0, 1, 1]), numpy.array([2, 0])]
    score = [numpy.array([0.9, 0.8, 0.7]), numpy.array([0.6, 0.5])]
    result = eval_instance_segmentation_coco(gt, label, score, gt, label)
    assert result['map/iou=0.50:0.95/area=all/max_dets=100'] == pytest.approx(1.0)


def _problem(seed, n_img=8):
    rng = numpy.random.default_rng(seed)
    pred = {'mask': [], 'label': [], 'score': []}
    gt = {'mask': [], 'label': [], 'area': [], 'crowd': []}
    for _ in range(n_img):
        n, m = int(rng.integers(0, 5)), int(rng.integers(0, 8))
        gt['mask'].append(_random_masks(rng, n))
        gt['label'].append(rng.integers(0, 3, n))
        gt['crowd'].append(rng.random(n) < 0.15)
        gt['area'].append(gt['mask'][-1].sum(axis=(1, 2)).astype(float))
        if n:
            source = rng.integers(0, n, m)
            masks = gt['mask'][-1][source] ^ (rng.random((m, 60, 80)) < 0.05)
            labels = gt['label'][-1][source]
        else:
            masks, labels = _random_masks(rng, m), rng.integers(0, 3, m)
        pred['mask'].append(masks)
        pred['label'].append(labels)
        pred['score'].append(numpy.round(rng.random(m), 2))
    return pred, gt


@pytest.mark.reference
@pytest.mark.parametrize('seed', [0, 1, 2], ids=lambda s: f'seed{s}')
def test_agrees_with_pycocotools_segm(seed, pycocotools_stats):
    mask_api = pytest.importorskip('pycocotools.mask')

    def encode(mask):
        rle = mask_api.encode(numpy.asfortranarray(mask.astype(numpy.uint8)))
        return {'size': rle['size'], 'counts': rle['counts'].decode('ascii')}

    pred, gt = _problem(seed)
    result = eval_instance_segmentation_coco(pred['mask'], pred['label'], pred['score'],
                                             gt['mask'], gt['label'], gt['area'], gt['crowd'])
    ours = numpy.array([result[k] for k in SUMMARY_KEYS])
    expected = pycocotools_stats(pred, gt, 'segm', encode)
    numpy.testing.assert_allclose(ours, expected, atol=1e-4)
