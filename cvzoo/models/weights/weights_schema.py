"""The typed weight entries (Weights, WeightFile, Preset, Score) and their schema check.

A model family declares one :class:`Weights` per weight file, next to its class;
:func:`schema_problems` lists every way an entry breaks the schema, and
``tests/models/test_zoo_schema.py`` runs it over the whole registry.

>>> schema_problems(Preset(size=8, mean=(0.0, 0.0, 0.0)))
['expected a Weights entry, got Preset']
"""

import dataclasses
import posixpath
import re
import urllib.parse

SOURCE_FORMATS = ('cvzoo_npz', 'torch_pth', 'darknet', 'keras_h5', 'chainercv_npz',
                  'safetensors')
METRICS = ('top1', 'top5', 'map_voc07', 'map_coco', 'map50_coco', 'miou', 'mask_map_coco',
           'keypoint_map_coco')
DATASETS = ('imagenet_val', 'voc2007_test', 'voc2012_val', 'sbd_val', 'coco_val2017',
            'coco_test_dev', 'coco_val2017_voc_labels', 'camvid_test', 'cityscapes_val',
            'ade20k_val')
INTERPOLATIONS = ('nearest', 'bilinear', 'bicubic', 'area', 'lanczos')
RESIZE_BACKENDS = ('pil', 'cv2', 'darknet', 'cvzoo')
# How the boxes a detector's weights learned end (docs/conventions.md, "Data"):
# 'continuous': x_max is the right edge of the last pixel column (cvzoo's datasets, COCO,
# torchvision); 'inclusive': x_max is that column's index, one less (ChainerCV's and
# Darknet's VOC boxes). Detector.predict returns continuous boxes for either.
BOX_CONVENTIONS = ('continuous', 'inclusive')
# The name mapping passed to convert_weights when neither the caller nor the entry names one.
DEFAULT_SOURCES = {'cvzoo_npz': 'cvzoo', 'chainercv_npz': 'chainercv', 'torch_pth': 'torch',
                   'darknet': 'darknet', 'keras_h5': 'keras', 'safetensors': 'cvzoo'}
# ``sha256`` of a file whose source publishes no hash: the first download that loads
# records the file's sha256 beside it (trust on first use; see cvzoo.models.weights.weight_files)
# and later loads verify against the record.
UNPUBLISHED = 'unpublished'
_MIN_PREFIX = 8  # hex digits of a published sha256 prefix (torchvision publishes 8)


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
    """One file of a weights entry; ``file_name`` (its name in a mirror) defaults to the URL's.

    ``mirrors`` are further https URLs of the same bytes (same sha256), tried in order
    after ``url`` (the origin) when it fails; ``$CVZOO_WEIGHTS_MIRROR`` comes first.
    """

    url: str
    sha256: str
    file_name: str = ''
    size: int | None = None  # bytes, when known
    mirrors: tuple[str, ...] = ()

    @property
    def urls(self) -> tuple:
        """The origin, then the mirrors: the order in which they are tried."""
        return (self.url,) + tuple(self.mirrors)

    def __post_init__(self):
        if not self.file_name:
            name = posixpath.basename(urllib.parse.urlparse(self.url).path)
            object.__setattr__(self, 'file_name', name)


@dataclasses.dataclass(frozen=True)
class Weights:
    """One pretrained weight entry: where the file is, what it is, what it scores.

    ``url``/``sha256``/``file_name``/``file_size`` describe the main file (the one that
    is converted and loaded), ``mirrors`` further URLs of that file (see
    :class:`WeightFile`); ``files`` lists further files fetched with it, e.g. the
    Darknet ``.cfg`` beside its ``.weights``. ``convert_from`` names the parameter-name
    mapping passed to the model's ``convert_weights`` (default: from ``source_format``).
    ``box_convention`` (one of ``BOX_CONVENTIONS``) says how the boxes these weights were
    trained on end, for an entry of a whole detector; None for weights that predict no
    boxes (classifiers, backbones).
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
    mirrors: tuple[str, ...] = ()
    box_convention: str | None = None

    @property
    def main_file(self) -> WeightFile:
        """The file that holds the parameters."""
        return WeightFile(self.url, self.sha256, self.file_name, self.file_size,
                          mirrors=tuple(self.mirrors))

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
    for url in weight_file.urls:
        if not isinstance(url, str) or not url.startswith('https://'):
            problems.append(f'{weight_file.file_name}: url {url!r} is not https')
    if len(set(weight_file.urls)) != len(weight_file.urls):
        problems.append(f'{weight_file.file_name}: mirrors repeat a URL: {weight_file.urls}')
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

    Checked: https URLs (mirrors too, none repeated), sha256 (64 hex digits, a
    published prefix of at least 8, or ``UNPUBLISHED``), plain and distinct file names, a
    known source format, a known box convention (or None), ``len(label_names) ==
    n_class``, the preset's fields, and the scores (known metric and dataset, a fraction,
    a non-empty source).
    """
    if not isinstance(weights, Weights):
        return [f'expected a Weights entry, got {type(weights).__name__}']
    problems = [p for f in weights.all_files for p in _file_problems(f)]
    names = [f.file_name for f in weights.all_files]
    if len(set(names)) != len(names):
        problems.append(f'files: file names must differ, got {names}')
    if weights.source_format not in SOURCE_FORMATS:
        problems.append(f'source_format: {weights.source_format!r} not in {SOURCE_FORMATS}')
    if weights.box_convention is not None and weights.box_convention not in BOX_CONVENTIONS:
        problems.append(f'box_convention: {weights.box_convention!r} not in {BOX_CONVENTIONS} '
                        '(or None)')
    if not isinstance(weights.n_class, int) or weights.n_class <= 0:
        problems.append(f'n_class: expected an int > 0, got {weights.n_class!r}')
    elif len(weights.label_names) != weights.n_class:
        problems.append(f'label_names: {len(weights.label_names)} names for n_class='
                        f'{weights.n_class}')
    problems += _preset_problems(weights.preset) + _score_problems(weights.reported, 'reported')
    if weights.measured is not None:
        problems += _score_problems(weights.measured, 'measured')
    return problems
