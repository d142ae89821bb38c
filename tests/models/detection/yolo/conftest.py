"""ChainerCV YOLO files as the tests write them: names and shapes transcribed from
ChainerCV's YOLOv2/YOLOv2Tiny/YOLOv3 links, independently of cvzoo's mapping."""

import types

import numpy
import pytest


def _bn_link(shapes, name, in_channels, out_channels, ksize):
    shapes[f'{name}/conv/W'] = (out_channels, in_channels, ksize, ksize)
    for leaf in ('gamma', 'beta', 'avg_mean', 'avg_var'):
        shapes[f'{name}/bn/{leaf}'] = (out_channels,)
    shapes[f'{name}/bn/N'] = ()


def _plain_link(shapes, name, in_channels, out_channels):
    shapes[f'{name}/W'] = (out_channels, in_channels, 1, 1)
    shapes[f'{name}/b'] = (out_channels,)


def chainercv_yolov2_shapes(n_fg_class):
    """Names and shapes of ChainerCV's YOLOv2, transcribed from its Darknet19Extractor."""
    shapes, in_channels, link = {}, 3, 0
    for k, n_conv in enumerate((1, 1, 3, 3, 5, 5)):
        for i in range(n_conv):
            out, ksize = (32 << k, 3) if i % 2 == 0 else (32 << (k - 1), 1)
            _bn_link(shapes, f'extractor/{link}', in_channels, out, ksize)
            in_channels, link = out, link + 1
    for link, (in_channels, out, ksize) in enumerate(
            [(1024, 1024, 3), (1024, 1024, 3), (512, 64, 1), (1280, 1024, 3)], start=18):
        _bn_link(shapes, f'extractor/{link}', in_channels, out, ksize)
    _plain_link(shapes, 'subnet', 1024, 5 * (5 + n_fg_class))
    return shapes


def chainercv_yolov2_tiny_shapes(n_fg_class):
    shapes, in_channels = {}, 3
    for k in range(7):
        _bn_link(shapes, f'extractor/{k}', in_channels, 16 << k, 3)
        in_channels = 16 << k
    _bn_link(shapes, 'extractor/7', 1024, 1024, 3)
    _plain_link(shapes, 'subnet', 1024, 5 * (5 + n_fg_class))
    return shapes


def chainercv_yolov3_shapes(n_fg_class):
    """Names and shapes of ChainerCV's YOLOv3 (Darknet53Extractor + subnet)."""
    shapes = {}
    _bn_link(shapes, 'extractor/0', 3, 32, 3)
    link = 1
    for k, n_block in enumerate((1, 2, 8, 8, 4)):
        _bn_link(shapes, f'extractor/{link}', 32 << k, 32 << (k + 1), 3)
        for i in range(n_block):
            _bn_link(shapes, f'extractor/{link + 1 + i}/0', 32 << (k + 1), 32 << k, 1)
            _bn_link(shapes, f'extractor/{link + 1 + i}/1', 32 << k, 32 << (k + 1), 3)
        link += 1 + n_block
    in_channels = 1024
    for i, n in enumerate((512, 256, 128)):
        if i > 0:
            _bn_link(shapes, f'extractor/{link}', in_channels, n, 1)
            in_channels, link = n + (512 if i == 1 else 256), link + 1  # + skip connection
        for j in range(5):
            out, ksize = (n, 1) if j % 2 == 0 else (n * 2, 3)
            _bn_link(shapes, f'extractor/{link}', in_channels, out, ksize)
            in_channels, link = out, link + 1
        _bn_link(shapes, f'subnet/{i}/0', n, n * 2, 3)
        _plain_link(shapes, f'subnet/{i}/1', n * 2, 3 * (5 + n_fg_class))
    return shapes


def random_file(rng, shapes):
    arrays = {}
    for name, shape in shapes.items():
        if name.endswith('/N'):
            arrays[name] = numpy.array(7, numpy.int64)
        elif name.endswith('avg_var'):
            arrays[name] = rng.uniform(0.5, 2, shape).astype(numpy.float32)
        else:  # small weights keep random activations finite through 9-75 layers
            arrays[name] = (0.05 * rng.standard_normal(shape)).astype(numpy.float32)
    return arrays


@pytest.fixture
def chainercv():
    """The helpers: ``yolov2_shapes``, ``yolov2_tiny_shapes``, ``yolov3_shapes`` (n_fg_class ->
    {name: shape}) and ``random_file(rng, shapes)`` -> {name: array}."""
    return types.SimpleNamespace(
        yolov2_shapes=chainercv_yolov2_shapes, yolov2_tiny_shapes=chainercv_yolov2_tiny_shapes,
        yolov3_shapes=chainercv_yolov3_shapes, random_file=random_file)
