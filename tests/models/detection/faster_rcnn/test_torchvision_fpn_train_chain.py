"""FasterRCNNResNet50FPNTrainChain: finite loss, gradients, reported parts, sampling."""

import numpy
import pytest

from cvzoo.core.training import reporter as reporter_module
from cvzoo.models.detection.faster_rcnn import torchvision_fpn, torchvision_train_chain


@pytest.fixture(scope='module')
def chain():
    model = torchvision_fpn.FasterRCNNResNet50FPN(n_fg_class=3, min_size=64, max_size=96)
    model.rpn.n_train_pre_nms = model.rpn.n_train_post_nms = 100
    return torchvision_train_chain.FasterRCNNResNet50FPNTrainChain(model, roi_n_sample=64)


def _batch(rng):
    x = rng.standard_normal((2, 3, 64, 96)).astype(numpy.float32)
    bboxes = [numpy.array([[5, 5, 40, 50], [30, 20, 90, 60]], numpy.float32),
              numpy.zeros((0, 4), numpy.float32)]
    labels = [numpy.array([0, 2], numpy.int32), numpy.zeros(0, numpy.int32)]
    return x, bboxes, labels


def test_finite_loss_and_gradients_reach_every_trainable_parameter(chain, rng):
    x, bboxes, labels = _batch(rng)
    reporter = reporter_module.Reporter()
    reporter.add_observer('main', chain)
    observation = {}
    with reporter.scope(observation):
        loss = chain(x, bboxes, labels, [(64, 96), (60, 80)])
    assert loss.shape == () and numpy.isfinite(loss.array)
    parts = {k.split('/', 1)[1]: float(v) for k, v in observation.items()}
    assert set(parts) == {'loss', 'loss/rpn_loc', 'loss/rpn_conf', 'loss/head_loc',
                          'loss/head_conf'}
    assert all(value > 0 for value in parts.values())
    assert parts['loss'] == pytest.approx(sum(v for k, v in parts.items() if k != 'loss'),
                                          rel=1e-5)
    chain.cleargrads()
    loss.backward()
    for name, param in chain.namedparams():
        if param.requires_grad:
            assert param.grad is not None and numpy.isfinite(param.grad).all(), name
            assert numpy.any(param.grad), name
        else:
            assert param.grad is None or not numpy.any(param.grad), name


def test_rpn_samples_are_balanced_and_match_torchvisions_thresholds(chain, rng):
    xp = numpy
    anchor = numpy.array([[0, 0, 10, 10], [0, 0, 10, 7], [0, 0, 10, 5], [50, 50, 60, 60]],
                         numpy.float32)
    bbox = numpy.array([[0, 0, 10, 9]], numpy.float32)
    loc = numpy.zeros((1, 4, 4), numpy.float32)
    conf = numpy.zeros((1, 4), numpy.float32)
    # IoU 0.9 (fg), 0.78 (fg), 0.56 (ignored), 0 (bg)
    _, conf_loss = chain._rpn_losses(loc, conf, *chain._rpn_targets(anchor, [bbox]))
    # 3 drawn anchors (2 fg, 1 bg) at logit 0: mean cross entropy log(2)
    assert float(conf_loss.array) == pytest.approx(numpy.log(2), rel=1e-6)
    label = xp.array([1] * 300 + [0] * 1000, xp.int32)
    torchvision_train_chain._balanced_sample(xp, label, 256, 0.5)
    assert (label == 1).sum() == 128 and (label == 0).sum() == 128


def test_inclusive_model_takes_its_boxes_as_they_are(chain, rng, monkeypatch):
    """The recipe's transform gave the boxes in the model's box convention, once."""
    seen = []

    def recording_targets(anchor, bboxes):
        seen.append([bbox.copy() for bbox in bboxes])
        return real_targets(anchor, bboxes)

    real_targets = chain._rpn_targets
    monkeypatch.setattr(chain, '_rpn_targets', recording_targets)
    monkeypatch.setattr(chain.model, 'box_convention', 'inclusive')
    x, bboxes, labels = _batch(rng)
    chain(x, bboxes, labels, [(64, 96), (60, 80)])
    for bbox, got in zip(bboxes, seen[0]):
        numpy.testing.assert_array_equal(got, bbox)
