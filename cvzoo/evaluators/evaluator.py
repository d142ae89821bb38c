"""The Evaluator base: run ``target.predict`` over data in batches and report metrics."""

import copy

from cvzoo.utils import progress


class Evaluator:
    """Feed a dataset (or an iterator of batches) through a model and report a flat dict.

    Subclasses implement :meth:`evaluate_outputs`. An instance is also a training
    extension: it has ``trigger``, ``priority`` and ``name``, and ``evaluator(trainer)``
    returns the report (and hands it to ``trainer.reporter.report`` when there is one).

    Args:
        iterator_or_dataset: a dataset (``len`` and slicing; read in batches of
            ``batchsize``) or an iterator yielding lists of examples, which is reset
            before each run when it has ``reset()``. Examples are tuples whose first
            element is the image, as the datasets return them.
        target: an object with the DESIGN.md ``predict(imgs)``.
        label_names (sequence of str or None): used for the per-class keys.
        batchsize (int): images per predict() call (datasets only).
        prefix (str): put before every key, e.g. ``'validation/main/'``.
        quiet (bool or None): progress bar; None shows it only on a terminal.
    """

    trigger = (1, 'epoch')
    priority = 300  # after the writers of observations, as Chainer's PRIORITY_WRITER
    name = 'evaluator'

    def __init__(self, iterator_or_dataset, target, label_names=None, batchsize=8,
                 prefix='', quiet=None):
        if not hasattr(target, 'predict'):
            raise TypeError(f'target: expected an object with predict(imgs), got '
                            f'{type(target).__name__}')
        if int(batchsize) < 1:
            raise ValueError(f'batchsize: expected a positive int, got {batchsize}')
        self.data = iterator_or_dataset
        self.target = target
        self.label_names = None if label_names is None else tuple(label_names)
        self.batchsize = int(batchsize)
        self.prefix = prefix
        self.quiet = quiet

    def _batches(self):
        data = self.data
        if hasattr(data, '__next__'):
            if hasattr(data, 'reset'):
                data.reset()
            else:
                data = copy.copy(data)
            yield from data
            return
        for start in range(0, len(data), self.batchsize):
            yield data[start:start + self.batchsize]

    def run(self):
        """Predict on every batch; return (list of outputs per field, list of truths)."""
        outputs, truths = None, None
        for batch in progress.progress(self._batches(), desc=self.name, quiet=self.quiet):
            examples = [tuple(e) for e in batch]
            result = self.target.predict([e[0] for e in examples])
            result = result if isinstance(result, tuple) else (result,)
            result, examples = self.encode_batch(result, examples)
            if outputs is None:
                outputs = [[] for _ in result]
                truths = [[] for _ in examples[0][1:]] if examples else []
            for store, values in zip(outputs, result):
                store.extend(values)
            for k, store in enumerate(truths):
                store.extend(e[1 + k] for e in examples)
        return outputs or [], truths or []

    def encode_batch(self, result, examples):
        """What of one batch's outputs and examples is kept until the metric runs.

        The default keeps both as they are; an evaluator of large outputs (masks) stores
        a compact form instead.

        Args:
            result (tuple): predict()'s fields, a list with one entry per image each.
            examples (list of tuple): the batch's examples.

        Returns:
            tuple: ``(result, examples)`` of the same layout.
        """
        return result, examples

    def evaluate(self):
        """Run the model and return the report dict (keys prefixed by ``prefix``)."""
        outputs, truths = self.run()
        report = self.evaluate_outputs(outputs, truths)
        return {self.prefix + key: value for key, value in report.items()}

    def evaluate_outputs(self, outputs, truths):
        """Turn predictions and ground truth (one list per field) into a flat dict."""
        raise NotImplementedError

    def per_class(self, key, values):
        """``{'<key>/<label name>': value}`` for each class (names or indexes)."""
        names = self.label_names or tuple(str(k) for k in range(len(values)))
        return {f'{key}/{names[k]}': float(v) for k, v in enumerate(values) if k < len(names)}

    def __call__(self, trainer=None):
        report = self.evaluate()
        reporter = getattr(trainer, 'reporter', None)
        if reporter is not None and hasattr(reporter, 'report'):
            reporter.report(report)
        return report
