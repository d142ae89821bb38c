"""StandardUpdater: one iterator, one optimizer, one device."""

import functools

from cvzoo.core import cuda_graph as cuda_graph_module
from cvzoo.core.training import convert


class StandardUpdater:
    """Each update: next batch, convert it, send it to the device, optimizer.update(loss).

    Args:
        iterator: an iterator (or a dict with a ``'main'`` one).
        optimizer: an optimizer set up with the model (or a dict with a ``'main'`` one).
        converter: turns a list of examples into arrays (default concat_examples).
        device: where batches go (``'cpu'``, ``'cuda:0'``...).
        loss_func: callable on the converted batch returning the loss; default the
            optimizer's target link.
        cuda_graph (bool): on a GPU, capture the step (forward, backward, update) as a
            CUDA graph after warm-up and replay it each iteration
            (:class:`cvzoo.core.cuda_graph.GraphedUpdate`); a step that cannot be
            captured warns once and runs eagerly.
    """

    def __init__(self, iterator, optimizer, converter=convert.concat_examples, device=None,
                 loss_func=None, cuda_graph=False):
        self._iterators = iterator if isinstance(iterator, dict) else {'main': iterator}
        self._optimizers = optimizer if isinstance(optimizer, dict) else {'main': optimizer}
        self.converter = converter
        self.device = device
        self.loss_func = loss_func
        self.iteration = 0
        self.cuda_graph = bool(cuda_graph)
        self._graphed = None

    @property
    def graphed_update(self):
        """The :class:`~cvzoo.core.cuda_graph.GraphedUpdate` of ``cuda_graph=True`` (its
        ``captured`` and ``fallback_reason``), None before the first update or without."""
        return self._graphed

    def get_iterator(self, name):
        return self._iterators[name]

    def get_optimizer(self, name):
        return self._optimizers[name]

    def get_all_optimizers(self):
        return dict(self._optimizers)

    def connect_trainer(self, trainer):
        pass

    @property
    def epoch(self):
        return self._iterators['main'].epoch

    @property
    def epoch_detail(self):
        return self._iterators['main'].epoch_detail

    @property
    def previous_epoch_detail(self):
        return self._iterators['main'].previous_epoch_detail

    @property
    def is_new_epoch(self):
        return self._iterators['main'].is_new_epoch

    def update(self):
        """Run one training step and count it."""
        self.update_core()
        self.iteration += 1

    def update_core(self):
        batch = next(self._iterators['main'])
        in_arrays = self.converter(batch, self.device)
        optimizer = self._optimizers['main']
        loss_func = self.loss_func or optimizer.target
        update = functools.partial(optimizer.update, loss_func)
        if self.cuda_graph:
            if self._graphed is None:
                self._graphed = cuda_graph_module.GraphedUpdate(optimizer, loss_func)
            update = self._graphed
        if isinstance(in_arrays, tuple):
            update(*in_arrays)
        elif isinstance(in_arrays, dict):
            update(**in_arrays)
        else:
            update(in_arrays)
        if self._iterators['main'].is_new_epoch:
            for opt in self._optimizers.values():
                opt.new_epoch()

    def finalize(self):
        for iterator in self._iterators.values():
            iterator.finalize()

    def serialize(self, serializer):
        """Save or load the iterators, optimizers and the iteration count."""
        for name, iterator in self._iterators.items():
            iterator.serialize(serializer['iterator:' + name])
        for name, optimizer in self._optimizers.items():
            optimizer.serialize(serializer['optimizer:' + name])
            optimizer.target.serialize(serializer['model:' + name])
        self.iteration = int(serializer('iteration', self.iteration))
