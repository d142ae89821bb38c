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
from cvzoo.models import weights_schema

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
    """
    serializer = dictionary.DictionarySerializer()
    model.serialize(serializer)
    label_names = getattr(model, 'label_names', None)
    config = {'name': model_name, 'kwargs': kwargs,
              'label_names': None if label_names is None else list(label_names),
              'box_convention': getattr(model, 'box_convention', None)}
    text = numpy.frombuffer(json.dumps(config).encode(), dtype=numpy.uint8)
    with atomic_write.atomic_write(path) as tmp_path, open(tmp_path, 'wb') as handle:
        numpy.savez_compressed(handle, **serializer.target, **{MODEL_CONFIG_KEY: text})


def read_model_config(path):
    """The config stored by save_trained_model, or None (not such a file, or no file)."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    try:
        with npz_serializer.open_npz(path) as archive:
            if MODEL_CONFIG_KEY not in archive.files:
                return None
            return parse_model_config(archive[MODEL_CONFIG_KEY], path)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        return None  # not a readable npz: the weight loader names the file in its error


def parse_model_config(text, path='the file'):
    """The config of a ``__cvzoo_model__`` array (uint8 bytes of a JSON text), as a dict.

    Raises:
        cvzoo.errors.CorruptFileError: not a JSON object (or nested too deeply to parse);
            the message names ``path`` and the key.

    >>> parse_model_config(numpy.frombuffer(b'{"name": null}', dtype=numpy.uint8))
    {'name': None}
    """
    try:
        config = json.loads(numpy.asarray(text).tobytes().decode())
    except (ValueError, RecursionError) as exc:
        raise errors.CorruptFileError(
            f'{path}: {MODEL_CONFIG_KEY} is not a readable JSON text ({type(exc).__name__}: '
            f'{exc})') from None
    if not isinstance(config, dict):
        raise errors.CorruptFileError(f'{path}: {MODEL_CONFIG_KEY} holds a JSON '
                                      f'{type(config).__name__}, expected an object')
    return config


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
