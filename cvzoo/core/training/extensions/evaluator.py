"""Evaluator: report a validation pass, in Chainer's form or around a cvzoo evaluator."""

import copy

from cvzoo import errors
from cvzoo.core import config
from cvzoo.core.training import convert, extension
from cvzoo.core.training import reporter as reporter_module


class Evaluator(extension.Extension):
    """Run a validation pass in test mode, without a graph, and report its results.

    Two forms:

    - Chainer's, ``Evaluator(iterator, target, converter=..., device=...)``: each batch
      of ``iterator`` goes through ``converter(batch, device)`` (so it lands on
      ``device``) and then to ``target`` (e.g. an ``L.Classifier``), which reports its
      values; the report is their mean over the pass, under
      ``<name>/<target name>/<key>`` (``validation/main/loss``).
    - ``Evaluator(evaluator)``: ``evaluator.evaluate()`` (the classes of
      ``cvzoo.evaluators``) or ``evaluator()`` returns a dict of scalars, reported under
      ``prefix``.

    Args:
        iterator: Chainer's form: an iterator over the validation set made with
            ``repeat=False``, or a dict of them with a ``'main'`` one; it is reset (or
            copied) before each pass. The other form: the evaluator object or callable.
        target (Link, or dict of them with a ``'main'`` one): what each batch is fed to.
        converter: ``converter(batch, device)``, default ``concat_examples``.
        device: where each converted batch goes (``'cpu'``, ``'cuda:0'``...).
        eval_hook: called as ``eval_hook(evaluator)`` before each pass.
        eval_func: called with each batch instead of ``target`` (``target`` still names
            the reports).
        prefix (str): the other form only: put before every key (default
            ``'validation/main/'``).
        trigger: when to evaluate (default every epoch).
        name (str): the extension's name (default ``'validation'``).

    >>> import numpy as np
    >>> from cvzoo.core import links as L
    >>> from cvzoo.core.training.iterators import SerialIterator
    >>> x, t = np.ones((6, 3), np.float32), np.array([0, 1] * 3, np.int32)
    >>> data = SerialIterator(list(zip(x, t)), 4, repeat=False, shuffle=False)
    >>> report = Evaluator(data, L.Classifier(L.Linear(3, 2)), device='cpu').evaluate()
    >>> sorted(report), report['validation/main/accuracy']
    (['validation/main/accuracy', 'validation/main/loss'], 0.5)
    >>> Evaluator(lambda: {'accuracy': 0.5}).evaluate()
    {'validation/main/accuracy': 0.5}
    """

    priority = extension.PRIORITY_WRITER
    trigger = (1, 'epoch')

    def __init__(self, iterator, target=None, converter=convert.concat_examples, device=None,
                 eval_hook=None, eval_func=None, *, prefix=None, trigger=(1, 'epoch'),
                 name='validation'):
        self.trigger = trigger
        self.name = name
        self.converter = converter
        self.device = device
        self.eval_hook = eval_hook
        self.eval_func = eval_func
        if target is None and eval_func is None:
            self._init_wrapped(iterator, prefix)
        else:
            self._init_chainer_form(iterator, target, prefix)

    def _init_wrapped(self, evaluator, prefix):
        if hasattr(evaluator, '__next__') or isinstance(evaluator, dict):
            raise TypeError('target: Evaluator(iterator, target) needs the link to feed the '
                            'batches to; got an iterator and no target')
        if not (hasattr(evaluator, 'evaluate') or callable(evaluator)):
            raise TypeError('evaluator: expected an object with evaluate() or a callable, '
                            f'got {type(evaluator).__name__}')
        given = [name for name, value, default in (
            ('converter', self.converter, convert.concat_examples), ('device', self.device, None),
            ('eval_hook', self.eval_hook, None)) if value is not default]
        if given:
            raise TypeError(f'{given[0]}: only for Evaluator(iterator, target); '
                            'Evaluator(evaluator) runs the evaluator as it is')
        self.evaluator = evaluator
        self.prefix = 'validation/main/' if prefix is None else prefix
        self._iterators = self._targets = None

    def _init_chainer_form(self, iterator, target, prefix):
        if prefix is not None:
            raise TypeError('prefix: only for Evaluator(evaluator); Evaluator(iterator, '
                            "target) reports '<name>/<target name>/<key>', so set name=")
        self._iterators = _as_main_dict(iterator, 'iterator')
        self._targets = {} if target is None else _as_main_dict(target, 'target')
        for key, it in self._iterators.items():
            if getattr(it, 'repeat', False):
                raise errors.UsageError(f"iterator {key!r}: it repeats forever (repeat=True); an "
                                 'Evaluator needs one made with repeat=False')
        self.evaluator = None
        self.prefix = None

    def get_iterator(self, name='main'):
        """The iterator ``name`` of the Chainer form."""
        return self._iterators[name]

    def get_target(self, name='main'):
        """The target link ``name`` of the Chainer form."""
        return self._targets[name]

    def evaluate(self):
        """Run the pass and return the report dict (without reporting it)."""
        with config.using_config('train', False), config.no_backprop_mode():
            if self.evaluator is None:
                return self._evaluate_batches()
            run = getattr(self.evaluator, 'evaluate', self.evaluator)
            result = run()
        if not isinstance(result, dict):
            raise TypeError('evaluator: expected it to return a dict, got '
                            f'{type(result).__name__}')
        return {self.prefix + key: value for key, value in result.items()}

    def _evaluate_batches(self):
        if self.eval_hook is not None:
            self.eval_hook(self)
        observer = reporter_module.Reporter()
        prefix = self.name + '/' if self.name else ''
        for key, target in self._targets.items():
            observer.add_observer(prefix + key, target)
            if hasattr(target, 'namedlinks'):
                observer.add_observers(prefix + key, target.namedlinks(skipself=True))
        summary = reporter_module.DictSummary()
        for batch in _fresh(self._iterators['main']):
            observation = {}
            with observer.scope(observation):
                self._feed(self.converter(batch, self.device))
            summary.add(observation)
        return summary.compute_mean()

    def _feed(self, in_arrays):
        func = self.eval_func or self._targets['main']
        if isinstance(in_arrays, tuple):
            return func(*in_arrays)
        if isinstance(in_arrays, dict):
            return func(**in_arrays)
        return func(in_arrays)

    def __call__(self, trainer):
        result = self.evaluate()
        trainer.reporter.report(result)
        return result

    def finalize(self):
        for iterator in (self._iterators or {}).values():
            if hasattr(iterator, 'finalize'):
                iterator.finalize()


def _as_main_dict(value, what):
    if not isinstance(value, dict):
        return {'main': value}
    if 'main' not in value:
        raise errors.UsageError(
            f"{what}: a dict must have a 'main' entry, got keys {sorted(value)}")
    return value


def _fresh(iterator):
    """The iterator from its start: reset when it can be, else a copy."""
    if hasattr(iterator, 'reset'):
        iterator.reset()
        return iterator
    return copy.copy(iterator)
