"""observe_value and observe_lr: report a value computed from the trainer (e.g. the
learning rate)."""

from cvzoo.core.training import extension


def observe_value(observation_key, target_func):
    """Return an extension reporting ``target_func(trainer)`` under ``observation_key``.

    Args:
        observation_key (str): the key in the observation (and so in the log).
        target_func: ``f(trainer)`` returning a scalar.

    Returns:
        an Extension run every iteration before the readers (LogReport averages it).
    """

    @extension.make_extension(trigger=(1, 'iteration'), priority=extension.PRIORITY_WRITER,
                              name=observation_key)
    def _observe(trainer):
        trainer.reporter.report({observation_key: target_func(trainer)})

    return _observe


def observe_lr(optimizer_name='main', observation_key='lr'):
    """Return an extension reporting ``updater.get_optimizer(optimizer_name).lr``.

    Args:
        optimizer_name (str): the optimizer in the updater.
        observation_key (str): the key it is reported under.
    """
    return observe_value(
        observation_key, lambda trainer: trainer.updater.get_optimizer(optimizer_name).lr)
