"""torchvision's SqueezeNet state-dict layout, and a plain-PyTorch SqueezeNet 1.1, for tests.

Spelled out from torchvision's layout (``features`` indices of the Fire modules), not
from cvzoo's mapping. torch is imported only by ``torch_squeezenet1_1``.
"""

import collections

import numpy

# (features index, in, squeeze, expand1x1, expand3x3) of the Fire modules
FIRES = {
    '1_0': ((3, 96, 16, 64, 64), (4, 128, 16, 64, 64), (5, 128, 32, 128, 128),
            (7, 256, 32, 128, 128), (8, 256, 48, 192, 192), (9, 384, 48, 192, 192),
            (10, 384, 64, 256, 256), (12, 512, 64, 256, 256)),
    '1_1': ((3, 64, 16, 64, 64), (4, 128, 16, 64, 64), (6, 128, 32, 128, 128),
            (7, 256, 32, 128, 128), (9, 256, 48, 192, 192), (10, 384, 48, 192, 192),
            (11, 384, 64, 256, 256), (12, 512, 64, 256, 256)),
}
STEMS = {'1_0': (96, 7), '1_1': (64, 3)}


def _conv(state, name, rng, *shape):
    fan_in = numpy.prod(shape[1:])
    state[f'{name}.weight'] = (rng.standard_normal(shape) * numpy.sqrt(2 / fan_in)).astype('f')
    state[f'{name}.bias'] = rng.uniform(-0.1, 0.1, shape[0]).astype('f')


def squeezenet_state(rng, version, n_class=1000):
    """A random torchvision ``squeezenet1_0`` / ``squeezenet1_1`` state dict."""
    state = collections.OrderedDict()
    channels, k = STEMS[version]
    _conv(state, 'features.0', rng, channels, 3, k, k)
    for index, in_channels, squeeze, e1, e3 in FIRES[version]:
        _conv(state, f'features.{index}.squeeze', rng, squeeze, in_channels, 1, 1)
        _conv(state, f'features.{index}.expand1x1', rng, e1, squeeze, 1, 1)
        _conv(state, f'features.{index}.expand3x3', rng, e3, squeeze, 3, 3)
    _conv(state, 'classifier.1', rng, n_class, 512, 1, 1)
    return state


def torch_squeezenet1_1(n_class=1000):
    """A plain-PyTorch SqueezeNet 1.1 with torchvision's module names; ``forward`` -> logits."""
    import torch  # torch is optional: imported only here
    from torch import nn

    class Fire(nn.Module):
        def __init__(self, in_channels, squeeze, e1, e3):
            super().__init__()
            self.squeeze = nn.Conv2d(in_channels, squeeze, 1)
            self.expand1x1 = nn.Conv2d(squeeze, e1, 1)
            self.expand3x3 = nn.Conv2d(squeeze, e3, 3, padding=1)

        def forward(self, x):
            s = torch.relu(self.squeeze(x))
            return torch.cat([torch.relu(self.expand1x1(s)), torch.relu(self.expand3x3(s))], 1)

    class SqueezeNet(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [nn.Conv2d(3, 64, 3, stride=2), nn.ReLU()]
            fires = {index: args for index, *args in FIRES['1_1']}
            for index in range(2, 13):
                layers.append(Fire(*fires[index]) if index in fires
                              else nn.MaxPool2d(3, 2, ceil_mode=True))
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(512, n_class, 1),
                                            nn.ReLU(), nn.AdaptiveAvgPool2d(1))

        def forward(self, x):
            return torch.flatten(self.classifier(self.features(x)), 1)

    return SqueezeNet().eval()
