"""Yolo-Fastest and Yolo-Fastest-XL: the registered Darknet detectors with their weights.

dog-qiuqiu, Yolo-Fastest (https://github.com/dog-qiuqiu/Yolo-Fastest), 2020: an
EfficientNet-lite style backbone of depthwise-separable residual blocks with a
two-scale YOLOv3 head, at 320x320. Each zoo entry holds the Darknet ``.weights`` and
the ``.cfg`` that describes the network; the model is built from that cfg.
"""

from cvzoo.datasets.coco.coco_label_names import coco_bbox_label_names
from cvzoo.datasets.voc.voc_label_names import voc_bbox_label_names
from cvzoo.models import zoo
from cvzoo.models.detection.darknet import darknet_detector
from cvzoo.models.weights import pretrained, trained_model, weight_files

_REPO = 'https://github.com/dog-qiuqiu/Yolo-Fastest/raw/'
_V1_COMMIT = '8d018808f065fafbcd80e8c7bc6721b63253a42d'
_V11_COMMIT = '96a2900d163196c396e73f3fdab04ca4dd9a2f70'
DARKNET_PRESET = zoo.Preset(size=(320, 320), mean=(0.0, 0.0, 0.0),
                            std=(255.0, 255.0, 255.0), interpolation='bilinear',
                            resize_backend='darknet')
_LICENSE = 'YOLO license (Darknet), see the Yolo-Fastest repository'
_NOTES = ('Darknet preprocessing reproduced (corner-aligned bilinear resize, no '
          'letterbox). Darknet\'s mAP tool resizes with OpenCV instead, and suppresses at '
          'IoU > 0.45 where cvzoo suppresses at >= 0.45.')


def _entry(path, file_stem, sha256, cfg_sha256, n_class, score, commit=_V1_COMMIT):
    """A Weights entry for ``<path>.weights`` with ``<path>.cfg`` beside it."""
    label_names = voc_bbox_label_names if n_class == 20 else coco_bbox_label_names
    return zoo.Weights(
        url=f'{_REPO}{commit}/{path}.weights', sha256=sha256, source_format='darknet',
        n_class=n_class, label_names=tuple(label_names), preset=DARKNET_PRESET,
        reported=score, license=_LICENSE, notes=_NOTES, file_name=f'{file_stem}.weights',
        files=(zoo.WeightFile(f'{_REPO}{commit}/{path}.cfg', cfg_sha256,
                              f'{file_stem}.cfg'),),
        box_convention='inclusive' if n_class == 20 else 'continuous')


def _voc_score(value):
    return zoo.Score('map_voc07', value, 'voc2007_test',
                     'Yolo-Fastest README (github.com/dog-qiuqiu/Yolo-Fastest), '
                     'Darknet detector map at 320x320')


def _init_from_zoo(model, n_fg_class, pretrained_model, insize):
    """Build ``model`` from the cfg of its zoo entry ('voc' for a file or None), load, and
    re-make heads; a trained file (``save_trained_model``) gets its own heads first."""
    entry = pretrained.weights_entry(model, pretrained_model) or model.weights['voc']
    cfg_path = weight_files.fetch_file(entry.files[0])  # shipped, cached or downloaded
    darknet_detector.DarknetDetector.__init__(model, cfg_path)
    trained = trained_model.read_model_config(pretrained_model) is not None
    if trained:
        model._set_n_fg_class(n_fg_class)  # the file holds heads for n_fg_class classes
    # NOTE: a trained file brings its own label names and box convention, not the entry's
    pretrained.load_pretrained(model, pretrained_model, n_fg_class, model.n_fg_class,
                               None if trained else entry, model._set_n_fg_class)
    if insize is not None:
        model.insize = _square_size(insize)


def _square_size(insize):
    """(H, W) of an ``insize`` argument: an int side or an (H, W) pair, each > 0."""
    size = (insize, insize) if isinstance(insize, int) else tuple(insize)
    if len(size) != 2 or not all(isinstance(s, int) and s > 0 for s in size):
        raise ValueError(f'insize: expected an int or (H, W) of ints > 0, got {insize!r}')
    return size


@zoo.register('yolo_fastest', task='detection')
class YoloFastest(darknet_detector.DarknetDetector):
    """Yolo-Fastest (v1.0 VOC, v1.1 COCO), 320x320, built from its Darknet cfg.

    Weights keys: ``'voc'`` (PASCAL VOC 07+12, 20 classes, reported VOC2007 test mAP
    61.02) and ``'coco'`` (Yolo-Fastest 1.1, 80 classes, reported COCO mAP@0.5 24.40).
    Without ``pretrained_model`` the network is the 'voc' cfg with random weights (the
    cfg is fetched, or found in ``$CVZOO_WEIGHTS_MIRROR``).

    Args:
        n_fg_class (int or None): a number of classes other than the weights' re-makes
            the two head convolutions.
        pretrained_model (str or None): a weights key, a local ``.weights`` file (for
            the 'voc' architecture) or a ``model_final.npz`` trained from one
            (``scripts/train_yolo.py``; its heads have ``n_fg_class`` classes).
        insize (int, tuple of int or None): the input side, or (H, W), predict() resizes
            to; None keeps the cfg's (320x320). Smaller is faster, for objects that fill
            a good part of the picture.

    Example (downloads the weights)::

        model = YoloFastest(pretrained_model='voc')
    """

    def __init__(self, n_fg_class=None, pretrained_model=None, insize=None):
        _init_from_zoo(self, n_fg_class, pretrained_model, insize)


YoloFastest.weights = {
    'voc': _entry('Yolo-Fastest/VOC/yolo-fastest', 'yolo-fastest-voc',
                  'f507b1e9f016e368299f72fe757572e6b4d14fc200d28d380c955c3d3137a6ff',
                  'd1fa471a67354400564c6210940576c1a1da144ab343ce1fc595341104429605',
                  20, _voc_score(0.6102)),
    'coco': _entry('ModelZoo/yolo-fastest-1.1_coco/yolo-fastest-1.1', 'yolo-fastest-1.1-coco',
                   '1c445c42bbd6df63edea2cc69f99667b5650d663ca11e34b116240740cd42890',
                   'f6df5775c1e862998cf69046eba9265be3ae84dfe8b2caab7529823f0795bf70',
                   80, zoo.Score('map50_coco', 0.2440, 'coco_val2017',
                                 'Yolo-Fastest README (github.com/dog-qiuqiu/Yolo-Fastest), '
                                 'yolo-fastest-1.1 at 320x320'),
                   commit=_V11_COMMIT),
}


@zoo.register('yolo_fastest_xl', task='detection')
class YoloFastestXL(darknet_detector.DarknetDetector):
    """Yolo-Fastest-XL (VOC, 20 classes), 320x320, built from its Darknet cfg.

    Weights key: ``'voc'`` (reported VOC2007 test mAP 69.43). Arguments as
    :class:`YoloFastest`.

    Example (downloads the weights)::

        model = YoloFastestXL(pretrained_model='voc')
    """

    def __init__(self, n_fg_class=None, pretrained_model=None, insize=None):
        _init_from_zoo(self, n_fg_class, pretrained_model, insize)


YoloFastestXL.weights = {
    'voc': _entry('Yolo-Fastest/VOC/yolo-fastest-xl', 'yolo-fastest-xl-voc',
                  '0c40a803fd9f6032a21aa8954c9980992da6caf1a1384a5917531a1d9c75cc46',
                  'dd8b521a3d2af8e200a20f6bb963cfb1284db311323fd6af7fcbb4440a145a58',
                  20, _voc_score(0.6943)),
}
