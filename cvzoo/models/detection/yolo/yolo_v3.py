"""YOLOv3 (Redmon and Farhadi, "YOLOv3: An Incremental Improvement", arXiv 1804.02767, 2018).

Built from the sections of pjreddie's ``yolov3-voc.cfg`` / ``yolov3.cfg``
(:mod:`~cvzoo.models.detection.yolo.yolo_sections`): Darknet-53 and three ``[yolo]``
heads on the 13x13, 26x26 and 52x52 maps of a 416x416 input, 3 anchors each, sigmoid
objectness times independent class sigmoids. predict(), the weights sources and their
preprocessing are those of :class:`~cvzoo.models.detection.yolo.yolo_base.YOLOBase`.
"""

from cvzoo.datasets.coco.coco_label_names import coco_bbox_label_names
from cvzoo.datasets.voc.voc_label_names import voc_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.detection.darknet import darknet_detector
from cvzoo.models.detection.yolo import yolo_base, yolo_sections

_DARKNET53_BLOCKS = (1, 2, 8, 8, 4)


@zoo.register('yolov3', task='detection')
class YOLOv3(yolo_base.YOLOBase, darknet_detector.DarknetDetector):
    """YOLOv3 (Darknet-53, three yolo heads); 416x416 by default.

    Weights keys: ``'voc0712'`` (ChainerCV's conversion of a Darknet model trained on VOC
    2007+2012 trainval, reported VOC2007 test mAP 80.2) and ``'coco'`` (pjreddie's
    ``yolov3.weights``, 80 classes, run at 608x608 as its cfg says; the paper reports
    COCO AP50 57.9 there).

    Args:
        n_fg_class (int or None): classes to detect; differing from the weights'
            re-makes the three head convolutions after loading.
        pretrained_model (str or None): a weights key, a local file (Darknet
            ``.weights``, ChainerCV or cvzoo ``.npz``) or None for random weights.

    >>> model = YOLOv3(n_fg_class=3)
    >>> [len(head['anchors']) for head in model.network.heads]
    [3, 3, 3]
    """

    def __init__(self, n_fg_class=None, pretrained_model=None):
        yolo_base.init_yolo(self, n_fg_class, pretrained_model)

    @staticmethod
    def make_sections(n_class, insize, key=None):
        """The cfg sections for ``n_class`` classes at ``insize``."""
        return yolo_sections.yolov3_sections(n_class, insize)

    @staticmethod
    def chainercv_links():
        """ChainerCV's link of each convolution, in cfg order.

        ChainerCV's Darknet53Extractor is a flat list: a convolution, then per stage a
        stride-2 convolution and its ResidualBlocks (two convolutions each); then five
        convolutions per head, with the 1x1 before each upsampling in between. The
        3x3 convolution and the output convolution of each head are ``subnet/<i>/0``
        and ``subnet/<i>/1``.
        """
        links, link = ['extractor/0'], 1
        for n_block in _DARKNET53_BLOCKS:
            links.append(f'extractor/{link}')
            links += [f'extractor/{link + 1 + i}/{j}' for i in range(n_block) for j in (0, 1)]
            link += 1 + n_block
        for head in range(3):
            n_conv = 5 if head == 0 else 6
            links += [f'extractor/{link + i}' for i in range(n_conv)]
            links += [f'subnet/{head}/0', f'subnet/{head}/1']
            link += n_conv
        return links


YOLOv3.weights = {
    'voc0712': zoo.Weights(
        url='https://chainercv-models.preferred.jp/yolo_v3_voc0712_converted_2018_05_01.npz',
        sha256=zoo.UNPUBLISHED, source_format='chainercv_npz', n_class=20,
        label_names=tuple(voc_bbox_label_names),
        preset=yolo_base.preset((416, 416), 'cv2'),
        reported=zoo.Score('map_voc07', 0.802, 'voc2007_test',
                           'ChainerCV examples/yolo/README.md (VOC2007 test, 11-point metric)'),
        license='YOLO license (Darknet, public domain); ChainerCV conversion under MIT',
        notes=('A Darknet YOLOv3 trained on VOC 2007+2012, converted by ChainerCV (box '
               'channels y-first there, swapped back by cvzoo); ChainerCV reports 80.2 for '
               'Darknet too. Preprocessing is ChainerCV\'s resize_contain (no upscaling, '
               'grey 0.5) with an OpenCV-style bilinear resize in numpy.'),
        convert_from='chainercv', box_convention='inclusive'),
    'coco': zoo.Weights(
        url='https://pjreddie.com/media/files/yolov3.weights', sha256=zoo.UNPUBLISHED,
        source_format='darknet', n_class=80, label_names=tuple(coco_bbox_label_names),
        preset=yolo_base.preset((608, 608), 'darknet'),
        reported=zoo.Score('map50_coco', 0.579, 'coco_test_dev',
                           'Redmon and Farhadi, YOLOv3, arXiv 1804.02767, table 3 (YOLOv3 '
                           '608x608, AP50 on COCO test-dev)'),
        license='YOLO license (Darknet, public domain)',
        notes=('The network is built from sections equal to pjreddie/darknet cfg/yolov3.cfg '
               '(embedded, not fetched; 608x608). Darknet\'s letterbox and box correction '
               'are reproduced, and its sqrt(var) + 1e-6 batch normalization is folded into '
               'avg_var.'),
        convert_from='darknet', box_convention='continuous'),
}
