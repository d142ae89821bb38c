"""Evaluator: run an evaluator (or any callable returning a dict) and report its results."""

from cvzoo.core import config
from cvzoo.core.training import extension


class Evaluator(extension.Extension):
    """Report the results of ``evaluator`` under ``prefix``, in test mode, without a graph.

    Args:
        evaluator: an object with ``evaluate()`` returning a dict (the classes of
            ``cvzoo.evaluators``), or a callable ``f()`` returning a dict of scalars.
        prefix (str): put before every key, e.g. ``'validation/main/'`` (Chainer's keys).
        trigger: when to evaluate (default every epoch).
        name (str): the extension's default name.

    >>> ext = Evaluator(lambda: {'accuracy': 0.5})
    >>> ext.evaluate()
    {'validation/main/accuracy': 0.5}
    """

    priority = extension.PRIORITY_WRITER
    trigger = (1, 'epoch')

    def __init__(self, evaluator, prefix='validation/main/', trigger=(1, 'epoch'),
                 name='validation'):
        if not (hasattr(evaluator, 'evaluate') or callable(evaluator)):
            raise TypeError('evaluator: expected an object with evaluate() or a callable, '
                            f'got {type(evaluator).__name__}')
        self.evaluator = evaluator
        self.prefix = prefix
        self.trigger = trigger
        self.name = name

    def evaluate(self):
        """Run the evaluation and return ``{prefix + key: value}``."""
        run = getattr(self.evaluator, 'evaluate', self.evaluator)
        with config.using_config('train', False), config.no_backprop_mode():
            result = run()
        if not isinstance(result, dict):
            raise TypeError(f'evaluator: expected it to return a dict, got {type(result).__name__}')
        return {self.prefix + key: value for key, value in result.items()}

    def __call__(self, trainer):
        result = self.evaluate()
        trainer.reporter.report(result)
        return result
