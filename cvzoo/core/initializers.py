"""Initializers: objects that fill a new parameter array.

An initializer is called with an array and fills it in place. Random ones draw from the
array module's global random state (``numpy.random.seed`` makes them repeatable).

>>> import numpy as np
>>> W = np.empty((64, 3, 3, 3), dtype=np.float32)
>>> HeNormal()(W)
>>> bool(abs(float(W.std()) - np.sqrt(2 / 27)) < 0.05)
True
"""

import math

import numpy

from cvzoo.core import backend


def get_fans(shape):
    """Return (fan_in, fan_out) of a weight of ``shape`` = (out, in, *kernel)."""
    if len(shape) < 2:
        raise ValueError(f'shape: a weight needs at least 2 axes to have fans, got {shape}')
    receptive = int(numpy.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _generator():
    """A fast NumPy Generator seeded from (and advancing) the legacy global random state."""
    return numpy.random.default_rng(numpy.random.randint(0, 2 ** 31 - 1, size=4))


class Initializer:
    """Base class: ``initializer(array)`` fills ``array`` in place.

    Args:
        dtype: the dtype of arrays it creates through generate_array (default float32).
    """

    def __init__(self, dtype=None):
        self.dtype = dtype

    def __call__(self, array):
        raise NotImplementedError


class Constant(Initializer):
    """Fill with ``fill_value`` (a scalar, or an array broadcast to the shape)."""

    def __init__(self, fill_value, dtype=None):
        super().__init__(dtype)
        self.fill_value = fill_value

    def __call__(self, array):
        value = self.fill_value
        if not numpy.isscalar(value):
            value = backend.to_device(value, backend.get_device_from_array(array))
        array[...] = value


class Zero(Constant):
    """Fill with zeros."""

    def __init__(self, dtype=None):
        super().__init__(0.0, dtype)


class One(Constant):
    """Fill with ones."""

    def __init__(self, dtype=None):
        super().__init__(1.0, dtype)


class Normal(Initializer):
    """Draw from N(0, scale^2)."""

    def __init__(self, scale=0.05, dtype=None):
        super().__init__(dtype)
        self.scale = scale

    def __call__(self, array):
        xp = backend.get_array_module(array)
        if xp is numpy and array.dtype in (numpy.float32, numpy.float64):
            # NOTE: a Generator draws float32 directly (ziggurat), several times faster than
            # the legacy float64 path; seeding it from the legacy global state keeps
            # numpy.random.seed() in control of every initialisation.
            draws = _generator().standard_normal(array.shape, dtype=array.dtype)
            numpy.multiply(draws, self.scale, out=draws)
            array[...] = draws
        else:
            array[...] = xp.random.normal(0.0, self.scale, array.shape)


class Uniform(Initializer):
    """Draw from U(-scale, scale)."""

    def __init__(self, scale=0.05, dtype=None):
        super().__init__(dtype)
        self.scale = scale

    def __call__(self, array):
        xp = backend.get_array_module(array)
        if xp is numpy and array.dtype in (numpy.float32, numpy.float64):
            draws = _generator().random(array.shape, dtype=array.dtype)
            array[...] = (draws * 2 - 1) * self.scale
        else:
            array[...] = xp.random.uniform(-self.scale, self.scale, array.shape)


class LeCunNormal(Initializer):
    """N(0, scale^2 / fan_in) (LeCun et al., 1998)."""

    def __init__(self, scale=1.0, dtype=None):
        super().__init__(dtype)
        self.scale = scale

    def __call__(self, array):
        fan_in, _ = get_fans(array.shape)
        Normal(self.scale * math.sqrt(1.0 / fan_in))(array)


class HeNormal(Initializer):
    """N(0, 2 scale^2 / fan) (He et al., ICCV 2015); ``fan_option`` 'fan_in' or 'fan_out'."""

    def __init__(self, scale=1.0, dtype=None, fan_option='fan_in'):
        super().__init__(dtype)
        if fan_option not in ('fan_in', 'fan_out'):
            raise ValueError(f"fan_option: expected 'fan_in' or 'fan_out', got {fan_option!r}")
        self.scale = scale
        self.fan_option = fan_option

    def __call__(self, array):
        fan_in, fan_out = get_fans(array.shape)
        fan = fan_in if self.fan_option == 'fan_in' else fan_out
        Normal(self.scale * math.sqrt(2.0 / fan))(array)


class GlorotUniform(Initializer):
    """U(-s, s) with s = scale * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""

    def __init__(self, scale=1.0, dtype=None):
        super().__init__(dtype)
        self.scale = scale

    def __call__(self, array):
        fan_in, fan_out = get_fans(array.shape)
        Uniform(self.scale * math.sqrt(6.0 / (fan_in + fan_out)))(array)


def as_initializer(initializer):
    """Turn None (NaN fill), a scalar (constant) or an initializer into an initializer."""
    if initializer is None:
        return Constant(numpy.nan)
    if isinstance(initializer, str):
        raise TypeError(f'initializer: expected None, a number, an array or an Initializer, '
                        f'got the string {initializer!r}')
    if numpy.isscalar(initializer):
        return Constant(initializer)
    if callable(initializer):
        return initializer
    raise TypeError(
        f'initializer: expected None, a scalar, an array or an Initializer, '
        f'got {type(initializer).__name__}'
    )


def generate_array(initializer, shape, device=None, dtype=None):
    """Create an array of ``shape`` on ``device`` filled by ``initializer``.

    Args:
        initializer: an Initializer (or anything ``as_initializer`` accepts).
        shape (tuple of int): the shape.
        device: where to create it (default: the CPU).
        dtype: overrides the initializer's dtype; default float32.

    Returns:
        the new array.
    """
    initializer = as_initializer(initializer)
    dtype = dtype or getattr(initializer, 'dtype', None) or numpy.float32
    device = backend.get_device(device)
    with device:
        array = device.xp.empty(shape, dtype=dtype)
        initializer(array)
    return array
