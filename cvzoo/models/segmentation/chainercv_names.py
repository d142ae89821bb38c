"""Check a ChainerCV .npz against a model that uses ChainerCV's parameter names."""

import numpy

from cvzoo import errors
from cvzoo.core import backend
from cvzoo.core.serializers import dictionary

# Batch normalisation's update count: absent from some converted files, unused at test.
_OPTIONAL_LEAVES = ('N',)


def take_chainercv_names(model, raw, source):
    """The arrays of ``raw`` for every parameter and persistent value of ``model``.

    The names are the same on both sides (a leading '/' of old Chainer files is
    dropped). Every key of the file must be used and fit its shape; a missing ``N`` of
    batch normalisation keeps the model's value.

    Args:
        model (Link): the model to fill.
        raw (dict): name -> array, as read from the file.
        source (str): ``'chainercv'`` or ``'cvzoo'`` (the same names).

    Returns:
        dict: cvzoo path -> numpy array.

    Raises:
        ValueError: another ``source``.
        cvzoo.errors.WeightLoadError: the missing, unused and mis-shaped keys, all named.
    """
    if source not in ('chainercv', 'cvzoo'):
        raise ValueError(f"source: expected 'chainercv' or 'cvzoo' for "
                         f'{type(model).__name__} weights, got {source!r}')
    own = dictionary.DictionarySerializer()
    model.serialize(own)
    left = {key.removeprefix('/'): value for key, value in raw.items()}
    arrays, missing, misshaped = {}, [], []
    for path, value in own.target.items():
        value = backend.to_numpy(value) if value is not None else value
        if path not in left:
            if path.rsplit('/', 1)[-1] in _OPTIONAL_LEAVES:
                arrays[path] = numpy.asarray(value)
            else:
                missing.append(path)
            continue
        array = numpy.asarray(left.pop(path))
        if value is not None and array.shape != numpy.shape(value):
            misshaped.append(f'{path}: file {array.shape}, model {numpy.shape(value)}')
        arrays[path] = array
    if missing or left or misshaped:
        raise errors.WeightLoadError(
            f'{type(model).__name__}.convert_weights: missing keys {missing}, unused keys '
            f'{sorted(left)}, mis-shaped keys {misshaped}')
    return arrays
