"""A trained model's own file: its weights plus what is needed to rebuild it.

A model trained on your own data differs from the zoo's in its class count, names and
input size. ``save_trained_model`` stores them beside the parameters (one extra key,
``__cvzoo_model__``, a JSON text), so that
``get_model(name, pretrained_model='result/model_final.npz')`` and
``cvzoo predict IMG --model NAME --pretrained-model result/model_final.npz`` rebuild the
right model with no further arguments.
"""

import json
import os
import zipfile

import numpy

from cvzoo.core.serializers import atomic_write, dictionary

MODEL_CONFIG_KEY = '__cvzoo_model__'


def save_trained_model(model, path, model_name, **kwargs):
    """Save ``model``'s parameters and the arguments that rebuild it, atomically.

    Args:
        model (Link): the trained model.
        path (str): the .npz to write.
        model_name (str): its registry name (e.g. ``'ssd_tiny'``).
        **kwargs: constructor arguments besides ``pretrained_model`` (JSON values), e.g.
            ``n_fg_class=3, insize=64``.
    """
    serializer = dictionary.DictionarySerializer()
    model.serialize(serializer)
    label_names = getattr(model, 'label_names', None)
    config = {'name': model_name, 'kwargs': kwargs,
              'label_names': None if label_names is None else list(label_names)}
    text = numpy.frombuffer(json.dumps(config).encode(), dtype=numpy.uint8)
    with atomic_write.atomic_write(path) as tmp_path, open(tmp_path, 'wb') as handle:
        numpy.savez_compressed(handle, **serializer.target, **{MODEL_CONFIG_KEY: text})


def read_model_config(path):
    """The config stored by save_trained_model, or None (not such a file, or no file)."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        return None
    try:
        with numpy.load(path, allow_pickle=False) as archive:
            if MODEL_CONFIG_KEY not in archive.files:
                return None
            return json.loads(archive[MODEL_CONFIG_KEY].tobytes().decode())
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        return None  # not a readable npz: the weight loader names the file in its error
