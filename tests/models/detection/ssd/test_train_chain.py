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
