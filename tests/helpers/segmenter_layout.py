"""torchvision's segmentation state dicts (names and shapes), spelled out for the tests.

Written from torchvision's module layout (``backbone.layer3.0.downsample.1``,
``classifier.0.convs.4.1``, ...), not from cvzoo's mapping tables, so that a wrong
mapping fails the tests. The files are written cheaply: each tensor is one float repeated
through zero strides, a different float per key, so a file with the real shapes of
ResNet-101 takes a few kilobytes.
"""

import collections

import numpy

from tests.helpers import pth_writer

BN_LEAVES = ('weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked')
N_BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3)}


def conv(shapes, name, out_channels, in_channels, ksize, bias=False):
    shapes[f'{name}.weight'] = (out_channels, in_channels, ksize, ksize)
    if bias:
        shapes[f'{name}.bias'] = (out_channels,)


def bn(shapes, name, n):
    for leaf in BN_LEAVES:
        shapes[f'{name}.{leaf}'] = () if leaf == 'num_batches_tracked' else (n,)


def resnet(shapes, n_layer, root='backbone'):
    """torchvision ResNet-50/101 up to ``layer4`` (what IntermediateLayerGetter keeps)."""
    conv(shapes, f'{root}.conv1', 64, 3, 7)
    bn(shapes, f'{root}.bn1', 64)
    in_channels = 64
    for stage, n_block in enumerate(N_BLOCKS[n_layer], 1):
        width = 64 * 2 ** (stage - 1)
        for i in range(n_block):
            block = f'{root}.layer{stage}.{i}'
            conv(shapes, f'{block}.conv1', width, in_channels, 1)
            bn(shapes, f'{block}.bn1', width)
            conv(shapes, f'{block}.conv2', width, width, 3)
            bn(shapes, f'{block}.bn2', width)
            conv(shapes, f'{block}.conv3', 4 * width, width, 1)
            bn(shapes, f'{block}.bn3', 4 * width)
            if i == 0:
                conv(shapes, f'{block}.downsample.0', 4 * width, in_channels, 1)
                bn(shapes, f'{block}.downsample.1', 4 * width)
            in_channels = 4 * width
    return shapes


def fcn_head(shapes, root, in_channels, n_class):
    """torchvision's FCNHead: [conv3x3, BN, ReLU, Dropout, conv1x1]."""
    conv(shapes, f'{root}.0', in_channels // 4, in_channels, 3)
    bn(shapes, f'{root}.1', in_channels // 4)
    conv(shapes, f'{root}.4', n_class, in_channels // 4, 1, bias=True)
    return shapes


def deeplab_head(shapes, root, in_channels, n_class):
    """torchvision's DeepLabHead: [ASPP, conv3x3, BN, ReLU, conv1x1]."""
    aspp = f'{root}.0'
    conv(shapes, f'{aspp}.convs.0.0', 256, in_channels, 1)
    bn(shapes, f'{aspp}.convs.0.1', 256)
    for k in (1, 2, 3):
        conv(shapes, f'{aspp}.convs.{k}.0', 256, in_channels, 3)
        bn(shapes, f'{aspp}.convs.{k}.1', 256)
    conv(shapes, f'{aspp}.convs.4.1', 256, in_channels, 1)  # after the AdaptiveAvgPool2d
    bn(shapes, f'{aspp}.convs.4.2', 256)
    conv(shapes, f'{aspp}.project.0', 256, 5 * 256, 1)
    bn(shapes, f'{aspp}.project.1', 256)
    conv(shapes, f'{root}.1', 256, 256, 3)
    bn(shapes, f'{root}.2', 256)
    conv(shapes, f'{root}.4', n_class, 256, 1, bias=True)
    return shapes


def segmenter_shapes(n_layer, head, n_class=21, aux=True):
    """The full state dict of ``{fcn,deeplabv3}_resnet{n_layer}`` (head 'fcn'/'deeplab')."""
    shapes = resnet(collections.OrderedDict(), n_layer)
    if head == 'fcn':
        fcn_head(shapes, 'classifier', 2048, n_class)
    else:
        deeplab_head(shapes, 'classifier', 2048, n_class)
    if aux:
        fcn_head(shapes, 'aux_classifier', 1024, n_class)
    return shapes


def write_constant_pth(path, shapes):
    """Write a zip .pth with these names and shapes, each tensor one repeated value.

    Returns:
        dict: name -> the value of its tensor (k + 1 for the k-th float key; the int64
        BN counts are 7).
    """
    tensors, values = [], {}
    for k, (name, shape) in enumerate(shapes.items()):
        is_count = name.endswith('num_batches_tracked')
        values[name] = 7 if is_count else float(k + 1)
        element_type = 'int64' if is_count else 'float32'
        storage = numpy.array([values[name]], dtype=element_type)
        tensors.append(pth_writer.Tensor(str(k), storage, 0, shape, (0,) * len(shape),
                                     element_type))
    pth_writer.write_zip(path, pth_writer.OrderedDictOf(zip(shapes, tensors)), tensors)
    return values
