"""Classifier: a predictor with its loss and accuracy, reported for the trainer."""

from cvzoo import errors
from cvzoo.core.functions.evaluation import accuracy as accuracy_module
from cvzoo.core.functions.loss import softmax_cross_entropy as softmax_cross_entropy_module
from cvzoo.core.links import link


class Classifier(link.Chain):
    """Wrap ``predictor`` so that calling it with the inputs and the labels returns the loss.

    Chainer's ``L.Classifier``: ``Classifier(predictor)(x, t)`` computes
    ``y = predictor(x)``, ``loss = lossfun(y, t)`` and, when :attr:`compute_accuracy` is
    True, ``accuracy = accfun(y, t)``. Both are reported (``report({'loss': ...},
    self)``), so a trainer whose optimizer holds the classifier logs them as
    ``main/loss`` and ``main/accuracy``. The predictor is the child ``predictor``: its
    parameters are the classifier's, under ``/predictor/...``.

    Args:
        predictor (Link): any link; it gets every argument except the label.
        lossfun: ``lossfun(y, t)`` returning a scalar Variable (default
            ``F.softmax_cross_entropy``).
        accfun: ``accfun(y, t)`` returning a scalar (default ``F.accuracy``).
        label_key (int or str): which argument is the label: a position among the
            positional arguments (default -1, the last) or a keyword's name.

    Attributes:
        compute_accuracy (bool): whether to compute and report the accuracy.
        y, loss, accuracy: those of the last call (None before it, or when skipped).

    >>> import numpy as np
    >>> from cvzoo.core import links as L
    >>> from cvzoo.core.training import reporter
    >>> model = Classifier(L.Linear(3, 2))
    >>> x, t = np.ones((4, 3), np.float32), np.array([0, 1, 1, 0], np.int32)
    >>> observer = reporter.Reporter()
    >>> observer.add_observer('main', model)
    >>> observation = {}
    >>> with observer.scope(observation):
    ...     loss = model(x, t)
    >>> sorted(observation), bool(observation['main/accuracy'] == 0.5)
    (['main/accuracy', 'main/loss'], True)
    """

    compute_accuracy = True

    def __init__(self, predictor, lossfun=softmax_cross_entropy_module.softmax_cross_entropy,
                 accfun=accuracy_module.accuracy, label_key=-1):
        super().__init__()
        if isinstance(label_key, bool) or not isinstance(label_key, (int, str)):
            raise TypeError(f'Classifier: label_key must be an int or a str, got '
                            f'{type(label_key).__name__}')
        if not isinstance(predictor, link.Link):
            raise TypeError(f'Classifier: predictor must be a Link, got '
                            f'{type(predictor).__name__}')
        self.lossfun = lossfun
        self.accfun = accfun
        self.label_key = label_key
        self.y = self.loss = self.accuracy = None
        with self.init_scope():
            self.predictor = predictor
        self._device = predictor.device

    def forward(self, *args, **kwargs):
        """Return the loss of ``predictor(inputs)`` against the label; report it and the
        accuracy."""
        # NOTE: imported here, not at the top: the training package loads the whole loop
        # (iterators with multiprocessing, serializers), about a quarter more import time
        # for every user of the links
        from cvzoo.core.training import reporter

        args, kwargs, t = self._split_label(args, kwargs)
        self.y = self.loss = self.accuracy = None
        self.y = self.predictor(*args, **kwargs)
        self.loss = self.lossfun(self.y, t)
        reporter.report({'loss': self.loss}, self)
        if self.compute_accuracy:
            self.accuracy = self.accfun(self.y, t)
            reporter.report({'accuracy': self.accuracy}, self)
        return self.loss

    def _split_label(self, args, kwargs):
        """(the predictor's args, its kwargs, the label)."""
        key = self.label_key
        if isinstance(key, str):
            if key not in kwargs:
                raise errors.UsageError(f'Classifier: label_key {key!r} is not among the keyword '
                                 f'arguments {sorted(kwargs)}')
            kwargs = dict(kwargs)
            return args, kwargs, kwargs.pop(key)
        if not -len(args) <= key < len(args):
            raise errors.UsageError(f'Classifier: label_key {key} is out of the {len(args)} '
                             'positional arguments')
        position = key % len(args)
        return args[:position] + args[position + 1:], kwargs, args[position]
