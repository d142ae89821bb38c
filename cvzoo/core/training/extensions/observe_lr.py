"""observe_lr: report an optimizer's learning rate every iteration."""

from cvzoo.core.training.extensions import observe_value


def observe_lr(optimizer_name='main', observation_key='lr'):
    """Return an extension reporting ``updater.get_optimizer(optimizer_name).lr``.

    Args:
        optimizer_name (str): the optimizer in the updater.
        observation_key (str): the key it is reported under.
    """
    return observe_value.observe_value(
        observation_key, lambda trainer: trainer.updater.get_optimizer(optimizer_name).lr)
