"""Classifier weights in torchvision and ChainerCV naming, for the classifier tests
(``pth_writer.write_state_dict`` writes a state dict as a .pth).

The torchvision names and shapes are spelled out here from torchvision's ResNet layout
(not derived from cvzoo's mapping), so that the mapping under test can be wrong.
"""

import collections

import numpy


def _bn(state, prefix, n, rng):
    state[f'{prefix}.weight'] = rng.uniform(0.5, 1.5, n).astype(numpy.float32)
    state[f'{prefix}.bias'] = rng.uniform(-0.1, 0.1, n).astype(numpy.float32)
    state[f'{prefix}.running_mean'] = rng.uniform(-0.1, 0.1, n).astype(numpy.float32)
    state[f'{prefix}.running_var'] = rng.uniform(0.5, 1.5, n).astype(numpy.float32)
    state[f'{prefix}.num_batches_tracked'] = numpy.array(7, numpy.int64)


def _conv(rng, *shape):
    fan_in = numpy.prod(shape[1:])
    return (rng.standard_normal(shape) * numpy.sqrt(1.0 / fan_in)).astype(numpy.float32)


def torchvision_resnet_state(rng, blocks=(3, 4, 6, 3), width=64, groups=1, n_class=1000,
                             conv1_bias=False):
    """A random state dict with torchvision's ResNet names and shapes (Bottleneck)."""
    state = collections.OrderedDict()
    state['conv1.weight'] = _conv(rng, 64, 3, 7, 7)
    if conv1_bias:
        state['conv1.bias'] = numpy.zeros(64, numpy.float32)
    _bn(state, 'bn1', 64, rng)
    in_channels = 64
    for stage, n_block in enumerate(blocks):
        mid, out = width * 2 ** stage, 256 * 2 ** stage
        for j in range(n_block):
            p = f'layer{stage + 1}.{j}'
            state[f'{p}.conv1.weight'] = _conv(rng, mid, in_channels, 1, 1)
            _bn(state, f'{p}.bn1', mid, rng)
            state[f'{p}.conv2.weight'] = _conv(rng, mid, mid // groups, 3, 3)
            _bn(state, f'{p}.bn2', mid, rng)
            state[f'{p}.conv3.weight'] = _conv(rng, out, mid, 1, 1)
            _bn(state, f'{p}.bn3', out, rng)
            if j == 0:
                state[f'{p}.downsample.0.weight'] = _conv(rng, out, in_channels, 1, 1)
                _bn(state, f'{p}.downsample.1', out, rng)
            in_channels = out
    state['fc.weight'] = _conv(rng, n_class, 2048)
    state['fc.bias'] = rng.uniform(-0.1, 0.1, n_class).astype(numpy.float32)
    return state


def model_arrays(model):
    """cvzoo's own name -> array of every parameter and persistent of ``model``."""
    arrays = {}
    for name, param in model.namedparams():
        arrays[name.lstrip('/')] = param.array
    for name, link in model.namedlinks():
        for persistent in getattr(link, '_persistent', ()):
            value = getattr(link, persistent)
            key = (name.rstrip('/') + '/' + persistent).lstrip('/')
            arrays[key] = numpy.asarray(value)
    return arrays


def randomize(arrays, rng):
    """Random values of the same shapes (positive for avg_var, integer counts kept)."""
    out = {}
    for key, value in arrays.items():
        if value.dtype.kind != 'f':
            out[key] = numpy.asarray(value)
        elif key.endswith('avg_var'):
            out[key] = rng.uniform(0.5, 1.5, value.shape).astype(value.dtype)
        else:
            out[key] = (0.05 * rng.standard_normal(value.shape)).astype(value.dtype)
    return out
