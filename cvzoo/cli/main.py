"""Argument parsing of the ``cvzoo`` command and dispatch to its subcommands.

    cvzoo models [--task TASK] [--markdown]
    cvzoo models --info NAME
    cvzoo download MODEL KEY [--format safetensors]
    cvzoo download --forget MODEL KEY
    cvzoo download --all --to DIR [--model MODEL]
    cvzoo predict [IMAGE...] [--model NAME --pretrained-model KEY] [--device D] [--topk K]
                  [--out PNG] [--runtime cvzoo|onnxruntime]
    cvzoo export MODEL --pretrained-model KEY --format onnx --out FILE [--size H W]
    cvzoo train MODEL --data PATH [--format F] [--pretrained-model KEY|FILE|none]
                [--val PATH | --val-fraction F] [--iterations N | --epochs N] [--out DIR] ...
"""

from cvzoo.cli import argument_types, entry


def _parser():
    parser = entry.ArgumentParser(prog='cvzoo', description=__doc__.splitlines()[0])
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
    predict.add_argument('--device', type=argument_types.device, default='cpu',
                         help="'cpu' or 'cuda:N'")
    predict.add_argument('--topk', type=argument_types.positive_int, default=5,
                         help='classes to print (classification)')
    predict.add_argument('--score-thresh', type=argument_types.unit_interval, default=None,
                         help='detection score threshold (default: the visualize preset)')
    predict.add_argument('--out', type=argument_types.output_path,
                         help='write a picture of the result (PNG); a folder (made if '
                         'absent) with several images or a name ending in /; its parent '
                         'folder must exist')
    predict.add_argument('--runtime', choices=('cvzoo', 'onnxruntime'), default='cvzoo',
                         help="what runs the network between pre- and post-processing "
                         "(onnxruntime: pip install 'cvzoo[onnx]'; see docs/onnxruntime.md)")
    from cvzoo.cli import download, export, train

    download.add_parser(sub)
    export.add_parser(sub)
    train.add_parser(sub)
    return parser


def main(argv=None):
    """Run the command line; return the exit status.

    A user mistake prints one line, ``cvzoo COMMAND: error: MESSAGE``, and gives status
    2: argparse refuses malformed arguments (exiting), and a cvzoo error class raised by
    the subcommand (an unknown model or key, a missing image, a file that does not fit)
    is returned as 2 (see :mod:`cvzoo.cli.entry`). Any other exception is a bug and
    propagates with its traceback.
    """
    args = _parser().parse_args(argv)
    from cvzoo.cli import commands, download, export, train, train_options

    handlers = {**commands.COMMANDS, 'download': download.download_command,
                'export': export.export_command, 'train': train.train_command}
    failures = train_options.FAILURES if args.command == 'train' else None
    return entry.call(f'cvzoo {args.command}', handlers[args.command], args, failures=failures)
