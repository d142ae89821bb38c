"""A plain PyTorch VGG16 (torchvision's ``vgg16`` layout: 13 3x3 convolutions with ReLU,
five 2x2 max poolings, adaptive 7x7 average pooling, three fully connected layers with
dropout), the peer of bench_core's ``--network vgg16``. Written out for the reason
torch_resnet50.py gives; only a timing reference, never imported by cvzoo."""

from torch import nn

# output channels of each convolution; 'M' is a 2x2 max pooling
CONFIG = (64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M',
          512, 512, 512, 'M')


def vgg16(n_class=1000):
    """VGG16 as an nn.Sequential."""
    layers, in_channels = [], 3
    for item in CONFIG:
        if item == 'M':
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(in_channels, item, 3, padding=1), nn.ReLU(inplace=True)]
            in_channels = item
    layers += [nn.AdaptiveAvgPool2d((7, 7)), nn.Flatten(),
               nn.Linear(512 * 7 * 7, 4096), nn.ReLU(inplace=True), nn.Dropout(),
               nn.Linear(4096, 4096), nn.ReLU(inplace=True), nn.Dropout(),
               nn.Linear(4096, n_class)]
    return nn.Sequential(*layers)
