"""Tests of FasterRCNNTrainChain and FasterRCNNFPNTrainChain: loss, reports, gradients."""

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core.training import reporter as reporter_module
from cvzoo.models.detection.faster_rcnn import (
    faster_rcnn,
    faster_rcnn_vgg,
    region_proposal_network,
    train_chain,
)
from cvzoo.models.detection.faster_rcnn.anchor_target_creator import AnchorTargetCreator
from cvzoo.models.detection.faster_rcnn.fpn import faster_rcnn_fpn_resnet
from cvzoo.models.detection.faster_rcnn.proposal_target_creator import ProposalTargetCreator

BBOXES = [numpy.array([[10, 5, 40, 50], [50, 20, 90, 60]], numpy.float32),
          numpy.array([[0, 0, 30, 30]], numpy.float32)]
LABELS = [numpy.array([0, 2], numpy.int32), numpy.array([1], numpy.int32)]


class _TinyHead(L.Chain):
    """A small RoI head with VGG16RoIHead's interface."""

    def __init__(self, n_class):
        super().__init__()
        self.n_class = n_class
        with self.init_scope():
            self.fc = L.Linear(8 * 2 * 2, 16)
            self.cls_loc = L.Linear(16, n_class * 4)
            self.score = L.Linear(16, n_class)

    def forward(self, x, rois, roi_indices):
        h = F.roi_pooling_2d(x, rois, roi_indices, 2, 1 / 8)
        h = F.relu(self.fc(F.reshape(h, (len(rois), -1))))
        return self.cls_loc(h), self.score(h)


def _tiny_faster_rcnn():
    extractor = L.Convolution2D(3, 8, 8, stride=8)
    rpn = region_proposal_network.RegionProposalNetwork(
        8, 8, anchor_scales=(2, 4), feat_stride=8,
        proposal_creator_params={'min_size': 2, 'n_train_post_nms': 50})
    return faster_rcnn.FasterRCNN(extractor, rpn, _TinyHead(4), (0.0, 0.0, 0.0))


def _check_loss_and_gradients(chain, x, expected_parts, may_be_zero=(), **kwargs):
    reporter = reporter_module.Reporter()
    reporter.add_observer('main', chain)
    observation = {}
    with reporter.scope(observation):
        loss = chain(x, BBOXES, LABELS, **kwargs)
    assert loss.shape == () and numpy.isfinite(loss.array)
    assert {f'main/loss/{part}' for part in expected_parts} | {'main/loss'} == set(observation)
    total = sum(float(observation[f'main/loss/{part}']) for part in expected_parts)
    assert float(loss.array) == pytest.approx(total, rel=1e-5)
    chain.cleargrads()
    loss.backward()
    missing = [name for name, param in chain.namedparams()
               if param.grad is None or not numpy.isfinite(param.grad).all()]
    assert missing == []
    zero = [name for name, param in chain.namedparams()
            if not param.grad.any() and not any(part in name for part in may_be_zero)]
    assert zero == []


def test_faster_rcnn_train_chain_on_a_tiny_model():
    numpy.random.seed(0)
    chain = train_chain.FasterRCNNTrainChain(_tiny_faster_rcnn())
    x = numpy.random.RandomState(0).randn(2, 3, 64, 96).astype(numpy.float32)
    _check_loss_and_gradients(chain, x, ('rpn_loc', 'rpn_cls', 'roi_loc', 'roi_cls'),
                              scales=[1.0, 1.0])


def test_faster_rcnn_loss_drops_with_training():
    numpy.random.seed(1)
    chain = train_chain.FasterRCNNTrainChain(_tiny_faster_rcnn())
    x = numpy.random.RandomState(1).randn(2, 3, 64, 96).astype(numpy.float32)
    losses = []
    for _ in range(15):
        chain.cleargrads()
        loss = chain(x, BBOXES, LABELS)
        loss.backward()
        for param in chain.params():
            param.array -= 0.05 * param.grad
        losses.append(float(loss.array))
    assert losses[-1] < losses[0]


def test_train_chain_checks_the_batch():
    chain = train_chain.FasterRCNNTrainChain(_tiny_faster_rcnn())
    x = numpy.zeros((2, 3, 64, 96), numpy.float32)
    with pytest.raises(ValueError, match='bboxes, labels'):
        chain(x, BBOXES[:1], LABELS[:1])


def test_fpn_train_chain():
    numpy.random.seed(0)
    model = faster_rcnn_fpn_resnet.FasterRCNNFPNResNet50(n_fg_class=3)
    chain = train_chain.FasterRCNNFPNTrainChain(
        model, proposal_target_creator=ProposalTargetCreator(32, 0.25, 0.5, 0.5, 0.0))
    x = numpy.random.RandomState(0).randn(2, 3, 64, 96).astype(numpy.float32)
    # NOTE: in a 64 x 96 image no anchor of levels 1/16 and coarser (128 px and more) lies
    # inside and every RoI pools from 1/4: outer/2 and outer/3 get exact zeros
    _check_loss_and_gradients(chain, x, ('rpn_loc', 'rpn_conf', 'head_loc', 'head_conf'),
                              may_be_zero=('outer/2/', 'outer/3/'), sizes=[(64, 96), (60, 90)])


@pytest.mark.slow
def test_vgg16_train_chain():
    numpy.random.seed(0)
    model = faster_rcnn_vgg.FasterRCNNVGG16(n_fg_class=3, anchor_scales=(2, 4),
                                           proposal_creator_params={'min_size': 2})
    chain = train_chain.FasterRCNNTrainChain(
        model, proposal_target_creator=ProposalTargetCreator(n_sample=16))
    x = numpy.random.RandomState(0).randn(2, 3, 64, 96).astype(numpy.float32)
    _check_loss_and_gradients(chain, x, ('rpn_loc', 'rpn_cls', 'roi_loc', 'roi_cls'))


def test_inclusive_model_takes_its_boxes_as_they_are():
    """A model whose weights learned inclusive boxes gets the boxes it is given: the
    recipe's transform gave them in its box convention, once."""
    seen = []

    class Recording(AnchorTargetCreator):
        def __call__(self, bbox, anchor, img_size):
            seen.append(bbox.copy())
            return super().__call__(bbox, anchor, img_size)

    model = _tiny_faster_rcnn()
    chain = train_chain.FasterRCNNTrainChain(model, anchor_target_creator=Recording())
    x = numpy.zeros((2, 3, 64, 96), numpy.float32)
    chain(x, BBOXES, LABELS)
    model.box_convention = 'inclusive'
    chain(x, BBOXES, LABELS)
    for continuous, inclusive, bbox in zip(seen[:2], seen[2:], BBOXES):
        numpy.testing.assert_array_equal(continuous, bbox)
        numpy.testing.assert_array_equal(inclusive, bbox)
