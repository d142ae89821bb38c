"""InstanceSegmenter's template predict() on a toy model whose hooks are known."""

import numpy
import pytest

import cvzoo.core.links as L
from cvzoo.core import backend, config
from cvzoo.models.instance_segmentation import instance_segmenter, mask_paste
from cvzoo.testing import model_checks


class _Toy(L.Chain, instance_segmenter.InstanceSegmenter):
    """One instance per image: a full-probability grid over the image's left half, scored
    by the image's mean over 255, labelled by the batch position modulo 2."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def prepare(self, img):
        return img / 255

    def pad_batch(self, prepared):
        size = numpy.max([x.shape[1:] for x in prepared], axis=0)
        x = numpy.zeros((len(prepared), 3, *size), numpy.float32)
        for i, img in enumerate(prepared):
            x[i, :, :img.shape[1], :img.shape[2]] = img
        return x

    def segment(self, x, sizes, prepared):
        xp = backend.get_array_module(x)
        self.calls.append((backend.get_device_from_array(x), config.config.train,
                           config.config.enable_backprop))
        probs = [xp.ones((1, 4, 4), numpy.float32) for _ in sizes]
        bboxes = [numpy.array([[0, 0, W / 2, H]], numpy.float32) for H, W in sizes]
        labels = [xp.asarray([i % 2]) for i in range(len(sizes))]
        scores = [xp.asarray([float(p.mean())], numpy.float32) for p in prepared]
        return probs, bboxes, labels, scores


def _images():
    rng = numpy.random.RandomState(0)
    return [rng.uniform(0, 255, (3, 10, 12)).astype(numpy.float32),
            rng.randint(0, 256, (7, 9, 3)).astype(numpy.uint8),
            rng.uniform(0, 255, (3, 6, 6)).astype(numpy.float32)]


def test_predict_pastes_and_returns_host_arrays(device):
    model = _Toy().to_device(device)
    imgs = _images()
    masks, labels, scores = model.predict(imgs, batchsize=2)
    assert [call[0] for call in model.calls] == [backend.get_device(device)] * 2
    assert all(not train and not backprop for _, train, backprop in model.calls)
    sizes = [(10, 12), (7, 9), (6, 6)]
    for i, size in enumerate(sizes):
        expected = mask_paste.paste_masks(numpy.ones((1, 4, 4), numpy.float32),
                                          numpy.array([[0, 0, size[1] / 2, size[0]]]), size)
        assert isinstance(masks[i], numpy.ndarray)
        numpy.testing.assert_array_equal(masks[i], expected)
        assert masks[i][0, :, 0].all() and not masks[i][0, :, -1].any()
    assert [label.tolist() for label in labels] == [[0], [1], [0]]  # batches of 2, then 1
    assert all(label.dtype == numpy.int32 and score.dtype == numpy.float32
               for label, score in zip(labels, scores))


def test_predict_keeps_the_contract():
    model_checks.assert_is_instance_segmentation_model(_Toy(), _images(), 2)


def test_presets():
    model = _Toy()
    model.use_preset('evaluate')
    assert model.score_thresh == 0.05 and model.nms_thresh == 0.5
    model.use_preset('visualize')
    assert model.score_thresh == 0.7
    with pytest.raises(ValueError, match='preset'):
        model.use_preset('fast')


def test_bad_batchsize_is_named():
    with pytest.raises(ValueError, match='batchsize'):
        _Toy().predict(_images(), batchsize=0)


def test_hooks_a_model_lacks_are_named():
    class Bare(L.Chain, instance_segmenter.InstanceSegmenter):
        pass

    with pytest.raises(NotImplementedError, match='Bare does not implement prepare'):
        Bare().predict(_images())
