"""scripts/eval_keypoint_detection.py on a fake keypoint detector: a COCO-layout
person_keypoints folder against pycocotools' COCOeval('keypoints') reading the same json,
and the printout."""

import contextlib
import io
import json

import numpy
import pytest
from PIL import Image

from tests.helpers.fake_keypoint_detector import NAME, fake_keypoint_detector  # noqa: F401
from tests.helpers.fake_keypoint_detector import random_people
from tests.helpers.scripts import load_script

SIZES = {40: (120, 160), 90: (200, 150), 140: (160, 160), 190: (100, 220)}  # level -> size
KEYS = [f'{m}/iou={iou}/area={area}/max_dets=20' for m in ('map', 'mar') for iou, area in (
    ('0.50:0.95', 'all'), ('0.50', 'all'), ('0.75', 'all'), ('0.50:0.95', 'medium'),
    ('0.50:0.95', 'large'))]


@pytest.fixture(scope='module')
def script():
    return load_script('eval_keypoint_detection')


def _write_problem(root):
    """A COCO-layout folder (one image per grey level, people with v = 0, 1, 2 and a
    crowd); return the fake model's answers by grey level and the json's path."""
    rng = numpy.random.default_rng(0)
    (root / 'annotations').mkdir(parents=True)
    (root / 'val').mkdir()
    images, annotations, answers = [], [], {}
    for image_id, (level, (H, W)) in enumerate(SIZES.items(), 1):
        Image.fromarray(numpy.full((H, W, 3), level, numpy.uint8)).save(
            root / 'val' / f'{level}.png')
        images.append({'id': image_id, 'file_name': f'{level}.png', 'width': W, 'height': H})
        points, visibles, _, bboxes = random_people(rng, 3, (H, W))
        v = numpy.where(visibles, rng.integers(1, 3, visibles.shape), 0)
        for k in range(3):
            crowd = level == 90 and k == 2
            x0, y0, x1, y1 = bboxes[k].tolist()
            triples = numpy.c_[numpy.where(v[k, :, None] > 0, points[k], 0), v[k]]
            annotations.append({
                'id': len(annotations) + 1, 'image_id': image_id, 'category_id': 1,
                'iscrowd': int(crowd), 'bbox': [x0, y0, x1 - x0, y1 - y0],
                'area': (x1 - x0) * (y1 - y0) * 0.5,
                'keypoints': (0 * triples if crowd else triples).ravel().tolist(),
                'num_keypoints': 0 if crowd else int((v[k] > 0).sum())})
        source = rng.integers(0, 3, 4)
        noisy = points[source] + rng.normal(0, 3, (4, 17, 2))
        others = random_people(rng, 2, (H, W))[0]
        answers[level] = (numpy.concatenate([noisy, others]), numpy.zeros(6, numpy.int32),
                          numpy.round(rng.random(6), 2))
    json_path = root / 'annotations' / 'person_keypoints_val.json'
    json_path.write_text(json.dumps({
        'images': images, 'annotations': annotations,
        'categories': [{'id': 1, 'name': 'person', 'keypoints': [str(k) for k in range(17)]}]}))
    return answers, json_path


def _pycocotools(json_path, answers):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    results = []
    for image_id, level in enumerate(SIZES, 1):
        for point, score in zip(answers[level][0].tolist(), answers[level][2].tolist()):
            results.append({'image_id': image_id, 'category_id': 1, 'score': score,
                            'keypoints': [v for x, y in point for v in (x, y, 1)]})
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO(str(json_path))
        coco_eval = COCOeval(coco_gt, coco_gt.loadRes(results), 'keypoints')
        coco_eval.evaluate()
        coco_eval.accumulate()
        coco_eval.summarize()
    return numpy.where(coco_eval.stats == -1, numpy.nan, coco_eval.stats)


@pytest.mark.reference
def test_coco_folder_equals_pycocotools_keypoints(script, fake_keypoint_detector,  # noqa: F811
                                                  tmp_path, monkeypatch, capsys):
    pytest.importorskip('pycocotools')
    answers, json_path = _write_problem(tmp_path / 'coco')
    monkeypatch.setattr(fake_keypoint_detector, 'default_answers', answers)
    report = script.main(['--model', NAME, '--pretrained-model', 'coco', '--dataset',
                          str(tmp_path / 'coco'), '--batch-size', '2'])
    ours = numpy.array([report[key] for key in KEYS])
    numpy.testing.assert_allclose(ours, _pycocotools(json_path, answers), atol=1e-4)
    assert 0.1 < ours[0] < 0.9  # neither trivial nor empty
    out = capsys.readouterr().out
    assert 'dataset: ' in out and '4 images, coco protocol' in out
    assert out.count('map/') + out.count('mar/') == 10
    assert (f'reported: keypoint_map_coco 65.00 on coco_val2017 (a test); measured: '
            f'{100 * ours[0]:.2f}') in out


def test_a_json_with_limit_and_an_unknown_dataset(script, fake_keypoint_detector,  # noqa: F811
                                                  tmp_path, monkeypatch, capsys):
    answers, json_path = _write_problem(tmp_path / 'coco')
    monkeypatch.setattr(fake_keypoint_detector, 'default_answers', answers)
    report = script.main(['--model', NAME, '--pretrained-model', 'coco', '--dataset',
                          str(json_path), '--limit', '1'])
    assert '1 images, coco protocol' in capsys.readouterr().out
    assert set(KEYS) <= set(report)
    with pytest.raises(ValueError, match='dataset'):
        script.main(['--model', NAME, '--pretrained-model', 'coco', '--dataset',
                     str(tmp_path / 'absent')])
