"""SSDTransform: shapes, dtypes, the boxes follow the image, targets come from the coder."""

import numpy

from cvzoo.models.detection.ssd import augmentation, multibox_coder


def _coder():
    return multibox_coder.MultiboxCoder((4, 2), ((2,), (2,)), (16, 32), (12, 24, 48))


def test_output_shapes_and_dtypes():
    numpy.random.seed(1)
    transform = augmentation.SSDTransform(_coder(), 64, (123, 117, 104), seed=1)
    img = numpy.random.uniform(0, 255, (3, 50, 70)).astype(numpy.float32)
    bbox = numpy.array([[5, 5, 40, 30], [30, 20, 68, 48]], numpy.float32)
    for _ in range(10):
        out_img, mb_loc, mb_label = transform((img, bbox, numpy.array([0, 1], numpy.int32)))
        assert out_img.shape == (3, 64, 64) and out_img.dtype == numpy.float32
        assert mb_loc.shape == (80, 4) and mb_loc.dtype == numpy.float32
        assert mb_label.shape == (80,) and mb_label.dtype == numpy.int32
        assert set(mb_label.tolist()) <= {0, 1, 2} and numpy.isfinite(mb_loc).all()


def test_box_follows_the_image(monkeypatch):
    # a white square on black, no colour change: the decoded positive anchors cover the
    # bright pixels of the transformed image, whatever crop and flip were drawn
    monkeypatch.setattr(augmentation.transforms, 'random_distort',
                        lambda x, random_state=None: x)
    coder = _coder()
    transform = augmentation.SSDTransform(coder, 64, (0, 0, 0), max_expand_ratio=1, seed=3)
    img = numpy.zeros((3, 64, 64), numpy.float32)
    img[:, 8:40, 20:52] = 255
    bbox = numpy.array([[20, 8, 52, 40]], numpy.float32)
    checked = 0
    for _ in range(10):
        out_img, mb_loc, mb_label = transform((img, bbox, numpy.array([0])))
        if not (mb_label > 0).any():
            continue
        box = coder.decode_bbox(mb_loc)[mb_label > 0][0].round().astype(int)
        assert out_img[0, box[1] + 1:box[3] - 1, box[0] + 1:box[2] - 1].mean() > 200
        outside = numpy.ones((64, 64), bool)
        outside[max(box[1] - 1, 0):box[3] + 1, max(box[0] - 1, 0):box[2] + 1] = False
        assert not outside.any() or out_img[0][outside].mean() < 30
        checked += 1
    assert checked >= 3
