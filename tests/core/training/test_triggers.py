"""Triggers: Chainer's ManualScheduleTrigger and MaxValueTrigger/MinValueTrigger."""

import pytest

from cvzoo import errors
from cvzoo.core.serializers import dictionary
from cvzoo.core.training import extension, triggers


def _fired(make_trainer, trigger, stop, values=None):
    """The iterations at which ``trigger`` fired; ``values[i]`` is reported as 'v' at
    iteration i + 1 (before the trigger is asked)."""
    trainer = make_trainer(stop=stop)
    fired = []
    if values is not None:
        @extension.make_extension(trigger=(1, 'iteration'), priority=extension.PRIORITY_WRITER)
        def report_value(trainer):
            trainer.reporter.report({'v': values[trainer.updater.iteration - 1]})

        trainer.extend(report_value)
    trainer.extend(lambda trainer: fired.append(trainer.updater.iteration), name='probe',
                   trigger=trigger)
    trainer.run()
    return fired


def test_manual_schedule_in_iterations(make_trainer):
    trigger = triggers.ManualScheduleTrigger([5, 2], 'iteration')
    assert _fired(make_trainer, trigger, (6, 'iteration')) == [2, 5]
    assert trigger.get_training_length() == (5, 'iteration')


def test_manual_schedule_in_epochs_fires_when_the_epoch_is_crossed(make_trainer):
    # 30 examples in batches of 4: epoch 1 ends during iteration 8, epoch 2 at iteration 15
    trigger = triggers.ManualScheduleTrigger([1, 2], 'epoch')
    assert _fired(make_trainer, trigger, (16, 'iteration')) == [8, 15]


def test_max_value_fires_at_each_new_best_mean(make_trainer):
    values = [1, 3, 0, 0, 5, 5, 4, 4]  # means per 2 iterations: 2, 0, 5, 4
    trigger = triggers.MaxValueTrigger('v', trigger=(2, 'iteration'))
    assert _fired(make_trainer, trigger, (8, 'iteration'), values) == [2, 6]
    assert trigger.best_value == 5


def test_min_value_fires_at_each_new_lowest_mean(make_trainer):
    values = [1, 3, 0, 0, 5, 5, -1, -1]
    trigger = triggers.MinValueTrigger('v', trigger=(2, 'iteration'))
    assert _fired(make_trainer, trigger, (8, 'iteration'), values) == [2, 4, 8]


def test_a_key_never_reported_never_fires(make_trainer):
    trigger = triggers.MaxValueTrigger('validation/main/accuracy', trigger=(1, 'iteration'))
    assert _fired(make_trainer, trigger, (3, 'iteration')) == []


def test_the_best_value_and_running_mean_survive_a_snapshot(make_trainer):
    values = [4, 4, 1, 9]
    trigger = triggers.MaxValueTrigger('v', trigger=(4, 'iteration'))
    _fired(make_trainer, trigger, (2, 'iteration'), values)  # half a period: no mean yet
    trigger.best_value = 4.5
    saved = dictionary.DictionarySerializer()
    trigger.serialize(saved)
    resumed = triggers.MaxValueTrigger('v', trigger=(4, 'iteration'))
    resumed.serialize(dictionary.DictionaryDeserializer(saved.target))
    assert resumed.best_value == 4.5
    # the mean of the period is (4 + 4 + 1 + 9) / 4 = 4.5, not better than 4.5
    trainer = make_trainer(stop=(4, 'iteration'))
    trainer.updater.iteration = 2
    fired = []
    for value in values[2:]:
        trainer.updater.iteration += 1
        trainer.observation = {'v': value}
        fired.append(resumed(trainer))
    assert fired == [False, False]


@pytest.mark.parametrize('make,words', [
    (lambda: triggers.ManualScheduleTrigger([], 'epoch'), 'at least one'),
    (lambda: triggers.ManualScheduleTrigger([1], 'epochs'), "unit: expected 'iteration'"),
], ids=['no_points', 'bad_unit'])
def test_wrong_arguments_are_named(make, words):
    with pytest.raises(errors.UsageError, match=words):
        make()
