"""The model registry: ``register()`` lists a model class under a name and a task;
``list_models()``, ``get_model()``, ``model_info()`` and ``iter_weights()`` read it.

>>> isinstance(list_models('classification'), list)
True
"""

import dataclasses
import difflib
import inspect
import re

from cvzoo import errors
from cvzoo.models import discovery
from cvzoo.models.weights import trained_model, weights_schema

TASKS = ('classification', 'detection', 'semantic_segmentation', 'instance_segmentation',
         'keypoint_detection')

_REGISTRY = {}  # name -> (model class, task)


def register(name: str, task: str):
    """Class decorator: list a model class in the zoo under ``name`` for ``task``.

    Raises:
        ValueError: ``name`` is not lowercase, ``task`` is unknown, or the name is taken.
    """
    if not isinstance(name, str) or not re.fullmatch('[a-z0-9_]+', name):
        raise ValueError(f'name: expected a lowercase registry name like "resnet50", got {name!r}')
    if task not in TASKS:
        raise ValueError(f'task: expected one of {TASKS}, got {task!r}')

    def decorator(cls):
        if name in _REGISTRY and _REGISTRY[name][0] is not cls:
            raise ValueError(f'name: {name!r} is already registered by {_REGISTRY[name][0]}')
        _REGISTRY[name] = (cls, task)
        return cls
    return decorator


def list_models(task: str | None = None) -> list:
    """Return the sorted registry names, of one task or of all.

    Raises:
        ValueError: an unknown ``task``.
    """
    if task is not None and task not in TASKS:
        raise ValueError(f'task: expected one of {TASKS} or None, got {task!r}')
    discovery.import_all_models()
    return sorted(name for name, (_, t) in _REGISTRY.items() if task in (None, t))


def iter_weights(task: str | None = None):
    """Yield ``(model_name, key, Weights)`` for every weight entry of every registered
    model (of one task, or of all), by model name, then in the order the model lists
    its keys.

    >>> all(len(item) == 3 for item in iter_weights('classification'))
    True

    Raises:
        ValueError: an unknown ``task``.
    """
    for name in list_models(task):
        for key, weights in getattr(_REGISTRY[name][0], 'weights', {}).items():
            yield name, key, weights


def _model_class(name):
    discovery.import_all_models()
    if name not in _REGISTRY:
        close = difflib.get_close_matches(str(name), list(_REGISTRY), n=3)
        hint = f'; did you mean {close}?' if close else ''
        raise errors.UsageError(f'name: no model {name!r} in the zoo{hint} '
                                f'(cvzoo.models.list_models() lists {len(_REGISTRY)})')
    return _REGISTRY[name]


def get_model_class(name: str):
    """The class registered under ``name``.

    Raises:
        cvzoo.errors.UsageError: no such model (the message suggests close names).
    """
    return _model_class(name)[0]


def model_info(name: str) -> dict:
    """Describe a registered model and each of its weight keys, as plain data.

    Returns:
        dict: ``name``, ``task``, ``class`` (dotted path) and ``weights``: key ->
        dict with ``source_format``, ``url``, ``sha256``, ``file_size`` (bytes or None),
        ``files``, ``n_class``, ``reported`` and ``measured`` scores, ``preset``,
        ``license`` and ``notes``.
    """
    cls, task = _model_class(name)
    weights = {}
    for key, entry in getattr(cls, 'weights', {}).items():
        info = dataclasses.asdict(entry)
        info['files'] = [dataclasses.asdict(f) for f in entry.all_files]
        weights[key] = info
    return {'name': name, 'task': task, 'class': f'{cls.__module__}.{cls.__qualname__}',
            'weights': weights}


def get_model(name: str, pretrained_model=None, **kwargs):
    """Build a registered model: ``cls(pretrained_model=pretrained_model, **kwargs)``.

    A file written by ``trained_model.save_trained_model`` also brings the arguments
    the model was trained with (class count, input size) and its label names; explicit
    ``kwargs`` win.

    >>> from cvzoo.models import get_model
    >>> model = get_model('ssd_tiny', n_fg_class=2)
    >>> type(model).__name__, model.label_names
    ('SSDTiny', None)

    With the weights of a zoo key (downloaded)::

        model = get_model('resnet50', pretrained_model='imagenet')

    Raises:
        cvzoo.errors.UsageError: no model ``name``, or ``pretrained_model`` is the trained
            file of another model.
        cvzoo.errors.CorruptFileError: a trained file whose stored config is damaged
            (:func:`trained_model.parse_model_config`) or names arguments the model
            does not take.
    """
    cls, _ = _model_class(name)
    config = trained_model.read_model_config(pretrained_model)
    if config is None or config['name'] is None:  # weights only (or a cfg model's file)
        return cls(pretrained_model=pretrained_model, **kwargs)
    if config['name'] != name:
        raise errors.UsageError(f'pretrained_model: {pretrained_model} holds a trained '
                                f'{config["name"]!r}, not a {name!r}')
    _check_stored_arguments(cls, config.get('kwargs', {}), pretrained_model)
    kwargs = {**config.get('kwargs', {}), **kwargs}
    label_names = config.get('label_names')
    n_class = kwargs.get('n_fg_class', kwargs.get('n_class'))
    if label_names is not None and n_class is not None and len(label_names) != n_class:
        raise errors.UsageError(f'pretrained_model: {pretrained_model} names '
                                f'{len(label_names)} classes (label_names) for a model of '
                                f'{n_class}')
    model = cls(pretrained_model=pretrained_model, **kwargs)
    if label_names is not None:
        model.label_names = tuple(label_names)
    return model


def _check_stored_arguments(cls, stored, path):
    """Refuse stored constructor arguments that ``cls`` does not take (a damaged file)."""
    parameters = inspect.signature(cls.__init__).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return
    unknown = sorted(set(stored) - set(parameters) - {'self'})
    if unknown:
        raise errors.CorruptFileError(
            f'{path}: {trained_model.MODEL_CONFIG_KEY}: "kwargs": {cls.__name__} takes no '
            f'argument {unknown}')


def resolve_weights(model_class, key: str) -> weights_schema.Weights:
    """Return the Weights entry ``key`` of a model class (or instance).

    Raises:
        cvzoo.errors.UsageError: no such key; the message lists the available keys.
    """
    cls = model_class if isinstance(model_class, type) else type(model_class)
    entries = getattr(cls, 'weights', None) or {}
    if key not in entries:
        offer = (f'available keys: {sorted(entries)}' if entries else
                 'it has no published weights: give a .npz trained from it (cvzoo train '
                 'writes model_final.npz) or none')
        raise errors.UsageError(f'pretrained_model: {cls.__name__} has no weights {key!r} and '
                                f'no file of that name exists; {offer}')
    return entries[key]
