"""What bench_models.py measures inside its child process, one function per task and part.

``WORKLOADS[task]['predict'](name, runs)`` and ``WORKLOADS[task]['train'](name)`` build
the registered model ``name``, measure it and return a dict of plain numbers and strings
(the child prints it as one JSON line). A train workload raises :class:`NoTrainChain`
when the bench knows no train chain for the model.

Models run with random weights, except a detector or segmenter whose weight files are
all in a local ``$CVZOO_WEIGHTS_MIRROR`` folder (the key 'voc' first): real weights give
post-processing realistic work (random weights give many low-score boxes or none).
"""

import os
import pathlib
import statistics
import time

import numpy

from cvzoo.core import config
from cvzoo.core.optimizers import MomentumSGD
from cvzoo.models import zoo
from cvzoo.utils import image as image_utils
from cvzoo.utils import paths

SHARED_DATA = pathlib.Path(__file__).resolve().parents[2] / 'shared' / 'data'
# task -> (image file, its (H, W)); a fixed random image of that size when the file is absent
IMAGES = {'classification': (None, (224, 224)),
          'detection': (SHARED_DATA / 'images' / 'voc2007_test' / '000456.jpg', (375, 500)),
          'semantic_segmentation': (SHARED_DATA / 'camvid' / 'test' / '0001TP_008550.png',
                                    (360, 480))}
# constructor arguments of random-weight models
RANDOM_WEIGHT_KWARGS = {'classification': {'n_class': 1000},
                        'detection': {'n_fg_class': 20},
                        'semantic_segmentation': {'n_class': 21}}
CLASSIFICATION_BATCH = 8
# ground truth of the training iteration, in the 500x375 image's pixels
GT_BBOX = numpy.array([[48, 40, 252, 300], [200, 96, 480, 360], [12, 200, 124, 370]],
                      numpy.float32)
GT_LABEL = numpy.array([0, 1, 2], numpy.int32)
TRAIN_LR = 1e-4


class NoTrainChain(Exception):
    """The bench knows no train chain for this model; the message says why."""


def task_image(task):
    """One (3, H, W) float32 RGB image of the task, and where it came from (its size W x H)."""
    path, size = IMAGES[task]
    if path is not None and path.is_file():
        img = image_utils.read_image(path)
        return img, f'{path.parent.name}/{path.name} ({img.shape[2]}x{img.shape[1]})'
    img = numpy.random.default_rng(0).uniform(0, 255, (3, *size)).astype(numpy.float32)
    absent = f'; {path.name} is absent' if path is not None else ''
    return img, f'a fixed random {size[1]}x{size[0]} image{absent}'


def mirrored_key(name):
    """The weights key of ``name`` whose files are all in the local weights mirror folder
    ('voc' preferred, then by name), or None."""
    mirror = paths.weights_mirror()
    if not mirror or not os.path.isdir(mirror):
        return None
    entries = getattr(zoo.get_model_class(name), 'weights', None) or {}
    keys = [key for key, entry in entries.items()
            if all(os.path.isfile(os.path.join(mirror, f.file_name)) for f in entry.all_files)]
    return min(keys, key=lambda key: (key != 'voc', key), default=None)


def build_model(name, task):
    """``(model, weights)``: the model with mirrored weights (see the module docstring) or
    random weights, and a description of which."""
    key = None if task == 'classification' else mirrored_key(name)
    if key is not None:
        return zoo.get_model(name, pretrained_model=key), f'{key} (real)'
    kwargs = RANDOM_WEIGHT_KWARGS[task]
    classes = next(iter(kwargs.values()))
    return zoo.get_model(name, pretrained_model=None, **kwargs), f'random, {classes} classes'


class CallClock:
    """Adds up the time of the calls of ``owner.<name>`` (a model's method, on the
    instance only, or a module's function, in this process), by replacing the attribute
    with a timed wrapper; the post-processing shares of the bench's tables."""

    def __init__(self, owner, name):
        self.seconds, self.calls = 0.0, 0
        function = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        setattr(owner, name, timed)

    def reset(self):
        self.seconds, self.calls = 0.0, 0


def median_seconds(function, runs):
    """Median wall time of ``runs`` calls of ``function()``, after one warm-up call."""
    function()
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def n_param(model):
    """The number of parameter values of ``model``."""
    return int(sum(p.size for p in model.params()))


def time_train_iteration(chain, args):
    """Seconds of one MomentumSGD update of ``chain`` (forward, loss, backward, update) on
    ``args``, after one warm-up update; and the loss of the timed one."""
    optimizer = MomentumSGD(lr=TRAIN_LR, momentum=0.9).setup(chain)
    losses = []

    def loss_function(*batch):
        loss = chain(*batch)
        losses.append(float(loss.array))
        return loss

    with config.using_config('train', True):
        optimizer.update(loss_function, *args)
        start = time.perf_counter()
        optimizer.update(loss_function, *args)
        seconds = time.perf_counter() - start
    return seconds, losses[-1]


# --- classification ---------------------------------------------------------------------

def classification_predict(name, runs):
    """predict() latency at batch 1 and images/s at batch 8 on random 224x224 images."""
    model, weights = build_model(name, 'classification')
    rng = numpy.random.default_rng(0)
    imgs = [rng.uniform(0, 255, (3, *IMAGES['classification'][1])).astype(numpy.float32)
            for _ in range(CLASSIFICATION_BATCH)]
    latency = median_seconds(lambda: model.predict(imgs[:1]), runs)
    batch = median_seconds(lambda: model.predict(imgs), runs)
    return {'weights': weights, 'n_param': n_param(model), 'latency_ms': 1000 * latency,
            'images_per_s': CLASSIFICATION_BATCH / batch}


# --- detection ------------------------------------------------------------------------

class PostProcessingClock:
    """Adds up the time of a detector's ``decode()`` and ``suppress()`` calls.

    Wraps the two methods on the instance (the class is untouched), so that the time of
    the post-processing inside ``predict()`` can be read after a call.
    """

    def __init__(self, model):
        self.seconds = 0.0
        self.calls = 0
        for method in ('decode', 'suppress'):
            setattr(model, method, self._timed(getattr(model, method)))

    def _timed(self, method):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1
        return timed

    def reset(self):
        self.seconds, self.calls = 0.0, 0


def detection_predict(name, runs):
    """predict() of the task image at batch 1 per preset ('visualize', 'evaluate'): the
    median seconds, the median decode+NMS seconds inside it and the detections."""
    model, weights = build_model(name, 'detection')
    img, image = task_image('detection')
    clock = PostProcessingClock(model)
    result = {'weights': weights, 'image': image, 'n_param': n_param(model),
              'input': 'x'.join(map(str, model.prepare(img).shape[1:]))}
    model.use_preset('evaluate')
    model.predict([img])  # warm-up
    for preset in ('visualize', 'evaluate'):
        model.use_preset(preset)
        totals, posts = [], []
        for _ in range(runs):
            clock.reset()
            start = time.perf_counter()
            bboxes, _, _ = model.predict([img])
            totals.append(time.perf_counter() - start)
            posts.append(clock.seconds if clock.calls else None)
        result[preset] = {'seconds': statistics.median(totals), 'detections': len(bboxes[0]),
                          'post_seconds': None if None in posts else statistics.median(posts)}
    return result


def _detection_train_batch(model, img):
    """``(chain, args)`` of one training iteration on ``img`` with the GT boxes.

    Raises:
        NoTrainChain: the model is of no family below, or its chain refuses it.
    """
    from cvzoo.models.detection.darknet import darknet_detector
    from cvzoo.models.detection.darknet import train_chain as yolo_chain
    from cvzoo.models.detection.faster_rcnn import faster_rcnn
    from cvzoo.models.detection.faster_rcnn import torchvision_fpn, torchvision_train_chain
    from cvzoo.models.detection.faster_rcnn import train_chain as faster_rcnn_chain
    from cvzoo.models.detection.retinanet import retinanet
    from cvzoo.models.detection.retinanet import train_chain as retinanet_chain
    from cvzoo.models.detection.ssd import ssd
    from cvzoo.models.detection.ssd import train_chain as ssd_chain

    x = model.prepare(img)
    ratio = numpy.asarray(x.shape[1:], numpy.float32) / numpy.asarray(img.shape[1:])
    bboxes = [GT_BBOX * ratio[[1, 0, 1, 0]]]
    labels = [GT_LABEL]
    if isinstance(model, ssd.SSD):
        # NOTE: target encoding is data loading (SSDTransform), outside the timed update
        loc, label = model.coder.encode(bboxes[0], labels[0])
        return ssd_chain.SSDTrainChain(model), (x[None], loc[None], label[None])
    if isinstance(model, darknet_detector.DarknetDetector):  # [yolo] and [region] heads
        return yolo_chain.YOLOTrainChain(model), (x[None], bboxes, labels)
    if isinstance(model, torchvision_fpn.FasterRCNNResNet50FPN):
        return (torchvision_train_chain.FasterRCNNResNet50FPNTrainChain(model),
                (model.pad_batch([x]), bboxes, labels, [x.shape[1:]]))
    if isinstance(model, faster_rcnn.FasterRCNN):
        batch = model.pad_batch([x])
        if model.pad_stride:
            return (faster_rcnn_chain.FasterRCNNFPNTrainChain(model),
                    (batch, bboxes, labels, [x.shape[1:]]))
        return (faster_rcnn_chain.FasterRCNNTrainChain(model),
                (batch, bboxes, labels, [x.shape[2] / img.shape[2]]))
    if isinstance(model, retinanet.RetinaNetResNet50FPN):
        return retinanet_chain.RetinaNetTrainChain(model), (model.pad_batch([x]), bboxes, labels)
    raise NoTrainChain(f'{type(model).__name__}: the bench knows no train chain for it')


def detection_train(name):
    """One training iteration at batch 1 (the task image, 3 GT boxes)."""
    model, _ = build_model(name, 'detection')
    img, _ = task_image('detection')
    chain, args = _detection_train_batch(model, img)
    seconds, loss = time_train_iteration(chain, args)
    return {'train_seconds': seconds, 'train_chain': type(chain).__name__, 'loss': loss}


# --- semantic segmentation ----------------------------------------------------------------

def _segmentation_input(model, img):
    """The (3, H, W) network input of ``img`` as one training sample: the image resized to
    PSPNet's input size, else ``model.prepare(img)``."""
    from cvzoo.core import functions as F
    from cvzoo.models.segmentation.pspnet import pspnet

    if isinstance(model, pspnet.PSPNet):
        resized = F.resize_images(img[None], model.input_size, align_corners=False).array[0]
        return model._standardize(resized)
    return model.prepare(img)


def segmentation_predict(name, runs):
    """predict() of the task image at batch 1: median seconds."""
    model, weights = build_model(name, 'semantic_segmentation')
    img, image = task_image('semantic_segmentation')
    seconds = median_seconds(lambda: model.predict([img]), runs)
    return {'weights': weights, 'image': image, 'n_param': n_param(model),
            'input': 'x'.join(map(str, _segmentation_input(model, img).shape[1:])),
            'latency_ms': 1000 * seconds}


def segmentation_train(name):
    """One training iteration at batch 1: the network input of the task image against
    random labels."""
    from cvzoo.models.segmentation import segmentation_model, segmentation_train_chain
    from cvzoo.models.segmentation.pspnet import pspnet, pspnet_train_chain

    model, _ = build_model(name, 'semantic_segmentation')
    img, _ = task_image('semantic_segmentation')
    x = numpy.ascontiguousarray(_segmentation_input(model, img))
    label = numpy.random.default_rng(0).integers(0, model.n_class, (1, *x.shape[1:]),
                                                 dtype=numpy.int32)
    if isinstance(model, pspnet.PSPNet):
        chain = pspnet_train_chain.PSPNetTrainChain(model)
    elif isinstance(model, segmentation_model.SegmentationModel):
        chain = segmentation_train_chain.SegmentationTrainChain(model)
    else:
        raise NoTrainChain(f'{type(model).__name__}: the bench knows no train chain for it')
    seconds, loss = time_train_iteration(chain, (x[None], label))
    return {'train_seconds': seconds, 'train_chain': type(chain).__name__, 'loss': loss}


WORKLOADS = {'classification': {'predict': classification_predict, 'train': None},
             'detection': {'predict': detection_predict, 'train': detection_train},
             'semantic_segmentation': {'predict': segmentation_predict,
                                       'train': segmentation_train}}
