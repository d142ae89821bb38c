"""torchvision parameter names of the segmenters mapped to cvzoo's, by tables.

A table maps a torchvision module path to ``(cvzoo link path, kind)``; kind ``'conv'``
has the leaves ``weight``/``bias`` (``W``/``b``), kind ``'bn'`` has ``weight``, ``bias``,
``running_mean``, ``running_var`` (``gamma``, ``beta``, ``avg_mean``, ``avg_var``) and
``num_batches_tracked`` (dropped; cvzoo's ``N`` is set to 0). The tables are built from
the architecture, so a file is checked against the model in both directions:
:func:`convert` names, in one message, every key of the file that the model does not
have, every parameter of the model that the file does not give and every key whose
shape differs from the model's.
"""

from cvzoo import errors
from cvzoo.core.serializers import dictionary
from cvzoo.models.common import foreign_names

TORCH_SOURCES = foreign_names.TORCH_SOURCES
LEAVES = {
    'conv': {'weight': 'W', 'bias': 'b'},
    'bn': {'weight': 'gamma', 'bias': 'beta', 'running_mean': 'avg_mean',
           'running_var': 'avg_var', 'num_batches_tracked': None},
}


def conv_bn(table, torch_prefix, cvzoo_prefix):
    """Add a convolution (``{torch_prefix}.0``) and its BN (``.1``) to ``table``."""
    table[f'{torch_prefix}.0'] = (f'{cvzoo_prefix}/conv', 'conv')
    table[f'{torch_prefix}.1'] = (f'{cvzoo_prefix}/bn', 'bn')


def resnet_table(table, n_blocks, torch_root, cvzoo_root):
    """Add torchvision ResNet names (``conv1``, ``bn1``, ``layer{s}.{i}.conv{j}``, ...)."""
    table[f'{torch_root}.conv1'] = (f'{cvzoo_root}/conv1/conv', 'conv')
    table[f'{torch_root}.bn1'] = (f'{cvzoo_root}/conv1/bn', 'bn')
    for stage, n_block in enumerate(n_blocks, 1):
        for i in range(n_block):
            torch_block = f'{torch_root}.layer{stage}.{i}'
            block = f'{cvzoo_root}/res{stage + 1}/' + ('a' if i == 0 else f'b{i}')
            for j in (1, 2, 3):
                table[f'{torch_block}.conv{j}'] = (f'{block}/conv{j}/conv', 'conv')
                table[f'{torch_block}.bn{j}'] = (f'{block}/conv{j}/bn', 'bn')
            if i == 0:
                conv_bn(table, f'{torch_block}.downsample', f'{block}/residual_conv')
    return table


def _torch_key(path, reverse):
    """The torchvision key of a cvzoo parameter path (the path itself if unmapped)."""
    prefix, _, leaf = path.rpartition('/')
    if prefix not in reverse:
        return path
    torch_prefix, kind = reverse[prefix]
    torch_leaf = {v: k for k, v in LEAVES[kind].items() if v}.get(leaf)
    return path if torch_leaf is None else f'{torch_prefix}.{torch_leaf}'


def convert(model, raw, table, file_kind, drop_prefixes=()):
    """Rename a torchvision state dict for ``model`` with ``table``.

    Args:
        model (Link): the model the arrays are for (its parameter names are checked).
        raw (dict): torchvision name -> NumPy array.
        table (dict): torchvision module path -> (cvzoo link path, kind).
        file_kind (str): e.g. ``'FCN-ResNet50 weights'``, for the message.
        drop_prefixes (tuple of str): torchvision keys starting with one of these are
            dropped on purpose (e.g. ``'aux_classifier.'`` for a model without it).

    Returns:
        dict: cvzoo path -> array, BN counts ``N`` included.

    Raises:
        cvzoo.errors.WeightLoadError: keys of the file without a counterpart,
            parameters of the model the file lacks and keys of the wrong shape, all
            named at once (by their torchvision names).
    """
    arrays, unused = {}, []
    for key, value in raw.items():
        if key.startswith(tuple(drop_prefixes)):
            continue
        prefix, _, leaf = key.rpartition('.')
        cvzoo_prefix, kind = table.get(prefix, (None, 'conv'))
        if cvzoo_prefix is None or leaf not in LEAVES[kind]:
            unused.append(key)
        elif LEAVES[kind][leaf] is not None:
            arrays[f'{cvzoo_prefix}/{LEAVES[kind][leaf]}'] = value
    arrays = foreign_names.add_bn_counts(arrays)
    own = dictionary.DictionarySerializer()
    model.serialize(own)
    reverse = {cvzoo_prefix: (torch_prefix, kind)
               for torch_prefix, (cvzoo_prefix, kind) in table.items()}
    # NOTE: BN's batch count ``N`` is cvzoo's own; a missing BN is named by its leaves.
    missing = [_torch_key(path, reverse) for path in own.target
               if path not in arrays and not path.endswith('/N')]
    misshaped = [f'{_torch_key(path, reverse)} {arrays[path].shape} (expected {value.shape})'
                 for path, value in own.target.items()
                 if path in arrays and arrays[path].shape != value.shape]
    if unused or missing or misshaped:
        raise errors.WeightLoadError(
            f'{file_kind}: {len(missing)} keys missing from the file: {sorted(missing)}; '
            f'{len(unused)} keys of the file unused: {sorted(unused)}; {len(misshaped)} '
            f'keys of the wrong shape: {sorted(misshaped)}')
    return arrays
