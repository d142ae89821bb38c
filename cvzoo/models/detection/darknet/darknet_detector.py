"""DarknetDetector: any YOLO-style Darknet detector from its own ``.cfg`` and ``.weights``.

What predict() does, as AlexeyAB's ``darknet detector test``: RGB / 255, Darknet's
corner-aligned bilinear resize to the cfg's input size (stretching, aspect ratio not
kept; with ``[net] letter_box=1`` instead scaled to fit and centred on grey 0.5, as
Darknet's letterbox_image, and the boxes corrected back), the network, yolo/region decoding, boxes scaled
back by the image's own width and height, (box, class) pairs with
objectness * class probability strictly above ``score_thresh``, greedy NMS per class
over all heads together, and finally clipping to the image (Darknet clips only when it
draws).
"""

import os

import numpy

import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend
from cvzoo.models import zoo
from cvzoo.models.detection import detector
from cvzoo.models.detection.darknet import cfg_network, darknet_resize, yolo_decoder
from cvzoo.models.weights.converters import darknet

# NOTE: 'visualize' is Darknet's `detector test` default (-thresh 0.25, nms 0.45);
# 'evaluate' is what its `detector map` tool uses (thresh 0.005, nms 0.45).
DARKNET_PRESETS = {'visualize': {'score_thresh': 0.25, 'nms_thresh': 0.45},
                   'evaluate': {'score_thresh': 0.005, 'nms_thresh': 0.45}}


class DarknetDetector(L.Chain, detector.Detector):
    """A YOLO detector built from a Darknet cfg (YOLOv2/v3/v4-tiny, Yolo-Fastest, ...).

    Args:
        cfg_path (str or os.PathLike): the ``.cfg`` file; its sections become the network
            (see :class:`~cvzoo.models.detection.darknet.cfg_network.CfgNetwork`).
        weights_path (str, os.PathLike or None): a Darknet ``.weights`` file (or a cvzoo
            .npz saved from this model); None leaves random weights.
        label_names (sequence of str or None): class names, in the weights' order.
        n_fg_class (int or None): classes to detect; when it differs from the cfg's, the
            convolutions feeding the heads are re-made (after loading) and the rest
            keeps the loaded weights.

    Attributes:
        network (CfgNetwork): the layers.
        n_fg_class (int): classes detected.
        insize (tuple of int): (H, W) of the network input.

    Raises:
        cvzoo.errors.CorruptFileError: an unsupported or inconsistent cfg, or weights
            that do not fit it (the message names the file).
        ValueError: label_names of the wrong length.

    Example, with a cfg and weights of your own::

        model = DarknetDetector('yolov4-tiny.cfg', 'yolov4-tiny.weights', names)
    """

    presets = DARKNET_PRESETS
    # NOTE: Darknet's `detector map` (default -points 0) reports the area under the
    # interpolated curve at every recall, not the VOC2007 11-point metric.
    use_07_metric = False

    def __init__(self, cfg_path, weights_path=None, label_names=None, n_fg_class=None):
        super().__init__()
        sections = darknet.parse_darknet_cfg(cfg_path)
        with self.init_scope():
            self.network = cfg_network.CfgNetwork(sections)
        self.insize = self.network.insize
        self.letterbox = bool(int(sections[0][1].get('letter_box', 0)))
        self.n_fg_class = self.network.heads[0]['n_class']
        if any(head['n_class'] != self.n_fg_class for head in self.network.heads):
            raise errors.CorruptFileError(f'{os.fspath(cfg_path)}: the heads disagree on '
                                          'the number of classes')
        self.label_names = None if label_names is None else tuple(label_names)
        self.use_preset('visualize')
        if weights_path is not None:
            self.load_pretrained(weights_path)
        self._set_n_fg_class(n_fg_class)

    def _set_n_fg_class(self, n_fg_class):
        if n_fg_class is not None and n_fg_class != self.n_fg_class:
            if not isinstance(n_fg_class, int) or n_fg_class < 1:
                raise ValueError(f'n_fg_class: expected an int >= 1, got {n_fg_class!r}')
            self.network.reset_heads(n_fg_class)
            self.n_fg_class = n_fg_class
            self.label_names = None
        if self.label_names is not None and len(self.label_names) != self.n_fg_class:
            raise ValueError(f'label_names: expected {self.n_fg_class} names, got '
                             f'{len(self.label_names)}')

    def training_recipe(self, **hyper):
        """How this detector trains: a ``TrainingRecipe``, see
        :func:`~cvzoo.models.detection.darknet.training_recipe.darknet_training_recipe`."""
        from cvzoo.models.detection.darknet import training_recipe
        return training_recipe.darknet_training_recipe(self, **hyper)

    def load_pretrained(self, path_or_key, source=None):
        """Load a ``.weights`` file (or a zoo key); a size mismatch names the file."""
        name = os.fspath(path_or_key)
        if name in getattr(self, 'weights', {}):
            name = self.weights[name].file_name
        try:
            return zoo.load_weights(self, path_or_key, source=source)
        except errors.CorruptFileError as exc:
            if name in str(exc):
                raise
            raise errors.CorruptFileError(f'{name}: {exc}') from exc

    def convert_weights(self, raw, source):
        """The zoo's conversion hook: a Darknet ``{'header', 'values'}`` to parameter names."""
        if source != 'darknet' or 'values' not in raw:
            raise ValueError(f'source: {type(self).__name__} converts Darknet .weights files '
                             f'only, got source {source!r} with keys {sorted(raw)}')
        return self.network.convert_darknet(numpy.asarray(raw['values'], numpy.float32),
                                            prefix='network/')

    def forward(self, x):
        """(B, 3, H, W) network input -> list of raw head maps."""
        return self.network(x)

    def prepare(self, img):
        """(3, H, W) RGB in [0, 255] -> (3, net H, net W) in [0, 1], Darknet's resize."""
        if self.letterbox:
            return darknet_resize.darknet_letterbox(img / numpy.float32(255), self.insize)
        return darknet_resize.darknet_resize(img / numpy.float32(255), self.insize)

    def _box_transform(self, sizes):
        """(B, 4) offsets and scales taking network fractions to image pixels."""
        net_H, net_W = self.insize
        offset, scale = [], []
        for H, W in sizes:
            new_H, new_W = self.insize
            if self.letterbox:
                new_H, new_W = darknet_resize.letterbox_size((H, W), self.insize)
            # without letterbox: no shift and a ratio of 1
            shift_x, shift_y = (net_W - new_W) / 2 / net_W, (net_H - new_H) / 2 / net_H
            width, height = W * net_W / new_W, H * net_H / new_H
            offset.append([shift_x, shift_y, shift_x, shift_y])
            scale.append([width, height, width, height])
        return offset, scale

    def decode(self, outputs, sizes):
        """Boxes in image pixels and class scores of all heads, concatenated."""
        bboxes, scores = [], []
        for raw, head in zip(outputs, self.network.heads):
            bbox, score = yolo_decoder.decode_yolo_head(raw.array, head, self.insize)
            bboxes.append(bbox)
            scores.append(score)
        xp = backend.get_array_module(bboxes[0])
        # NOTE: with letter_box=1, Darknet's correct_yolo_boxes removes the grey bars.
        offset, scale = (xp.asarray(a, dtype=bboxes[0].dtype)[:, None, :]
                         for a in self._box_transform(sizes))
        bbox = (xp.concatenate(bboxes, axis=1) - offset) * scale
        return bbox, xp.concatenate(scores, axis=1)
