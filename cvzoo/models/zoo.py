"""The model zoo: typed weight entries, the model registry, and loading of weights.

The zoo is split by concern; this module keeps the public names of all of them and
``load_weights``, the one place where weights are resolved:

    weights_schema    Weights, WeightFile, Preset, Score, schema_problems, UNPUBLISHED
    registry          register, list_models, iter_weights, get_model, get_model_class,
                      model_info, resolve_weights
    discovery         import_all_models (every model module, so that classes register)
    weight_files      fetch_weights (download, verify), trust on first use
    conversion_cache  a foreign file converted once and cached as cvzoo .npz

Each model family declares its weights next to its class and registers it here::

    @zoo.register('resnet50', task='classification')
    class ResNet50(...):
        ...

    ResNet50.weights = {'imagenet': Weights(url=..., sha256=..., ...)}

``load_weights`` (behind every
``pretrained_model=``) fetches and verifies the files, converts a foreign format once
through the model's own ``convert_weights(raw, source)`` hook, loads it strictly, and
only then caches the result as a cvzoo .npz beside the file (a conversion that fails
or does not fit the model is never cached).

Trust on first use: a file whose source publishes no sha256 (``UNPUBLISHED``) is trusted
the first time it is fetched *and loads into its model*; its sha256 is then recorded in
``$CVZOO_HOME/weights/<file_name>.sha256`` (:func:`trust_record_path`), beside the
downloaded file, and every later load is verified against that record. A first file
that does not load is deleted and not recorded. ``cvzoo download --forget MODEL KEY``
(:func:`forget_trust`) removes the record, the file and its converted cache.

>>> isinstance(list_models('classification'), list)
True
"""

import os

from cvzoo.core.serializers import dictionary
from cvzoo.models import registry
from cvzoo.models.registry import (
    TASKS,
    get_model,
    get_model_class,
    iter_weights,
    list_models,
    model_info,
    register,
    resolve_weights,
)
from cvzoo.models.weights import conversion_cache, trained_model, weight_files, weights_schema
from cvzoo.models.weights.weight_files import fetch_weights, forget_trust, trust_record_path
from cvzoo.models.weights.weights_schema import (
    DATASETS,
    DEFAULT_SOURCES,
    INTERPOLATIONS,
    METRICS,
    RESIZE_BACKENDS,
    SOURCE_FORMATS,
    UNPUBLISHED,
    Preset,
    Score,
    WeightFile,
    Weights,
    schema_problems,
)

__all__ = [
    'DATASETS', 'DEFAULT_SOURCES', 'INTERPOLATIONS', 'METRICS', 'RESIZE_BACKENDS',
    'SOURCE_FORMATS', 'TASKS', 'UNPUBLISHED', 'Preset', 'Score', 'WeightFile', 'Weights',
    'fetch_weights', 'forget_trust', 'get_model', 'get_model_class', 'iter_weights',
    'list_models', 'load_weights', 'model_info', 'register', 'resolve_weights',
    'schema_problems', 'trust_record_path',
]


def load_weights(model, path_or_key, source: str | None = None):
    """Load pretrained weights into ``model``: a key of its zoo entry, or a local file.

    A key's files are fetched and verified (:func:`fetch_weights`). The file's format is
    recognised from its bytes; anything but cvzoo's own npz/HDF5 goes once through the
    model's ``convert_weights(raw, source) -> dict`` hook (none means the names are
    already cvzoo's) and is cached beside it as ``<file>.cvzoo.npz``, stamped with the
    source file's sha256 and ``source``. The arrays are then loaded strictly, as
    ``cvzoo.core.serializers.load_npz(strict=True)`` does.

    Args:
        model (Link): the model to fill.
        path_or_key (str or os.PathLike): an existing file, or a key of
            ``type(model).weights``.
        source (str or None): the parameter-name mapping: ``'cvzoo'``, ``'torchvision'``,
            ``'chainercv'``, ``'darknet'``, ... None takes the entry's (or, for a local
            file, the one its format implies).

    Returns:
        Weights or None: the entry used (None for a local file), so the model can take
        its preset.

    Raises:
        ValueError: an unknown key (the message lists the keys).
        cvzoo.errors.WeightLoadError: every missing, unexpected and mis-shaped key.
        cvzoo.errors.CorruptFileError: the file cannot be read.
    """
    if not isinstance(path_or_key, (str, os.PathLike)):
        raise TypeError(f'path_or_key: expected a weights key or a path, got '
                        f'{type(path_or_key).__name__}')
    if os.path.isfile(path_or_key):
        path = os.fspath(path_or_key)
        source = source or conversion_cache.source_of_file(path)
        _load_converted(model, path, source, weight_files.sha256_of_file(path))
        return None
    weights = registry.resolve_weights(model, os.fspath(path_or_key))
    _load_entry(model, weights, source)
    return weights


def _load_entry(model, weights, source):
    """Fetch and load a zoo entry; record first-use trust only once it has loaded."""
    fetched = fetch_weights(weights)
    pending = weight_files.pending_trust(weights, fetched)
    path = fetched[0]
    source_sha256 = weights.sha256 if weight_files.is_full_sha256(weights.sha256) \
        else weight_files.sha256_of_file(path)
    source = source or weights.convert_from \
        or weights_schema.DEFAULT_SOURCES[weights.source_format]
    try:
        _load_converted(model, path, source, source_sha256)
    except Exception:
        weight_files.drop_untrusted(pending)
        raise
    weight_files.record_trust(pending, weights.url)


def _load_converted(model, path, source, source_sha256):
    """Convert (or read the cached conversion of) ``path`` and load it strictly."""
    converted, save_conversion = conversion_cache.converted_arrays(model, path, source,
                                                                  source_sha256)
    arrays = dict(converted)
    config = arrays.pop(trained_model.MODEL_CONFIG_KEY, None)
    dictionary.DictionaryDeserializer(arrays, '', True, path).load(model)
    if config is not None:  # a trained model's file: it also records its box convention
        trained_model.restore_box_convention(
            model, trained_model.parse_model_config(config, path), path)
    save_conversion()
