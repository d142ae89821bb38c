"""A trained model's own file: its weights plus what is needed to rebuild it.

A model trained on your own data differs from the zoo's in its class count, names and
input size, and a detector fine-tuned from inclusive-box weights keeps their box
convention (:mod:`cvzoo.models.detection.box_convention`). ``save_trained_model``
stores them beside the parameters (one extra key, ``__cvzoo_model__``, a JSON text), so
that ``get_model(name, pretrained_model='result/model_final.npz')`` and
``cvzoo predict IMG --model NAME --pretrained-model result/model_final.npz`` rebuild the
right model with no further arguments. Loading the file into a model in any way
(``zoo.load_weights``, a constructor's ``pretrained_model=``) sets its box convention
(:func:`restore_box_convention`).
"""

import json
import os
import zipfile

import numpy

from cvzoo import errors
from cvzoo.core.serializers import atomic_write, dictionary
from cvzoo.core.serializers import npz as npz_serializer
from cvzoo.core.training import finite_state
from cvzoo.models.weights import weights_schema

MODEL_CONFIG_KEY = '__cvzoo_model__'


def save_trained_model(model, path, model_name, **kwargs):
    """Save ``model``'s parameters and the arguments that rebuild it, atomically.

    The file also records the model's ``label_names`` and, for a detector, its
    ``box_convention``.

    Args:
        model (Link): the trained model.
        path (str): the .npz to write.
        model_name (str or None): its registry name (e.g. ``'ssd_tiny'``); None for a
            model the registry cannot rebuild (one built from a Darknet cfg), whose file
            ``get_model`` then reads as weights only.
        **kwargs: constructor arguments besides ``pretrained_model`` (JSON values), e.g.
            ``n_fg_class=3, insize=64``.

    Raises:
        cvzoo.core.training.finite_state.NonFiniteError: an array of the model (a
            parameter or a batch norm's statistics) holds NaN or inf; nothing is written.
    """
    serializer = dictionary.DictionarySerializer()
    model.serialize(serializer)
    bad = finite_state.first_non_finite(list(serializer.target.items()))
    if bad is not None:
        raise finite_state.NonFiniteError(f'{path} was not written: {bad} holds NaN or inf')
    label_names = getattr(model, 'label_names', None)
    config = {'name': model_name, 'kwargs': kwargs,
              'label_names': None if label_names is None else list(label_names),
              'box_convention': getattr(model, 'box_convention', None)}
    text = numpy.frombuffer(json.dumps(config).encode(), dtype=numpy.uint8)
    with atomic_write.atomic_write(path) as tmp_path, open(tmp_path, 'wb') as handle:
        numpy.savez_compressed(handle, **serializer.target, **{MODEL_CONFIG_KEY: text})


def read_model_config(path):
    """The config stored by save_trained_model, or None (not such a file, or no file).

    Raises:
        cvzoo.errors.CorruptFileError: the file holds a ``__cvzoo_model__`` entry that is
            not such a config (see :func:`parse_model_config`).
    """
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    try:
        with npz_serializer.open_npz(path) as archive:
            if MODEL_CONFIG_KEY not in archive.files:
                return None
            text = archive[MODEL_CONFIG_KEY]
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        return None  # not a readable npz: the weight loader names the file in its error
    return parse_model_config(text, path)


def parse_model_config(text, path='<config>'):
    """The config of a ``__cvzoo_model__`` array (uint8 bytes of a JSON text), as a dict.

    >>> parse_model_config(numpy.frombuffer(b'{"name": null}', dtype=numpy.uint8))
    {'name': None}

    Args:
        text (numpy.ndarray): the entry's array.
        path (str): the file, named in the error.

    Raises:
        cvzoo.errors.CorruptFileError: not UTF-8 JSON (or nested too deeply to parse) of an
            object whose ``name`` is a str or null, whose ``kwargs`` (if any) is an object
            and whose ``label_names`` (if any) is a list of str or null; the message names
            the file and the entry.
    """
    where = f'{os.fspath(path)}: {MODEL_CONFIG_KEY}'
    try:
        config = json.loads(numpy.asarray(text).tobytes().decode())
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
        raise errors.CorruptFileError(
            f'{where}: not a readable JSON text ({type(exc).__name__}: {exc})') from None
    if not isinstance(config, dict) or not isinstance(config.get('name', 0), (str, type(None))):
        raise errors.CorruptFileError(f'{where}: expected an object with a "name" (a '
                                      f'registry name or null), got {_shown(config)}')
    if not isinstance(config.get('kwargs', {}), dict):
        raise errors.CorruptFileError(f'{where}: "kwargs": expected an object, got '
                                      f'{_shown(config["kwargs"])}')
    label_names = config.get('label_names')
    if label_names is not None and not (isinstance(label_names, list)
                                        and all(isinstance(n, str) for n in label_names)):
        raise errors.CorruptFileError(f'{where}: "label_names": expected a list of names or '
                                      f'null, got {_shown(label_names)}')
    return config


def _shown(value):
    """``value`` as JSON, cut to 80 characters for an error message."""
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + '...'


def restore_box_convention(model, config, path):
    """Give ``model`` the box convention its trained file records, if it records one.

    Args:
        model (Link): the model the file's parameters were loaded into.
        config (dict): the file's config (:func:`parse_model_config`); files written
            before conventions were recorded, and models without one (classifiers),
            leave the model as it is.
        path (str): the file, named in the error.

    Raises:
        ValueError: the file records a convention that is not one of
            ``weights_schema.BOX_CONVENTIONS``.
    """
    box_convention = config.get('box_convention')
    if box_convention is None:
        return
    if box_convention not in weights_schema.BOX_CONVENTIONS:
        raise ValueError(f'box_convention: {path} records {box_convention!r}, not one of '
                         f'{weights_schema.BOX_CONVENTIONS}')
    model.box_convention = box_convention
