import numpy
import pytest

from cvzoo.core import config
from cvzoo.core.training.extensions.evaluator import Evaluator
from cvzoo.core.training.extensions.log_report import LogReport
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
