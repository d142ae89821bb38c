"""Names of foreign weight files mapped to cvzoo's: the helpers every family's
``convert_weights`` shares (torch sources, batch normalisation's names and counts, a
whole file renamed key by key with every unknown key named at once).

>>> map_keys({'fc.weight': 1, 'fc.num_batches_tracked': 2},
...          {'fc.weight': 'fc/W', 'fc.num_batches_tracked': None}.__getitem__, 'torch', 'toy')
{'fc/W': 1}
>>> map_keys({'head.bias': 1}, {}.__getitem__, 'torch', 'toy')
Traceback (most recent call last):
...
cvzoo.errors.WeightLoadError: toy (torch names): 1 keys have no counterpart in cvzoo: head.bias
"""

import numpy

from cvzoo import errors

TORCH_SOURCES = ('torch', 'torchvision')
# torch's BatchNorm2d names -> cvzoo's (its num_batches_tracked counter has none)
BN_NAMES = {'weight': 'gamma', 'bias': 'beta', 'running_mean': 'avg_mean',
            'running_var': 'avg_var'}


def add_bn_counts(arrays):
    """Add ``<bn>/N = 0`` beside every ``<bn>/avg_mean`` that has no count yet."""
    for key in [k for k in arrays if k.endswith('/avg_mean')]:
        arrays.setdefault(key[:-len('avg_mean')] + 'N', numpy.zeros((), numpy.int64))
    return arrays


def map_keys(raw, map_key, source, file_kind):
    """Rename every key of ``raw`` with ``map_key`` (None drops a key).

    Raises:
        cvzoo.errors.WeightLoadError: keys ``map_key`` does not know (all named at once).
    """
    arrays, leftovers = {}, []
    for key, value in raw.items():
        try:
            new_key = map_key(key)
        except KeyError:
            leftovers.append(key)
            continue
        if new_key is not None:
            arrays[new_key] = value
    if leftovers:
        raise errors.WeightLoadError(
            f'{file_kind} ({source} names): {len(leftovers)} keys have no counterpart in '
            f'cvzoo: {", ".join(sorted(leftovers))}')
    return arrays


def strip_root(key):
    """ChainerCV/Chainer npz keys may start with '/'; cvzoo's do not."""
    return key.removeprefix('/')
