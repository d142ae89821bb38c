"""YOLOBase: what YOLOv2, YOLOv2-tiny and YOLOv3 add to a DarknetDetector.

The networks are CfgNetworks built from the sections of
:mod:`~cvzoo.models.detection.yolo.yolo_sections`, so Darknet ``.weights`` load in cfg
order. Weights come from two sources, and each keeps its own preprocessing and box
mapping (``model.preprocessing``, set when weights are loaded):

- ``'darknet'`` (pjreddie's Darknet, ``detector test``/``valid``): RGB / 255,
  Darknet's letterbox (corner-aligned bilinear resize keeping the aspect ratio, grey
  0.5 bars), boxes corrected for the bars as ``correct_region_boxes`` /
  ``correct_yolo_boxes`` do; its batch normalization divides by ``sqrt(var) + 1e-6``,
  which the conversion folds into ``avg_var``;
- ``'chainercv'`` (ChainerCV's conversion of the same Darknet models): RGB / 255,
  ChainerCV's ``resize_contain`` (see
  :mod:`~cvzoo.models.detection.yolo.resize_contain`), boxes mapped back around the
  centre as ChainerCV's ``predict`` does, scores kept at or above ``score_thresh``.

ChainerCV's files hold y-first box channels ``(ty, tx, th, tw)`` per anchor; the
conversion swaps them back to Darknet's x-first order. ChainerCV's batch normalization
divides by ``sqrt(var + 2e-5)``; the conversion adds ``2e-5 - eps`` to ``avg_var`` so
that cvzoo's (eps 1e-5) gives the same numbers.
"""

import os

import numpy

import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend
from cvzoo.models import zoo
from cvzoo.models.detection import box_coding
from cvzoo.models.detection.darknet import cfg_network, darknet_detector, yolo_decoder
from cvzoo.models.detection.yolo import resize_contain
from cvzoo.models.weights import pretrained
from cvzoo.models.weights.converters import file_format

# NOTE: ChainerCV's presets (visualize 0.5, evaluate 0.005, NMS 0.45) are also
# pjreddie's Darknet defaults (`detector test` -thresh .5, `detector valid` .005).
YOLO_PRESETS = {'visualize': {'score_thresh': 0.5, 'nms_thresh': 0.45},
                'evaluate': {'score_thresh': 0.005, 'nms_thresh': 0.45}}
PREPROCESSINGS = ('darknet', 'chainercv')
CHAINERCV_BN_EPS = 2e-5
DEFAULT_INSIZE = (416, 416)
_BN_NAMES = ('gamma', 'beta', 'avg_mean', 'avg_var')


class YOLOBase:
    """Mixin of the YOLO models (put before DarknetDetector in the bases).

    A subclass sets ``make_sections(n_class, insize)`` (staticmethod) and
    ``chainercv_links()`` (staticmethod: ChainerCV's link path of each convolution, in
    cfg order), and its ``weights``.
    """

    presets = YOLO_PRESETS
    use_07_metric = True  # ChainerCV and the YOLO papers report the VOC2007 11-point mAP
    preprocessing = 'darknet'

    @property
    def inclusive_score_thresh(self):
        """ChainerCV keeps scores at or above ``score_thresh``; Darknet only above."""
        return self.preprocessing == 'chainercv'

    def prepare(self, img):
        """(3, H, W) RGB in [0, 255] -> (3, insize) in [0, 1], per ``preprocessing``."""
        if self.preprocessing == 'chainercv':
            return resize_contain.resize_contain(img / numpy.float32(255), self.insize)
        return darknet_detector.DarknetDetector.prepare(self, img)

    def decode(self, outputs, sizes):
        """Boxes in image pixels and class scores of all heads, per ``preprocessing``."""
        if self.preprocessing != 'chainercv':
            return darknet_detector.DarknetDetector.decode(self, outputs, sizes)
        bboxes, scores = [], []
        for raw, head in zip(outputs, self.network.heads):
            bbox, score = yolo_decoder.decode_yolo_head(raw.array, head, self.insize)
            bboxes.append(bbox)
            scores.append(score)
        xp = backend.get_array_module(bboxes[0])
        net_H, net_W = self.insize
        # x_image = (x_net - net_W / 2) * W / scaled_W + W / 2, as ChainerCV's predict
        scale, offset = [], []
        for H, W in sizes:
            scaled_H, scaled_W = resize_contain.contain_size((H, W), self.insize)
            scale.append([W / scaled_W, H / scaled_H] * 2)
            offset.append([W / 2, H / 2] * 2)
        scale, offset = (xp.asarray(a, dtype=bboxes[0].dtype)[:, None, :]
                         for a in (scale, offset))
        net = xp.asarray([net_W, net_H] * 2, dtype=bboxes[0].dtype)
        bbox = (xp.concatenate(bboxes, axis=1) * net - net / 2) * scale + offset
        return bbox, xp.concatenate(scores, axis=1)

    def load_pretrained(self, path_or_key, source=None):
        """Load a zoo key, a Darknet ``.weights``, a ChainerCV or a cvzoo ``.npz``.

        The preprocessing follows the source: 'chainercv' for ChainerCV files, 'darknet'
        for ``.weights``; a cvzoo ``.npz`` keeps the current one.
        """
        is_file = os.path.isfile(path_or_key)
        if source is None and is_file:
            source = _sniff_source(path_or_key)
        entry = darknet_detector.DarknetDetector.load_pretrained(self, path_or_key, source)
        if entry is not None and source is None:
            source = entry.convert_from or zoo.DEFAULT_SOURCES[entry.source_format]
        if source in PREPROCESSINGS:
            self.preprocessing = source
        return entry

    def convert_weights(self, raw, source):
        """The zoo's conversion hook: Darknet ``.weights`` or ChainerCV names.

        Raises:
            ValueError: a source other than 'darknet' or 'chainercv'.
            cvzoo.errors.WeightLoadError: ChainerCV names missing from the file and
                names the model does not have, all in one message.
        """
        if source == 'darknet':
            arrays = darknet_detector.DarknetDetector.convert_weights(self, raw, source)
            return pjreddie_variances(self.network, arrays)
        if source != 'chainercv':
            raise ValueError(f"source: expected 'darknet' or 'chainercv' for "
                             f'{type(self).__name__} weights, got {source!r}')
        return convert_chainercv(self.network, self.chainercv_links(), raw)


def init_yolo(model, n_fg_class, pretrained_model):
    """Build ``model`` (a YOLO class), load ``pretrained_model``, re-make heads if asked.

    Args:
        model: the instance being initialised; its class has ``make_sections``.
        n_fg_class (int or None): classes to detect; None takes the weights' (20 when
            there are none). A local file must have this many classes.
        pretrained_model (str or None): a key of ``model.weights``, a file or None.
    """
    entry, n_built = pretrained.settle_n_class(model, pretrained_model, n_fg_class, 20)
    insize = DEFAULT_INSIZE
    if entry is not None:
        size = entry.preset.size
        insize = tuple(size) if isinstance(size, tuple) else (size, size)
    sections = model.make_sections(n_built, insize, pretrained_model)
    L.Chain.__init__(model)
    with model.init_scope():
        model.network = cfg_network.CfgNetwork(sections)
    model.insize = model.network.insize
    model.letterbox = True  # pjreddie's Darknet letterboxes at test time
    model.n_fg_class = n_built
    model.label_names = None
    model.use_preset('visualize')
    pretrained.load_pretrained(model, pretrained_model, n_fg_class, n_built, entry,
                               model._set_n_fg_class)


def preset(insize, resize_backend):
    """The zoo Preset of YOLO weights: RGB / 255 at ``insize``, no mean."""
    return zoo.Preset(size=insize, mean=(0.0, 0.0, 0.0), std=(255.0, 255.0, 255.0),
                      interpolation='bilinear', resize_backend=resize_backend)


def pjreddie_variances(network, arrays):
    """Rewrite ``avg_var`` so that cvzoo's BN divides as pjreddie's Darknet does.

    pjreddie's normalize_cpu divides by ``sqrt(var) + 1e-6``, cvzoo by
    ``sqrt(var' + eps)``: ``var' = (sqrt(var) + 1e-6)^2 - eps``, at least 0 (which only
    variances below about eps would need).
    """
    for i, layer in network.convolutions():
        if layer.batch_normalize:
            name = f'network/layer{i}/bn/avg_var'
            std = numpy.sqrt(arrays[name].astype(numpy.float64)) + 1e-6
            arrays[name] = numpy.maximum(std * std - layer.bn.eps, 0).astype(numpy.float32)
    return arrays


def _sniff_source(path):
    """'darknet', 'chainercv' or None (a cvzoo file) from a local file's bytes and names."""
    kind = file_format.sniff_format(path)
    if kind == 'darknet_weights':
        return 'darknet'
    if kind != 'npz':
        return None
    with numpy.load(path, allow_pickle=False) as npz:
        names = [name.removeprefix('/') for name in npz.files]
    return 'chainercv' if any(name.startswith('extractor/') for name in names) else None


def _chainercv_names(network, links):
    """(ChainerCV name, cvzoo name) pairs of every parameter, in cfg order."""
    pairs = []
    for (index, layer), link in zip(network.convolutions(), links, strict=True):
        mine = f'network/layer{index}'
        if layer.batch_normalize:
            pairs.append((f'{link}/conv/W', f'{mine}/conv/W'))
            pairs += [(f'{link}/bn/{name}', f'{mine}/bn/{name}') for name in _BN_NAMES]
        else:
            pairs += [(f'{link}/W', f'{mine}/conv/W'), (f'{link}/b', f'{mine}/conv/b')]
    return pairs


def convert_chainercv(network, links, raw):
    """ChainerCV YOLO arrays -> this network's parameter names (see the module docstring).

    Args:
        network (CfgNetwork): the model's network.
        links (list of str): ChainerCV's link of each convolution, in cfg order.
        raw (dict): name -> array of the ChainerCV ``.npz``.

    Returns:
        dict: cvzoo name -> float32 array (batch counts ``bn/N`` set to 0 when absent).
    """
    raw = {key.removeprefix('/'): value for key, value in raw.items()}
    pairs = _chainercv_names(network, links)
    batch_counts = {theirs.replace('/avg_var', '/N'): mine.replace('/avg_var', '/N')
                    for theirs, mine in pairs if theirs.endswith('/avg_var')}
    missing = [theirs for theirs, _ in pairs if theirs not in raw]
    unexpected = sorted(set(raw) - {theirs for theirs, _ in pairs} - set(batch_counts))
    if missing or unexpected:
        raise errors.WeightLoadError(
            f'not a ChainerCV file of this YOLO model: missing: {", ".join(missing) or "-"}; '
            f'unexpected: {", ".join(unexpected) or "-"}')
    head_convs = {f'network/layer{head["index"] - 1}/conv/': 5 + head['n_class']
                  for head in network.heads}
    eps = {f'network/layer{i}/bn/avg_var': layer.bn.eps
           for i, layer in network.convolutions() if layer.batch_normalize}
    arrays = {}
    for theirs, mine in pairs:
        value = numpy.asarray(raw[theirs], numpy.float32)
        if mine[:mine.rindex('/') + 1] in head_convs:
            value = box_coding.swap_xy_channels(value, head_convs[mine[:mine.rindex('/') + 1]])
        if mine in eps:
            value = value + numpy.float32(CHAINERCV_BN_EPS - eps[mine])
        arrays[mine] = value
    for theirs, mine in batch_counts.items():
        arrays[mine] = numpy.asarray(raw.get(theirs, 0), numpy.int64)
    return arrays
