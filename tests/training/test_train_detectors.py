"""cvzoo.training.train with a detector: the model_final.npz it writes keeps the trained
model's box convention, and the train chain moves to the device with the model (the
tests of the former models/detection/train_detector.py, on the one trainer)."""

import numpy
import pytest

from cvzoo.models import get_model, load_weights
from cvzoo.models.detection.ssd import ssd_tiny
from cvzoo.models.weights.trained_model import read_model_config
from cvzoo.training import train


def _examples(rng, n=2):
    bbox = numpy.array([[4, 6, 40, 50]], numpy.float32)
    return [(rng.uniform(0, 255, (3, 64, 64)).astype(numpy.float32), bbox,
             numpy.array([1], numpy.int32)) for _ in range(n)]


def _train_ssd(model, rng, out, **kwargs):
    return train(model, _examples(rng), 'detection', ('cat', 'dog'), out=str(out),
                 batchsize=2, iterations=kwargs.pop('iterations', 1), progress=False,
                 **kwargs)


def test_the_chain_trains_on_the_device_with_the_model(tmp_path, rng, device):
    # the chain builds its targets with its own xp: it must move with the model
    numpy.random.seed(0)
    model = ssd_tiny.SSDTiny(n_fg_class=2, insize=64)
    result = _train_ssd(model, rng, tmp_path, iterations=2, device=device,
                        model_name='ssd_tiny', model_kwargs={'insize': 64})
    chain = result.trainer.updater.get_optimizer('main').target
    assert str(chain.device) == str(model.device) == device
    assert (tmp_path / 'model_final.npz').exists()


@pytest.mark.parametrize('model_name', ['ssd_tiny', None])
@pytest.mark.parametrize('box_convention', ['inclusive', 'continuous'])
def test_trained_file_restores_the_box_convention(tmp_path, rng, model_name, box_convention):
    numpy.random.seed(0)
    model = ssd_tiny.SSDTiny(n_fg_class=2, insize=64)
    model.box_convention = box_convention
    _train_ssd(model, rng, tmp_path, model_name=model_name, model_kwargs={'insize': 64})
    final = str(tmp_path / 'model_final.npz')
    assert read_model_config(final)['box_convention'] == box_convention
    # by the registry, by a constructor, and by loading into a model built otherwise
    by_name = get_model('ssd_tiny', pretrained_model=final, n_fg_class=2, insize=64)
    by_class = ssd_tiny.SSDTiny(n_fg_class=2, pretrained_model=final, insize=64)
    into = ssd_tiny.SSDTiny(n_fg_class=2, insize=64)
    load_weights(into, final)
    assert by_name.box_convention == by_class.box_convention == into.box_convention \
        == box_convention
    for (name, loaded), (_, trained) in zip(into.namedparams(), model.namedparams()):
        numpy.testing.assert_array_equal(loaded.array, trained.array, err_msg=name)
