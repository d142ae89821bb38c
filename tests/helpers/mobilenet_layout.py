"""torchvision's MobileNetV2 / MobileNetV3-Large state dicts, spelled out for the tests.

Names and shapes come from torchvision's layout written down here from the paper tables
(not from cvzoo's mapping tables), so that a wrong mapping fails the tests;
test_torchvision_reference.py checks them against torchvision's real models.
"""

import collections

import numpy

# (t, c, n, s) of MobileNetV2, the paper's Table 2
V2_SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
               (6, 160, 3, 2), (6, 320, 1, 1))
# (in, kernel, expanded, out, SE hidden or 0) of MobileNetV3-Large's 15 blocks
V3_BLOCKS = ((16, 3, 16, 16, 0), (16, 3, 64, 24, 0), (24, 3, 72, 24, 0), (24, 5, 72, 40, 24),
             (40, 5, 120, 40, 32), (40, 5, 120, 40, 32), (40, 3, 240, 80, 0),
             (80, 3, 200, 80, 0), (80, 3, 184, 80, 0), (80, 3, 184, 80, 0),
             (80, 3, 480, 112, 120), (112, 3, 672, 112, 168), (112, 5, 672, 160, 168),
             (160, 5, 960, 160, 240), (160, 5, 960, 160, 240))


def _conv(state, name, rng, *shape, bias=False):
    fan_in = numpy.prod(shape[1:])
    state[f'{name}.weight'] = (rng.standard_normal(shape) / numpy.sqrt(fan_in)).astype('f')
    if bias:
        state[f'{name}.bias'] = rng.uniform(-0.1, 0.1, shape[0]).astype('f')


def _bn(state, name, rng, n):
    state[f'{name}.weight'] = rng.uniform(0.5, 1.5, n).astype('f')
    state[f'{name}.bias'] = rng.uniform(-0.1, 0.1, n).astype('f')
    state[f'{name}.running_mean'] = rng.uniform(-0.1, 0.1, n).astype('f')
    state[f'{name}.running_var'] = rng.uniform(0.5, 1.5, n).astype('f')
    state[f'{name}.num_batches_tracked'] = numpy.array(3, numpy.int64)


def mobilenet_v2_state(rng, n_class=1000):
    """A random torchvision ``mobilenet_v2`` (width 1.0) state dict."""
    state = collections.OrderedDict()
    _conv(state, 'features.0.0', rng, 32, 3, 3, 3)
    _bn(state, 'features.0.1', rng, 32)
    in_channels, index = 32, 1
    for t, c, n, _ in V2_SETTINGS:
        for _ in range(n):
            hidden, prefix, j = in_channels * t, f'features.{index}.conv', 0
            if t != 1:
                _conv(state, f'{prefix}.0.0', rng, hidden, in_channels, 1, 1)
                _bn(state, f'{prefix}.0.1', rng, hidden)
                j = 1
            _conv(state, f'{prefix}.{j}.0', rng, hidden, 1, 3, 3)
            _bn(state, f'{prefix}.{j}.1', rng, hidden)
            _conv(state, f'{prefix}.{j + 1}', rng, c, hidden, 1, 1)
            _bn(state, f'{prefix}.{j + 2}', rng, c)
            in_channels, index = c, index + 1
    _conv(state, 'features.18.0', rng, 1280, 320, 1, 1)
    _bn(state, 'features.18.1', rng, 1280)
    _conv(state, 'classifier.1', rng, n_class, 1280, bias=True)
    return state


def mobilenet_v3_large_state(rng, n_class=1000):
    """A random torchvision ``mobilenet_v3_large`` state dict."""
    state = collections.OrderedDict()
    _conv(state, 'features.0.0', rng, 16, 3, 3, 3)
    _bn(state, 'features.0.1', rng, 16)
    for index, (in_channels, k, expanded, out, hidden) in enumerate(V3_BLOCKS, start=1):
        prefix, j = f'features.{index}.block', 0
        if expanded != in_channels:
            _conv(state, f'{prefix}.0.0', rng, expanded, in_channels, 1, 1)
            _bn(state, f'{prefix}.0.1', rng, expanded)
            j = 1
        _conv(state, f'{prefix}.{j}.0', rng, expanded, 1, k, k)
        _bn(state, f'{prefix}.{j}.1', rng, expanded)
        if hidden:
            _conv(state, f'{prefix}.{j + 1}.fc1', rng, hidden, expanded, 1, 1, bias=True)
            _conv(state, f'{prefix}.{j + 1}.fc2', rng, expanded, hidden, 1, 1, bias=True)
            j += 1
        _conv(state, f'{prefix}.{j + 1}.0', rng, out, expanded, 1, 1)
        _bn(state, f'{prefix}.{j + 1}.1', rng, out)
    _conv(state, 'features.16.0', rng, 960, 160, 1, 1)
    _bn(state, 'features.16.1', rng, 960)
    _conv(state, 'classifier.0', rng, 1280, 960, bias=True)
    _conv(state, 'classifier.3', rng, n_class, 1280, bias=True)
    return state

