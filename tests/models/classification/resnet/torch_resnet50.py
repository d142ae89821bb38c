"""A plain PyTorch ResNet-50 in torchvision's layout, for the reference test only."""

import torch
from torch import nn


class Bottleneck(nn.Module):
    def __init__(self, in_channels, mid, stride, project):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, mid * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(mid * 4)
        self.downsample = None
        if project:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, mid * 4, 1, stride, bias=False), nn.BatchNorm2d(mid * 4))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = torch.relu(self.bn2(self.conv2(h)))
        h = self.bn3(self.conv3(h))
        shortcut = x if self.downsample is None else self.downsample(x)
        return torch.relu(h + shortcut)


class ResNet50(nn.Module):
    def __init__(self, n_class=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        in_channels = 64
        for stage, n_block in enumerate((3, 4, 6, 3)):
            mid = 64 * 2 ** stage
            blocks = []
            for j in range(n_block):
                stride = 2 if j == 0 and stage > 0 else 1
                blocks.append(Bottleneck(in_channels, mid, stride, j == 0))
                in_channels = mid * 4
            setattr(self, f'layer{stage + 1}', nn.Sequential(*blocks))
        self.fc = nn.Linear(2048, n_class)

    def forward(self, x):
        h = self.maxpool(torch.relu(self.bn1(self.conv1(x))))
        for stage in range(1, 5):
            h = getattr(self, f'layer{stage}')(h)
        return self.fc(h.mean(dim=(2, 3)))


def randomize_bn(net):
    """Give every BatchNorm non-trivial statistics and affine parameters."""
    generator = torch.Generator().manual_seed(1)
    for module in net.modules():
        if isinstance(module, nn.BatchNorm2d):
            n = module.num_features
            module.running_mean.copy_(torch.rand(n, generator=generator) * 0.2 - 0.1)
            module.running_var.copy_(torch.rand(n, generator=generator) + 0.5)
            module.weight.data.copy_(torch.rand(n, generator=generator) + 0.5)
            module.bias.data.copy_(torch.rand(n, generator=generator) * 0.2 - 0.1)
