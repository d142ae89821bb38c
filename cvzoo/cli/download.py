"""``cvzoo download``: fetch and verify weight files, or fill a mirror folder with them.

    cvzoo download MODEL KEY [--format safetensors]
    cvzoo download --forget MODEL KEY
    cvzoo download --all --to DIR [--model MODEL]

``--format safetensors`` also writes the loaded weights as
``$CVZOO_HOME/weights/<file>.cvzoo.safetensors`` (beside the download; also for a
file shipped with cvzoo, whose package folder is never written) and prints its path.
``--all --to DIR`` copies every file of every weights entry (of one model with
``--model``) into ``DIR`` with a ``manifest.json``; ``CVZOO_WEIGHTS_MIRROR=DIR`` then
serves them on a machine with no network.
"""

import os
import sys

from cvzoo import errors
from cvzoo import models as zoo_api
from cvzoo.cli import argument_types, commands
from cvzoo.models import registry, zoo
from cvzoo.models.weights import weight_files
from cvzoo.utils import paths

FORMATS = ('original', 'safetensors')
SAFETENSORS_SUFFIX = '.cvzoo.safetensors'


def add_parser(subparsers):
    """Register the ``download`` subcommand on ``subparsers`` (argparse's)."""
    parser = subparsers.add_parser(
        'download', help='fetch and verify the files of a weight key, or of the whole zoo '
        'into a mirror folder (--all --to DIR)')
    parser.add_argument('model', nargs='?', help='registry name, e.g. resnet50')
    parser.add_argument('key', nargs='?', help='weight key, e.g. imagenet')
    parser.add_argument('--forget', action='store_true',
                        help='remove the trust-on-first-use record of the key (and its '
                        'file), for a source that publishes no sha256')
    parser.add_argument('--format', choices=FORMATS, default='original',
                        help='safetensors: also write the loaded weights as .safetensors '
                        'into $CVZOO_HOME/weights and print its path (needs '
                        'cvzoo[safetensors])')
    parser.add_argument('--all', action='store_true',
                        help='every file of every weight key (with --to), for a mirror folder')
    parser.add_argument('--to', metavar='DIR', type=argument_types.output_folder,
                        help='with --all: the folder to fill (its parent must exist), with a '
                        'manifest.json; then '
                        'CVZOO_WEIGHTS_MIRROR=DIR serves it on a machine with no network')
    parser.add_argument('--model', dest='only_model', metavar='MODEL',
                        help='with --all: only this model\'s weight keys')
    return parser


def download_command(args):
    """Run ``cvzoo download``; return the exit status."""
    if args.all or args.to is not None or args.only_model is not None:
        return _fill_mirror(args)
    if args.model is None or args.key is None:
        raise errors.UsageError('expected MODEL KEY, e.g. `cvzoo download resnet50 imagenet`')
    model_class = commands._model_class(args.model)
    if args.forget:
        return _forget(args, model_class)
    commands._check_weights_key(model_class, args.key)
    if args.format == 'safetensors':
        return _to_safetensors(args)
    weights = zoo_api.resolve_weights(model_class, args.key)
    fetched = zoo_api.fetch_weights(weights)
    untrusted = [f for f in weights.all_files if f.sha256 == zoo.UNPUBLISHED
                 and not os.path.exists(zoo.trust_record_path(f))]
    if untrusted:  # loading records the trust, and only when the file loads
        zoo_api.get_model(args.model, pretrained_model=args.key)
    for path in fetched:
        print(path)
    return 0


def _fill_mirror(args):
    """``--all --to DIR [--model M]``: copy the files into DIR; print one line per file.

    Returns 1 when some file could not be fetched (each is named on stderr).
    """
    if not args.all or args.to is None:
        raise errors.UsageError('--to and --model go with --all: '
                                '`cvzoo download --all --to DIR [--model MODEL]`')
    if args.model is not None or args.forget or args.format != 'original':
        raise errors.UsageError('--all takes no MODEL KEY, --forget or --format '
                                '(use --model MODEL to limit it to one model)')
    if args.only_model is not None:
        commands._model_class(args.only_model)
    entries = [item for item in registry.iter_weights()
               if args.only_model in (None, item[0])]
    records, failures = weight_files.fill_mirror(args.to, entries)
    for record in records:
        print(f"{os.path.join(args.to, record['name'])}  {record['sha256']}  "
              f"{record['size']} bytes")
    print(f'{len(records)} files in {args.to}, listed in '
          f'{os.path.join(args.to, weight_files.MANIFEST_NAME)}')
    for failure in failures:
        print(f'cvzoo download: failed: {failure}', file=sys.stderr)
    return 1 if failures else 0


def _forget(args, model_class):
    removed = zoo.forget_trust(model_class, args.key)
    for path in removed:
        print(f'removed {path}')
    if not removed:
        print(f'{args.model} {args.key}: no trust record to remove')
    return 0


def _to_safetensors(args):
    """Load the key into its model and write the model's weights as .safetensors."""
    from cvzoo.models.weights.converters import safetensors_file

    safetensors_file.require_package()
    model = zoo_api.get_model(args.model, pretrained_model=args.key)
    weights = zoo_api.resolve_weights(type(model), args.key)
    # under $CVZOO_HOME even when the file is shipped with cvzoo (in the package's folder)
    folder = paths.cvzoo_home() / weight_files.WEIGHTS_SUBDIR
    path = os.fspath(folder / (weights.all_files[0].file_name + SAFETENSORS_SUFFIX))
    os.makedirs(folder, exist_ok=True)
    safetensors_file.save_safetensors(path, model)
    print(path)
    return 0
