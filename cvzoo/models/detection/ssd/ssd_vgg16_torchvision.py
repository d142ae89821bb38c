"""SSD300VGG16: torchvision's ``ssd300_vgg16`` (and its COCO weights) on cvzoo's SSD.

The network is cvzoo's SSD300 (:mod:`ssd`): the same VGG16 with an L2-normalised,
scaled conv4_3, the same extra layers and the same head layout (anchor-major
channels, ``(dx, dy, dw, dh)`` and background-first logits). What torchvision 0.28 does
differently, and this model does as torchvision does (models/detection/ssd.py,
anchor_utils.py, _utils.py, transform.py):

- preprocessing: the image in [0, 1] minus ``IMAGE_MEAN`` divided by 1/255 (that is
  the [0, 255] image minus 255 * ``IMAGE_MEAN``), resized to 300x300 without keeping
  the aspect ratio: bilinear with half-pixel centres and no antialiasing (torch's
  ``interpolate``), not Pillow's resize;
- conv4_3's normalisation divides by ``max(norm, 1e-12)`` (``F.normalize``), where
  ChainerCV adds 1e-5 to the norm;
- anchors (``DefaultBoxGenerator``): sizes ``SCALES`` times 300 (21, 45, 99, 153, 207,
  261, 315 pixels; ChainerCV's are 30, 60, 111, ...), ChainerCV's steps, aspect ratios
  and order, and widths and heights clipped to the input (the last map's wide and tall
  boxes become 300 pixels long);
- box coder weights (10, 10, 5, 5), i.e. ChainerCV's variance (0.1, 0.2), with dw and
  dh clipped at log(1000 / 16) before the exponential (``BoxCoder``);
- post-processing: decoded boxes clipped to the 300x300 input, softmax over all
  logits (class 0 the background), per class the scores above ``score_thresh``
  (0.01 for 'evaluate'), their 400 best (``topk_candidates``), NMS per class at
  ``nms_thresh`` (0.45), the 200 best of the image, and the boxes scaled back to the
  input image by float32 ratios.

Labels: torchvision's COCO head scores 91 classes indexed by COCO category id, ten of
them 'N/A'. cvzoo's labels are the 80 real classes; the ten unused logits stay at the
end of each class head (``n_unused_class``) because the softmax of the 80 depends on
them too. Re-making the heads for another ``n_fg_class`` drops them.

Differences from torchvision: NMS drops a box at IoU >= nms_thresh (torchvision: >)
and runs on the boxes scaled to the input image (IoU is the same up to rounding).

Training: :class:`~cvzoo.models.detection.ssd.train_chain.SSDTrainChain` on prepared
images with targets from ``model.coder.encode(bbox, label)`` (boxes in the 300x300
input; ``augmentation.SSDTransform(model.coder, 300, model.mean)`` makes both, with
Pillow's resize) is torchvision's loss: IoU >= 0.5 matching plus each box's best
anchor, smooth L1 (beta 1) on the positives' offsets, cross entropy of the positives and
of the 3x as many hardest negatives, both divided by the batch's positives. One
difference: a box forces its best anchor only when they overlap at all (torchvision
also when the IoU is 0).
"""

import os
import typing

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend, config
from cvzoo.datasets.coco.coco_label_names import coco_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.detection import box_coding
from cvzoo.models.detection.ssd import (
    extractors,
    multibox,
    multibox_coder,
    ssd,
    torchvision_names,
)
from cvzoo.models.weights import pretrained
from cvzoo.models.weights.converters import file_format

INSIZE = 300
IMAGE_MEAN = (0.48235, 0.45882, 0.40784)
IMAGE_STD = (1 / 255, 1 / 255, 1 / 255)
# the same on the [0, 255] image (what SSD.mean and SSDTransform subtract)
PIXEL_MEAN = tuple(255 * m for m in IMAGE_MEAN)
ASPECT_RATIOS = ((2,), (2, 3), (2, 3), (2, 3), (2,), (2,))
STEPS = (8, 16, 32, 64, 100, 300)
SCALES = (0.07, 0.15, 0.33, 0.51, 0.69, 0.87, 1.05)
BOX_CODER_WEIGHTS = (10.0, 10.0, 5.0, 5.0)
NORMALIZE_EPS = 1e-12


def default_bbox(grids, aspect_ratios, steps, scales, insize):
    """torchvision's ``DefaultBoxGenerator`` anchors, (K, 4) float32 ``(cx, cy, w, h)``.

    Args:
        grids (sequence of int): side of each (square) feature map.
        aspect_ratios (sequence of sequence of number): extra aspect ratios per map.
        steps (sequence of float): anchor spacing on each map, in input pixels.
        scales (sequence of float): ``len(grids) + 1`` sizes as fractions of ``insize``.
        insize (int): side of the square input.

    Returns:
        array: in input pixels, in the heads' order (map, row, column, then the square
        of side ``s_k``, the square of side ``sqrt(s_k s_k+1)``, and per aspect ratio
        the wide then the tall box), widths and heights clipped to ``insize``.

    >>> default_bbox((1,), ((2,),), (300,), (0.8, 1.2), 300)[:, 2:].astype(int).tolist()
    [[240, 240], [293, 293], [300, 169], [169, 300]]
    """
    sizes = [scale * insize for scale in scales]
    bbox = multibox_coder.generate_default_bbox(grids, aspect_ratios, steps, sizes)
    bbox[:, 2:] = numpy.minimum(bbox[:, 2:], insize)
    return bbox


def _file_layout(path, source):
    """(n_fg_class, n_unused_class) of a local weight file, None when it cannot tell."""
    file_kind = file_format.sniff_format(path)
    if source in ('torchvision', 'torch') or (source is None and file_kind.startswith('torch')):
        # NOTE: torchvision's ssd300_vgg16 has the 91-class COCO head unless told otherwise
        return 80, len(torchvision_names.COCO_UNUSED_IDS)
    if file_kind != 'npz':
        return None
    with numpy.load(path, allow_pickle=False) as npz:
        names = {name.removeprefix('/'): name for name in npz.files}
        if 'multibox/conf/0/b' not in names or 'n_unused_class' not in names:
            return None
        n_unused_class = int(npz[names['n_unused_class']])
        n_class = len(npz[names['multibox/conf/0/b']]) // (2 + 2 * len(ASPECT_RATIOS[0]))
    return n_class - 1 - n_unused_class, n_unused_class


@zoo.register('ssd300_vgg16', task='detection')
class SSD300VGG16(ssd.SSD):
    """torchvision's SSD300 on VGG16; see the module docstring.

    Weights keys: ``'coco'``, torchvision's ``SSD300_VGG16_Weights.COCO_V1`` (COCO 2017
    train; box AP 25.1 on val2017).

    Args:
        n_fg_class (int or None): classes to detect; None takes the weights' (80 without
            weights). A number other than the weights' re-makes the heads (the
            extractor keeps the weights).
        pretrained_model (str or None): ``'coco'``, a local file (torchvision .pth with
            the COCO head, or cvzoo .npz) or None for random weights.
        source (str or None): names of a local file (``'torchvision'`` or ``'cvzoo'``);
            None guesses from its format.

    Attributes:
        n_unused_class (int): logits at the end of each class head that enter the
            softmax but are no label (10 with torchvision's COCO head, else 0).
        label_names (tuple of str or None): class names of the loaded weights.

    >>> model = SSD300VGG16(n_fg_class=3)
    >>> len(model.coder.default_bbox), model.n_fg_class
    (8732, 3)
    """

    presets: typing.ClassVar[dict] = ssd.SSD_PRESETS
    # torchvision's detections_per_img and topk_candidates; scores strictly above the
    # threshold
    max_detections = 200
    nms_top_k = 400
    inclusive_score_thresh = False
    use_07_metric = False
    training_reference = 'torchvision'

    def __init__(self, n_fg_class=None, pretrained_model=None, *, source=None):
        if n_fg_class is not None and (not isinstance(n_fg_class, int) or n_fg_class < 1):
            raise ValueError(f'n_fg_class: expected an int >= 1 or None, got {n_fg_class!r}')
        entry, n_built = pretrained.settle_n_class(self, pretrained_model, n_fg_class, 80)
        if isinstance(pretrained_model, str) and entry is None \
                and not os.path.isfile(pretrained_model):
            zoo.resolve_weights(self, pretrained_model)  # raises, naming the keys
        n_unused_class = 0
        if entry is not None:
            n_unused_class = len(torchvision_names.COCO_UNUSED_IDS)
        elif pretrained_model and os.path.isfile(pretrained_model):
            layout = _file_layout(pretrained_model, source)
            if layout is not None:
                n_built, n_unused_class = layout
        extractor = extractors.VGG16Extractor300()
        extractor.norm4.eps = NORMALIZE_EPS
        heads = multibox.Multibox(n_built + 1 + n_unused_class, ASPECT_RATIOS,
                                  extractor.out_channels)
        super().__init__(extractor, heads, STEPS, [s * INSIZE for s in SCALES],
                         mean=PIXEL_MEAN)
        self.coder.default_bbox[...] = default_bbox(extractor.grids, ASPECT_RATIOS, STEPS,
                                                    SCALES, INSIZE)
        self.add_persistent('n_unused_class', n_unused_class)
        pretrained.load_pretrained(self, pretrained_model, n_fg_class, n_built, entry,
                                   self.reset_multibox, source=source)

    @property
    def n_fg_class(self):
        """Classes the labels take (the head also scores the background and unused ones)."""
        return self.multibox.n_class - 1 - int(self.n_unused_class)

    def prepare(self, img):
        """(3, H, W) RGB in [0, 255] -> (3, 300, 300) float32, normalised and resized."""
        img = numpy.asarray(img, numpy.float32) / numpy.float32(255)
        img = (img - numpy.asarray(IMAGE_MEAN, numpy.float32)[:, None, None]) \
            / numpy.asarray(IMAGE_STD, numpy.float32)[:, None, None]
        with config.no_backprop_mode():
            return F.resize_images(img[None], (INSIZE, INSIZE), align_corners=False).array[0]

    def decode(self, outputs, sizes):
        """Boxes in each image's pixels (B, K, 4) and label scores (B, K, n_fg_class) of a
        batch, on the device: decoded, clipped to the input, scaled to each image."""
        mb_locs, mb_confs = outputs
        xp = backend.get_array_module(mb_locs.array)
        center, half = self.coder.default_bbox[:, :2], self.coder.default_bbox[:, 2:] / 2
        anchor = xp.concatenate((center - half, center + half), axis=1)
        bbox = box_coding.decode(anchor, mb_locs.array, BOX_CODER_WEIGHTS,
                                   exp_clip=box_coding.EXP_CLIP)
        bbox = xp.clip(bbox, 0, INSIZE)
        logits = mb_confs.array
        score = xp.exp(logits - logits.max(axis=-1, keepdims=True))
        score = score[..., 1:1 + self.n_fg_class] / score.sum(axis=-1, keepdims=True)
        # NOTE: float32 ratios of the image's size to the input's, as torchvision's
        scale = xp.asarray([[W, H, W, H] for H, W in sizes], numpy.float32) \
            / numpy.float32(INSIZE)
        return bbox * scale[:, None, :], score

    def reset_multibox(self, n_fg_class):
        """Replace the heads by new ones for ``n_fg_class`` classes (no unused classes)."""
        super().reset_multibox(n_fg_class)
        self.n_unused_class = 0

    def load_pretrained(self, path_or_key, source=None):
        """Load a zoo key or a file (heads of the file's shapes, see ``n_unused_class``)."""
        return zoo.load_weights(self, path_or_key, source=source)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook: torchvision names (``'torchvision'``/``'torch'``,
        see :mod:`torchvision_names`) or cvzoo's. The anchors come from the model.

        Raises:
            ValueError: another source.
            cvzoo.errors.WeightLoadError: file keys with no counterpart (all named).
        """
        if source in ('torchvision', 'torch'):
            arrays, n_unused_class = torchvision_names.convert_torchvision(raw, source)
            arrays['n_unused_class'] = numpy.asarray(n_unused_class)
            arrays['coder/default_bbox'] = backend.to_numpy(self.coder.default_bbox)
            return arrays
        if source == 'cvzoo':
            return {key.removeprefix('/'): value for key, value in raw.items()}
        raise ValueError(f"source: expected 'torchvision', 'torch' or 'cvzoo' for "
                         f'SSD300VGG16 weights, got {source!r}')


SSD300VGG16.weights = {
    'coco': zoo.Weights(
        url='https://download.pytorch.org/models/ssd300_vgg16_coco-b556d3b4.pth',
        sha256='b556d3b4', source_format='torch_pth', n_class=80,
        label_names=tuple(coco_bbox_label_names),
        preset=zoo.Preset(size=INSIZE, mean=PIXEL_MEAN, interpolation='bilinear',
                          resize_backend='cvzoo'),
        reported=zoo.Score('map_coco', 0.251, 'coco_val2017',
                           'torchvision docs, SSD300_VGG16_Weights.COCO_V1 '
                           '(box_map 25.1, COCO val2017)'),
        notes="torchvision's ssd300_vgg16. Its 91-way class head (COCO category ids) is "
              'reordered to the background, the 80 real classes in cvzoo\'s order and the '
              'ten unused ids, which stay in the softmax; images are resized to 300x300 '
              "as torch's interpolate does (bilinear, no antialias).",
        convert_from='torchvision', box_convention='continuous', license='BSD-3-Clause'),
}
