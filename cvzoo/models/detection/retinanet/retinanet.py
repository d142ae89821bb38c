"""RetinaNetResNet50FPN (Lin et al., "Focal Loss for Dense Object Detection", ICCV 2017)
with torchvision's architecture, preprocessing, post-processing and COCO weights.

The network is torchvision's ``retinanet_resnet50_fpn`` (v1): a ResNet-50 ('fb' arch,
frozen BN) whose C3, C4, C5 feed an FPN, plus P6 and P7 taken from P5; on every level
P3 ... P7 the shared heads score 9 anchors per cell (sizes 32 ... 512 at scales
2^0, 2^(1/3), 2^(2/3), ratios 0.5, 1, 2) with sigmoid class scores and offsets
(box coder weights (1, 1, 1, 1)).

predict(): the image is normalised and resized as torchvision does (see
:mod:`~cvzoo.models.detection.torchvision_transform`), the batch padded to multiples of
32; then per image and level the (anchor, class) pairs scoring above ``score_thresh``
are ranked and the best ``n_candidate`` (1000) kept, decoded and clipped to the resized
image; per-class NMS at ``nms_thresh`` over the levels, the ``max_detections`` (300)
best, and the boxes are scaled back to the input image.

Labels: torchvision's 91-way head (COCO category ids, 'N/A' gaps) is cut to cvzoo's 80
contiguous labels when the weights are converted; the 11 unused outputs were trained
only as negatives, so they practically never rank among a level's best 1000 pairs.

Differences from torchvision: NMS drops a box at IoU >= nms_thresh (torchvision: >);
BN is frozen and ResNet's conv1 and res2 stay fixed also without pretrained weights
(torchvision trains them from scratch then); bilinear resizing by matmuls (equal to
torch's ``interpolate`` to float32 rounding).
"""

import typing

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import backend, config
from cvzoo.core.serializers import dictionary
from cvzoo.datasets.coco.coco_label_names import coco_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.common import imagenet_presets
from cvzoo.models.detection import (
    box_coding,
    detector,
    torchvision_anchors,
    torchvision_fpn_names,
    torchvision_resnet_fpn,
)
from cvzoo.models.detection.retinanet import heads, retinanet_fpn
from cvzoo.models.weights import pretrained

RETINANET_PRESETS = {'visualize': {'score_thresh': 0.5, 'nms_thresh': 0.5},
                     'evaluate': {'score_thresh': 0.05, 'nms_thresh': 0.5}}
PRETRAINED_BN_EPS = torchvision_resnet_fpn.PRETRAINED_BN_EPS


@zoo.register('retinanet_resnet50_fpn', task='detection')
class RetinaNetResNet50FPN(L.Chain, torchvision_resnet_fpn.TorchvisionResNetFPNDetector):
    """RetinaNet on ResNet-50 FPN; see the module docstring.

    Weights keys: ``'coco'``, torchvision's ``RetinaNet_ResNet50_FPN_Weights.COCO_V1``
    (COCO 2017 train; box AP 36.4 on val2017).

    Args:
        n_fg_class (int or None): classes to detect; None takes the weights' (80 without
            weights). A number other than the weights' re-makes ``head/conf``.
        pretrained_model (str or None): ``'coco'``, a local file (torchvision .pth or
            cvzoo .npz) or None for random weights.
        min_size, max_size (int): the resize rule (800 and 1333).
        trainable_backbone_layers (int): 0 ... 5, ResNet's stages left trainable from the
            top (torchvision's default 3: res3 ... res5); BN is always frozen.
        bn_eps (float or None): BN epsilon (> 0); None is ``PRETRAINED_BN_EPS`` (as 0,
            which torchvision sets when it loads its COCO weights) with pretrained
            weights and 1e-5 otherwise.
        source (str or None): names of a local file ('torchvision' or 'cvzoo').

    Attributes:
        label_names (tuple of str or None): class names of the loaded weights.

    Example (downloads the COCO weights)::

        bboxes, labels, scores = RetinaNetResNet50FPN(pretrained_model='coco').predict([img])
    """

    presets: typing.ClassVar[dict] = RETINANET_PRESETS
    max_detections = 300
    n_candidate = 1000  # per image and level, before NMS (torchvision's topk_candidates)
    pad_stride = 32
    label_names = None

    def __init__(self, n_fg_class=None, pretrained_model=None, *, min_size=800, max_size=1333,
                 trainable_backbone_layers=3, bn_eps=None, source=None):
        torchvision_resnet_fpn.check_positive_int('n_fg_class', n_fg_class, optional=True)
        if trainable_backbone_layers not in range(6):
            raise ValueError(f'trainable_backbone_layers: expected an int in 0 ... 5, got '
                             f'{trainable_backbone_layers!r}')
        entry, n_built = pretrained.settle_n_class(self, pretrained_model, n_fg_class, 80)
        super().__init__()
        with self.init_scope():
            self.extractor = retinanet_fpn.RetinaNetFPN(torchvision_resnet_fpn.make_resnet50_base(
                bool(pretrained_model), ('res3', 'res4', 'res5')))
            self.head = heads.RetinaNetHead(n_built)
        self.min_size, self.max_size = min_size, max_size
        self.use_preset('visualize')
        self.set_bn_eps((PRETRAINED_BN_EPS if pretrained_model else 1e-5) if bn_eps is None
                        else bn_eps)
        pretrained.load_pretrained(self, pretrained_model, n_fg_class, n_built, entry,
                                   self.reset_head, source=source)
        self.freeze(trainable_backbone_layers)

    @property
    def n_fg_class(self):
        """Classes the head scores."""
        return self.head.n_fg_class

    def reset_head(self, n_fg_class):
        """Re-make ``head/conf`` for ``n_fg_class`` classes (the label names are dropped)."""
        torchvision_resnet_fpn.check_positive_int('n_fg_class', n_fg_class)
        self.head.reset_classes(n_fg_class)
        self.head.to_device(self.device)
        self.label_names = None

    def training_recipe(self, **hyper):
        """How this detector trains: a ``TrainingRecipe``, see
        :func:`~cvzoo.models.detection.retinanet.training_recipe.retinanet_training_recipe`."""
        from cvzoo.models.detection.retinanet import training_recipe
        return training_recipe.retinanet_training_recipe(self, **hyper)

    def forward(self, x, sizes=None):
        """(B, 3, H, W) prepared batch, H and W multiples of 32 -> per level ``locs``
        (B, K_l, 4) and ``confs`` (B, K_l, n_fg_class) Variables and ``anchors``
        (K_l, 4) arrays in the batch's pixels. ``sizes`` (the images' sizes before
        padding) is not needed: the anchors cover the padded batch."""
        # NOTE: BN in test mode also while training: torchvision's FrozenBatchNorm2d.
        with config.using_config('train', False):
            hs = self.extractor(x)
        locs, confs = self.head(hs)
        level_anchors = torchvision_anchors.retinanet_anchors(self.xp, x.shape[2:],
                                                              [h.shape[2:] for h in hs])
        return locs, confs, level_anchors

    def decode(self, outputs, sizes):
        """Candidate detections of a batch, on the device: per image and level the
        ``n_candidate`` best (anchor, class) pairs above ``score_thresh``, decoded and
        clipped to each resized image of ``sizes`` ((H', W') per image).

        The number of pairs above the threshold of every image and level is read back
        in one transfer (one host sync on a GPU); the pairs are then gathered on the
        device in arrays of known sizes.

        Returns:
            tuple of (P,) arrays: image index, (P, 4) box, score, label.
        """
        locs, confs, level_anchors = outputs
        xp = self.xp
        limits = xp.asarray([[W, H, W, H] for H, W in sizes], numpy.float32)
        probs = [F.sigmoid(conf).array.reshape(len(conf), -1) for conf in confs]
        # NOTE: the running count of the pairs above the threshold, over the flattened
        # (image, pair) entries of a level; its values at the images' ends are read.
        running = [xp.cumsum((prob > self.score_thresh).reshape(-1)) for prob in probs]
        ends = detector.to_host(*[count[prob.shape[1] - 1::prob.shape[1]]
                                  for count, prob in zip(running, probs)])
        parts = []
        for loc, prob, count, end, anchor in zip(locs, probs, running, ends, level_anchors):
            image_index, index, score = self._best_pairs(prob, count, end)
            anchor_index, label = index // self.n_fg_class, index % self.n_fg_class
            bbox = box_coding.decode(anchor[anchor_index], loc.array[image_index, anchor_index],
                                     exp_clip=box_coding.EXP_CLIP)
            bbox = xp.clip(bbox, 0, limits[image_index])
            parts.append((image_index, bbox, score, label))
        return tuple(xp.concatenate(part) for part in zip(*parts))

    def _best_pairs(self, prob, running, end):
        """Image index, flat index (K * C) and score of each image's ``n_candidate`` best
        pairs above ``score_thresh``, by image and decreasing score (ties: lower index).

        Args:
            prob (array): (B, K * C) probabilities of a level.
            running (array): (B * K * C,) running count of the pairs above the threshold.
            end (numpy.ndarray): (B,) its values at each image's last pair, on the host.
        """
        xp = self.xp
        n_passed = numpy.diff(end, prepend=0)
        # NOTE: the k-th pair above the threshold is where the running count reaches k
        # (nonzero, with the same result, would read its size back from the device).
        position = xp.searchsorted(running, xp.arange(1, int(end[-1]) + 1), side='left')
        image_index, index = position // prob.shape[1], position % prob.shape[1]
        score = prob.reshape(-1)[position]
        order = xp.lexsort(xp.stack((-score, image_index)))
        # the first min(n_passed, n_candidate) of each image's run in ``order``
        n_kept = numpy.minimum(n_passed, self.n_candidate)
        skipped = numpy.cumsum(n_passed - n_kept) - (n_passed - n_kept)
        kept = numpy.arange(n_kept.sum()) + numpy.repeat(skipped, n_kept)
        kept = order[backend.on_device_of(kept, order)]
        return image_index[kept], index[kept], score[kept]

    def suppress(self, image_index, bbox, score, label, n_image):
        """Per-image, per-class NMS and the ``max_detections`` best of each image.

        Returns:
            tuple of three lists (one entry per image) of NumPy arrays: (R, 4) float32
            boxes, (R,) int32 labels, (R,) float32 scores by decreasing score.
        """
        return detector.per_image_detections(image_index, bbox, score, label, n_image,
                                             self.n_fg_class, self.nms_thresh,
                                             self.max_detections)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook: torchvision names (``'torchvision'``/``'torch'``)
        or cvzoo's; a 91-way torchvision class layer is cut to the 80 COCO classes.

        Raises:
            ValueError: another source.
            cvzoo.errors.WeightLoadError: file keys with no counterpart (all named).
        """
        if source in ('torchvision', 'torch'):
            expected = set(dictionary.state_arrays(self))
            return torchvision_fpn_names.convert_torchvision(raw, self.head.n_anchor, source,
                                                             expected)
        if source == 'cvzoo':
            return {key.removeprefix('/'): value for key, value in raw.items()}
        raise ValueError(f"source: expected 'torchvision', 'torch' or 'cvzoo' for RetinaNet "
                         f'weights, got {source!r}')


RetinaNetResNet50FPN.weights = {
    'coco': zoo.Weights(
        url='https://download.pytorch.org/models/retinanet_resnet50_fpn_coco-eeacb38b.pth',
        sha256='eeacb38b', source_format='torch_pth', n_class=80,
        label_names=tuple(coco_bbox_label_names),
        preset=zoo.Preset(
            size=800, mean=imagenet_presets.IMAGENET_MEAN, std=imagenet_presets.IMAGENET_STD,
            interpolation='bilinear', resize_backend='cvzoo'),
        reported=zoo.Score('map_coco', 0.364, 'coco_val2017',
                           'torchvision docs, RetinaNet_ResNet50_FPN_Weights.COCO_V1 '
                           '(box_map 36.4, COCO val2017)'),
        notes="torchvision's v1 RetinaNet (P6 from P5, FrozenBatchNorm eps 0). Its 91-way "
              'head (COCO category ids) is cut to the 80 real classes; torch resizes '
              "with interpolate (bilinear, no antialias), which cvzoo's resize_images "
              'reproduces; min size 800, max size 1333, padding to multiples of 32.',
        convert_from='torchvision', box_convention='continuous', license='BSD-3-Clause'),
}
