"""ParallelUpdater: data parallelism over several devices of one process."""

import numpy

from cvzoo.core import backend
from cvzoo.core.training import convert
from cvzoo.core.training import reporter as reporter_module
from cvzoo.core.training.updaters import standard_updater


class ParallelUpdater(standard_updater.StandardUpdater):
    """Split each batch across model copies on several devices; update the main copy.

    Each update: the batch is cut into one contiguous part per device; each copy
    computes the loss of its part and its gradients, weighted by ``len(part) / len(batch)``
    so that, for a loss that is a mean over examples, the sum of the copies' gradients is
    the gradient of the full batch's mean loss. The gradients are added into the main
    copy (``addgrads``), the optimizer updates it, and its parameters (and persistents,
    e.g. BatchNormalization statistics) are copied back to the other copies.

    Reported values (``main/loss``, ...) are the same weighted means of the copies'.

    A model with lazily shaped layers (``L.Linear(None, 10)``) gets its copies after the
    first forward pass of the main copy, which initialises those parameters once, on the
    main device; every copy then starts from the same weights (until then ``models``
    holds the main copy only).

    Args:
        iterator: the training iterator (or a dict with a ``'main'`` one).
        optimizer: the optimizer set up with the model (or a dict with ``'main'``).
        converter: turns a list of examples into arrays on a device.
        devices (dict): ``{'main': device, 'second': device, ...}``; the optimizer's
            target is moved to ``devices['main']``, the others get copies. The same
            device may appear twice.
        loss_func: ``loss_func(model, *arrays)`` returning the (mean) loss; default
            ``model(*arrays)``. It takes the model because each device has its own copy.
    """

    def __init__(self, iterator, optimizer, converter=convert.concat_examples, devices=None,
                 loss_func=None):
        if not isinstance(devices, dict) or 'main' not in devices:
            raise ValueError("devices: expected a dict with a 'main' entry, e.g. "
                             f"{{'main': 'cuda:0', 'second': 'cuda:1'}}, got {devices!r}")
        super().__init__(iterator, optimizer, converter, devices['main'], None)
        self.devices = {name: backend.get_device(d) for name, d in devices.items()}
        self.parallel_loss_func = loss_func
        main = self.get_optimizer('main').target
        main.to_device(self.devices['main'])
        self.models = {'main': main}
        if all(param.is_initialized for param in main.params()):
            self._copy_main()
        # else the copies are made in the first update, after the main copy's forward pass

    def _copy_main(self):
        """Give every other device its own copy of the main model, with the same values."""
        main = self.models['main']
        for name, device in self.devices.items():
            if name != 'main':
                self.models[name] = main.copy(mode='copy').to_device(device)

    def update_core(self):
        iterator = self.get_iterator('main')
        optimizer = self.get_optimizer('main')
        batch = iterator.next()
        names = ['main'] + [name for name in self.devices if name != 'main']
        parts = numpy.array_split(numpy.arange(len(batch)), len(names))
        observations = []
        for name, part in zip(names, parts):
            if name not in self.models:
                self._copy_main()  # the main copy's forward has shaped its lazy parameters
            model = self.models[name]
            model.cleargrads()
            if len(part) == 0:
                continue
            weight = len(part) / len(batch)
            in_arrays = self.converter([batch[i] for i in part], self.devices[name])
            observations.append((weight, self._backward(model, in_arrays, weight)))
        main = self.models['main']
        for name, model in self.models.items():
            if name != 'main':
                main.addgrads(model)
        optimizer.update()
        for name, model in self.models.items():
            if name != 'main':
                model.copyparams(main)
        reporter_module.report(_weighted_mean(observations))
        if iterator.is_new_epoch:
            for opt in self.get_all_optimizers().values():
                opt.new_epoch()

    def _backward(self, model, in_arrays, weight):
        """Run forward and backward of one copy (from the loss scaled by the optimizer's
        loss scaler, if any); return what it reported (as 'main/...')."""
        observer = reporter_module.Reporter()
        observer.add_observer('main', model)
        observer.add_observers('main', model.namedlinks(skipself=True))
        observation = {}
        with observer.scope(observation):
            loss = self._loss(model, in_arrays)
        self.get_optimizer('main').scale_loss(loss * weight).backward()
        return observation

    def _loss(self, model, in_arrays):
        args = in_arrays if isinstance(in_arrays, tuple) else (in_arrays,)
        if isinstance(in_arrays, dict):
            return (self.parallel_loss_func or (lambda m, **kw: m(**kw)))(model, **in_arrays)
        if self.parallel_loss_func is not None:
            return self.parallel_loss_func(model, *args)
        return model(*args)


def _weighted_mean(observations):
    """{key: sum of weight * value} over the copies that reported the key."""
    total, weights = {}, {}
    for weight, observation in observations:
        for key, value in observation.items():
            value = backend.to_numpy(getattr(value, 'array', value))
            total[key] = total.get(key, 0.0) + weight * value
            weights[key] = weights.get(key, 0.0) + weight
    return {key: total[key] / weights[key] for key in total}
