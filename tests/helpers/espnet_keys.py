"""The state-dict keys and shapes of sacmehta/ESPNet's CamVid decoder weights.

Written from the original's train/Model.py structure (ESPNet, p=2, q=8), not from
cvzoo's name mapping, so the tests check that mapping against an independent list.
"""

from collections import OrderedDict

BN_LEAVES = ('weight', 'bias', 'running_mean', 'running_var')


def _bn(keys, prefix, n):
    for leaf in BN_LEAVES:
        keys[f'{prefix}.{leaf}'] = (n,)


def _br(keys, prefix, n):
    _bn(keys, f'{prefix}.bn', n)
    keys[f'{prefix}.act.weight'] = (n,)


def _pyramid(keys, prefix, n_in, n_out, c1_ksize):
    n = n_out // 5
    keys[f'{prefix}.c1.conv.weight'] = (n, n_in, c1_ksize, c1_ksize)
    keys[f'{prefix}.d1.conv.weight'] = (n_out - 4 * n, n, 3, 3)
    for d in (2, 4, 8, 16):
        keys[f'{prefix}.d{d}.conv.weight'] = (n, n, 3, 3)


def _esp(keys, prefix, n_in, n_out):
    _pyramid(keys, prefix, n_in, n_out, 1)
    _br(keys, f'{prefix}.bn', n_out)


def _strided_esp(keys, prefix, n_in, n_out):
    _pyramid(keys, prefix, n_in, n_out, 3)
    _bn(keys, f'{prefix}.bn', n_out)
    keys[f'{prefix}.act.weight'] = (n_out,)


def espnet_state_shapes(n_out=12, p=2, q=8):
    """OrderedDict torch key -> shape for ESPNet with ``n_out`` output channels."""
    keys = OrderedDict()
    keys['encoder.level1.conv.weight'] = (16, 3, 3, 3)
    _br(keys, 'encoder.level1', 16)
    _br(keys, 'encoder.b1', 19)
    _strided_esp(keys, 'encoder.level2_0', 19, 64)
    for i in range(p):
        _esp(keys, f'encoder.level2.{i}', 64, 64)
    _br(keys, 'encoder.b2', 131)
    _strided_esp(keys, 'encoder.level3_0', 131, 128)
    for i in range(q):
        _esp(keys, f'encoder.level3.{i}', 128, 128)
    _br(keys, 'encoder.b3', 256)
    keys['encoder.classifier.conv.weight'] = (n_out, 256, 1, 1)
    keys['level3_C.conv.weight'] = (n_out, 131, 1, 1)
    _bn(keys, 'br', n_out)
    keys['up_l3.0.weight'] = (n_out, n_out, 2, 2)
    _br(keys, 'combine_l2_l3.0', 2 * n_out)
    _esp(keys, 'combine_l2_l3.1', 2 * n_out, n_out)
    keys['up_l2.0.weight'] = (n_out, n_out, 2, 2)
    _br(keys, 'up_l2.1', n_out)
    keys['conv.conv.weight'] = (n_out, 19 + n_out, 3, 3)
    _br(keys, 'conv', n_out)
    keys['classifier.weight'] = (n_out, n_out, 2, 2)
    return keys
