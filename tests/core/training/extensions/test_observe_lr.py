import pytest

from cvzoo.core.training.extensions.exponential_shift import ExponentialShift
from cvzoo.core.training.extensions.log_report import LogReport
from cvzoo.core.training.extensions.value_observation import observe_lr, observe_value


def test_logged_lr_is_the_lr_of_each_update(make_trainer):
    trainer = make_trainer(stop=(3, 'iteration'))
    trainer.extend(ExponentialShift('lr', 0.5, init=1.0))
    trainer.extend(observe_lr())
    trainer.extend(observe_value('twice_iteration', lambda t: 2.0 * t.updater.iteration))
    trainer.extend(LogReport(trigger=(1, 'iteration'), filename=None))
    trainer.run()
    log = trainer.get_extension('LogReport').log
    assert [e['lr'] for e in log] == pytest.approx([1.0, 0.5, 0.25])
    assert [e['twice_iteration'] for e in log] == [2.0, 4.0, 6.0]
