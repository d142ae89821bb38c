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

from cvzoo.models.common import foreign_names

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
        return foreign_names.BN_NAMES[leaf]
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
    if source in foreign_names.TORCH_SOURCES:
        arrays = foreign_names.map_keys(raw, _map_torchvision_key, source, 'ResNet weights')
        return foreign_names.add_bn_counts(arrays)
    if source in ('chainercv', 'cvzoo'):
        arrays = {foreign_names.strip_root(k): v for k, v in raw.items()}
        return foreign_names.add_bn_counts(arrays)
    raise ValueError(f"source: expected 'torchvision', 'torch', 'chainercv' or 'cvzoo' for "
                     f'ResNet weights, got {source!r}')
