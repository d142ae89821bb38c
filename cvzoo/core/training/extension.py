"""Extension: something the Trainer calls when its trigger fires."""

PRIORITY_WRITER = 300  # writes to the observation (e.g. observe_lr, Evaluator)
PRIORITY_EDITOR = 200  # edits the observation
PRIORITY_READER = 100  # reads it (LogReport, PrintReport)


class Extension:
    """Base class of trainer extensions.

    Subclasses implement ``__call__(trainer)`` and may override ``initialize(trainer)``
    (called once before training), ``finalize()`` and ``serialize(serializer)`` (state
    saved in snapshots).

    Attributes:
        trigger: default ``(period, unit)``.
        priority (int): higher runs first within an iteration.
        name (str): default name in the trainer.
    """

    trigger = (1, 'iteration')
    priority = PRIORITY_READER
    name = None

    @property
    def default_name(self):
        return self.name or type(self).__name__

    def __call__(self, trainer):
        raise NotImplementedError

    def initialize(self, trainer):
        pass

    def finalize(self):
        pass

    def serialize(self, serializer):
        pass


def make_extension(trigger=(1, 'iteration'), priority=PRIORITY_READER, name=None,
                   initializer=None):
    """Decorator giving a plain function the attributes of an Extension."""

    def decorate(function):
        function.trigger = trigger
        function.priority = priority
        function.name = name or function.__name__
        function.default_name = function.name
        if initializer is not None:
            function.initialize = initializer
        return function

    return decorate
