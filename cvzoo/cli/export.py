"""``cvzoo export``: write a pretrained model's network as an ONNX file.

    cvzoo export MODEL --pretrained-model KEY --format onnx --out model.onnx [--size H W]

The network input is what the model's ``prepare`` makes of an image of ``--size``
(classifiers and detectors resize to their own size, so the size only matters to
segmenters that keep the image's size); its batch axis is dynamic.
"""

import numpy

from cvzoo import errors
from cvzoo import models as zoo_api
from cvzoo.cli import argument_types, commands
from cvzoo.export import onnx_export

FORMATS = ('onnx',)
DEFAULT_SIZE = (480, 640)


def add_parser(subparsers):
    """Register the ``export`` subcommand on ``subparsers`` (argparse's)."""
    parser = subparsers.add_parser(
        'export', help='write a pretrained network as an ONNX file (needs cvzoo[onnx])')
    parser.add_argument('model', help='registry name, e.g. resnet50')
    parser.add_argument('--pretrained-model', required=True,
                        help='a weight key of the model (see `cvzoo models`) or a file path')
    parser.add_argument('--format', choices=FORMATS, default='onnx', help='file format')
    parser.add_argument('--out', required=True, type=argument_types.output_file,
                        help='the file to write, e.g. model.onnx (its folder must exist)')
    parser.add_argument('--size', type=argument_types.positive_int, nargs=2,
                        metavar=('H', 'W'), default=DEFAULT_SIZE, help='the image size the '
                        f'input is prepared from (default {DEFAULT_SIZE[0]} {DEFAULT_SIZE[1]})')
    parser.add_argument('--opset', type=int, default=17,
                        help=f'ONNX opset, {onnx_export.MIN_OPSET} to the newest the '
                        'installed onnx package knows (default 17)')
    return parser


def example_input(model, size):
    """(1, 3, h, w) float32: a mid-grey image of ``size`` (H, W) as ``model.prepare`` makes it."""
    img = numpy.full((3,) + tuple(size), 127.0, numpy.float32)
    return numpy.ascontiguousarray(model.prepare(img)[None], numpy.float32)


def export_command(args):
    """Build the model with its weights and write its network; print the file's name."""
    model_class = commands._model_class(args.model)
    commands._check_weights_key(model_class, args.pretrained_model)
    try:
        import onnx  # noqa: F401, PLC0415 - optional dependency, checked before loading
    except ImportError:
        raise errors.UsageError("exporting needs the onnx package: pip install 'cvzoo[onnx]'") \
            from None
    onnx_export.check_opset(args.opset, '--opset')
    model = zoo_api.get_model(args.model, pretrained_model=args.pretrained_model)
    onnx_export.to_onnx(model, example_input(model, args.size), args.out, opset=args.opset)
    print(args.out)
    return 0
