"""Tests of the SegmentationModel base with a tiny 1x1-convolution segmenter."""

import types

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.models import zoo
from cvzoo.models.segmentation import segmentation_model
from cvzoo.testing import assert_is_semantic_segmentation_model


class _Tiny(segmentation_model.SegmentationModel):
    """Scores = a 1x1 convolution of the input, average-pooled to half size."""

    preset = zoo.Preset(size=(8, 12), mean=(10.0, 20.0, 30.0), std=(2.0, 4.0, 8.0))

    def __init__(self, n_class=3, n_out=None):
        super().__init__()
        self.n_class = n_class
        with self.init_scope():
            self.conv = L.Convolution2D(3, n_out or n_class, 1)

    def forward(self, x):
        return F.average_pooling_2d(self.conv(x), 2)


@pytest.mark.parametrize('order', ['rgb', 'bgr'])
def test_prepare_resizes_standardises_and_orders(order, rng):
    model = _Tiny()
    model.channel_order = order
    img = rng.uniform(0, 255, (3, 8, 12)).astype(numpy.float32)
    x = model.prepare(img)
    expected = (img - [[[10.0]], [[20.0]], [[30.0]]]) / [[[2.0]], [[4.0]], [[8.0]]]
    expected = expected[::-1] if order == 'bgr' else expected
    assert x.dtype == numpy.float32 and x.flags.c_contiguous
    numpy.testing.assert_allclose(x, expected, rtol=1e-6)
    assert model.prepare(rng.uniform(0, 255, (3, 5, 7))).shape == (3, 8, 12)


@pytest.mark.parametrize('backend', ['pil', 'cv2'])
def test_prepare_resizes_as_the_presets_backend(backend, rng):
    """Shrinking: 'pil' low-pass filters (Pillow, as torchvision's antialiased resize),
    'cv2' samples plain bilinear; by hand for a 2x shrink of one row of stripes."""
    model = _Tiny()
    model.preset = zoo.Preset(size=(1, 4), mean=(0.0,) * 3, resize_backend=backend)
    img = numpy.zeros((3, 2, 8), numpy.float32)
    img[:, :, 1::2] = 8.0  # columns 0 8 0 8 ...
    x = model.prepare(img)
    # 2x: plain bilinear samples between columns 2i and 2i+1 (mean 4); Pillow's
    # triangle filter of support 2 weighs columns 2i-1 .. 2i+2 as 1:3:3:1 (edges
    # renormalised): 4 inside, (0*3 + 8*3 + 0) / 7 at the left edge
    expected = [24 / 7, 4.0, 4.0, 32 / 7] if backend == 'pil' else [4.0, 4.0, 4.0, 4.0]
    numpy.testing.assert_allclose(x[0, 0], expected, rtol=1e-5)


def test_prepare_refuses_an_unknown_channel_order():
    model = _Tiny()
    model.channel_order = 'bgra'
    with pytest.raises(ValueError, match='channel_order'):
        model.prepare(numpy.zeros((3, 8, 12), numpy.float32))


def test_constant_image_upsampled_keeps_its_label():
    model = _Tiny()
    model.conv.W.array[:] = 0
    model.conv.b.array[:] = [0.0, 1.0, 0.5]
    labels = model.predict([numpy.zeros((3, 13, 7), numpy.float32)])
    assert labels[0].shape == (13, 7) and (labels[0] == 1).all()


def test_extra_channels_never_win():
    model = _Tiny(n_class=2, n_out=3)
    model.conv.W.array[:] = 0
    model.conv.b.array[:] = [0.0, 1.0, 5.0]
    assert (model.predict([numpy.zeros((3, 4, 4), numpy.float32)])[0] == 1).all()


def test_predict_contract_and_batching(rng):
    model = _Tiny()
    imgs = [rng.uniform(0, 255, (3, h, w)).astype(numpy.float32)
            for h, w in ((8, 12), (9, 5), (20, 31))]
    assert_is_semantic_segmentation_model(model, imgs, 3)
    one_by_one = [model.predict([img], batchsize=1)[0] for img in imgs]
    for a, b in zip(model.predict(imgs, batchsize=3), one_by_one):
        numpy.testing.assert_array_equal(a, b)


def test_n_class_for():
    WithWeights = types.SimpleNamespace(weights={'camvid': types.SimpleNamespace(n_class=11)})

    assert segmentation_model.n_class_for(WithWeights, 'camvid', 4) == 11
    assert segmentation_model.n_class_for(WithWeights, '/a/file.npz', 4) == 4
    with pytest.raises(ValueError, match='n_class'):
        segmentation_model.n_class_for(WithWeights, None, None)


def test_reset_head_is_required():
    with pytest.raises(NotImplementedError):
        _Tiny().reset_head(4)
