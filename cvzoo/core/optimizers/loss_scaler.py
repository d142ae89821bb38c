"""LossScaler: dynamic loss scaling for float16 training, held by an optimizer.

float16 gradients below 2^-24 round to zero. Multiplying the loss by a large scale before
backward lifts them into range; the optimizer divides the gradients by the same scale
before anything reads them (Micikevicius et al., "Mixed Precision Training", ICLR 2018).
The scale is dynamic, as in PyTorch's GradScaler and Chainer's ``loss_scaling()``: a step
whose gradients hold an inf or NaN is skipped and the scale lowered; after
``growth_interval`` good steps in a row the scale grows.

>>> import numpy as np
>>> from cvzoo.core.links.link import Link
>>> from cvzoo.core.optimizers import SGD
>>> link = Link()
>>> link.add_param('W', initializer=np.array([1.0], dtype=np.float32))
>>> optimizer = SGD(lr=0.5).setup(link)
>>> optimizer.loss_scaler = LossScaler(init_scale=4.0)
>>> link.W.grad = np.array([np.inf], dtype=np.float32)  # what an overflow leaves
>>> optimizer.update()
>>> link.W.array, optimizer.loss_scaler.loss_scale
(array([1.], dtype=float32), 2.0)
"""

import math
import numbers

from cvzoo import errors
from cvzoo.core import backend


def _check_number(name, value, low, high=math.inf, *, low_open=True, high_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise errors.UsageError(f'LossScaler: {name} must be a number, got {value!r}')
    above = value > low if low_open else value >= low
    below = value < high if high_open else value <= high
    if not (math.isfinite(value) and above and below):
        interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        raise errors.UsageError(f'LossScaler: {name} must lie in {interval}, got {value!r}')
    return float(value)


class LossScaler:
    """Dynamic loss scaling; set it on an optimizer: ``optimizer.loss_scaler = LossScaler()``.

    With it, ``optimizer.update(lossfun, ...)`` (what StandardUpdater calls, and
    ParallelUpdater and the multi-node optimizer likewise) runs backward from
    ``loss * loss_scale``; then, before the hooks (weight decay, gradient clipping) and the
    update rules, it divides every gradient by ``loss_scale`` and checks them all for inf
    and NaN. A step with such a gradient updates nothing (``optimizer.t`` stays) and
    multiplies the scale by ``backoff_factor``; after ``growth_interval`` finite steps in a
    row the scale is multiplied by ``growth_factor``.

    A loop of one's own writes ``optimizer.scale_loss(loss).backward()`` then
    ``optimizer.update()``. The check runs one reduction per parameter on its device and
    reads one combined flag on the host: one synchronisation per step on a GPU.

    Args:
        init_scale (float): the first scale, > 0 (PyTorch's default 2^16; 2^15 here, so
            that the scaled float16 loss itself stays below float16's 65504 for losses
            under 2).
        growth_factor (float): > 1, applied after ``growth_interval`` good steps.
        backoff_factor (float): in (0, 1), applied after a step with inf or NaN.
        growth_interval (int): good steps in a row before the scale grows, >= 1.

    Attributes:
        loss_scale (float): the current scale.
        n_good_steps (int): finite steps since the scale last changed.
        n_skipped (int): steps skipped since the scaler was made.

    Raises:
        UsageError: an argument out of its range, naming it.
    """

    def __init__(self, init_scale=2.0 ** 15, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self.loss_scale = _check_number('init_scale', init_scale, 0.0)
        self.growth_factor = _check_number('growth_factor', growth_factor, 1.0)
        self.backoff_factor = _check_number('backoff_factor', backoff_factor, 0.0, 1.0,
                                            high_open=True)
        if isinstance(growth_interval, bool) or not isinstance(growth_interval, int) \
                or growth_interval < 1:
            raise errors.UsageError(
                f'LossScaler: growth_interval must be an int >= 1, got {growth_interval!r}')
        self.growth_interval = growth_interval
        self.n_good_steps = 0
        self.n_skipped = 0

    def scale(self, loss):
        """Return ``loss * loss_scale`` (a Variable of the loss's dtype) to run backward on."""
        return loss * self.loss_scale

    def unscale(self, link):
        """Divide the gradients of ``link``'s parameters by the scale; True if all finite.

        One ``isfinite(...).all()`` per gradient on its device; the flags are gathered on
        the first gradient's device and read once.
        """
        flags = []
        inverse = 1.0 / self.loss_scale
        for param in link.params(include_uninit=False):
            if param.grad is None:
                continue
            with backend.using_device_of(param.grad):
                param.grad *= param.grad.dtype.type(inverse)
                flags.append(param.xp.isfinite(param.grad).all())
        if not flags:
            return True
        first = backend.get_device_from_array(flags[0])
        with first:
            combined = first.xp.stack([backend.to_device(f, first) for f in flags]).all()
        return bool(combined)

    def update(self, finite):
        """Lower the scale after a non-finite step; raise it after enough finite ones."""
        if not finite:
            self.loss_scale *= self.backoff_factor
            self.n_good_steps = 0
            self.n_skipped += 1
            return
        self.n_good_steps += 1
        if self.n_good_steps >= self.growth_interval:
            self.loss_scale *= self.growth_factor
            self.n_good_steps = 0

    def serialize(self, serializer):
        """Save or load the scale and the count of good steps (part of a snapshot)."""
        self.loss_scale = float(serializer('loss_scale', self.loss_scale))
        self.n_good_steps = int(serializer('n_good_steps', self.n_good_steps))
        self.n_skipped = int(serializer('n_skipped', self.n_skipped))
