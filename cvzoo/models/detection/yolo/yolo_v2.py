"""YOLOv2 and YOLOv2-tiny (Redmon and Farhadi, "YOLO9000: Better, Faster, Stronger", CVPR 2017).

Both are built from the sections of pjreddie's ``yolov2-voc.cfg`` and
``yolov2-tiny-voc.cfg`` (:mod:`~cvzoo.models.detection.yolo.yolo_sections`): 416x416
input, a 13x13 ``[region]`` head with 5 anchors, softmax class probabilities times a
sigmoid objectness. predict(), weights sources and their preprocessing are those of
:class:`~cvzoo.models.detection.yolo.yolo_base.YOLOBase`.
"""

from cvzoo.datasets.voc.voc_label_names import voc_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.detection.darknet import darknet_detector
from cvzoo.models.detection.yolo import yolo_base, yolo_sections

_CHAINERCV_URL = 'https://chainercv-models.preferred.jp/'
_DARKNET_URL = 'https://pjreddie.com/media/files/'
_CFG_URL = 'https://github.com/pjreddie/darknet/blob/master/cfg/'
_LICENSE = 'YOLO license (Darknet, public domain); ChainerCV conversion under MIT'
_CHAINERCV_SCORE_SOURCE = 'ChainerCV examples/yolo/README.md (VOC2007 test, 11-point metric)'


def _chainercv_notes(darknet_measured):
    return (f'pjreddie\'s Darknet weights converted by ChainerCV (examples/yolo/darknet2npz.py; '
            f'box channels y-first there, swapped back by cvzoo). ChainerCV measured '
            f'{darknet_measured} with Darknet itself. Preprocessing is ChainerCV\'s resize_contain '
            '(no upscaling, grey 0.5) with an OpenCV-style bilinear resize in numpy.')


def _darknet_notes(cfg_name, darknet_measured):
    return (f'The network is built from sections equal to {_CFG_URL}{cfg_name} (embedded, '
            'not fetched). Darknet\'s letterbox and box correction are reproduced, and its '
            'sqrt(var) + 1e-6 batch normalization is folded into avg_var. The reported score '
            f'is the authors\'; ChainerCV measured {darknet_measured} with Darknet and these '
            'weights (examples/yolo/README.md).')


def _voc_entries(chainercv_file, chainercv_map, darknet_file, darknet_map, *, cfg_name,
                 darknet_source, darknet_measured):
    voc = tuple(voc_bbox_label_names)
    return {
        'voc0712': zoo.Weights(
            url=_CHAINERCV_URL + chainercv_file, sha256=zoo.UNPUBLISHED,
            source_format='chainercv_npz', n_class=20, label_names=voc,
            preset=yolo_base.preset((416, 416), 'cv2'),
            reported=zoo.Score('map_voc07', chainercv_map, 'voc2007_test',
                               _CHAINERCV_SCORE_SOURCE),
            license=_LICENSE, notes=_chainercv_notes(darknet_measured),
            convert_from='chainercv', box_convention='inclusive'),
        'voc0712_darknet': zoo.Weights(
            url=_DARKNET_URL + darknet_file, sha256=zoo.UNPUBLISHED, source_format='darknet',
            n_class=20, label_names=voc, preset=yolo_base.preset((416, 416), 'darknet'),
            reported=zoo.Score('map_voc07', darknet_map, 'voc2007_test', darknet_source),
            license=_LICENSE, notes=_darknet_notes(cfg_name, darknet_measured),
            convert_from='darknet', box_convention='inclusive'),
    }


@zoo.register('yolov2', task='detection')
class YOLOv2(yolo_base.YOLOBase, darknet_detector.DarknetDetector):
    """YOLOv2 at 416x416: Darknet-19, a reorg passthrough from the 26x26 map, a region head.

    Weights keys: ``'voc0712'`` (ChainerCV's conversion, VOC 2007+2012 trainval, reported
    VOC2007 test mAP 75.8) and ``'voc0712_darknet'`` (pjreddie's ``yolov2-voc.weights``,
    the authors report 76.8).

    Args:
        n_fg_class (int or None): classes to detect; differing from the weights'
            re-makes the head convolution after loading.
        pretrained_model (str or None): a weights key, a local file (Darknet
            ``.weights``, ChainerCV or cvzoo ``.npz``) or None for random weights.

    >>> model = YOLOv2(n_fg_class=3)
    >>> model.network.heads[0]['anchors'].shape
    (5, 2)
    """

    def __init__(self, n_fg_class=None, pretrained_model=None):
        yolo_base.init_yolo(self, n_fg_class, pretrained_model)

    @staticmethod
    def make_sections(n_class, insize, key=None):
        """The cfg sections for ``n_class`` classes at ``insize``."""
        return yolo_sections.yolov2_sections(n_class, insize)

    @staticmethod
    def chainercv_links():
        """ChainerCV's link of each convolution, in cfg order."""
        return [f'extractor/{i}' for i in range(22)] + ['subnet']


@zoo.register('yolov2_tiny', task='detection')
class YOLOv2Tiny(yolo_base.YOLOBase, darknet_detector.DarknetDetector):
    """YOLOv2-tiny ("Tiny YOLO") at 416x416: nine convolutions and a region head.

    Weights keys: ``'voc0712'`` (ChainerCV's conversion, reported VOC2007 test mAP 53.5)
    and ``'voc0712_darknet'`` (pjreddie's ``yolov2-tiny-voc.weights``, 57.1 on the
    authors' page). Arguments as :class:`YOLOv2`.

    >>> model = YOLOv2Tiny(n_fg_class=3)
    >>> len(model.network.convolutions())
    9
    """

    def __init__(self, n_fg_class=None, pretrained_model=None):
        yolo_base.init_yolo(self, n_fg_class, pretrained_model)

    @staticmethod
    def make_sections(n_class, insize, key=None):
        """The cfg sections for ``n_class`` classes at ``insize``."""
        return yolo_sections.yolov2_tiny_sections(n_class, insize)

    @staticmethod
    def chainercv_links():
        """ChainerCV's link of each convolution, in cfg order."""
        return [f'extractor/{i}' for i in range(8)] + ['subnet']


YOLOv2.weights = _voc_entries(
    'yolo_v2_voc0712_converted_2018_05_03.npz', 0.758, 'yolov2-voc.weights', 0.768,
    cfg_name='yolov2-voc.cfg',
    darknet_source='Redmon and Farhadi, YOLO9000, CVPR 2017, table 3 (YOLOv2 416x416)',
    darknet_measured='75.8%')
YOLOv2Tiny.weights = _voc_entries(
    'yolo_v2_tiny_voc0712_converted_2018_10_19.npz', 0.535, 'yolov2-tiny-voc.weights', 0.571,
    cfg_name='yolov2-tiny-voc.cfg',
    darknet_source='https://pjreddie.com/darknet/yolov2/ (Tiny YOLO, VOC 2007+2012, 2007 test)',
    darknet_measured='54.0%')
