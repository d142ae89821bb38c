"""scripts/eval_instance_segmentation.py on a fake segmenter: a COCO-format json (polygon,
RLE and crowd masks) against pycocotools' 'segm' evaluation, a VOC-layout folder against
eval_instance_segmentation_voc, and the dataset names of the registry."""

import contextlib
import io
import json

import numpy
import pytest
from PIL import Image

from cvzoo.datasets import registry
from cvzoo.evaluators import eval_instance_segmentation_voc

from tests.helpers.fake_instance_segmenter import (NAME, fake_instance_segmenter,  # noqa: F401
                                                   random_instances)
from tests.helpers.scripts import load_script

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


@pytest.fixture(scope='module')
def script():
    return load_script('eval_instance_segmentation')


def _rectangle(size, x0, y0, x1, y1):
    mask = numpy.zeros(size, bool)
    mask[y0:y1, x0:x1] = True
    return mask


def _runs(mask):
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
        objects.append((_rectangle(size, x0, y0, x1, y1), MODEL_NAMES[k], 0, polygon))
    blobs, labels, _ = random_instances(rng, 2, size, 3)
    for blob, label in zip(blobs, labels):
        rle = mask_api.encode(numpy.asfortranarray(blob.astype(numpy.uint8)))
        objects.append((blob, MODEL_NAMES[label], 0,
                        {'size': [H, W], 'counts': rle['counts'].decode('ascii')}))
    crowd = _rectangle(size, 0, 0, W // 3, H // 2)
    objects.append((crowd, 'dog', 1, {'size': [H, W], 'counts': _runs(crowd)}))
    return objects


def _coco_problem(root, mask_api):
    """Write root/annotations/instances_val.json and root/val/*.png; return the json path
    and the fake model's answers (keyed by grey level)."""
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


def _pycocotools_segm(json_path, answers, mask_api):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(str(json_path))
        results = []
        for image_id, level in enumerate(SIZES, 1):
            for mask, label, score in zip(*answers[level]):
                rle = mask_api.encode(numpy.asfortranarray(mask.astype(numpy.uint8)))
                results.append({'image_id': image_id, 'score': float(score),
                                 'category_id': CATEGORY_ID[MODEL_NAMES[label]],
                                 'segmentation': rle})
        coco_eval = COCOeval(gt, gt.loadRes(results), 'segm')
        coco_eval.evaluate()
        coco_eval.accumulate()
        coco_eval.summarize()
    return coco_eval.stats


@pytest.mark.reference
def test_coco_json_equals_pycocotools_segm(script, fake_instance_segmenter, tmp_path,  # noqa: F811
                                           monkeypatch, capsys):
    mask_api = pytest.importorskip('pycocotools.mask')
    json_path, answers = _coco_problem(tmp_path / 'coco', mask_api)
    monkeypatch.setattr(fake_instance_segmenter, 'default_answers', answers)
    report = script.main(['--model', NAME, '--pretrained-model', 'coco', '--dataset',
                          str(json_path), '--batch-size', '2'])
    ours = numpy.array([report[key] for key in SUMMARY_KEYS])
    expected = _pycocotools_segm(json_path, answers, mask_api)
    expected = numpy.where(expected == -1, numpy.nan, expected)
    numpy.testing.assert_allclose(ours, expected, atol=1e-4)
    assert 0.1 < ours[0] < 0.9  # neither trivial nor empty
    out = capsys.readouterr().out
    assert 'dataset: ' in out and '4 images, coco protocol' in out
    assert out.count('map/') + out.count('mar/') == 12
    assert (f'reported: mask_map_coco 37.50 on coco_val2017 (a test); measured: '
            f'{100 * ours[0]:.2f}') in out


def _voc_folder(root):
    """A VOC2012-layout folder with SegmentationObject/Class PNGs; return the answers of
    the fake model and the ground truth the dataset reads."""
    rng = numpy.random.default_rng(1)
    for sub in ('JPEGImages', 'SegmentationClass', 'SegmentationObject',
                'ImageSets/Segmentation'):
        (root / sub).mkdir(parents=True)
    answers, ids = {}, []
    for level, size in list(SIZES.items())[:3]:
        H, W = size
        obj = numpy.zeros(size, numpy.uint8)
        cls = numpy.zeros(size, numpy.uint8)
        boxes = [(0, 0, W // 2, H // 2, 12), (W // 2, 0, W, H // 2, 15),
                 (0, H // 2, W, H, 8)]
        for k, (x0, y0, x1, y1, voc_class) in enumerate(boxes, 1):
            obj[y0:y1, x0:x1], cls[y0:y1, x0:x1] = k, voc_class
        obj[H // 2, :], cls[H // 2, :] = 255, 255
        name = f'img{level}'
        Image.fromarray(numpy.full(size + (3,), level, numpy.uint8)).save(
            root / 'JPEGImages' / f'{name}.jpg', quality=100)
        for folder, array in (('SegmentationObject', obj), ('SegmentationClass', cls)):
            Image.fromarray(array, mode='L').convert('P').save(root / folder / f'{name}.png')
        gt = obj[None] == numpy.arange(1, 4)[:, None, None]
        noisy = gt ^ (rng.random(gt.shape) < 0.05)
        shrunk = gt & (numpy.arange(W)[None, None, :] < W // 3)
        masks = numpy.concatenate([noisy, shrunk])
        labels = numpy.array([11, 14, 7, 11, 14, 7], numpy.int32)
        answers[level] = (masks, labels, rng.random(6).astype(numpy.float32))
        ids.append(name)
    (root / 'ImageSets' / 'Segmentation' / 'val.txt').write_text('\n'.join(ids) + '\n')
    return answers


@pytest.mark.parametrize('flag', [[], ['--use-07-metric']], ids=['area', '07'])
def test_voc_folder_equals_eval_instance_segmentation_voc(script, fake_instance_segmenter,  # noqa: F811
                                                          tmp_path, monkeypatch, capsys,
                                                          flag):
    answers = _voc_folder(tmp_path / 'voc')
    monkeypatch.setattr(fake_instance_segmenter, 'default_answers', answers)
    report = script.main(['--model', NAME, '--pretrained-model', 'voc', '--dataset',
                          'voc2012-val', '--data-dir', str(tmp_path / 'voc')] + flag)
    data = registry.load_instance_segmentation_dataset('voc2012-val',
                                                       data_dir=str(tmp_path / 'voc'))
    gt_masks = [data.dataset[i][1] for i in range(3)]
    gt_labels = [data.dataset[i][2] for i in range(3)]
    assert [len(m) for m in gt_masks] == [3, 3, 3]
    levels = list(SIZES)[:3]
    for thresh in (0.5, 0.7):
        expected = eval_instance_segmentation_voc(
            [answers[v][0] for v in levels], [answers[v][1] for v in levels],
            [answers[v][2] for v in levels], gt_masks, gt_labels, iou_thresh=thresh,
            use_07_metric=bool(flag))
        assert report[f'map/iou={thresh:.2f}'] == expected['map']
        per_class = numpy.full(len(data.label_names), numpy.nan)
        per_class[:len(expected['ap'])] = expected['ap']
        numpy.testing.assert_array_equal(
            [report.get(f'ap/iou={thresh:.2f}/{name}', numpy.nan)
             for name in data.label_names], per_class)
    assert report['map/iou=0.50'] > report['map/iou=0.70'] > 0
    out = capsys.readouterr().out
    assert ('11-point (VOC2007)' if flag else 'all-point') in out
    assert 'AP@0.5' in out and 'AP@0.7' in out and 'reported: map_voc07 50.00' in out
