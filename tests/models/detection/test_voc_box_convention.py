"""VOC07 mAP of ChainerCV-weight detectors equals ChainerCV's own pipeline (issue #15).

ChainerCV's VOC loader gives inclusive boxes (``x_max = xmax - 1``) and its metric adds 1;
cvzoo's loader gives continuous boxes (``x_max = xmax``) and its metric adds nothing. A
model with ChainerCV's VOC weights learned inclusive boxes, so its entry says
``box_convention='inclusive'`` and Detector.predict returns them continuous
(:func:`cvzoo.models.detection.detector.as_continuous`). Checked end to end here:

1. ChainerCV builds the model with seeded random weights, saves them as its published
   files are saved, and predicts a few small images read from a VOC-layout folder;
2. the ground truth is made from those detections (half of them placed where the one
   pixel of the box convention decides their match at IoU 0.5), with one box that no
   detection finds and one difficult object, and written as VOC xml;
3. ChainerCV's ``VOCBboxDataset`` and ``eval_detection_voc(use_07_metric=True)`` score
   ChainerCV's detections; cvzoo's ``VOCBboxDataset`` and ``eval_detection_voc`` score
   cvzoo's detections of the same file, loaded through the zoo entry. The two mAPs agree
   to 1e-6, and cvzoo's boxes without the conversion score differently.

Checked for SSD300, YOLOv3 (at a 160x160 input) and Faster R-CNN VGG16 (images resized
to 160 px), each with few enough detections that near-equal scores do not reorder.

Clipping: cvzoo's predict() keeps boxes inside the image (DESIGN.md), so an inclusive
box is clipped to the pixel indices before the 1 is added. ChainerCV's SSD and YOLO do
not clip, and its Faster R-CNN clips to [0, W] (one pixel past the last index in its
inclusive terms); ChainerCV's detections are clipped to the pixel indices here before
its metric. On boxes that cross the image border the two pipelines still differ.

The tests at the end need no ChainerCV: every detector entry's convention against its
training data, loading an entry sets it, and predict() converts inclusive boxes.
"""

import dataclasses
import xml.etree.ElementTree as ElementTree

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.datasets.voc import voc_bbox_dataset, voc_label_names
from cvzoo.evaluators.metrics import eval_detection_voc
from cvzoo.models import zoo
from cvzoo.models.weights import pretrained, weights_schema
from cvzoo.models.detection import detector
from cvzoo.models.detection.faster_rcnn import faster_rcnn_vgg
from cvzoo.models.detection.ssd import ssd
from cvzoo.models.detection.yolo import yolo_v3
from tests.helpers import chainercv_reference_tools as tools


# (H, W) of the images: small, as a one-pixel shift must matter (SSD resizes to 300).
IMAGE_SIZES = ((60, 80), (72, 64), (56, 90))
IDS = [f'{i:06d}' for i in range(len(IMAGE_SIZES))]

# Each builds ChainerCV's ``model`` with seeded random weights (as the reference tests of
# the families do) that give some but not all (box, class) pairs a passing score.
SSD300_SCRIPT = '''
model = chainercv.links.SSD300(n_fg_class=20)
with chainer.using_config('train', False), chainer.no_backprop_mode():
    model(numpy.zeros((1, 3, model.insize, model.insize), numpy.float32))  # lazy weights
for conf in model.multibox.conf:
    conf.W.array[...] *= 10.0
    conf.b.array.reshape(-1, 21)[:, 0] += 37.0
'''

# At a 160x160 input (ChainerCV's sizes are class attributes): the images are smaller,
# so resize_contain only pads them.
YOLOV3_SCRIPT = '''
from chainercv.links.model.yolo import yolo_v3
yolo_v3.Darknet53Extractor.insize = 160
yolo_v3.Darknet53Extractor.grids = (5, 10, 20)
model = chainercv.links.YOLOv3(n_fg_class=20)
batch = numpy.random.uniform(0, 1, (2, 3, 160, 160)).astype(numpy.float32)
calibrate_batch_normalization(model, model, batch)
locs, objs, confs = (y.array for y in model(batch))
for head in [head[1] for head in model.subnet]:
    W, b = (a.reshape(-1, 25, *a.shape[1:]) for a in (head.W.array, head.b.array))
    W[:, :4] *= 0.5 / locs.std()
    b[:, :4] *= 0.5 / locs.std()
    W[:, 4:] *= 6 / numpy.concatenate((objs.ravel(), confs.ravel())).std()
    b[:, 4] = -10.0  # sharp, low objectness and class logits: about 100 detections
    b[:, 5:] = -18.0
'''

FASTER_RCNN_VGG16_SCRIPT = '''
model = chainercv.links.FasterRCNNVGG16(
    n_fg_class=20, min_size=160, max_size=240,
    vgg_initialW=chainer.initializers.HeNormal(scale=0.8),
    proposal_creator_params={'n_test_post_nms': 40})
x = model.prepare(imgs[0])[None]
with chainer.using_config('train', False), chainer.no_backprop_mode():
    h = model.extractor(x)
    rpn_locs, rpn_scores, rois, roi_indices, _ = model.rpn(h, x.shape[2:])
scale_linear_output(model.rpn.loc, rpn_locs.array, std=0.2)
scale_linear_output(model.rpn.score, rpn_scores.array, std=2.0)
with chainer.using_config('train', False), chainer.no_backprop_mode():
    _, _, rois, roi_indices, _ = model.rpn(h, x.shape[2:])
    _, roi_scores = model.head(h, rois, roi_indices)
model.head.score.b.array[...] -= roi_scores.array.mean(axis=0)
scale_linear_output(model.head.score, roi_scores.array - roi_scores.array.mean(axis=0), 3.0)
model.head.score.b.array[0] += 6.0
'''

READ_IMAGES = '''
import os
import chainercv.links
import chainercv.utils
numpy.random.seed(0)
imgs = [chainercv.utils.read_image(os.path.join(WORKDIR, 'voc', 'JPEGImages', f'{id_}.jpg'))
        for id_ in IDS]
'''

# Saved after predict(): lazily initialised convolutions hold no weights before.
PREDICT_AND_SAVE = '''
model.use_preset('evaluate')
bboxes, labels, scores = model.predict(imgs)
for i, (bbox, label, score) in enumerate(zip(bboxes, labels, scores)):
    OUTPUTS[f'bbox/{i}'] = numpy.asarray(bbox, numpy.float32).reshape(-1, 4)
    OUTPUTS[f'label/{i}'] = numpy.asarray(label, numpy.int32)
    OUTPUTS[f'score/{i}'] = numpy.asarray(score, numpy.float32)
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
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


def _iou(bbox, box):
    """IoU of continuous boxes (N, 4) with one box (4,)."""
    top_left = numpy.maximum(bbox[:, :2], box[:2])
    bottom_right = numpy.minimum(bbox[:, 2:], box[2:])
    inter = numpy.prod(numpy.clip(bottom_right - top_left, 0, None), axis=1)
    area = numpy.prod(bbox[:, 2:] - bbox[:, :2], axis=1)
    return inter / (area + numpy.prod(box[2:] - box[:2]) - inter)


def _straddling_box(det, size, rng):
    """A VOC box (1-based ints) whose match with the continuous box ``det`` at IoU 0.5
    flips when ``det`` loses 1 on x_max, y_max; None when no shift of ``det`` does it."""
    H, W = size
    base = numpy.round(det) + [1, 1, 0, 0]  # VOC's xmin = x_min + 1, xmax = x_max
    dx, dy = numpy.meshgrid(numpy.arange(-W, W + 1), numpy.arange(-H // 3, H // 3 + 1))
    boxes = base + numpy.stack([dx, dy, dx, dy], axis=-1).reshape(-1, 4)
    boxes = boxes[(boxes[:, :2] >= 1).all(axis=1) & (boxes[:, 2:] <= [W, H]).all(axis=1)]
    continuous = boxes - [1, 1, 0, 0]
    converted = _iou(continuous, det)
    unconverted = _iou(continuous, det - [0, 0, 1, 1])
    # NOTE: IoUs within 1e-3 of 0.5 are left out: the two implementations' boxes differ
    # by float rounding, which must not decide a match.
    clear = (numpy.abs(converted - 0.5) > 1e-3) & (numpy.abs(unconverted - 0.5) > 1e-3)
    flips = boxes[clear & ((converted >= 0.5) != (unconverted >= 0.5))]
    return flips[rng.integers(len(flips))] if len(flips) else None


def _ground_truth(outputs, rng, n_per_image=6):
    """Per image: VOC xml boxes (1-based xmin, ymin, xmax, ymax), labels, difficult flags.

    Made from the best ``n_per_image`` detections of each image (ChainerCV lists them by
    class): every other one moved
    so that whether it matches at IoU 0.5 depends on the one pixel of the box convention
    (:func:`_straddling_box`), the others by up to 10 % on each side; plus one random
    box. The last detection-made object of the first image is difficult.
    """
    annotations = []
    for i, size in enumerate(IMAGE_SIZES):
        H, W = size
        best = numpy.argsort(-outputs[f'score/{i}'], kind='stable')[:n_per_image]
        det = _clipped_inclusive(outputs)[f'clipped/bbox/{i}'][best][:, [1, 0, 3, 2]]
        det = det + numpy.array([0, 0, 1, 1], numpy.float32)  # continuous
        size_4 = numpy.concatenate([det[:, 2:] - det[:, :2]] * 2, axis=1)
        box = numpy.round(det + size_4 * rng.uniform(-0.1, 0.1, det.shape)) + [1, 1, 0, 0]
        for j in range(0, len(det), 2):
            straddling = _straddling_box(det[j], size, rng)
            if straddling is not None:
                box[j] = straddling
        extra = numpy.sort(rng.integers(1, [W, H], (2, 2)), axis=0).T.reshape(1, 4)
        box = numpy.concatenate([box, extra[:, [0, 2, 1, 3]]])
        box[:, :2] = numpy.clip(box[:, :2], 1, [W - 2, H - 2])
        box[:, 2:] = numpy.clip(box[:, 2:], box[:, :2] + 2, [W, H])
        label = numpy.append(outputs[f'label/{i}'][best], rng.integers(0, 20))
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


def _yolo_at_160(model):
    """cvzoo's YOLOv3 at the 160x160 input ChainerCV's runs at (YOLOV3_SCRIPT)."""
    model.insize = (160, 160)


# (model class, weights key, ChainerCV script, cvzoo keyword arguments, cvzoo set-up)
CASES = {
    'SSD300': (ssd.SSD300, 'voc0712', SSD300_SCRIPT, {}, None),
    'YOLOv3': (yolo_v3.YOLOv3, 'voc0712', YOLOV3_SCRIPT, {}, _yolo_at_160),
    'FasterRCNNVGG16': (faster_rcnn_vgg.FasterRCNNVGG16, 'voc07', FASTER_RCNN_VGG16_SCRIPT,
                        {'min_size': 160, 'max_size': 240,
                         'proposal_creator_params': {'n_test_post_nms': 40}}, None),
}


@pytest.mark.reference
@pytest.mark.slow
@pytest.mark.parametrize('name', list(CASES))
def test_voc07_map_equals_chainercv(chainercv_reference, tmp_path, monkeypatch, rng, name):
    model_class, key, script, kwargs, set_up = CASES[name]
    root = tmp_path / 'voc'
    imgs = _write_images(root, rng)
    file_name = model_class.weights[key].url.rsplit('/', 1)[1]
    predicted = tools.run(chainercv_reference, READ_IMAGES + script + PREDICT_AND_SAVE,
                          tmp_path, {'FILE_NAME': file_name, 'IDS': tuple(IDS)})
    # NOTE: not too many either: near-equal scores of the two implementations (they
    # differ by float rounding) may come in either order, and among hundreds some would.
    counts = [len(predicted[f'score/{i}']) for i in range(len(IDS))]
    assert all(6 <= count <= 200 for count in counts), f'detections per image: {counts}'
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
    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', model_class, key,
                                   **kwargs)
    if set_up is not None:
        set_up(model)
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


# --- the convention as data, and the conversion, without ChainerCV ---


class _FixedBoxes(detector.Detector):
    """A detector whose network finds the same two boxes in any image."""

    device = backend.get_device('cpu')
    score_thresh = 0.1

    def prepare(self, img):
        return numpy.zeros((3, 4, 4), numpy.float32)

    def forward(self, x):
        return x

    def decode(self, outputs, sizes):
        bbox = numpy.array([[[2, 3, 9, 7], [-4, 1, 30, 29]]] * len(sizes), numpy.float32)
        score = numpy.array([[[0.9], [0.8]]] * len(sizes), numpy.float32)
        return bbox, score


def test_predict_returns_continuous_boxes_of_inclusive_weights():
    model = _FixedBoxes()
    img = numpy.zeros((3, 20, 24), numpy.float32)
    bboxes, _, _ = model.predict([img])
    numpy.testing.assert_array_equal(bboxes[0], [[2, 3, 9, 7], [0, 1, 24, 20]])
    model.box_convention = 'inclusive'
    bboxes, _, _ = model.predict([img])
    # clipped to the pixel indices (x <= 23, y <= 19), then x_max, y_max + 1
    numpy.testing.assert_array_equal(bboxes[0], [[2, 3, 10, 8], [0, 1, 24, 20]])
    assert bboxes[0].dtype == numpy.float32


def test_unknown_box_convention_is_refused():
    with pytest.raises(ValueError, match='box_convention'):
        detector.as_continuous(numpy.zeros((1, 4), numpy.float32), (4, 4), 'half-open')
    entry = ssd.SSD300.weights['voc0712']
    problems = weights_schema.schema_problems(dataclasses.replace(entry,
                                                                  box_convention='half'))
    assert any(problem.startswith('box_convention') for problem in problems)


def test_every_detector_entry_names_its_box_convention():
    """VOC-trained detectors (ChainerCV's and Darknet's, the zoo's only ones) learned
    inclusive boxes, COCO-trained ones continuous; backbones predict no boxes."""
    for name, key, weights in zoo.iter_weights('detection'):
        where = f'{name} {key}'
        if weights.reported.metric in ('top1', 'top5'):
            assert weights.box_convention is None, where
        elif weights.reported.dataset.startswith('voc'):
            assert weights.box_convention == 'inclusive', where
        else:
            assert weights.box_convention == 'continuous', where


def test_loading_an_entry_sets_the_box_convention():
    voc, backbone = ssd.SSD300.weights['voc0712'], ssd.SSD300.weights['imagenet']
    model = _FixedBoxes()
    pretrained.load_pretrained(model, None, None, 20, backbone, None)
    assert model.box_convention == 'continuous'
    pretrained.load_pretrained(model, None, None, 20, voc, None)
    assert model.box_convention == 'inclusive'
    assert _FixedBoxes.box_convention == 'continuous'
