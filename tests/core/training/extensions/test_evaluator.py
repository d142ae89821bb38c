import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend, config, optimizers
from cvzoo.core.training import concat_examples, reporter
from cvzoo.core.training.extensions.evaluator import Evaluator
from cvzoo.core.training.extensions.log_report import LogReport
from cvzoo.core.training.iterators import SerialIterator
from cvzoo.core.training.trainer import Trainer
from cvzoo.core.training.updaters import StandardUpdater
from cvzoo.evaluators import ClassificationEvaluator


class _Fixed:
    """A 'model' whose predict returns one-hot probabilities of the image's first pixel."""

    def predict(self, imgs):
        assert not config.config.train
        return numpy.stack([numpy.eye(3, dtype=numpy.float32)[int(img[0, 0, 0])] for img in imgs])


def test_reports_a_cvzoo_evaluator_under_the_prefix(make_trainer):
    imgs = [numpy.full((3, 2, 2), k % 3, numpy.float32) for k in range(6)]
    labels = [numpy.int32(k % 3) if k < 4 else numpy.int32(0) for k in range(6)]
    evaluator = ClassificationEvaluator(list(zip(imgs, labels)), _Fixed(), quiet=True)
    trainer = make_trainer(stop=(4, 'iteration'))
    trainer.extend(Evaluator(evaluator), trigger=(2, 'iteration'))
    trainer.extend(LogReport(trigger=(2, 'iteration'), filename=None))
    trainer.run()
    log = trainer.get_extension('LogReport').log
    assert log[-1]['validation/main/top1'] == pytest.approx(4 / 6)  # the last two are wrong


def test_a_callable_returning_a_dict():
    assert Evaluator(lambda: {'x': 1.0}, prefix='val/').evaluate() == {'val/x': 1.0}


def test_a_non_dict_result_is_explained():
    with pytest.raises(TypeError, match='dict'):
        Evaluator(lambda: 1.0).evaluate()


# --- Chainer's form: Evaluator(iterator, target, converter=..., device=...) ---


def _classifier_data(n=10, seed=0):
    rng = numpy.random.RandomState(seed)
    x = rng.randn(n, 4).astype(numpy.float32)
    t = rng.randint(0, 3, n).astype(numpy.int32)
    return list(zip(x, t))


def _batch_means(model, data, batch_size):
    """The mean over batches of each batch's loss and accuracy (Chainer's summary)."""
    losses, accuracies = [], []
    for start in range(0, len(data), batch_size):
        x = numpy.stack([e[0] for e in data[start:start + batch_size]])
        t = numpy.stack([e[1] for e in data[start:start + batch_size]])
        y = model.predictor(x).array
        losses.append(float(F.softmax_cross_entropy(y, t).array))
        accuracies.append(float((y.argmax(axis=1) == t).mean()))
    return numpy.mean(losses), numpy.mean(accuracies)


@pytest.mark.parametrize('device', ['cpu', 'cuda:1'])
def test_chainer_form_reports_the_mean_of_the_targets_reports_on_the_device(device):
    if device != 'cpu' and backend.num_gpus() < 2:
        pytest.skip('needs two GPUs (run pytest --fake-cuda for the CuPy stand-in)')
    numpy.random.seed(0)
    model = L.Classifier(L.Linear(4, 3))
    data = _classifier_data()
    loss, accuracy = _batch_means(model, data, 4)
    devices = []
    predictor_forward = model.predictor.forward
    model.predictor.forward = lambda x: devices.append(backend.get_device_from_array(
        x)) or predictor_forward(x)
    model.to_device(device)
    ext = Evaluator(SerialIterator(data, 4, repeat=False, shuffle=False), model, device=device)
    for _ in range(2):  # the iterator starts again at each pass
        report = ext.evaluate()
        assert sorted(report) == ['validation/main/accuracy', 'validation/main/loss']
        assert report['validation/main/loss'] == pytest.approx(loss, rel=1e-5)
        assert report['validation/main/accuracy'] == pytest.approx(accuracy)
    assert devices == [backend.get_device(device)] * 6


def test_chainer_form_runs_in_test_mode_without_a_graph():
    seen = []

    class Probe(L.Chain):
        def forward(self, x):
            seen.append((config.config.train, config.config.enable_backprop))
            return F.sum(x)

    ext = Evaluator(SerialIterator([numpy.zeros(2)] * 3, 2, repeat=False), Probe())
    ext.evaluate()
    assert seen == [(False, False)] * 2


def test_chainer_form_target_may_be_a_plain_callable():
    data = [numpy.float32(k) for k in range(4)]
    target = lambda x: reporter.report({'mean': F.mean(x)}, target)  # noqa: E731
    ext = Evaluator(SerialIterator(data, 2, repeat=False, shuffle=False), target)
    assert ext.evaluate() == {'validation/main/mean': pytest.approx(1.5)}


def test_chainer_form_in_a_trainer_logs_validation_main_loss(tmp_path):
    numpy.random.seed(0)
    model = L.Classifier(L.Linear(4, 3))
    optimizer = optimizers.SGD(lr=0.1).setup(model)
    data = _classifier_data()
    trainer = Trainer(StandardUpdater(SerialIterator(data, 5, seed=0), optimizer), (2, 'epoch'),
                      out=str(tmp_path))
    trainer.extend(Evaluator(SerialIterator(data, 5, repeat=False, shuffle=False), model))
    trainer.extend(LogReport(filename=None))
    trainer.run()
    log = trainer.get_extension('LogReport').log
    assert len(log) == 2
    assert log[-1]['validation/main/loss'] == pytest.approx(_batch_means(model, data, 5)[0],
                                                            rel=1e-5)
    assert 'main/loss' in log[-1]


def test_chainer_form_hook_eval_func_converter_and_dict_batches():
    calls = []
    data = [{'a': numpy.float32(k), 'b': numpy.float32(2 * k)} for k in range(4)]

    def eval_func(a, b):
        reporter.report({'total': F.sum(a + b)})

    ext = Evaluator(SerialIterator(data, 2, repeat=False, shuffle=False), L.Linear(1, 1),
                    eval_hook=calls.append, eval_func=eval_func,
                    converter=lambda batch, device: calls.append(device) or
                    concat_examples(batch, device), device='cpu')
    # reported without an observer: the key is not prefixed; means (0+1)*3 and (2+3)*3
    assert ext.evaluate() == {'total': pytest.approx(9.0)}
    assert calls == [ext, 'cpu', 'cpu']


@pytest.mark.parametrize('make,error,words', [
    (lambda: Evaluator(SerialIterator([1], 1), L.Linear(1, 1)), errors.UsageError,
     'repeats forever'),
    (lambda: Evaluator(SerialIterator([1], 1, repeat=False)), TypeError, 'needs the link'),
    (lambda: Evaluator(SerialIterator([1], 1, repeat=False), L.Linear(1, 1), prefix='v/'),
     TypeError, 'prefix: only for Evaluator'),
    (lambda: Evaluator({'val': SerialIterator([1], 1, repeat=False)}, L.Linear(1, 1)),
     errors.UsageError, "a dict must have a 'main' entry"),
    (lambda: Evaluator(3), TypeError, 'evaluate'),
    (lambda: Evaluator(lambda: {}, device='cuda:0'), TypeError,
     r'device: only for Evaluator\(iterator, target\)'),
], ids=['repeating_iterator', 'no_target', 'prefix_with_target', 'no_main', 'not_callable',
        'device_without_target'])
def test_wrong_arguments_are_named(make, error, words):
    with pytest.raises(error, match=words):
        make()
