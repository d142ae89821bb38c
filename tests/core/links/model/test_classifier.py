"""Classifier: Chainer's loss-and-accuracy wrapper, on any predictor and device."""

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend, optimizers
from cvzoo.core.training import reporter
from cvzoo.core.training.extensions import LogReport
from cvzoo.core.training.iterators import SerialIterator
from cvzoo.core.training.trainer import Trainer
from cvzoo.core.training.updaters import StandardUpdater


def _observe(model, *args, **kwargs):
    """Call ``model`` with a reporter in scope; return (loss, observation)."""
    observer = reporter.Reporter()
    observer.add_observer('main', model)
    observation = {}
    with observer.scope(observation):
        loss = model(*args, **kwargs)
    return loss, observation


class _TwoInputs(L.Chain):
    """A predictor of two inputs: scores of x1 + x2."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.fc = L.Linear(3, 4)

    def forward(self, x1, x2):
        return self.fc(x1 + x2)


def _data(rng, n=6):
    x = rng.standard_normal((n, 3)).astype(numpy.float32)
    t = rng.integers(0, 4, n).astype(numpy.int32)
    return x, t


@pytest.mark.parametrize('device', ['cpu', 'cuda:1'])
def test_loss_and_accuracy_are_reported_and_the_loss_returned(device, rng):
    if device != 'cpu' and backend.num_gpus() < 2:
        pytest.skip('needs two GPUs (run pytest --fake-cuda for the CuPy stand-in)')
    predictor = L.Linear(3, 4)
    x, t = _data(rng)
    y = predictor(x).array
    model = L.Classifier(predictor).to_device(device)
    assert model.device == backend.get_device(device)
    loss, observation = _observe(model, backend.to_device(x, device),
                                 backend.to_device(t, device))
    assert loss is model.loss and sorted(observation) == ['main/accuracy', 'main/loss']
    assert backend.get_device_from_array(observation['main/loss']) == backend.get_device(device)
    numpy.testing.assert_allclose(backend.to_numpy(loss.array),
                                  F.softmax_cross_entropy(y, t).array, rtol=1e-6)
    assert float(backend.to_numpy(observation['main/accuracy'])) == (y.argmax(1) == t).mean()
    numpy.testing.assert_allclose(backend.to_numpy(model.y.array), y, rtol=1e-6)
    loss.backward()
    assert predictor.W.grad is not None


def test_a_classifier_built_around_a_predictor_on_a_gpu_runs_there(two_gpus, rng):
    model = L.Classifier(L.Linear(3, 4).to_device('cuda:1'))
    assert model.device == two_gpus[1]
    x, t = _data(rng)
    loss = model(backend.to_device(x, 'cuda:1'), backend.to_device(t, 'cuda:1'))
    assert loss.device == two_gpus[1]


def test_compute_accuracy_false_reports_only_the_loss(rng):
    model = L.Classifier(L.Linear(3, 4))
    model.compute_accuracy = False
    _, observation = _observe(model, *_data(rng))
    assert list(observation) == ['main/loss'] and model.accuracy is None


def test_label_key_picks_a_position_or_a_keyword(rng):
    x, t = _data(rng)
    x2 = numpy.ones_like(x)
    first = L.Classifier(_TwoInputs(), label_key=0)
    by_name = L.Classifier(first.predictor, label_key='t')
    last = L.Classifier(first.predictor)
    want = last(x, x2, t).array
    numpy.testing.assert_allclose(first(t, x, x2).array, want)
    numpy.testing.assert_allclose(by_name(x, x2=x2, t=t).array, want)
    numpy.testing.assert_allclose(L.Classifier(first.predictor, label_key=1)(x, t, x2).array,
                                  want)


def test_any_loss_and_accuracy_function(rng):
    x = rng.standard_normal((5, 3)).astype(numpy.float32)
    target = rng.standard_normal((5, 4)).astype(numpy.float32)
    model = L.Classifier(L.Linear(3, 4), lossfun=F.mean_squared_error,
                         accfun=lambda y, t: F.mean(F.absolute(y - t)))
    loss, observation = _observe(model, x, target)
    y = model.y.array
    numpy.testing.assert_allclose(loss.array, ((y - target) ** 2).mean(), rtol=1e-6)
    numpy.testing.assert_allclose(observation['main/accuracy'], abs(y - target).mean(),
                                  rtol=1e-6)


@pytest.mark.parametrize('label_key,args,kwargs,error,words', [
    (2, (1, 2), {}, errors.UsageError, 'label_key 2 is out of the 2 positional arguments'),
    (-3, (1, 2), {}, errors.UsageError, 'label_key -3'),
    ('t', (1,), {'x': 1}, errors.UsageError, "label_key 't' is not among the keyword arguments"),
], ids=['past_the_end', 'before_the_start', 'missing_keyword'])
def test_a_label_key_that_fits_no_argument_is_named(label_key, args, kwargs, error, words):
    with pytest.raises(error, match=words):
        L.Classifier(L.Linear(3, 4), label_key=label_key)(*args, **kwargs)


@pytest.mark.parametrize('kwargs,words', [
    ({'label_key': 1.0}, 'label_key must be an int or a str, got float'),
    ({'label_key': True}, 'label_key must be an int or a str, got bool'),
    ({'predictor': len}, 'predictor must be a Link'),
], ids=['float_key', 'bool_key', 'not_a_link'])
def test_wrong_arguments_are_named(kwargs, words):
    kwargs = {'predictor': L.Linear(3, 4), **kwargs}
    with pytest.raises(TypeError, match=words):
        L.Classifier(**kwargs)


def test_a_trainer_logs_main_loss_and_main_accuracy(rng, tmp_path):
    x, t = _data(rng, n=12)
    model = L.Classifier(L.Linear(3, 4))
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    updater = StandardUpdater(SerialIterator(list(zip(x, t)), 4, seed=0), optimizer)
    trainer = Trainer(updater, (3, 'iteration'), out=str(tmp_path))
    trainer.extend(LogReport(trigger=(3, 'iteration'), filename=None))
    trainer.run()
    entry = trainer.get_extension('LogReport').log[-1]
    assert 0.0 <= entry['main/accuracy'] <= 1.0 and entry['main/loss'] > 0


def test_a_parallel_updater_over_two_gpus_reports_the_classifiers_values(two_gpus, rng,
                                                                         tmp_path):
    from cvzoo.core.training.updaters import ParallelUpdater

    x, t = _data(rng, n=8)
    model = L.Classifier(L.Linear(3, 4))
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    updater = ParallelUpdater(SerialIterator(list(zip(x, t)), 8, shuffle=False), optimizer,
                              devices={'main': 'cuda:0', 'second': 'cuda:1'})
    y = backend.to_numpy(model.predictor(backend.to_device(x, 'cuda:0')).array)
    trainer = Trainer(updater, (1, 'iteration'), out=str(tmp_path))
    trainer.run()
    assert trainer.observation['main/accuracy'] == pytest.approx((y.argmax(1) == t).mean())
    assert trainer.observation['main/loss'] == pytest.approx(
        float(F.softmax_cross_entropy(y, t).array), rel=1e-5)


def test_importing_the_links_does_not_load_the_training_loop():
    import subprocess
    import sys

    code = ('import sys, cvzoo.core.links; '
            "print(sorted(m for m in sys.modules if m.startswith('cvzoo.core.training')))")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == '[]'
