"""Argument parsing of the ``cvzoo`` command and dispatch to its subcommands.

    cvzoo models [--task TASK] [--markdown]
    cvzoo models --info NAME
    cvzoo download MODEL KEY [--format safetensors]
    cvzoo download --forget MODEL KEY
    cvzoo download --all --to DIR [--model MODEL]
    cvzoo predict [IMAGE...] [--model NAME --pretrained-model KEY] [--device D] [--topk K]
                  [--out PNG] [--runtime cvzoo|onnxruntime]
    cvzoo export MODEL --pretrained-model KEY --format onnx --out FILE [--size H W]
"""

import argparse
import sys

from cvzoo import errors


def _positive_int(text):
    """argparse type: an int >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'expected a whole number >= 1, got {text!r}') from None
    if value < 1:
        raise argparse.ArgumentTypeError(f'expected a whole number >= 1, got {value}')
    return value


def _device(text):
    """argparse type: a device name, 'cpu' or 'cuda:N' (checked, not opened)."""
    from cvzoo.core import backend

    try:
        return backend.get_device(text).name
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parser():
    parser = argparse.ArgumentParser(prog='cvzoo', description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', required=True)

    models = sub.add_parser('models', help='print the zoo: every model, weight key and score')
    models.add_argument('--task', help='only this task (classification, detection, ...)')
    models.add_argument('--markdown', action='store_true', help='print a Markdown table')
    models.add_argument('--info', metavar='NAME', help='print the model card of one model: '
                        'source, licence, scores, files and hashes, preprocessing, and the '
                        'command that reproduces the score')

    predict = sub.add_parser('predict', help='run a pretrained model on images (by default '
                             'the detector shipped with cvzoo on its sample picture)')
    predict.add_argument('images', nargs='*', metavar='IMAGE',
                         help="default: the sample picture shipped with cvzoo (Darknet's dog.jpg)")
    predict.add_argument('--model', default=None, help='registry name, e.g. resnet50 '
                         '(default: yolo_fastest_xl, shipped with cvzoo)')
    predict.add_argument('--pretrained-model', default=None,
                         help='a weight key of the model (see `cvzoo models`) or a file path; '
                         'required with --model')
    predict.add_argument('--device', type=_device, default='cpu', help="'cpu' or 'cuda:N'")
    predict.add_argument('--topk', type=_positive_int, default=5, help='classes to print (classification)')
    predict.add_argument('--score-thresh', type=float, default=None,
                         help='detection score threshold (default: the visualize preset)')
    predict.add_argument('--out', help='write a picture of the result (PNG); with several '
                         'images, a folder')
    predict.add_argument('--runtime', choices=('cvzoo', 'onnxruntime'), default='cvzoo',
                         help="what runs the network between pre- and post-processing "
                         "(onnxruntime: pip install 'cvzoo[onnx]'; see docs/onnxruntime.md)")
    from cvzoo.cli import download, export

    download.add_parser(sub)
    export.add_parser(sub)
    return parser


def main(argv=None):
    """Run the command line; return the exit status.

    A user mistake (a cvzoo error class: an unknown model or key, a missing image, a
    file that does not fit) prints one line and returns 2; argparse refuses malformed
    arguments itself (exit status 2). Any other exception is a bug and propagates with
    its traceback.
    """
    args = _parser().parse_args(argv)
    from cvzoo.cli import commands, download, export

    handlers = {**commands.COMMANDS, 'download': download.download_command,
                'export': export.export_command}
    try:
        return handlers[args.command](args)
    except (errors.CvzooError, argparse.ArgumentError) as exc:
        print(f'cvzoo {args.command}: error: {exc}', file=sys.stderr)
        return 2
