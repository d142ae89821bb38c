"""VOC07 mAP of ChainerCV-weight detectors equals ChainerCV's own pipeline (issue #15).

ChainerCV's VOC loader gives inclusive boxes (``x_max = xmax - 1``) and its metric adds 1;
cvzoo's loader gives continuous boxes (``x_max = xmax``) and its metric adds nothing. A
model with ChainerCV's VOC weights learned inclusive boxes, so its entry says
``box_convention='inclusive'`` and Detector.predict returns them continuous
(:func:`cvzoo.models.detection.detector.as_continuous`). Checked end to end here:

1. ChainerCV builds the model with seeded random weights, saves them as its published
   files are saved, and predicts a few small images read from a VOC-layout folder;
2. the ground truth is made from those detections (each moved by up to a fifth of its
   size, so that IoUs spread around 0.5 and a one-pixel shift flips some matches), with
   one box that no detection finds and one difficult object, and written as VOC xml;
3. ChainerCV's ``VOCBboxDataset`` and ``eval_detection_voc(use_07_metric=True)`` score
   ChainerCV's detections; cvzoo's ``VOCBboxDataset`` and ``eval_detection_voc`` score
   cvzoo's detections of the same file, loaded through the zoo entry. The two mAPs agree
   to 1e-6, and cvzoo's boxes without the conversion score differently.

ChainerCV does not clip SSD's boxes to the image; cvzoo's predict() does (DESIGN.md), so
ChainerCV's detections are clipped to the image's pixel indices before its metric.
"""

import importlib.util
import pathlib
import xml.etree.ElementTree as ElementTree

import numpy
import pytest

from cvzoo.datasets.voc import voc_bbox_dataset, voc_label_names
from cvzoo.evaluators.metrics import eval_detection_voc
from cvzoo.models.detection.ssd import ssd

_spec = importlib.util.spec_from_file_location(
    'cvzoo_tests_chainercv_reference_tools',
    pathlib.Path(__file__).resolve().parents[1] / 'chainercv_reference_tools.py')
tools = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tools)

pytestmark = [pytest.mark.reference, pytest.mark.slow]

# (H, W) of the images: small, as a one-pixel shift must matter (SSD resizes to 300).
IMAGE_SIZES = ((60, 80), (72, 64), (56, 90))
IDS = [f'{i:06d}' for i in range(len(IMAGE_SIZES))]

BUILD_AND_PREDICT = '''
import os
import chainercv.links
import chainercv.utils
numpy.random.seed(SEED)
model = chainercv.links.SSD300(n_fg_class=20)
with chainer.using_config('train', False), chainer.no_backprop_mode():
    model(numpy.zeros((1, 3, model.insize, model.insize), numpy.float32))  # lazy weights
for conf in model.multibox.conf:
    conf.W.array[...] *= CONF_SCALE
    conf.b.array.reshape(-1, 21)[:, 0] += BACKGROUND_BIAS
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
imgs = [chainercv.utils.read_image(os.path.join(WORKDIR, 'voc', 'JPEGImages', f'{id_}.jpg'))
        for id_ in IDS]
model.use_preset('evaluate')
bboxes, labels, scores = model.predict(imgs)
for i, (bbox, label, score) in enumerate(zip(bboxes, labels, scores)):
    OUTPUTS[f'bbox/{i}'] = numpy.asarray(bbox, numpy.float32).reshape(-1, 4)
    OUTPUTS[f'label/{i}'] = numpy.asarray(label, numpy.int32)
    OUTPUTS[f'score/{i}'] = numpy.asarray(score, numpy.float32)
'''

LOAD_AND_EVALUATE = '''
import os
from chainercv.datasets import VOCBboxDataset
from chainercv.evaluations import eval_detection_voc
numpy.bool = bool  # NOTE: ChainerCV 0.13's VOC loader uses the alias NumPy 1.24 removed
dataset = VOCBboxDataset(os.path.join(WORKDIR, 'voc'), split='test', year='2007',
                         use_difficult=True, return_difficult=True)
gt = [dataset[i][1:] for i in range(len(dataset))]
n = len(dataset)
for name, prefix in (('clipped', 'clipped/'), ('raw', '')):
    result = eval_detection_voc(
        [INPUTS[f'{prefix}bbox/{i}'] for i in range(n)], [INPUTS[f'label/{i}'] for i in range(n)],
        [INPUTS[f'score/{i}'] for i in range(n)], [g[0] for g in gt], [g[1] for g in gt],
        [g[2] for g in gt], iou_thresh=0.5, use_07_metric=True)
    OUTPUTS[f'{name}/map'] = result['map']
    OUTPUTS[f'{name}/ap'] = result['ap']
for i, (bbox, label, difficult) in enumerate(gt):
    OUTPUTS[f'gt_bbox/{i}'] = bbox
'''


def _write_images(root, rng):
    """Noise images as ``JPEGImages/<id>.jpg``; returns them as (3, H, W) float32.

    NOTE: the files hold PNG bytes: both loaders open them by content, and a lossless
    format keeps two Pillow builds (cvzoo's, ChainerCV's) from decoding different pixels.
    """
    from PIL import Image

    (root / 'JPEGImages').mkdir(parents=True)
    imgs = []
    for id_, (H, W) in zip(IDS, IMAGE_SIZES):
        img = rng.integers(0, 256, (H, W, 3), dtype=numpy.uint8)
        Image.fromarray(img).save(root / 'JPEGImages' / f'{id_}.jpg', format='PNG')
        imgs.append(img.transpose(2, 0, 1).astype(numpy.float32))
    return imgs


def _ground_truth(outputs, rng, n_per_image=6):
    """Per image: VOC xml boxes (1-based xmin, ymin, xmax, ymax), labels, difficult flags.

    Made from the best ``n_per_image`` detections of each image: every other one moved
    sideways by 25-42 % of its width (an IoU of about 0.4-0.6, where a one-pixel shift
    decides the match), the others by up to 10 % on each side; plus one random box. The
    last detection-made object of the first image is difficult.
    """
    annotations = []
    for i, (H, W) in enumerate(IMAGE_SIZES):
        y_min, x_min, y_max, x_max = outputs[f'bbox/{i}'][:n_per_image].T  # inclusive
        size = numpy.stack([x_max - x_min, y_max - y_min] * 2, axis=1)
        move = rng.uniform(-0.1, 0.1, size.shape)
        move[::2] = 0
        n_moved = len(move[::2])
        move[::2, 0::2] = rng.uniform(0.25, 0.42, (n_moved, 1)) * rng.choice([-1, 1], (n_moved, 1))
        box = numpy.stack([x_min, y_min, x_max, y_max], axis=1)
        box = numpy.round(box + size * move) + 1
        extra = numpy.sort(rng.integers(1, [W, H], (2, 2)), axis=0).T.reshape(1, 4)
        box = numpy.concatenate([box, extra[:, [0, 2, 1, 3]]])
        box[:, :2] = numpy.clip(box[:, :2], 1, [W - 2, H - 2])
        box[:, 2:] = numpy.clip(box[:, 2:], box[:, :2] + 2, [W, H])
        label = numpy.append(outputs[f'label/{i}'][:n_per_image], rng.integers(0, 20))
        difficult = numpy.zeros(len(box), bool)
        if i == 0:
            difficult[len(box) - 2] = True
        annotations.append((box.astype(int), label, difficult))
    return annotations


def _write_annotations(root, annotations):
    (root / 'Annotations').mkdir()
    (root / 'ImageSets' / 'Main').mkdir(parents=True)
    (root / 'ImageSets' / 'Main' / 'test.txt').write_text('\n'.join(IDS) + '\n')
    for id_, (H, W), (box, label, difficult) in zip(IDS, IMAGE_SIZES, annotations):
        annotation = ElementTree.Element('annotation')
        size = ElementTree.SubElement(annotation, 'size')
        for tag, value in (('width', W), ('height', H), ('depth', 3)):
            ElementTree.SubElement(size, tag).text = str(value)
        for values, name, flag in zip(box, label, difficult):
            obj = ElementTree.SubElement(annotation, 'object')
            ElementTree.SubElement(obj, 'name').text = voc_label_names.voc_bbox_label_names[name]
            ElementTree.SubElement(obj, 'difficult').text = str(int(flag))
            bndbox = ElementTree.SubElement(obj, 'bndbox')
            for tag, value in zip(('xmin', 'ymin', 'xmax', 'ymax'), values):
                ElementTree.SubElement(bndbox, tag).text = str(value)
        ElementTree.ElementTree(annotation).write(root / 'Annotations' / f'{id_}.xml')


def _clipped_inclusive(outputs):
    """ChainerCV's y-first boxes clipped to the image's pixel indices, as cvzoo clips."""
    return {f'clipped/bbox/{i}': numpy.clip(outputs[f'bbox/{i}'], 0, [H - 1, W - 1] * 2)
            .astype(numpy.float32) for i, (H, W) in enumerate(IMAGE_SIZES)}


def _cvzoo_map(model, dataset, shift=0.0):
    """cvzoo's VOC07 result of ``model`` on ``dataset``; ``shift`` is added to x_max, y_max."""
    examples = [dataset[i] for i in range(len(dataset))]
    bboxes, labels, scores = model.predict([example[0] for example in examples])
    bboxes = [bbox + numpy.array([0, 0, shift, shift], numpy.float32) for bbox in bboxes]
    return eval_detection_voc.eval_detection_voc(
        bboxes, labels, scores, [example[1] for example in examples],
        [example[2] for example in examples], [example[3] for example in examples],
        iou_thresh=0.5, use_07_metric=True)


def test_ssd300_voc07_map_equals_chainercv(chainercv_reference, tmp_path, monkeypatch, rng):
    root = tmp_path / 'voc'
    imgs = _write_images(root, rng)
    file_name = ssd.SSD300.weights['voc0712'].url.rsplit('/', 1)[1]
    predicted = tools.run(chainercv_reference, BUILD_AND_PREDICT, tmp_path,
                          {'SEED': 0, 'FILE_NAME': file_name, 'IDS': tuple(IDS),
                           'CONF_SCALE': 10.0, 'BACKGROUND_BIAS': 25.0})
    assert all(len(predicted[f'score/{i}']) >= 6 for i in range(len(IDS)))
    _write_annotations(root, _ground_truth(predicted, rng))
    reference = tools.run(chainercv_reference, LOAD_AND_EVALUATE, tmp_path,
                          **predicted, **_clipped_inclusive(predicted))

    dataset = voc_bbox_dataset.VOCBboxDataset(root, split='test', use_difficult=True,
                                              return_difficult=True)
    for i, img in enumerate(imgs):
        numpy.testing.assert_array_equal(dataset[i][0], img)
        # the two loaders' boxes differ by ChainerCV's 1 on x_max, y_max only
        numpy.testing.assert_array_equal(
            dataset[i][1], reference[f'gt_bbox/{i}'][:, [1, 0, 3, 2]] + [0, 0, 1, 1])
    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', ssd.SSD300, 'voc0712')
    model.use_preset('evaluate')
    assert model.box_convention == 'inclusive'
    ours = _cvzoo_map(model, dataset)

    expected = float(reference['clipped/map'])
    assert 0.05 < expected < 0.95, f'ChainerCV mAP {expected}: too easy or too hard a test'
    assert abs(float(ours['map']) - expected) <= 1e-6, (
        f'cvzoo VOC07 mAP {ours["map"]} != ChainerCV {expected} (ChainerCV unclipped: '
        f'{float(reference["raw/map"])})')
    numpy.testing.assert_allclose(ours['ap'], reference['clipped/ap'], rtol=0, atol=1e-6)
    # The test can fail: cvzoo's boxes without the conversion score otherwise.
    unconverted = _cvzoo_map(model, dataset, shift=-1.0)
    assert abs(float(unconverted['map']) - expected) > 1e-3, (
        f'unconverted boxes score {unconverted["map"]} too, the ground truth cannot tell')
