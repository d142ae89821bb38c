"""The model zoo: typed weight entries, the model registry, and loading of weights.

Each model family declares its weights next to its class and registers it here::

    @zoo.register('resnet50', task='classification')
    class ResNet50(...):
        ...

    ResNet50.weights = {'imagenet': Weights(url=..., sha256=..., ...)}

This is the only place where weights are resolved: ``load_weights`` (behind every
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

import dataclasses
import difflib
import functools
import hashlib
import importlib
import json
import logging
import os
import pkgutil
import posixpath
import re
import urllib.parse

import numpy

from cvzoo import errors
from cvzoo.core.serializers import atomic_write, dictionary
from cvzoo.core.serializers import npz as npz_serializer
from cvzoo.models import trained_model
from cvzoo.models.converters import file_format
from cvzoo.utils import paths

TASKS = ('classification', 'detection', 'semantic_segmentation', 'instance_segmentation')
SOURCE_FORMATS = ('cvzoo_npz', 'torch_pth', 'darknet', 'keras_h5', 'chainercv_npz')
METRICS = ('top1', 'top5', 'map_voc07', 'map_coco', 'map50_coco', 'miou', 'mask_map_coco')
DATASETS = ('imagenet_val', 'voc2007_test', 'voc2012_val', 'coco_val2017',
            'coco_test_dev', 'coco_val2017_voc_labels', 'camvid_test', 'cityscapes_val',
            'ade20k_val')
INTERPOLATIONS = ('nearest', 'bilinear', 'bicubic', 'area', 'lanczos')
RESIZE_BACKENDS = ('pil', 'cv2', 'darknet', 'cvzoo')
# The name mapping passed to convert_weights when neither the caller nor the entry names one.
DEFAULT_SOURCES = {'cvzoo_npz': 'cvzoo', 'chainercv_npz': 'chainercv', 'torch_pth': 'torch',
                   'darknet': 'darknet', 'keras_h5': 'keras'}
_SNIFFED_SOURCES = {'npz': 'cvzoo', 'hdf5': 'cvzoo', 'torch_zip': 'torch',
                    'torch_legacy': 'torch', 'darknet_weights': 'darknet'}
_MODEL_PACKAGES = ('cvzoo.models.classification', 'cvzoo.models.detection',
                   'cvzoo.models.segmentation', 'cvzoo.models.instance_segmentation')
# ``sha256`` of a file whose source publishes no hash: the first download that loads
# records the file's sha256 beside it (trust on first use; see the module docstring) and
# later loads verify against the record.
UNPUBLISHED = 'unpublished'
_MIN_PREFIX = 8  # hex digits of a published sha256 prefix (torchvision publishes 8)
_CACHE_KEY = '__cvzoo_converted_from__'
_WEIGHTS_SUBDIR = 'weights'  # downloads go to $CVZOO_HOME/weights
# raised when a converter's output changes, so that older cached conversions are redone
# (2: fasterrcnn_resnet50_fpn keeps the unused COCO classes of torchvision's predictor)
_CACHE_VERSION = 2

_logger = logging.getLogger(__name__)
_REGISTRY = {}  # name -> (model class, task)


@dataclasses.dataclass(frozen=True)
class Preset:
    """What predict() must do to an image for these weights."""

    size: int | tuple[int, int]
    mean: tuple[float, ...]
    std: tuple[float, ...] = (1.0, 1.0, 1.0)
    interpolation: str = 'bilinear'
    resize_backend: str = 'pil'  # the backend the weights were trained with
    crop_fraction: float | None = None


@dataclasses.dataclass(frozen=True)
class Score:
    """A score: ``value`` is a fraction (0.775, not 77.5); ``source`` says who claims it."""

    metric: str
    value: float
    dataset: str
    source: str


@dataclasses.dataclass(frozen=True)
class WeightFile:
    """One file of a weights entry; ``file_name`` (its name in a mirror) defaults to the URL's."""

    url: str
    sha256: str
    file_name: str = ''
    size: int | None = None  # bytes, when known

    def __post_init__(self):
        if not self.file_name:
            name = posixpath.basename(urllib.parse.urlparse(self.url).path)
            object.__setattr__(self, 'file_name', name)


@dataclasses.dataclass(frozen=True)
class Weights:
    """One pretrained weight entry: where the file is, what it is, what it scores.

    ``url``/``sha256``/``file_name``/``file_size`` describe the main file (the one that
    is converted and loaded); ``files`` lists further files fetched with it, e.g. the
    Darknet ``.cfg`` beside its ``.weights``. ``convert_from`` names the parameter-name
    mapping passed to the model's ``convert_weights`` (default: from ``source_format``).
    """

    url: str
    sha256: str
    source_format: str
    n_class: int
    label_names: tuple[str, ...]
    preset: Preset
    reported: Score
    measured: Score | None = None
    license: str | None = None
    notes: str = ''
    file_name: str = ''
    file_size: int | None = None
    files: tuple[WeightFile, ...] = ()
    convert_from: str | None = None

    @property
    def main_file(self) -> WeightFile:
        """The file that holds the parameters."""
        return WeightFile(self.url, self.sha256, self.file_name, self.file_size)

    @property
    def all_files(self) -> tuple:
        """The main file first, then ``files``."""
        return (self.main_file,) + tuple(self.files)


def _score_problems(score, field):
    if not isinstance(score, Score):
        return [f'{field}: expected a Score, got {type(score).__name__}']
    problems = []
    if score.metric not in METRICS:
        problems.append(f'{field}.metric: {score.metric!r} not in {METRICS}')
    if score.dataset not in DATASETS:
        problems.append(f'{field}.dataset: {score.dataset!r} not in {DATASETS}')
    if not 0.0 <= score.value <= 1.0:
        problems.append(f'{field}.value: expected a fraction in [0, 1], got {score.value}')
    if not score.source.strip():
        problems.append(f'{field}.source: empty; say who reports this score')
    return problems


def _preset_problems(preset):
    if not isinstance(preset, Preset):
        return [f'preset: expected a Preset, got {type(preset).__name__}']
    size = preset.size if isinstance(preset.size, tuple) else (preset.size,)
    problems = []
    if not size or len(size) > 2 or not all(isinstance(s, int) and s > 0 for s in size):
        problems.append(f'preset.size: expected an int or (H, W) > 0, got {preset.size!r}')
    if len(preset.mean) != len(preset.std) or not all(s > 0 for s in preset.std):
        problems.append(f'preset.mean/std: lengths {len(preset.mean)}/{len(preset.std)}, '
                        f'std {preset.std} (all > 0 expected)')
    if preset.interpolation not in INTERPOLATIONS:
        problems.append(f'preset.interpolation: {preset.interpolation!r} not in {INTERPOLATIONS}')
    if preset.resize_backend not in RESIZE_BACKENDS:
        problems.append(f'preset.resize_backend: {preset.resize_backend!r} not in '
                        f'{RESIZE_BACKENDS}')
    if preset.crop_fraction is not None and not 0 < preset.crop_fraction <= 1:
        problems.append(f'preset.crop_fraction: expected (0, 1] or None, got '
                        f'{preset.crop_fraction}')
    return problems


def _file_problems(weight_file):
    problems = []
    if not weight_file.url.startswith('https://'):
        problems.append(f'{weight_file.file_name}: url {weight_file.url!r} is not https')
    if not (weight_file.sha256 == UNPUBLISHED
            or re.fullmatch(f'[0-9a-f]{{{_MIN_PREFIX},64}}', weight_file.sha256)):
        problems.append(f'{weight_file.file_name}: sha256 {weight_file.sha256!r} is neither 64 '
                        f'lowercase hex digits, a published prefix of >= {_MIN_PREFIX}, nor '
                        'zoo.UNPUBLISHED')
    if not weight_file.file_name or '/' in weight_file.file_name:
        problems.append(f'file_name: {weight_file.file_name!r} is not a plain file name')
    return problems


def schema_problems(weights) -> list:
    """Return every way a Weights entry breaks the schema (an empty list when it is valid).

    Checked: https URLs, sha256 (64 hex digits, a published prefix of at least 8, or
    ``UNPUBLISHED``), plain and distinct file names, a known source
    format, ``len(label_names) == n_class``, the preset's fields, and the scores (known
    metric and dataset, a fraction, a non-empty source).
    """
    if not isinstance(weights, Weights):
        return [f'expected a Weights entry, got {type(weights).__name__}']
    problems = [p for f in weights.all_files for p in _file_problems(f)]
    names = [f.file_name for f in weights.all_files]
    if len(set(names)) != len(names):
        problems.append(f'files: file names must differ, got {names}')
    if weights.source_format not in SOURCE_FORMATS:
        problems.append(f'source_format: {weights.source_format!r} not in {SOURCE_FORMATS}')
    if not isinstance(weights.n_class, int) or weights.n_class <= 0:
        problems.append(f'n_class: expected an int > 0, got {weights.n_class!r}')
    elif len(weights.label_names) != weights.n_class:
        problems.append(f'label_names: {len(weights.label_names)} names for n_class='
                        f'{weights.n_class}')
    problems += _preset_problems(weights.preset) + _score_problems(weights.reported, 'reported')
    if weights.measured is not None:
        problems += _score_problems(weights.measured, 'measured')
    return problems


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


@functools.cache
def _import_all_models():
    """Import every module of the model packages once, so that their classes register."""
    for package_name in _MODEL_PACKAGES:
        try:
            package = importlib.import_module(package_name)
        except ModuleNotFoundError as exc:
            if exc.name != package_name:
                raise
            continue
        prefix = package_name + '.'
        for module in pkgutil.walk_packages(package.__path__, prefix):
            importlib.import_module(module.name)


def list_models(task: str | None = None) -> list:
    """Return the sorted registry names, of one task or of all.

    Raises:
        ValueError: an unknown ``task``.
    """
    if task is not None and task not in TASKS:
        raise ValueError(f'task: expected one of {TASKS} or None, got {task!r}')
    _import_all_models()
    return sorted(name for name, (_, t) in _REGISTRY.items() if task in (None, t))


def _model_class(name):
    _import_all_models()
    if name not in _REGISTRY:
        close = difflib.get_close_matches(str(name), list(_REGISTRY), n=3)
        hint = f'; did you mean {close}?' if close else ''
        raise ValueError(f'name: no model {name!r} in the zoo{hint} '
                         f'(cvzoo.models.list_models() lists {len(_REGISTRY)})')
    return _REGISTRY[name]


def get_model_class(name: str):
    """The class registered under ``name``.

    Raises:
        ValueError: no such model (the message suggests close names).
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

    >>> model = get_model('resnet50', pretrained_model='imagenet')  # doctest: +SKIP
    """
    cls, _ = _model_class(name)
    config = trained_model.read_model_config(pretrained_model)
    if config is None:
        return cls(pretrained_model=pretrained_model, **kwargs)
    if config['name'] != name:
        raise ValueError(f'pretrained_model: {pretrained_model} holds a trained '
                         f'{config["name"]!r}, not a {name!r}')
    kwargs = {**config['kwargs'], **kwargs}
    label_names = config.get('label_names')
    n_class = kwargs.get('n_fg_class', kwargs.get('n_class'))
    if label_names is not None and n_class is not None and len(label_names) != n_class:
        raise ValueError(f'pretrained_model: {pretrained_model} names {len(label_names)} '
                         f'classes (label_names) for a model of {n_class}')
    model = cls(pretrained_model=pretrained_model, **kwargs)
    if label_names is not None:
        model.label_names = tuple(label_names)
    return model


def resolve_weights(model_class, key: str) -> Weights:
    """Return the Weights entry ``key`` of a model class (or instance).

    Raises:
        ValueError: no such key; the message lists the available keys.
    """
    cls = model_class if isinstance(model_class, type) else type(model_class)
    entries = getattr(cls, 'weights', None) or {}
    if key not in entries:
        raise ValueError(f'pretrained_model: {cls.__name__} has no weights {key!r} and no file '
                         f'of that name exists; available keys: {sorted(entries)}')
    return entries[key]


def _cached_download(url, sha256, file_name):
    # NOTE: imported here, so that the zoo imports without the download stack (requests).
    from cvzoo.utils import download

    return download.cached_download(url, sha256, file_name=file_name, subdir=_WEIGHTS_SUBDIR)


def _is_full_sha256(sha256):
    return re.fullmatch('[0-9a-f]{64}', sha256) is not None


def trust_record_path(weight_file: WeightFile) -> str:
    """Where the trust-on-first-use record of an ``UNPUBLISHED`` file lives:
    ``$CVZOO_HOME/weights/<file_name>.sha256``, beside the downloaded file."""
    return os.fspath(paths.cvzoo_home() / _WEIGHTS_SUBDIR / (weight_file.file_name + '.sha256'))


def _hash_problem(weight_file, path):
    """Check ``path`` against its entry's prefix or its trust record.

    Returns:
        tuple: ``(problem, pending)``: why the file fails (None if it passes), and for an
        ``UNPUBLISHED`` file seen for the first time, ``(record_path, sha256)`` to be
        written once the file has loaded (else None).
    """
    actual = _sha256_of_file(path)
    if weight_file.sha256 != UNPUBLISHED:
        if actual.startswith(weight_file.sha256):
            return None, None
        return f'sha256 {actual} does not start with the published {weight_file.sha256}', None
    record = path + '.sha256'
    if not os.path.exists(record):
        return None, (record, actual)
    with open(record) as file:
        recorded = file.read().strip()
    if recorded == actual:
        return None, None
    return (f'sha256 {actual} differs from {recorded} recorded at the first download in '
            f'{record} (`cvzoo download --forget MODEL KEY` removes the record)'), None


def _fetch_verified(weight_file):
    """Fetch one file; a hash that is a prefix or unpublished is checked here.

    A cached file that fails the check is deleted and fetched once more; if the fresh
    copy fails too, it is deleted and DownloadError names the URL and the path.

    Returns:
        tuple: ``(path, pending)``, ``pending`` as in :func:`_hash_problem`.
    """
    if _is_full_sha256(weight_file.sha256):
        return os.fspath(_cached_download(weight_file.url, weight_file.sha256,
                                          weight_file.file_name)), None
    problem = None
    for _ in range(2):
        path = os.fspath(_cached_download(weight_file.url, None, weight_file.file_name))
        problem, pending = _hash_problem(weight_file, path)
        if problem is None:
            return path, pending
        os.remove(path)
    raise errors.DownloadError(f'{weight_file.url}: {problem}; the file {path} was deleted')


def fetch_weights(weights: Weights) -> list:
    """Download (or find in the cache or the mirror) every file of an entry, verified.

    ``sha256`` is checked in full when it has 64 hex digits, as a prefix when the source
    publishes only a prefix, and against the sha256 recorded at the first successful
    load (see :func:`load_weights`) for ``UNPUBLISHED``. Fetching alone records no
    trust: a file with no record is returned unverified.

    Returns:
        list of str: local paths, the main file first, then ``weights.files``.

    Raises:
        cvzoo.errors.DownloadError: a file cannot be fetched or fails its check (the file
            is deleted; the message names the URL and the path).
    """
    return [_fetch_verified(f)[0] for f in weights.all_files]


def _pending_trust(weights, paths):
    """(record, sha256) of each fetched file with no published hash and no record yet."""
    return [(path + '.sha256', _sha256_of_file(path))
            for f, path in zip(weights.all_files, paths)
            if f.sha256 == UNPUBLISHED and not os.path.exists(path + '.sha256')]


def _record_trust(pending, url):
    for record, sha256 in pending:
        _logger.warning('%s: its source publishes no sha256; trusting this first download, '
                        'which loaded, and recording its sha256 %s in %s', url, sha256, record)
        with atomic_write.atomic_write(record) as tmp_path, open(tmp_path, 'w') as file:
            file.write(sha256 + '\n')


def _drop_untrusted(pending):
    """Delete first-seen files that did not load, so that the next load fetches them again."""
    for record, _ in pending:
        path = record[:-len('.sha256')]
        _logger.warning('%s: not trusted (it did not load) and deleted', path)
        for name in (path, path + '.cvzoo.npz'):
            if os.path.exists(name):
                os.remove(name)


def forget_trust(model_class, key: str) -> list:
    """Undo trust on first use for the ``UNPUBLISHED`` files of a weight key.

    Removes each file's record ``$CVZOO_HOME/weights/<file_name>.sha256``, the
    downloaded file and its converted cache, so that the next load fetches the file
    again and trusts it only once it loads.

    Returns:
        list of str: the paths removed.

    Raises:
        ValueError: no such key.
    """
    weights = resolve_weights(model_class, key)
    removed = []
    for weight_file in weights.all_files:
        if weight_file.sha256 != UNPUBLISHED:
            continue
        record = trust_record_path(weight_file)
        path = record[:-len('.sha256')]
        for name in (record, path, path + '.cvzoo.npz'):
            if os.path.exists(name):
                os.remove(name)
                removed.append(name)
    return removed


def _sha256_of_file(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as file:
        for block in iter(lambda: file.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def _cache_path(path, source_sha256):
    """Where the converted copy of ``path`` is cached: beside it inside $CVZOO_HOME, else
    under $CVZOO_HOME/converted (cvzoo never writes into a user's or a mirror's folder)."""
    home = os.path.realpath(paths.cvzoo_home())
    if os.path.realpath(path).startswith(home + os.sep):
        return path + '.cvzoo.npz'
    name = f'{os.path.basename(path)}.{source_sha256[:16]}.cvzoo.npz'
    return os.fspath(paths.cvzoo_home() / 'converted' / name)


def _cache_stamp(source_sha256, source):
    stamp = json.dumps({'sha256': source_sha256, 'source': source, 'version': _CACHE_VERSION})
    return numpy.frombuffer(stamp.encode(), dtype=numpy.uint8)


def _read_cache(cache, stamp):
    """Return the cached arrays when the cache exists, reads and has ``stamp``; else None."""
    if not os.path.exists(cache):
        return None
    try:
        arrays = npz_serializer.read_npz(cache)
    except errors.CorruptFileError as exc:
        _logger.warning('%s; converting again', exc)
        return None
    if not numpy.array_equal(arrays.pop(_CACHE_KEY, None), stamp):
        return None
    return arrays


def _write_cache(cache, arrays, stamp):
    os.makedirs(os.path.dirname(os.path.abspath(cache)), exist_ok=True)
    with atomic_write.atomic_write(cache) as tmp_path, open(tmp_path, 'wb') as file:
        numpy.savez(file, **arrays, **{_CACHE_KEY: stamp})


def _convert(model, path, source):
    raw = file_format.read_weight_file(path)
    hook = getattr(model, 'convert_weights', None)
    arrays = raw if hook is None else hook(raw, source)
    if not isinstance(arrays, dict) or not all(
            isinstance(v, numpy.ndarray) for v in arrays.values()):
        raise TypeError(f'{type(model).__name__}.convert_weights: expected a dict of NumPy '
                        f'arrays, got {type(arrays).__name__}')
    return arrays


def _converted_arrays(model, path, source, source_sha256):
    """Read ``path`` as cvzoo's parameter tree, converting it once.

    Returns:
        tuple: ``(arrays, save)``: the parameter tree, and a function that caches a fresh
        conversion (a no-op when the arrays came from the cache or need none). The caller
        calls ``save`` only once the arrays loaded into the model, so that a conversion
        that did not check out is never cached under the file's sha256.
    """
    if source == 'cvzoo' and file_format.sniff_format(path) in ('npz', 'hdf5'):
        return file_format.read_weight_file(path), lambda: None
    cache = _cache_path(path, source_sha256)
    stamp = _cache_stamp(source_sha256, source)
    arrays = _read_cache(cache, stamp)
    if arrays is not None:
        return arrays, lambda: None
    arrays = _convert(model, path, source)

    def save():
        try:
            _write_cache(cache, arrays, stamp)
        except OSError as exc:
            _logger.warning('could not cache the converted weights at %s (%s)', cache, exc)
    return arrays, save


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
        source = source or _SNIFFED_SOURCES[file_format.sniff_format(path)]
        _load_converted(model, path, source, _sha256_of_file(path))
        return None
    weights = resolve_weights(model, os.fspath(path_or_key))
    _load_entry(model, weights, source)
    return weights


def _load_entry(model, weights, source):
    """Fetch and load a zoo entry; record first-use trust only once it has loaded."""
    fetched = fetch_weights(weights)
    pending = _pending_trust(weights, fetched)
    path = fetched[0]
    source_sha256 = weights.sha256 if _is_full_sha256(weights.sha256) else _sha256_of_file(path)
    source = source or weights.convert_from or DEFAULT_SOURCES[weights.source_format]
    try:
        _load_converted(model, path, source, source_sha256)
    except Exception:
        _drop_untrusted(pending)
        raise
    _record_trust(pending, weights.url)


def _load_converted(model, path, source, source_sha256):
    """Convert (or read the cached conversion of) ``path`` and load it strictly."""
    converted, save_conversion = _converted_arrays(model, path, source, source_sha256)
    arrays = dict(converted)
    arrays.pop(trained_model.MODEL_CONFIG_KEY, None)
    dictionary.DictionaryDeserializer(arrays, '', True, path).load(model)
    save_conversion()
