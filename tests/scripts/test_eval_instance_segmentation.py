"""scripts/eval_instance_segmentation.py on a fake segmenter: a COCO-format json (polygon,
RLE and crowd masks) against pycocotools' 'segm' evaluation, a VOC-layout folder against
eval_instance_segmentation_voc, and the dataset names of the registry."""

import numpy
import pytest
from PIL import Image

from cvzoo.datasets import registry
from cvzoo.evaluators import eval_instance_segmentation_voc

from tests.helpers import coco_masks
from tests.helpers.coco_masks import SIZES, SUMMARY_KEYS
from tests.helpers.fake_instance_segmenter import NAME, fake_instance_segmenter  # noqa: F401
from tests.helpers.scripts import load_script


@pytest.fixture(scope='module')
def script():
    return load_script('eval_instance_segmentation')


@pytest.mark.reference
def test_coco_json_equals_pycocotools_segm(script, fake_instance_segmenter, tmp_path,  # noqa: F811
                                           monkeypatch, capsys):
    mask_api = pytest.importorskip('pycocotools.mask')
    json_path, answers = coco_masks.write_coco_problem(tmp_path / 'coco', mask_api)
    monkeypatch.setattr(fake_instance_segmenter, 'default_answers', answers)
    report = script.main(['--model', NAME, '--pretrained-model', 'coco', '--dataset',
                          str(json_path), '--batch-size', '2'])
    ours = numpy.array([report[key] for key in SUMMARY_KEYS])
    expected = coco_masks.pycocotools_segm(json_path, [answers[v] for v in SIZES], mask_api)
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
    assert 'AP@0.5' in out and 'AP@0.7' in out
    assert (f'reported: map_voc07 50.00 on voc2012_val (a test); measured: '
            f'{100 * report["map/iou=0.50"]:.2f}') in out
