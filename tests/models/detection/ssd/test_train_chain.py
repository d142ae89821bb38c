"""SSDTrainChain: a finite scalar loss, gradients on every parameter, reported values."""

import numpy
import pytest

from cvzoo.core.training import reporter as reporter_module
from cvzoo.models.detection.box_convention import to_box_convention
from cvzoo.models.detection.ssd import augmentation, ssd, ssd_tiny, train_chain


def _batch(model, B=2, seed=0):
    rng = numpy.random.RandomState(seed)
    transform = augmentation.SSDTransform(model.coder, model.insize, model.mean, seed=seed)
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
    # NOTE: seeded before the model is built: its initial weights come from NumPy's global
    # generator, and some draws leave an extractor layer without any gradient
    numpy.random.seed(0)
    _check_chain(ssd_tiny.SSDTiny(n_fg_class=3))


@pytest.mark.slow
def test_ssd300_chain_loss_and_gradients():
    numpy.random.seed(0)
    _check_chain(ssd.SSD300(n_fg_class=3))


def _old_chain_targets(coder, gt_mb_loc, gt_mb_label):
    """What the train chain gave the loss for an inclusive model before the transform
    encoded in the model's convention: the continuous targets decoded, x_max, y_max
    moved back by one input pixel, encoded again at the positive anchors."""
    bbox = to_box_convention(coder.decode_bbox(gt_mb_loc), 'inclusive')
    return numpy.where((gt_mb_label > 0)[..., None], coder.encode_loc(bbox),
                       gt_mb_loc).astype(numpy.float32)


@pytest.mark.parametrize('seed', [0, 1, 2])
def test_inclusive_targets_are_the_numbers_the_chain_used_to_make(seed):
    """SSDTransform of an inclusive model encodes once what the chain decoded, shifted
    and encoded again every step: the same labels and the same targets."""
    numpy.random.seed(0)
    model = ssd_tiny.SSDTiny(n_fg_class=3)
    rng = numpy.random.RandomState(seed)
    img = rng.uniform(0, 255, (3, 80, 100)).astype(numpy.float32)
    example = (img, numpy.array([[10, 10, 60, 50], [40, 30, 95, 75]], numpy.float32),
               numpy.array([0, 2], numpy.int32))
    made = {}
    for box_convention in ('continuous', 'inclusive'):
        transform = augmentation.SSDTransform(model.coder, model.insize, model.mean,
                                              box_convention=box_convention, seed=seed)
        made[box_convention] = transform(example)
    x, gt_mb_loc, gt_mb_label = made['continuous']
    new_x, new_mb_loc, new_mb_label = made['inclusive']
    numpy.testing.assert_array_equal(new_x, x)
    numpy.testing.assert_array_equal(new_mb_label, gt_mb_label)
    assert (gt_mb_label > 0).any()
    numpy.testing.assert_allclose(new_mb_loc, _old_chain_targets(model.coder, gt_mb_loc,
                                                                 gt_mb_label),
                                  rtol=1e-5, atol=1e-5)
    assert not numpy.allclose(new_mb_loc, gt_mb_loc, atol=1e-3)


def test_chain_passes_the_targets_on_without_decoding(monkeypatch):
    """An inclusive model's chain gives the loss the transform's targets as they are,
    and never decodes them."""
    seen = []

    def recording_loss(mb_locs, mb_confs, gt_mb_locs, gt_mb_labels, k):
        seen.append(gt_mb_locs)
        return real_loss(mb_locs, mb_confs, gt_mb_locs, gt_mb_labels, k)

    def no_decoding(mb_loc):
        raise AssertionError('the train chain decoded its targets')

    real_loss = train_chain.multibox_loss.multibox_loss
    monkeypatch.setattr(train_chain.multibox_loss, 'multibox_loss', recording_loss)
    numpy.random.seed(0)
    model = ssd_tiny.SSDTiny(n_fg_class=3)
    model.box_convention = 'inclusive'
    imgs, gt_mb_locs, gt_mb_labels = _batch(model)
    monkeypatch.setattr(model.coder, 'decode_bbox', no_decoding)
    monkeypatch.setattr(model.coder, 'encode_loc', no_decoding)
    train_chain.SSDTrainChain(model)(imgs, gt_mb_locs, gt_mb_labels)
    assert seen[0] is gt_mb_locs
