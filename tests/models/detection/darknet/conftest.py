"""Tiny Darknet cfgs and .weights files written by the tests."""

import struct

import numpy
import pytest

# Every section kind: conv (bn, groups, pad flag, mish), dropout, shortcut, maxpool
# stride 2 and stride 1, route with groups/group_id and with several layers, upsample,
# two [yolo] heads (one with scale_x_y).
TINY_YOLO_CFG = """
[net]
width=32
height=32
channels=3

# 0: 8 x 16 x 16
[convolutional]
filters=8
size=3
stride=2
pad=1
batch_normalize=1
activation=leaky

# 1: depthwise
[convolutional]
groups=8
filters=8
size=3
stride=1
pad=1
batch_normalize=1
activation=leaky

# 2
[dropout]
probability=.1

# 3: layer 2 + layer 0
[shortcut]
from=-3
activation=linear

# 4: 8 x 8 x 8
[maxpool]
size=2
stride=2

# 5: second half of the channels, 4 x 8 x 8
[route]
layers=-1
groups=2
group_id=1

# 6
[convolutional]
filters=8
size=1
stride=1
pad=1
activation=mish

# 7: SPP-style, keeps 8 x 8
[maxpool]
size=3
stride=1

# 8: 8 + 8 + 8 channels
[route]
layers=-1,-2,4

# 9
[convolutional]
filters=14
size=1
stride=1
pad=1
activation=linear

# 10
[yolo]
mask=2,3
anchors=4,6, 8,8, 12,20, 30,24
classes=2
num=4
jitter=.3

# 11
[route]
layers=8

# 12: 24 x 16 x 16
[upsample]
stride=2

# 13: 24 + 8 channels
[route]
layers=-1,3

# 14
[convolutional]
filters=14
size=1
stride=1
pad=1
activation=linear

# 15
[yolo]
mask=0,1
anchors=4,6, 8,8, 12,20, 30,24
classes=2
num=4
scale_x_y=1.05
"""

TINY_REGION_CFG = """
[net]
width=32
height=32
channels=3

[convolutional]
filters=16
size=3
stride=2
pad=1
batch_normalize=1
activation=leaky

[maxpool]
size=2
stride=2

[convolutional]
filters=16
size=1
stride=1
pad=1
activation=linear

[region]
anchors=1.0,1.5, 2.5,2.0
classes=3
num=2
coords=4
softmax=1
"""


def write_darknet_weights(path, values, version=(0, 2, 5), seen=1000):
    """Write a .weights file: header then float32 values; return the path."""
    major, minor, revision = version
    wide = major * 10 + minor >= 2
    header = struct.pack('<3i', major, minor, revision)
    header += struct.pack('<q' if wide else '<i', seen)
    path.write_bytes(header + numpy.asarray(values, '<f4').tobytes())
    return path


@pytest.fixture
def tiny_cfg(tmp_path):
    """Write a cfg text to a file and return its path."""

    def write(text='yolo', name='tiny.cfg'):
        text = {'yolo': TINY_YOLO_CFG, 'region': TINY_REGION_CFG}.get(text, text)
        path = tmp_path / name
        path.write_text(text)
        return path
    return write


@pytest.fixture
def weights_writer():
    """The write_darknet_weights function."""
    return write_darknet_weights


@pytest.fixture
def train_batch(rng):
    """make(second_label): 2 images of 32 x 32, two boxes (labels 0 and second_label) on
    the first, none on the second; (x, bboxes, labels) as YOLOTrainChain takes them."""
    def make(second_label):
        x = rng.uniform(0, 1, (2, 3, 32, 32)).astype(numpy.float32)
        bboxes = [numpy.array([[2, 3, 20, 25], [10, 10, 14, 16]], numpy.float32),
                  numpy.zeros((0, 4), numpy.float32)]
        labels = [numpy.array([0, second_label], numpy.int32), numpy.zeros(0, numpy.int32)]
        return x, bboxes, labels
    return make


@pytest.fixture
def assert_loss_reaches_every_param():
    """check(chain, batch): a finite float32 scalar loss whose gradient is finite and
    non-zero for every parameter."""
    def check(chain, batch):
        loss = chain(*batch)
        assert loss.shape == () and loss.dtype == numpy.float32
        assert numpy.isfinite(loss.array)
        chain.cleargrads()
        loss.backward()
        for name, param in chain.namedparams():
            assert param.grad is not None and numpy.isfinite(param.grad).all(), name
            assert numpy.abs(param.grad).max() > 0, name
    return check
