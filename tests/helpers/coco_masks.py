"""A small COCO-format instance segmentation folder and pycocotools' segm evaluation of
predictions on it, for the evaluation script's tests."""

import contextlib
import io
import json

import numpy
from PIL import Image

from tests.helpers.fake_instance_segmenter import random_instances

MODEL_NAMES = ('cat', 'dog', 'person')
CATEGORIES = [{'id': 7, 'name': 'dog'}, {'id': 2, 'name': 'person'}, {'id': 4, 'name': 'cat'}]
CATEGORY_ID = {c['name']: c['id'] for c in CATEGORIES}
SIZES = {40: (40, 50), 80: (36, 44), 120: (30, 30), 160: (20, 24)}  # grey level -> (H, W)
SUMMARY_KEYS = [
    'map/iou=0.50:0.95/area=all/max_dets=100', 'map/iou=0.50/area=all/max_dets=100',
    'map/iou=0.75/area=all/max_dets=100', 'map/iou=0.50:0.95/area=small/max_dets=100',
    'map/iou=0.50:0.95/area=medium/max_dets=100', 'map/iou=0.50:0.95/area=large/max_dets=100',
    'mar/iou=0.50:0.95/area=all/max_dets=1', 'mar/iou=0.50:0.95/area=all/max_dets=10',
    'mar/iou=0.50:0.95/area=all/max_dets=100', 'mar/iou=0.50:0.95/area=small/max_dets=100',
    'mar/iou=0.50:0.95/area=medium/max_dets=100', 'mar/iou=0.50:0.95/area=large/max_dets=100',
]



def rectangle(size, x0, y0, x1, y1):
    mask = numpy.zeros(size, bool)
    mask[y0:y1, x0:x1] = True
    return mask


def uncompressed_counts(mask):
    """Uncompressed COCO RLE counts (column-major runs, starting with zeros)."""
    flat = numpy.r_[False, mask.T.ravel(), False]
    edges = numpy.flatnonzero(flat[1:] != flat[:-1])
    return numpy.diff(numpy.r_[0, edges, mask.size]).tolist()


def _objects(rng, size, mask_api):
    """(mask, class name, crowd, segmentation) of one image: rectangles as polygons
    (integer corners, which pycocotools rasterises as cvzoo does), blobs as compressed
    RLE and a crowd region as uncompressed RLE."""
    H, W = size
    objects = []
    for k in range(3):
        x0, y0 = int(rng.integers(0, W - 8)), int(rng.integers(0, H - 8))
        x1, y1 = int(rng.integers(x0 + 3, W + 1)), int(rng.integers(y0 + 3, H + 1))
        polygon = [[x0, y0, x1, y0, x1, y1, x0, y1]]
        objects.append((rectangle(size, x0, y0, x1, y1), MODEL_NAMES[k], 0, polygon))
    blobs, labels, _ = random_instances(rng, 2, size, 3)
    for blob, label in zip(blobs, labels):
        rle = mask_api.encode(numpy.asfortranarray(blob.astype(numpy.uint8)))
        objects.append((blob, MODEL_NAMES[label], 0,
                        {'size': [H, W], 'counts': rle['counts'].decode('ascii')}))
    crowd = rectangle(size, 0, 0, W // 3, H // 2)
    objects.append((crowd, 'dog', 1, {'size': [H, W], 'counts': uncompressed_counts(crowd)}))
    return objects


def write_coco_problem(root, mask_api):
    """Write root/annotations/instances_val.json and root/val/*.png (flat images of the
    grey levels of SIZES); return the json path and noisy predictions of its masks
    (the fake model's answers, keyed by grey level)."""
    rng = numpy.random.default_rng(0)
    (root / 'annotations').mkdir(parents=True)
    (root / 'val').mkdir()
    images, annotations, answers = [], [], {}
    for image_id, (level, size) in enumerate(SIZES.items(), 1):
        Image.fromarray(numpy.full(size + (3,), level, numpy.uint8)).save(
            root / 'val' / f'{level}.png')
        images.append({'id': image_id, 'file_name': f'{level}.png', 'height': size[0],
                       'width': size[1]})
        objects = _objects(rng, size, mask_api) if level != 160 else []
        for mask, name, crowd, segmentation in objects:
            ys, xs = numpy.nonzero(mask)
            annotations.append({
                'id': len(annotations) + 1, 'image_id': image_id,
                'category_id': CATEGORY_ID[name], 'iscrowd': crowd,
                'segmentation': segmentation, 'area': float(mask.sum()),
                'bbox': [int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1),
                         int(ys.max() - ys.min() + 1)]})
        gt_masks = numpy.array([o[0] for o in objects], bool).reshape((-1,) + size)
        gt_labels = numpy.array([MODEL_NAMES.index(o[1]) for o in objects], numpy.int32)
        noisy = (gt_masks & (rng.random(gt_masks.shape) < 0.9)) | (
            rng.random(gt_masks.shape) < 0.01)
        extra, extra_labels, _ = random_instances(rng, 3, size, 3)
        masks = numpy.concatenate([noisy, extra])
        wrong = numpy.arange(len(gt_labels)) == 1  # one wrong class per image
        labels = numpy.r_[(gt_labels + wrong) % 3, extra_labels].astype(numpy.int32)
        scores = rng.permutation(len(masks)).astype(numpy.float32) / len(masks) + 0.01
        answers[level] = (masks, labels, scores)
    json_path = root / 'annotations' / 'instances_val.json'
    json_path.write_text(json.dumps({'images': images, 'annotations': annotations,
                                     'categories': CATEGORIES}))
    return json_path, answers


def pycocotools_segm(json_path, predictions, mask_api):
    """COCOeval(segm) stats of ``predictions`` (per image of SIZES: masks, labels,
    scores in MODEL_NAMES labels) on the json; -1 is nan."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(json_path))
        results = []
        for image_id, prediction in enumerate(predictions, 1):
            for mask, label, score in zip(*prediction):
                rle = mask_api.encode(numpy.asfortranarray(mask.astype(numpy.uint8)))
                results.append({'image_id': image_id, 'score': float(score),
                                 'category_id': CATEGORY_ID[MODEL_NAMES[label]],
                                 'segmentation': rle})
        coco_eval = COCOeval(gt, gt.loadRes(results), 'segm')
        coco_eval.evaluate()
        coco_eval.accumulate()
        coco_eval.summarize()
    return numpy.where(coco_eval.stats == -1, numpy.nan, coco_eval.stats)
