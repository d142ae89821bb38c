"""FailOnNonNumber: stop training with a clear message when a value becomes NaN or inf."""

import numpy

from cvzoo.core import backend
from cvzoo.core.training import extension


class NonFiniteError(RuntimeError):
    """Training produced a NaN or infinite loss or parameter."""


class FailOnNonNumber(extension.Extension):
    """After every iteration, check the reported scalars and (optionally) every parameter.

    It runs before every snapshot and report of the same iteration, so a run stopped by
    it leaves its snapshots as they were after the last finite iteration.

    Args:
        keys (sequence of str or None): the observations to check (None: all). The train
            scripts pass ``('main/loss',)``: reading the loss is the one host sync per
            iteration this costs.
        check_params (bool): also check every parameter (one host sync per device).

    Raises:
        NonFiniteError: naming the first non-finite observation (e.g. ``main/loss``) or
            parameter (e.g. ``main: /conv1/W``) and the iteration.
    """

    name = 'FailOnNonNumber'
    priority = extension.PRIORITY_EDITOR
    trigger = (1, 'iteration')

    def __init__(self, keys=None, check_params=True):
        self._keys = None if keys is None else tuple(keys)
        self._check_params = check_params

    def __call__(self, trainer):
        iteration = trainer.updater.iteration
        for key, value in sorted(trainer.observation.items()):
            if self._keys is not None and key not in self._keys:
                continue
            array = backend.to_numpy(getattr(value, 'array', value))
            if _is_number(array) and not numpy.isfinite(array).all():
                raise NonFiniteError(
                    f'FailOnNonNumber: observation {key!r} is {array} at iteration '
                    f'{iteration}; training stopped before any snapshot of this iteration '
                    f'(the snapshots in {trainer.out} hold the last finite state); lower '
                    'the learning rate or check the data')
        if not self._check_params:
            return
        named = [(name, path, param)
                 for name, optimizer in trainer.updater.get_all_optimizers().items()
                 for path, param in optimizer.target.namedparams(include_uninit=False)]
        if _all_finite([param.array for _, _, param in named]):
            return
        for name, path, param in named:  # only after a failure: find the culprit
            if not bool(param.xp.isfinite(param.array).all()):
                raise NonFiniteError(
                    f'FailOnNonNumber: parameter {path} of optimizer {name!r} holds '
                    f'NaN or inf at iteration {iteration}')


def _all_finite(arrays):
    """Whether every array is finite, read with one host sync per device."""
    by_device = {}
    for array in arrays:
        by_device.setdefault(backend.get_device_from_array(array), []).append(array)
    for device, group in by_device.items():
        with device:
            flags = device.xp.stack([device.xp.isfinite(a).all() for a in group])
            if not bool(flags.all()):
                return False
    return True


def _is_number(array):
    return isinstance(array, (int, float, numpy.ndarray, numpy.generic)) and (
        numpy.issubdtype(numpy.asarray(array).dtype, numpy.number))
