"""The ``cvzoo`` subcommands: each takes the parsed arguments and returns an exit status."""

import functools
import os

from cvzoo import errors
from cvzoo import models as zoo_api
from cvzoo.cli import predict_output
from cvzoo.models import zoo
from cvzoo.models.common import network_runtime
from cvzoo.models.weights import embedded


def _model_class(name):
    """The class registered under ``name``; an unknown name is a UsageError naming close
    names."""
    return zoo_api.get_model_class(name)


def _check_weights_key(model_class, key):
    """Refuse a key that is neither a weights key of ``model_class`` nor a file (a
    UsageError listing the keys)."""
    if os.path.isfile(key) or key in (getattr(model_class, 'weights', None) or {}):
        return
    zoo_api.resolve_weights(model_class, key)


def models_command(args):
    """Print every registered model with its weight keys, sources and scores, or with
    ``--info NAME`` the card of one model."""
    if args.info is not None:
        from cvzoo.cli import model_card  # noqa: PLC0415

        _model_class(args.info)
        print(model_card.model_card(args.info))
        return 0
    if args.task is not None and args.task not in zoo.TASKS:
        raise errors.UsageError(f'--task: expected one of {zoo.TASKS}, got {args.task!r}')
    rows = zoo_table_rows(args.task)
    if args.markdown:
        print(markdown_table(rows))
        return 0
    widths = [max(len(str(r[i])) for r in rows + [TABLE_HEADER]) for i in range(len(TABLE_HEADER))]
    for row in [TABLE_HEADER] + rows:
        print('  '.join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())
    return 0


TABLE_HEADER = ('model', 'task', 'key', 'source', 'metric', 'reported', 'cvzoo', 'size')


def _percent(score):
    return '' if score is None else f'{100 * score["value"]:.2f}'


def _size(n_bytes):
    return '' if not n_bytes else f'{n_bytes / 2 ** 20:.1f} MiB'


def zoo_table_rows(task=None):
    """One row per (model, weight key): the data behind `cvzoo models` and README's table."""
    rows = []
    for name in zoo_api.list_models(task):
        info = zoo_api.model_info(name)
        keys = info['weights'] or {'': None}
        for key, entry in sorted(keys.items()):
            if entry is None:
                rows.append((name, info['task'], '', '', '', '', '', ''))
                continue
            reported = entry['reported']
            rows.append((name, info['task'], key, entry['source_format'],
                         f"{reported['metric']} ({reported['dataset']})",
                         _percent(reported), _percent(entry['measured']),
                         _size(entry['file_size'])))
    return rows


def markdown_table(rows):
    """The rows as a Markdown table."""
    lines = ['| ' + ' | '.join(TABLE_HEADER) + ' |', '|' + ' --- |' * len(TABLE_HEADER)]
    lines += ['| ' + ' | '.join(str(v) for v in row) + ' |' for row in rows]
    return '\n'.join(lines)


def predict_command(args):
    """Run a model on images; print the results and optionally draw them.

    With no ``--model`` it runs the detector shipped with cvzoo
    (``embedded.SHIPPED_WEIGHTS``), and with no IMAGE the sample picture shipped with it.
    """
    _fill_predict_defaults(args)
    _check_predict_arguments(args)
    model = zoo_api.get_model(args.model, pretrained_model=args.pretrained_model)
    model.to_device(args.device)
    if args.runtime != 'cvzoo':
        model.predict = functools.partial(model.predict, runtime=args.runtime)
    task = zoo_api.model_info(args.model)['task']
    for path in args.images:
        out = _out_path(args.out, path, len(args.images))
        predict_output.PRINTERS[task](model, path, args, out)
    return 0


def _fill_predict_defaults(args):
    """No --model: the shipped detector; no IMAGE: the shipped sample picture."""
    if args.model is None:
        if args.pretrained_model is not None:
            raise errors.UsageError(f'--pretrained-model {args.pretrained_model}: give the '
                                    'model it is for with --model')
        args.model, args.pretrained_model = embedded.SHIPPED_WEIGHTS
    elif args.pretrained_model is None:
        raise errors.UsageError(f'--pretrained-model: required with --model {args.model} '
                                '(a weight key, see `cvzoo models`, or a file)')
    if not args.images:
        args.images = [embedded.sample_image_path()]


def _check_predict_arguments(args):
    """Refuse user mistakes before any weights are loaded."""
    for path in args.images:
        if os.path.isdir(path):
            raise errors.UsageError(f'IMAGE: {path!r} is a folder; give image files')
        if not os.path.isfile(path):
            raise errors.UsageError(f'IMAGE: no such file {path!r}')
    if args.out is not None and _out_is_folder(args.out, len(args.images)) \
            and os.path.isfile(os.path.normpath(args.out)):
        raise errors.UsageError(f'--out: {args.out} is an existing file; with '
                                f'{len(args.images)} images, or a name ending in /, --out '
                                'names a folder to write one picture per image into')
    model_class = _model_class(args.model)
    _check_weights_key(model_class, args.pretrained_model)
    if args.runtime not in network_runtime.runtimes_of(model_class):
        raise errors.UsageError(
            f'--runtime {args.runtime}: {model_class.__name__} runs only in '
            f'{network_runtime.runtimes_of(model_class)} (docs/onnxruntime.md)')


def _out_is_folder(out, n_images):
    """Whether --out names a folder: with several images, a name ending in a slash, or an
    existing folder (else it is the picture's file)."""
    return n_images > 1 or out.endswith(('/', os.sep)) or os.path.isdir(out)


def _out_path(out, image_path, n_images):
    """The picture of ``image_path``: --out itself, or ``<stem>_result.png`` in the
    folder --out (created; its parent was checked by the argument's type)."""
    if out is None:
        return None
    if not _out_is_folder(out, n_images):
        return out
    os.makedirs(out, exist_ok=True)
    stem = os.path.splitext(os.path.basename(image_path))[0]
    return os.path.join(out, stem + '_result.png')


COMMANDS = {'models': models_command, 'predict': predict_command}
