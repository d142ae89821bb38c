"""YOLO with ChainerCV's weights gives ChainerCV's detections.

YOLOv2 and YOLOv3 run against ChainerCV 0.13.1 itself: ChainerCV builds the model for
20 classes with seeded random weights (batch norms calibrated so the activations stay
informative and their eps matters; head channels scaled so that boxes stay sane and
some but not all scores pass each preset), saves it with ``chainer.serializers.save_npz``
under the entry's file name, and predicts two images with both presets; cvzoo loads the
file through its ``voc0712`` entry from a weights mirror, as a download. The prepared
inputs and the raw head outputs (ChainerCV's locs, objs and confs) are compared too.

Both run at a 160x160 input instead of 416 (ChainerCV's extractor sizes are class
attributes; cvzoo's network takes any multiple of 32): the network and decoding are the
same at any size, and 160 keeps ChainerCV's forward pass affordable. Both images are
smaller than 160, so ``resize_contain`` only pads them; ChainerCV resizes larger images
with PIL when OpenCV is absent (as here) but its published YOLO files expect OpenCV,
whose bilinear resize cvzoo reproduces (tests/models/detection/yolo/test_resize_contain.py).

ChainerCV 0.13.1 has no YOLOv2-tiny; :func:`test_tiny_decode_equals_the_chainercv_
transcription` checks cvzoo's YOLOv2Tiny against a NumPy transcription of ChainerCV's
YOLOv2 decoding (the same ``YOLOv2Base`` code decodes the tiny model in later ChainerCV).
"""


import numpy
import pytest

from cvzoo.core import config
from cvzoo.models.detection.yolo.resize_contain import contain_size, resize_contain
from cvzoo.models.detection.yolo.yolo_v2 import YOLOv2, YOLOv2Tiny
from cvzoo.models.detection.yolo.yolo_v3 import YOLOv3
from tests.helpers import chainercv_reference_tools as tools


INSIZE = 160
SCRIPT = '''
import os
import chainercv.links
from chainercv.links.model.yolo import yolo_v2, yolo_v3
yolo_v2.Darknet19Extractor.insize = INSIZE
yolo_v2.Darknet19Extractor.grid = INSIZE // 32
yolo_v3.Darknet53Extractor.insize = INSIZE
yolo_v3.Darknet53Extractor.grids = (INSIZE // 32, INSIZE // 16, INSIZE // 8)
numpy.random.seed(SEED)
model = getattr(chainercv.links, MODEL)(n_fg_class=20)
batch = numpy.random.uniform(0, 1, (2, 3, INSIZE, INSIZE)).astype(numpy.float32)
calibrate_batch_normalization(model, model, batch)
heads = [model.subnet] if MODEL == 'YOLOv2' else [head[1] for head in model.subnet]
locs, objs, confs = (y.array for y in model(batch))
for head in heads:  # box offsets of std LOC_STD, objectness and class logits of std 3
    W, b = (a.reshape(-1, 25, *a.shape[1:]) for a in (head.W.array, head.b.array))
    W[:, :4] *= LOC_STD / locs.std()
    b[:, :4] *= LOC_STD / locs.std()
    W[:, 4:] *= 3 / numpy.concatenate((objs.ravel(), confs.ravel())).std()
    b[:, 4] = OBJ_BIAS
imgs = [INPUTS['img0'], INPUTS['img1']]
forward = model.forward
def recording_forward(x):
    locs, objs, confs = forward(x)
    for name, value in (('x', x), ('locs', locs), ('objs', objs), ('confs', confs)):
        OUTPUTS.setdefault(name, getattr(value, 'array', value))
    return locs, objs, confs
model.forward = recording_forward
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
'''


def _chainercv_layout(raw_maps, n_anchors):
    """cvzoo's raw head maps -> ChainerCV's (locs y-first, objs, confs), (B, K, ...)."""
    rows = []
    for raw, n_anchor in zip(raw_maps, n_anchors):
        B, _, h, w = raw.shape
        t = raw.reshape(B, n_anchor, -1, h, w).transpose(0, 3, 4, 1, 2)
        rows.append(t.reshape(B, h * w * n_anchor, -1))
    t = numpy.concatenate(rows, axis=1)
    return t[..., [1, 0, 3, 2]], t[..., 4], t[..., 5:]


CASES = [pytest.param(YOLOv2, 'YOLOv2', 0.0, id='YOLOv2'),
         pytest.param(YOLOv3, 'YOLOv3', -2.0, id='YOLOv3')]


@pytest.mark.reference
@pytest.mark.slow
@pytest.mark.parametrize('model_class, name, obj_bias', CASES)
def test_detections_equal_chainercv(chainercv_reference, chainercv_detection, tmp_path,
                                    monkeypatch, rng, model_class, name, obj_bias):
    imgs = chainercv_detection.images(rng)
    file_name = model_class.weights['voc0712'].url.rsplit('/', 1)[1]
    outputs = tools.run(
        chainercv_reference, SCRIPT + chainercv_detection.PREDICT_BOTH_PRESETS, tmp_path,
        {'SEED': 0, 'MODEL': name, 'FILE_NAME': file_name, 'INSIZE': INSIZE,
         'LOC_STD': 0.5, 'OBJ_BIAS': obj_bias}, **imgs)
    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror', model_class, 'voc0712')
    model.insize = (INSIZE, INSIZE)
    imgs = [imgs['img0'], imgs['img1']]

    x = numpy.stack([model.prepare(img) for img in imgs])
    numpy.testing.assert_allclose(x, outputs['x'], rtol=0, atol=1e-6)
    with config.using_config('train', False), config.no_backprop_mode():
        raw_maps = [output.array for output in model.network(x)]
    locs, objs, confs = _chainercv_layout(
        raw_maps, [len(head['anchors']) for head in model.network.heads])
    for ours, theirs in ((locs, 'locs'), (objs, 'objs'), (confs, 'confs')):
        tools.assert_features_close(ours, outputs[theirs], name=theirs)

    for preset in ('evaluate', 'visualize'):
        model.use_preset(preset)
        result = model.predict(imgs)
        assert all(len(score) > 0 for score in result[2]), preset
        chainercv_detection.assert_same_detections(outputs, preset, result,
                                                   box_convention=model.box_convention)


# --- YOLOv2-tiny: a transcription of ChainerCV's YOLOv2Base decoding (y-first) ---

ANCHORS_HW = ((1.19, 1.08), (4.41, 3.42), (11.38, 6.63), (5.11, 9.42), (10.52, 16.62))


def _sigmoid(x):
    return 1 / (1 + numpy.exp(-x))


def _chainercv_boxes(raw_yfirst, insize, size):
    """ChainerCV's candidate boxes (y_min, x_min, y_max, x_max) in image pixels, scores."""
    n_anchor = len(ANCHORS_HW)
    _, grid, _ = raw_yfirst.shape
    h = raw_yfirst.transpose(1, 2, 0).reshape(-1, raw_yfirst.shape[0] // n_anchor)
    loc, obj, conf = h[:, :4], h[:, 4], h[:, 5:]
    default_bbox = numpy.array([(v, u, ah, aw) for v in range(grid) for u in range(grid)
                                for ah, aw in ANCHORS_HW], numpy.float64)
    bbox = default_bbox.copy()
    bbox[:, :2] += _sigmoid(loc[:, :2])
    bbox[:, 2:] *= numpy.exp(loc[:, 2:])
    bbox[:, :2] -= bbox[:, 2:] / 2
    bbox[:, 2:] += bbox[:, :2]
    bbox *= insize / grid
    conf = numpy.exp(conf)
    conf /= conf.sum(axis=1, keepdims=True)
    score = _sigmoid(obj)[:, None] * conf
    scaled = contain_size(size, (insize, insize))
    # translate by -insize/2, resize from the scaled size to the image's, translate back
    bbox = (bbox - insize / 2) * numpy.tile(numpy.array(size) / scaled, 2) + numpy.tile(
        numpy.array(size) / 2, 2)
    return bbox, score


def test_tiny_decode_equals_the_chainercv_transcription(tmp_path, rng, chainercv):
    arrays = chainercv.random_file(rng, chainercv.yolov2_tiny_shapes(20))
    # NOTE: a zero head makes ChainerCV's raw output its bias at every cell, known
    # without running any network: the reference does not depend on the conversion.
    arrays['subnet/W'][:] = 0
    arrays['subnet/b'] = rng.uniform(-2, 2, 125).astype(numpy.float32)
    path = tmp_path / 'chainercv_tiny.npz'
    numpy.savez(path, **arrays)
    model = YOLOv2Tiny(pretrained_model=str(path))
    model.insize = (128, 128)
    img = rng.uniform(0, 255, (3, 150, 100)).astype(numpy.float32)
    x = model.prepare(img)
    numpy.testing.assert_array_equal(x, resize_contain(img / 255, (128, 128)))
    with config.using_config('train', False), config.no_backprop_mode():
        outputs = model(x[None])
        bbox, score = model.decode(outputs, [(150, 100)])
    # same rows on both sides: (row, column, anchor), anchor fastest
    raw_yfirst = numpy.broadcast_to(arrays['subnet/b'][:, None, None], (125, 4, 4))
    expected_bbox, expected_score = _chainercv_boxes(raw_yfirst.astype(numpy.float64), 128,
                                                     (150, 100))
    numpy.testing.assert_allclose(score[0], expected_score, rtol=1e-4, atol=1e-7)
    numpy.testing.assert_allclose(bbox[0], expected_bbox[:, [1, 0, 3, 2]], rtol=1e-4,
                                  atol=1e-3)
