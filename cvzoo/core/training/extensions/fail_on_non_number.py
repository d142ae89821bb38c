"""FailOnNonNumber: stop training with a clear message when a value becomes NaN or inf."""

import numpy

from cvzoo.core import backend
from cvzoo.core.training import extension, finite_state
from cvzoo.core.training.extensions import snapshots

# NOTE: kept here too, where the train scripts and their callers have always caught it
NonFiniteError = finite_state.NonFiniteError


class FailOnNonNumber(extension.Extension):
    """After every iteration, check the reported scalars and (optionally) every parameter.

    It runs before every snapshot and report of the same iteration, so a run stopped by
    it writes no snapshot of that iteration; the message names the newest snapshot this
    run wrote (every snapshot checks that what it writes is finite), or says there is none.

    Args:
        keys (sequence of str or None): the observations to check (None: all). The train
            scripts pass ``('main/loss',)``: reading the loss is the one host sync per
            iteration this costs.
        check_params (bool): also check every parameter (one host sync per device).

    Raises:
        NonFiniteError: naming the first non-finite observation (e.g. ``main/loss``) or
            parameter (e.g. ``parameter /conv1/W of optimizer 'main'``), the iteration,
            and the newest snapshot of the run (see
            :func:`~cvzoo.core.training.extensions.snapshots.last_finite_note`).
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
                    f'({snapshots.last_finite_note(trainer)}); lower the learning rate or '
                    'check the data')
        if not self._check_params:
            return
        culprit = finite_state.first_non_finite(finite_state.optimizer_arrays(
            trainer.updater.get_all_optimizers(), include_state=False))
        if culprit is not None:
            raise NonFiniteError(
                f'FailOnNonNumber: {culprit} holds NaN or inf at iteration {iteration} '
                f'({snapshots.last_finite_note(trainer)})')


def _is_number(array):
    return isinstance(array, (int, float, numpy.ndarray, numpy.generic)) and (
        numpy.issubdtype(numpy.asarray(array).dtype, numpy.number))
