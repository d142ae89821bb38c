import numpy
import pytest

from cvzoo.core.training.extensions.fail_on_non_number import FailOnNonNumber, NonFiniteError


def test_finite_training_passes(make_trainer):
    trainer = make_trainer(stop=(3, 'iteration'))
    trainer.extend(FailOnNonNumber())
    trainer.run()


def test_nan_loss_is_named(make_trainer):
    trainer = make_trainer(stop=(3, 'iteration'))
    model = trainer.updater.get_optimizer('main').target
    model.l1.W.array[0, 0] = numpy.nan
    trainer.extend(FailOnNonNumber())
    with pytest.raises(NonFiniteError, match="'main/loss'.*iteration 1"):
        trainer.run()


def test_inf_parameter_is_named(make_trainer):
    trainer = make_trainer(stop=(3, 'iteration'))
    trainer.observation_filter = None
    trainer.extend(FailOnNonNumber())
    model = trainer.updater.get_optimizer('main').target
    original = trainer.updater.update_core

    def poison():
        original()
        model.l2.b.array[1] = numpy.inf

    trainer.updater.update_core = poison
    with pytest.raises(NonFiniteError, match='parameter /l2/b'):
        trainer.run()
