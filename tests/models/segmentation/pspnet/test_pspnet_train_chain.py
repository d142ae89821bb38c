"""Tests of PSPNetTrainChain: the main + 0.4 * auxiliary loss, its gradients, errors."""

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import config
from cvzoo.models.segmentation.pspnet import pspnet
from cvzoo.models.segmentation.pspnet.pspnet_train_chain import PSPNetTrainChain


class _ToyExtractor(L.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.res4 = L.Convolution2D(3, 6, 3, 2, 1)
            self.res5 = L.Convolution2D(6, 8, 1)

    def forward(self, x):
        res4 = self.res4(x)
        return res4, self.res5(res4)


class _ToyPSPNet(L.Chain):
    """The attributes PSPNetTrainChain uses, in miniature."""

    n_class = 3

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.extractor = _ToyExtractor()
            self.ppm = L.Convolution2D(8, 8, 1)
            self.head_conv1 = L.Conv2DBNActiv(8, 4, 3, 1, 1)
            self.head_conv2 = L.Convolution2D(4, 3, 1)


def _data(rng):
    imgs = rng.standard_normal((2, 3, 12, 10)).astype(numpy.float32)
    labels = rng.integers(-1, 3, (2, 12, 10)).astype(numpy.int32)
    return imgs, labels


def test_loss_is_main_plus_weighted_aux(rng):
    chain = PSPNetTrainChain(_ToyPSPNet(), aux_weight=0.4, dropout_ratio=0.0)
    imgs, labels = _data(rng)
    with config.using_config('train', False):
        loss = chain(imgs, labels)
        res4, res5 = chain.model.extractor(imgs)
        main = chain.model.head_conv2(chain.model.head_conv1(chain.model.ppm(res5)))
        aux = chain.aux_conv2(chain.aux_conv1(res4))
        expected = [F.softmax_cross_entropy(F.resize_images(s, (12, 10)), labels).array
                    for s in (main, aux)]
    assert loss.shape == () and loss.dtype == numpy.float32
    numpy.testing.assert_allclose(loss.array, expected[0] + 0.4 * expected[1], rtol=1e-5)
    assert chain.aux_conv1.conv.W.shape == (512, 6, 3, 3)
    assert chain.aux_conv2.W.shape == (3, 512, 3, 3)


def test_gradients_reach_the_model_and_the_auxiliary_head(rng):
    chain = PSPNetTrainChain(_ToyPSPNet(), class_weight=[1.0, 2.0, 0.5])
    imgs, labels = _data(rng)
    chain(imgs, labels).backward()
    for param in (chain.aux_conv2.W, chain.aux_conv1.conv.W, chain.model.head_conv2.W,
                  chain.model.extractor.res4.W):
        assert param.grad is not None and numpy.abs(param.grad).sum() > 0


def test_arguments_are_checked():
    with pytest.raises(ValueError, match='aux_weight'):
        PSPNetTrainChain(_ToyPSPNet(), aux_weight=-1)
    with pytest.raises(ValueError, match='class_weight'):
        PSPNetTrainChain(_ToyPSPNet(), class_weight=[1.0, 2.0])


def test_a_real_pspnet_trains_through_the_chain(rng):
    model = pspnet.PSPNetResNet50(n_class=4, input_size=48)
    chain = PSPNetTrainChain(model)
    imgs = rng.standard_normal((2, 3, 48, 48)).astype(numpy.float32)
    labels = rng.integers(-1, 4, (2, 48, 48)).astype(numpy.int32)
    chain(imgs, labels).backward()
    assert numpy.abs(model.extractor.conv1_1.conv.W.grad).sum() > 0
