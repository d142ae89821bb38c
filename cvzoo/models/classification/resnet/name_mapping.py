"""Parameter names of foreign ResNet files mapped to cvzoo's (ChainerCV's) names.

cvzoo names a ResNet's parameters as ChainerCV does::

    conv1/conv/W  conv1/bn/{gamma,beta,avg_mean,avg_var,N}
    res{2..5}/{a,b1,b2,...}/conv{1,2,3}/{conv,bn}/...   res{2..5}/a/residual_conv/...
    res{2..5}/{a,b1,...}/se/{down,up}/{W,b}   (SENet)    fc6/{W,b}

torchvision's are ``conv1.weight``, ``bn1.running_mean``, ``layer1.0.conv2.weight``,
``layer1.0.downsample.0.weight``, ``layer1.0.downsample.1.running_var``, ``fc.bias``...
Its ``num_batches_tracked`` counters are dropped; BN's ``N`` (the fine-tuning batch
count, which torchvision does not have) is set to 0.
"""

import re

import numpy

from cvzoo import errors

TORCH_SOURCES = ('torch', 'torchvision')
_BN_NAMES = {'weight': 'gamma', 'bias': 'beta', 'running_mean': 'avg_mean',
             'running_var': 'avg_var'}
_BN = '(weight|bias|running_mean|running_var|num_batches_tracked)'
# torchvision key pattern -> function of the match giving (cvzoo prefix, torchvision leaf)
_TORCHVISION_PATTERNS = (
    (re.compile(r'conv1\.(weight|bias)'), lambda m: ('conv1/conv', m[1])),
    (re.compile(rf'bn1\.{_BN}'), lambda m: ('conv1/bn', m[1])),
    (re.compile(r'layer(\d)\.(\d+)\.conv(\d)\.weight'),
     lambda m: (f'{_block(m)}/conv{m[3]}/conv', 'weight')),
    (re.compile(rf'layer(\d)\.(\d+)\.bn(\d)\.{_BN}'),
     lambda m: (f'{_block(m)}/conv{m[3]}/bn', m[4])),
    (re.compile(r'layer(\d)\.(\d+)\.downsample\.0\.weight'),
     lambda m: (f'{_block(m)}/residual_conv/conv', 'weight')),
    (re.compile(rf'layer(\d)\.(\d+)\.downsample\.1\.{_BN}'),
     lambda m: (f'{_block(m)}/residual_conv/bn', m[3])),
    (re.compile(r'fc\.(weight|bias)'), lambda m: ('fc6', m[1])),
)


def _block(match):
    """'res{stage+1}/a' for block 0, 'res{stage+1}/b{j}' after it."""
    index = int(match[2])
    return f'res{int(match[1]) + 1}/' + ('a' if index == 0 else f'b{index}')


def _leaf_name(prefix, leaf):
    if prefix.endswith('/bn'):
        return _BN_NAMES[leaf]
    return {'weight': 'W', 'bias': 'b'}[leaf]


def _map_torchvision_key(key):
    """(cvzoo key or None to drop it) for a torchvision key; raises KeyError if unknown."""
    for pattern, rule in _TORCHVISION_PATTERNS:
        match = pattern.fullmatch(key)
        if match:
            prefix, leaf = rule(match)
            if leaf == 'num_batches_tracked':
                return None
            return f'{prefix}/{_leaf_name(prefix, leaf)}'
    raise KeyError(key)


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


def convert_resnet(raw, source):
    """Map a ResNet/ResNeXt/SENet weight file's names to cvzoo's.

    Args:
        raw (dict): name -> NumPy array as read from the file.
        source (str): ``'torchvision'`` (or ``'torch'``), ``'chainercv'`` or ``'cvzoo'``.

    Returns:
        dict: cvzoo name -> array.

    Raises:
        ValueError: an unknown ``source``.
        cvzoo.errors.WeightLoadError: keys of the file that the mapping does not know.
    """
    if source in TORCH_SOURCES:
        return add_bn_counts(map_keys(raw, _map_torchvision_key, source, 'ResNet weights'))
    if source in ('chainercv', 'cvzoo'):
        return add_bn_counts({strip_root(k): v for k, v in raw.items()})
    raise ValueError(f"source: expected 'torchvision', 'torch', 'chainercv' or 'cvzoo' for "
                     f'ResNet weights, got {source!r}')
