"""train_detector: the model_final.npz it writes keeps the trained model's box convention;
the learning rate follows its warm-up and steps."""

import fractions
import json

import numpy
import pytest

from cvzoo.core.optimizers import MomentumSGD
from cvzoo.core.training.extensions import fail_on_non_number
from cvzoo.datasets.transform_dataset import TransformDataset
from cvzoo.models import get_model, zoo
from cvzoo.models.detection.ssd import augmentation, ssd_tiny, train_chain
from cvzoo.models.detection.train_detector import train_detector
from cvzoo.models.weights.trained_model import read_model_config


def _ssd_run(tmp_path, rng, **kwargs):
    numpy.random.seed(0)
    model = ssd_tiny.SSDTiny(n_fg_class=2, insize=64)
    optimizer = MomentumSGD(lr=0.3).setup(train_chain.SSDTrainChain(model))
    transform = augmentation.SSDTransform(model.coder, model.insize, model.mean,
                                          max_expand_ratio=1)
    return train_detector(model, optimizer, TransformDataset(_examples(rng), transform),
                          ('cat', 'dog'), out=str(tmp_path), batchsize=2,
                          loss_keys=('main/loss',),
                          guard=fail_on_non_number.FailOnNonNumber(keys=('main/loss',)),
                          **kwargs)


def test_learning_rate_warms_up_then_steps(tmp_path, rng):
    # 8 iterations: warm-up over 4 from a third of 0.3, then x0.1 after 6 (3/4); the
    # log shows the rate each iteration's update used
    _ssd_run(tmp_path, rng, iteration=8, lr_steps=(fractions.Fraction(3, 4),),
             warmup_iter=4, warmup_start_ratio=1 / 3)
    log = [json.loads(line) for line in (tmp_path / 'log').read_text().splitlines()]
    lrs = [round(entry['lr'], 6) for entry in log]
    assert lrs == [0.1, 0.15, 0.2, 0.25, 0.3, 0.3, 0.03, 0.03]


def test_trains_on_the_device_with_its_chain(tmp_path, rng, device):
    # the chain builds its targets with its own xp: it must move with the model
    trainer = _ssd_run(tmp_path, rng, iteration=2, device=device)
    chain = trainer.updater.get_optimizer('main').target
    assert str(chain.device) == str(chain.model.device) == device
    assert (tmp_path / 'model_final.npz').exists()


def _examples(rng, n=2):
    bbox = numpy.array([[4, 6, 40, 50]], numpy.float32)
    return [(rng.uniform(0, 255, (3, 64, 64)).astype(numpy.float32), bbox,
             numpy.array([1], numpy.int32)) for _ in range(n)]


@pytest.mark.parametrize('model_name', ['ssd_tiny', None])
@pytest.mark.parametrize('box_convention', ['inclusive', 'continuous'])
def test_trained_file_restores_the_box_convention(tmp_path, rng, model_name, box_convention):
    numpy.random.seed(0)
    model = ssd_tiny.SSDTiny(n_fg_class=2, insize=64)
    model.box_convention = box_convention
    optimizer = MomentumSGD(lr=1e-3).setup(train_chain.SSDTrainChain(model))
    transform = augmentation.SSDTransform(model.coder, model.insize, model.mean,
                                          max_expand_ratio=1)
    train_detector(model, optimizer, TransformDataset(_examples(rng), transform),
                   ('cat', 'dog'), out=str(tmp_path), batchsize=2, iteration=1,
                   loss_keys=('main/loss',), model_name=model_name,
                   model_kwargs={'insize': 64},
                   guard=fail_on_non_number.FailOnNonNumber(keys=('main/loss',)))
    final = str(tmp_path / 'model_final.npz')
    assert read_model_config(final)['box_convention'] == box_convention
    # by the registry, by a constructor, and by loading into a model built otherwise
    by_name = get_model('ssd_tiny', pretrained_model=final, n_fg_class=2, insize=64)
    by_class = ssd_tiny.SSDTiny(n_fg_class=2, pretrained_model=final, insize=64)
    into = ssd_tiny.SSDTiny(n_fg_class=2, insize=64)
    zoo.load_weights(into, final)
    assert by_name.box_convention == by_class.box_convention == into.box_convention \
        == box_convention
    for (name, loaded), (_, trained) in zip(into.namedparams(), model.namedparams()):
        numpy.testing.assert_array_equal(loaded.array, trained.array, err_msg=name)
