"""torchvision parameter names of the MobileNets mapped to cvzoo's.

A converter is a table ``torchvision module path -> (cvzoo link path, kind)``, built
from the architecture's block list, where kind is ``'conv'``/``'linear'`` (leaves
``weight``, ``bias`` -> ``W``, ``b``) or ``'bn'`` (``weight``, ``bias``,
``running_mean``, ``running_var`` -> ``gamma``, ``beta``, ``avg_mean``, ``avg_var``;
``num_batches_tracked`` is dropped and BN's ``N`` set to 0).
"""

from cvzoo.models.common import foreign_names

TORCH_SOURCES = foreign_names.TORCH_SOURCES
_LEAVES = {
    'conv': {'weight': 'W', 'bias': 'b'},
    'linear': {'weight': 'W', 'bias': 'b'},
    'bn': {'weight': 'gamma', 'bias': 'beta', 'running_mean': 'avg_mean',
           'running_var': 'avg_var', 'num_batches_tracked': None},
}


def conv_bn(table, torch_prefix, cvzoo_prefix):
    """Add torchvision's ``Conv2dNormActivation`` (``.0`` conv, ``.1`` BN) to ``table``."""
    table[f'{torch_prefix}.0'] = (f'{cvzoo_prefix}/conv', 'conv')
    table[f'{torch_prefix}.1'] = (f'{cvzoo_prefix}/bn', 'bn')


def _key_mapper(table):
    def map_key(key):
        prefix, _, leaf = key.rpartition('.')
        cvzoo_prefix, kind = table[prefix]  # KeyError: an unknown key
        new_leaf = _LEAVES[kind][leaf]
        return None if new_leaf is None else f'{cvzoo_prefix}/{new_leaf}'
    return map_key


def convert_torchvision(raw, table, source, file_kind):
    """Rename a torchvision state dict with ``table``; every key must be known.

    Args:
        raw (dict): torchvision name -> NumPy array.
        table (dict): torchvision module path -> (cvzoo link path, kind).
        source (str): ``'torchvision'`` or ``'torch'``, for the message.
        file_kind (str): e.g. ``'MobileNetV2 weights'``, for the message.

    Raises:
        cvzoo.errors.WeightLoadError: keys without a counterpart, all named at once.
    """
    arrays = foreign_names.map_keys(raw, _key_mapper(table), source, file_kind)
    return foreign_names.add_bn_counts(arrays)


def convert(raw, source, table, file_kind):
    """The ``convert_weights`` hook body: torchvision names via ``table``, cvzoo's as is.

    Raises:
        ValueError: an unknown ``source``.
    """
    if source in TORCH_SOURCES:
        return convert_torchvision(raw, table, source, file_kind)
    if source == 'cvzoo':
        return {foreign_names.strip_root(k): v for k, v in raw.items()}
    raise ValueError(f"source: expected 'torchvision', 'torch' or 'cvzoo' for {file_kind}, "
                     f'got {source!r}')
