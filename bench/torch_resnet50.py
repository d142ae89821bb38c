"""A plain PyTorch ResNet-50 (torchvision's v1.5 layout), the peer of bench_core's network
section. torchvision has no CPU build here, so the network is written out; it is only a
timing reference and is never imported by cvzoo."""

import torch
from torch import nn


class _Bottleneck(nn.Module):
    def __init__(self, in_channels, mid, stride):
        super().__init__()
        out = mid * 4
        self.conv1 = nn.Conv2d(in_channels, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.downsample = None
        if stride != 1 or in_channels != out:
            self.downsample = nn.Sequential(nn.Conv2d(in_channels, out, 1, stride, bias=False),
                                            nn.BatchNorm2d(out))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = torch.relu(self.bn2(self.conv2(h)))
        h = self.bn3(self.conv3(h))
        shortcut = x if self.downsample is None else self.downsample(x)
        return torch.relu(h + shortcut)


def resnet50(n_class=1000):
    """ResNet-50 as an nn.Sequential: stem, 3-4-6-3 bottlenecks, pooling, fc."""
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    in_channels = 64
    for mid, n_block, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(n_block):
            layers.append(_Bottleneck(in_channels, mid, stride if i == 0 else 1))
            in_channels = mid * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, n_class)]
    return nn.Sequential(*layers)
