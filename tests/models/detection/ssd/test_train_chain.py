"""SSDTrainChain: a finite scalar loss, gradients on every parameter, reported values."""

import numpy
import pytest

from cvzoo.core.training import reporter as reporter_module
from cvzoo.models.detection.ssd import augmentation, ssd, ssd_tiny, train_chain


def _batch(model, B=2, seed=0):
    rng = numpy.random.RandomState(seed)
    transform = augmentation.SSDTransform(model.coder, model.insize, model.mean)
    examples = []
    for _ in range(B):
        img = rng.uniform(0, 255, (3, 80, 100)).astype(numpy.float32)
        bbox = numpy.array([[10, 10, 60, 50], [40, 30, 95, 75]], numpy.float32)
        examples.append(transform((img, bbox, numpy.array([0, 2], numpy.int32))))
    return [numpy.stack(field) for field in zip(*examples)]


def _check_chain(model):
    numpy.random.seed(0)
    chain = train_chain.SSDTrainChain(model)
    imgs, gt_mb_locs, gt_mb_labels = _batch(model)
    reporter = reporter_module.Reporter()
    reporter.add_observer('main', chain)
    observation = {}
    with reporter.scope(observation):
        loss = chain(imgs, gt_mb_locs, gt_mb_labels)
    assert loss.shape == () and loss.dtype == numpy.float32 and numpy.isfinite(loss.array)
    assert set(observation) == {'main/loss', 'main/loss/loc', 'main/loss/conf'}
    numpy.testing.assert_allclose(observation['main/loss'], observation['main/loss/loc']
                                  + observation['main/loss/conf'], rtol=1e-5)
    chain.cleargrads()
    loss.backward()
    # NOTE: every parameter gets a gradient; a head whose map holds no positive and no
    # mined negative anchor gets a zero one, so non-zero is asked of the extractor only
    missing = [name for name, param in chain.namedparams()
               if param.grad is None or not numpy.isfinite(param.grad).all()]
    assert missing == []
    zero = [name for name, param in chain.namedparams()
            if '/extractor/' in name and not numpy.abs(param.grad).sum() > 0]
    assert zero == []


def test_tiny_chain_loss_and_gradients():
    _check_chain(ssd_tiny.SSDTiny(n_fg_class=3))


@pytest.mark.slow
def test_ssd300_chain_loss_and_gradients():
    _check_chain(ssd.SSD300(n_fg_class=3))


def test_inclusive_model_trains_on_boxes_a_pixel_shorter(monkeypatch):
    """The positive anchors' targets of a model whose weights learned inclusive boxes
    decode to (x_max - 1, y_max - 1); background anchors keep zero targets."""
    seen = []

    def recording_loss(mb_locs, mb_confs, gt_mb_locs, gt_mb_labels, k):
        seen.append(gt_mb_locs)
        return real_loss(mb_locs, mb_confs, gt_mb_locs, gt_mb_labels, k)

    real_loss = train_chain.multibox_loss.multibox_loss
    monkeypatch.setattr(train_chain.multibox_loss, 'multibox_loss', recording_loss)
    numpy.random.seed(0)
    model = ssd_tiny.SSDTiny(n_fg_class=3)
    imgs, gt_mb_locs, gt_mb_labels = _batch(model)
    chain = train_chain.SSDTrainChain(model)
    chain(imgs, gt_mb_locs, gt_mb_labels)
    model.box_convention = 'inclusive'
    chain(imgs, gt_mb_locs, gt_mb_labels)
    numpy.testing.assert_array_equal(seen[0], gt_mb_locs)
    positive = gt_mb_labels > 0
    assert positive.any()
    shift = model.coder.decode_bbox(seen[1])[positive] - \
        model.coder.decode_bbox(gt_mb_locs)[positive]
    numpy.testing.assert_allclose(shift, numpy.broadcast_to([0, 0, -1, -1], shift.shape),
                                  atol=1e-3)
    assert not seen[1][~positive].any()
