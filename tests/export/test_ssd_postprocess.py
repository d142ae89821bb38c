"""to_onnx(ssd, ..., with_postprocess=True): decode, NMS and top-k in the ONNX graph.

The file, run by onnxruntime on the prepared batch and the images' sizes, must give the
detections of cvzoo's predict() on the same images (random weights): SSD300 (no caps,
scores >= the threshold) and SSDTiny (Caffe's caps: the 400 best per class before the
NMS, 200 per image after it, scores above the threshold), with boxes in the inclusive
convention too. Near-tied scores may come in either order (tests/export/same_detections.py).
"""

import numpy
import pytest

from cvzoo.export import to_onnx
from cvzoo.testing.small_models import build_small_model
from tests.export import same_detections

ort = pytest.importorskip('onnxruntime')
pytest.importorskip('onnx')

IMAGE_SIZES = ((48, 64), (40, 56), (30, 30))


def _images():
    rng = numpy.random.RandomState(1)
    return [rng.uniform(0, 255, (3,) + size).astype(numpy.float32) for size in IMAGE_SIZES]


def _build(name, score_thresh):
    """A small SSD with random weights; SSDTiny's class logits are scaled down, as
    random ones saturate its softmax (every score 1.0, so ties everywhere)."""
    _, model = build_small_model(name)
    if name == 'ssd_tiny':
        for param in model.multibox.conf.params():
            param.array *= 0.03
    model.score_thresh = score_thresh
    return model


def _run_exported(model, imgs, tmp_path):
    """Detections of the exported graph, split per image as predict() returns them."""
    x = numpy.stack([model.prepare(img) for img in imgs])
    path = to_onnx(model, x[:1], str(tmp_path / 'ssd.onnx'), with_postprocess=True)
    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    sizes = numpy.array([img.shape[1:] for img in imgs], numpy.float32)
    image_index, bbox, label, score = session.run(None, {'input': x, 'sizes': sizes})
    assert numpy.all(numpy.diff(image_index) >= 0), 'detections not grouped by image'
    parts = [image_index == i for i in range(len(imgs))]
    return ([bbox[part] for part in parts], [label[part] for part in parts],
            [score[part] for part in parts])


@pytest.mark.parametrize('name, score_thresh, box_convention', [
    ('ssd_tiny', 0.5, 'continuous'),
    ('ssd_tiny', 0.5, 'inclusive'),
    pytest.param('ssd300', 0.45, 'continuous', marks=pytest.mark.slow),
], ids=['ssd_tiny', 'ssd_tiny-inclusive', 'ssd300'])
def test_exported_postprocess_gives_predicts_detections(name, score_thresh, box_convention,
                                                         tmp_path):
    model = _build(name, score_thresh)
    model.box_convention = box_convention
    imgs = _images()
    want = model.predict(imgs)
    got = _run_exported(model, imgs, tmp_path)
    assert got[1][0].dtype == numpy.int32 and got[0][0].dtype == numpy.float32
    sizes = [img.shape[1:] for img in imgs]
    assert same_detections.assert_same_detections(want, got, sizes) > 0


def test_caps_apply_per_class_and_image(tmp_path):
    model = _build('ssd_tiny', 0.01)
    model.max_detections = 7
    model.nms_top_k = 5
    imgs = _images()
    want = model.predict(imgs)
    got = _run_exported(model, imgs, tmp_path)
    assert [len(label) for label in got[1]] == [len(label) for label in want[1]]
    assert max(len(label) for label in got[1]) == 7
    sizes = [img.shape[1:] for img in imgs]
    same_detections.assert_same_detections(want, got, sizes)


def test_postprocess_of_a_model_that_is_not_an_ssd(tmp_path):
    _, model = build_small_model('small_cnn')
    path = tmp_path / 'cnn.onnx'
    with pytest.raises(ValueError, match='with_postprocess.*SmallCNN'):
        to_onnx(model, numpy.zeros((1, 3, 32, 32), numpy.float32), str(path),
                with_postprocess=True)
    assert not path.exists()
