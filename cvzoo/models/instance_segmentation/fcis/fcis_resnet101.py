"""FCISResNet101: FCIS on ResNet-101 with ChainerCV's layer names and settings.

The extractor is ResNet-101 up to res5 at stride 16 (res5 dilated); Faster R-CNN's RPN
(512 channels, anchors of 16 pixels times the scales, ratios 0.5, 1, 2) proposes 300
RoIs on res4; the head pools 21 x 21 bins in 7 x 7 position groups from res5
(:class:`~cvzoo.models.instance_segmentation.fcis.fcis_head.FCISResNet101Head`).
"""

from cvzoo.core import initializers
from cvzoo.datasets.coco.coco_label_names import coco_instance_segmentation_label_names
from cvzoo.datasets.voc.voc_label_names import voc_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.detection.faster_rcnn import faster_rcnn, region_proposal_network
from cvzoo.models.instance_segmentation.fcis import fcis, fcis_head, resnet101_extractor
from cvzoo.models.weights import pretrained

# RGB mean of ChainerCV's FCIS
FCIS_MEAN = (123.15, 115.90, 103.06)
FEAT_STRIDE = 16
GROUP_SIZE = 7
_RPN_LOC_KEYS = ('rpn/loc/W', 'rpn/loc/b')
_AG_LOC_KEYS = ('head/ag_loc/W', 'head/ag_loc/b')
# What each weights key was trained with, as ChainerCV's examples/fcis (COCO: smaller
# anchors, and proposals and instances down to 2 pixels).
_PROPOSALS = {'nms_thresh': 0.7, 'n_train_pre_nms': 6000, 'n_train_post_nms': 300,
              'n_test_pre_nms': 6000, 'n_test_post_nms': 300, 'min_size': 16}
KEY_SETTINGS = {
    'sbd': {'anchor_scales': (8, 16, 32), 'proposal_creator_params': _PROPOSALS,
            'min_drop_size': 16},
    'coco': {'anchor_scales': (4, 8, 16, 32),
             'proposal_creator_params': {**_PROPOSALS, 'min_size': 2}, 'min_drop_size': 2},
}


@zoo.register('fcis_resnet101', task='instance_segmentation')
class FCISResNet101(fcis.FCIS):
    """FCIS on ResNet-101.

    Weights keys (trained by ChainerCV): ``'sbd'`` (SBD train; ChainerCV reports SBD val
    mask mAP 64.1 at IoU 0.5 and 51.2 at 0.7, 11-point VOC07 AP) and ``'coco'`` (COCO
    train + valminusminival 2014; mask mmAP 24.3).

    Args:
        n_fg_class (int or None): classes to segment; None takes the weights' (20 without
            weights). A different number re-makes ``head/cls_seg``.
        pretrained_model (str or None): a weights key, a local file (cvzoo or ChainerCV
            .npz) or None for random weights.
        min_size, max_size (int): the resize rule (600 and 1000).
        roi_size, group_size (int): bins and position groups per RoI side (21, 7).
        ratios (tuple of float): anchor height / width ratios.
        anchor_scales (tuple or None): anchor sides in units of 16 pixels; None takes
            the weights key's ((4, 8, 16, 32) for 'coco', else (8, 16, 32)).
        proposal_creator_params (dict or None): arguments of the RPN's ProposalCreator;
            None takes the key's (proposals down to 2 pixels for 'coco', else 16).
        min_drop_size (float or None): smallest candidate side kept in predict(); None
            takes the key's (2 for 'coco', as ChainerCV's 'coco_evaluate' preset, in both
            presets here; ChainerCV's 'visualize' keeps 16; else 16).
        iter2 (bool): pool a second time at the RoIs moved by the head's offsets.
        source (str or None): names of a local file: 'cvzoo' (default) or 'chainercv'
            (y-first offset layers; the names alone cannot tell them apart).

    Differences from ChainerCV: see :mod:`~cvzoo.models.instance_segmentation.fcis.fcis`.

    For example (the weights are downloaded)::

        model = FCISResNet101(pretrained_model='sbd')
    """

    def __init__(self, n_fg_class=None, pretrained_model=None, *, min_size=600,
                 max_size=1000, roi_size=21, group_size=GROUP_SIZE, ratios=(0.5, 1, 2),
                 anchor_scales=None, proposal_creator_params=None, min_drop_size=None,
                 iter2=True, source=None):
        entry, n_built = pretrained.settle_n_class(type(self), pretrained_model, n_fg_class, 20)
        settings = dict(KEY_SETTINGS.get(pretrained_model, KEY_SETTINGS['sbd']))
        given = {'anchor_scales': anchor_scales, 'min_drop_size': min_drop_size,
                 'proposal_creator_params': proposal_creator_params}
        settings.update({k: v for k, v in given.items() if v is not None})
        zero = initializers.Zero() if pretrained_model else None
        extractor = resnet101_extractor.ResNet101Extractor(initialW=zero)
        rpn = region_proposal_network.RegionProposalNetwork(
            1024, 512, ratios, settings['anchor_scales'], FEAT_STRIDE, initialW=zero,
            proposal_creator_params=settings['proposal_creator_params'])
        head = fcis_head.FCISResNet101Head(n_built + 1, roi_size, group_size, 1 / FEAT_STRIDE,
                                           iter2=iter2, initialW=zero)
        super().__init__(extractor, rpn, head, FCIS_MEAN, min_size=min_size,
                         max_size=max_size,
                         min_drop_size=settings['min_drop_size'])
        pretrained.load_pretrained(self, pretrained_model, n_fg_class, n_built, entry,
                                   self.reset_head, source=source)

    def convert_weights(self, raw, source):
        """The zoo's conversion hook (ChainerCV or cvzoo names, which are the same).

        From ChainerCV's files the offset layers ``rpn/loc`` and ``head/ag_loc`` are
        permuted from (dy, dx, dh, dw) to (dx, dy, dw, dh).

        Raises:
            ValueError: a source other than 'chainercv' or 'cvzoo'.
            cvzoo.errors.WeightLoadError: file keys the model does not have.
        """
        if source not in ('chainercv', 'cvzoo'):
            raise ValueError(f"source: expected 'chainercv' or 'cvzoo' for FCIS weights, "
                             f'got {source!r}')
        chainercv = source == 'chainercv'
        arrays = faster_rcnn.convert_chainercv(self, raw, _same_name,
                                               _RPN_LOC_KEYS if chainercv else ())
        if chainercv:
            for key in _AG_LOC_KEYS:
                if key in arrays:
                    arrays[key] = fcis_head.swap_ag_loc_channels(arrays[key],
                                                                 self.head.group_size)
        return arrays


def _same_name(key):
    return key


_CHAINERCV_URL = 'https://chainercv-models.preferred.jp/'
_PRESET = zoo.Preset(size=600, mean=FCIS_MEAN, resize_backend='cv2')
_NOTES = ('Trained by ChainerCV (examples/fcis) with y-first boxes; cvzoo permutes the '
          'offset layers rpn/loc and head/ag_loc to x-first. ChainerCV resizes the input '
          'with OpenCV, cvzoo with Pillow; masks are resized with OpenCV\'s bilinear rule.')


def _entry(file_name, n_class, label_names, reported):
    return zoo.Weights(
        url=_CHAINERCV_URL + file_name, sha256=zoo.UNPUBLISHED, source_format='chainercv_npz',
        n_class=n_class, label_names=tuple(label_names), preset=_PRESET, reported=reported,
        notes=_NOTES, convert_from='chainercv', license='MIT (ChainerCV)')


FCISResNet101.weights = {
    'sbd': _entry('fcis_resnet101_sbd_trained_2018_06_22.npz', 20, voc_bbox_label_names,
                  zoo.Score('map_voc07', 0.641, 'sbd_val',
                            'ChainerCV examples/fcis/README.md: SBD val, mask mAP at IoU '
                            '0.5, 11-point VOC07 AP; 51.2 at IoU 0.7')),
    'coco': _entry('fcis_resnet101_coco_trained_2019_01_30.npz', 80,
                   coco_instance_segmentation_label_names,
                   zoo.Score('mask_map_coco', 0.243, 'coco_val2017',
                             'ChainerCV examples/fcis/README.md: COCO minival2014 (the '
                             'val2017 images), mask mmAP')),
}
