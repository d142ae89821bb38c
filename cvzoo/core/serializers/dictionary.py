"""Serialize into, and load from, a flat dict of NumPy arrays keyed by path ('conv1/W').

File formats (npz, hdf5) only read and write such a dict; every rule about what fits
lives here. Loading checks everything first: every missing, unexpected and mis-shaped
key, and the first array holding NaN or inf, is reported in one WeightLoadError and the
target is left unchanged.
"""

import numpy

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core import variable as variable_module
from cvzoo.core.serializers import serializer as serializer_module


def _is_scalar(value):
    return isinstance(value, (bool, int, float, numpy.generic))


def state_arrays(link):
    """``link``'s parameters and persistent arrays, {path without the leading '/': NumPy}.

    Device arrays are copied to the host.

    >>> import cvzoo.core.links as L
    >>> sorted(state_arrays(L.Linear(2, 3)))
    ['W', 'b']
    """
    own = DictionarySerializer()
    link.serialize(own)
    return {key.removeprefix('/'): value for key, value in own.target.items()}


class DictionarySerializer(serializer_module.Serializer):
    """Collect an object's state into ``target``, a dict {path: NumPy array}.

    Uninitialised parameters and None values are skipped.

    Args:
        target (dict or None): the dict to fill (a new one by default).
        path (str): key prefix.
    """

    def __init__(self, target=None, path=''):
        super().__init__(path)
        self.target = {} if target is None else target

    def __getitem__(self, key):
        return DictionarySerializer(self.target, self._child_path(key))

    def __call__(self, key, value):
        array = value.array if isinstance(value, variable_module.Variable) else value
        if array is None:
            return value
        if _is_scalar(array):
            array = numpy.asarray(array)
        elif not hasattr(array, 'shape'):
            raise TypeError(
                f'{self.path + key}: expected an array, a Variable or a scalar to save, '
                f'got {type(value).__name__}')
        self.target[self.path + key] = backend.to_numpy(array)
        return value


class _KeyCollector(serializer_module.Deserializer):
    """Walk an object as a loader would and record each key's expected shape.

    The shape is None when any shape fits (an uninitialised parameter, a None value);
    keys asked for with a None value are optional.
    """

    def __init__(self, expected, path=''):
        super().__init__(path)
        self.expected = expected

    def __getitem__(self, key):
        return _KeyCollector(self.expected, self._child_path(key))

    def __call__(self, key, value):
        array = value.array if isinstance(value, variable_module.Variable) else value
        if value is None:
            self.expected[self.path + key] = (None, True)
        elif array is None:
            self.expected[self.path + key] = (None, False)
        elif _is_scalar(array):
            self.expected[self.path + key] = ((), False)
        else:
            self.expected[self.path + key] = (tuple(array.shape), False)
        return value


def first_non_finite_key(arrays, keys):
    """The first of ``keys`` (in the order given) whose array in ``arrays`` holds NaN or
    inf, or None. Only floating-point arrays are checked, one ``isfinite`` pass each.

    >>> first_non_finite_key({'a': numpy.zeros(2), 'b': numpy.array([1, numpy.nan])}, 'ab')
    'b'
    """
    for key in keys:
        array = arrays[key]
        if numpy.issubdtype(array.dtype, numpy.inexact) and not numpy.isfinite(array).all():
            return key
    return None


def _load_value(value, loaded):
    """Copy ``loaded`` (a NumPy array) into ``value`` in place, or convert it."""
    if value is None:
        return loaded
    if isinstance(value, variable_module.Variable):
        if value.array is None:
            value.initialize(loaded.shape)
        with backend.using_device_of(value.array):
            value.array[...] = backend.to_device(loaded, value.device)
        return value
    if isinstance(value, numpy.generic):
        return loaded.astype(value.dtype)[()]
    if _is_scalar(value):
        return type(value)(loaded.item())
    with backend.using_device_of(value):
        value[...] = backend.to_device(loaded, backend.get_device_from_array(value))
    return value


class DictionaryDeserializer(serializer_module.Deserializer):
    """Load an object's state from ``arrays``, a dict {path: NumPy array}.

    Use ``load(obj)``, which checks every key before it changes anything.

    Args:
        arrays (dict): the saved arrays.
        path (str): key prefix of the object inside ``arrays`` (e.g. 'updater/model:main/').
        strict (bool): False loads the keys that fit and ignores missing and unexpected
            ones (mis-shaped keys are still refused).
        source (str): the file name, for messages.
    """

    def __init__(self, arrays, path='', strict=True, source='the weights'):
        super().__init__(path)
        self.arrays = arrays
        self.strict = strict
        self.source = source

    def __getitem__(self, key):
        return DictionaryDeserializer(self.arrays, self._child_path(key), self.strict,
                                      self.source)

    def __call__(self, key, value):
        full_key = self.path + key
        if full_key not in self.arrays:
            if self.strict and value is not None:
                raise errors.WeightLoadError(f'{self.source}: missing key {full_key!r}')
            return value
        return _load_value(value, self.arrays[full_key])

    def load(self, obj):
        """Check that ``arrays`` fit ``obj``, then load them; return ``obj``.

        Raises:
            cvzoo.errors.WeightLoadError: listing every missing, unexpected and mis-shaped
                key (only mis-shaped ones when ``strict`` is False) and the first array
                to load that holds NaN or inf; ``obj`` is unchanged.
        """
        expected = {}
        obj.serialize(_KeyCollector(expected, self.path))
        problems = self._problems(expected)
        if problems:
            raise errors.WeightLoadError(
                f'{self.source} does not fit {type(obj).__name__}: ' + '; '.join(problems))
        obj.serialize(DictionaryDeserializer(self.arrays, self.path, False, self.source))
        return obj

    def _problems(self, expected):
        present = {k for k in self.arrays if k.startswith(self.path)}
        missing = sorted(k for k, (_, optional) in expected.items()
                         if not optional and k not in present)
        unexpected = sorted(present - set(expected))
        misshaped = [
            f'{k} (file {tuple(self.arrays[k].shape)}, expected {shape})'
            for k, (shape, _) in sorted(expected.items())
            if shape is not None and k in present and tuple(self.arrays[k].shape) != shape]
        problems = []
        non_finite = first_non_finite_key(
            self.arrays, [k for k in self.arrays if k in expected])
        if non_finite is not None:
            problems.append(f'{non_finite} holds NaN or inf (the first such array)')
        if misshaped:
            problems.append('mis-shaped: ' + ', '.join(misshaped))
        if self.strict and missing:
            problems.append('missing: ' + ', '.join(missing))
        if self.strict and unexpected:
            problems.append('unexpected: ' + ', '.join(unexpected))
        return problems
