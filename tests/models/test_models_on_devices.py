"""Every registered model on a second GPU: predict() and one training step on 'cuda:1'.

Each entry of ``list_models()`` is built with random weights and few classes, moved to
``'cuda:1'`` while ``'cuda:0'`` stays current, and

- predicts one small image, checked by the ``cvzoo.testing`` contract checks (NumPy
  results on the host);
- takes one training step through its task's train chain (classifiers: softmax cross
  entropy) and an SGD update, after which every parameter is still on ``'cuda:1'`` and
  the parameters with a gradient have changed.

A new registration is tested here without being listed; the models are built small by
``cvzoo.testing.small_models`` (the ``build_small_model`` fixture), where the inputs of
models that refuse the defaults are set. Run them with ``pytest --fake-cuda`` (the CuPy
stand-in's two GPUs) or on a real GPU: with one GPU, predict() and the training step run
on ``'cuda:0'`` (the ``gpu_pair`` fixture); the sync budgets need the stand-in.

The host-sync budgets of DESIGN.md are checked on the stand-in, which counts them: at
most 3 per training iteration besides reading the loss (ssd_tiny, on SSD300's code
path; Faster R-CNN VGG16; both Faster R-CNN FPN models, ChainerCV's and torchvision's;
RetinaNet; YOLOv3; SegNet; the second iteration is counted) and at most 6 per predicted
image. A failure lists the call sites.
"""

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import backend, optimizers
from cvzoo.core.training.convert import images_and_padded_boxes
from cvzoo.models import list_models
from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector
from cvzoo.models.detection.darknet.train_chain import YOLOTrainChain
from cvzoo.models.detection.faster_rcnn import torchvision_fpn, torchvision_train_chain
from cvzoo.models.detection.faster_rcnn import train_chain as faster_rcnn_train_chain
from cvzoo.models.detection.faster_rcnn.faster_rcnn import FasterRCNN
from cvzoo.models.detection.faster_rcnn.fpn.faster_rcnn_fpn_resnet import FasterRCNNFPNResNet
from cvzoo.models.detection.retinanet.retinanet import RetinaNetResNet50FPN
from cvzoo.models.detection.retinanet.train_chain import RetinaNetTrainChain
from cvzoo.models.detection.ssd.ssd import SSD
from cvzoo.models.detection.ssd.train_chain import SSDTrainChain
from cvzoo.models.instance_segmentation.fcis.fcis import FCIS
from cvzoo.models.instance_segmentation.fcis.fcis_train_chain import FCISTrainChain
from cvzoo.models.instance_segmentation.mask_rcnn.mask_rcnn_fpn_resnet import MaskRCNNFPNResNet
from cvzoo.models.instance_segmentation.mask_rcnn.mask_rcnn_train_chain import (
    MaskRCNNTrainChain,
    TorchvisionMaskRCNNTrainChain,
)
from cvzoo.models.instance_segmentation.mask_rcnn.torchvision_mask_rcnn import (
    MaskRCNNResNet50FPN,
)
from cvzoo.models.keypoint_detection.keypoint_rcnn import KeypointRCNNResNet50FPN
from cvzoo.models.keypoint_detection.keypoint_rcnn_train_chain import KeypointRCNNTrainChain
from cvzoo.models.segmentation.pspnet.pspnet import PSPNet
from cvzoo.models.segmentation.pspnet.pspnet_train_chain import PSPNetTrainChain
from cvzoo.models.segmentation.segmentation_train_chain import SegmentationTrainChain
from cvzoo.testing import model_checks, small_models
from cvzoo.testing.small_models import N_CLASS, SEGMENTATION_SIZE

IMAGE_SIZE = (40, 56)
# classifiers whose layers need a given input side for training (fully connected heads)
CLASSIFIER_INSIZE = {'vgg16': 224, 'small_cnn': 32}


def _image(seed=0):
    return numpy.random.RandomState(seed).uniform(0, 255, (3,) + IMAGE_SIZE).astype(
        numpy.float32)


def _on_cuda_1(name, build_small_model, two_gpus):
    task, model = build_small_model(name)
    model.to_device(two_gpus[1])
    two_gpus[0].use()
    return task, model


# --- training batches, one per kind of train chain ------------------------------------

def _detection_target(size):
    """One box inside an image of (H, W) ``size`` and its label."""
    H, W = size
    bbox = numpy.array([[0.2 * W, 0.15 * H, 0.7 * W, 0.8 * H]], numpy.float32)
    return bbox, numpy.array([1], numpy.int32)


def detection_train_batch(model, img):
    """(train chain, its arguments) of one image with one box, for any detector kind."""
    device = model.device
    if isinstance(model, SSD):
        x = model.prepare(img)[None]
        bbox, label = _detection_target((model.insize, model.insize))
        with device:
            gt_mb_loc, gt_mb_label = model.coder.encode(device.send(bbox), device.send(label))
            gt_mb_loc, gt_mb_label = gt_mb_loc[None], gt_mb_label[None]
        return SSDTrainChain(model), (device.send(x), gt_mb_loc, gt_mb_label)
    if isinstance(model, DarknetDetector):
        prepared = model.prepare(img)
        bbox, label = _detection_target(prepared.shape[1:])
        # boxes and labels padded to fixed shapes on the device, as the recipe's converter
        # gives them
        return YOLOTrainChain(model), images_and_padded_boxes([(prepared, bbox, label)],
                                                              device, n_box=3)
    if isinstance(model, (torchvision_fpn.FasterRCNNResNet50FPN, RetinaNetResNet50FPN)):
        prepared = model.prepare(img)
        x = model.pad_batch([prepared])
        bbox, label = _detection_target(prepared.shape[1:])
        arguments = (device.send(x), [device.send(bbox)], [device.send(label)])
        if isinstance(model, RetinaNetResNet50FPN):
            return RetinaNetTrainChain(model), arguments
        chain = torchvision_train_chain.FasterRCNNResNet50FPNTrainChain(model, roi_n_sample=64)
        return chain, arguments + ([prepared.shape[1:]],)
    if isinstance(model, FasterRCNN):
        prepared = model.prepare(img)
        x = model.pad_batch([prepared])
        bbox, label = _detection_target(prepared.shape[1:])
        arguments = (device.send(x), [device.send(bbox)], [device.send(label)])
        if isinstance(model, FasterRCNNFPNResNet):
            chain = faster_rcnn_train_chain.FasterRCNNFPNTrainChain(model)
            return chain, arguments + ([prepared.shape[1:]],)
        scales = model.input_scales([img.shape[1:]], [prepared])
        return faster_rcnn_train_chain.FasterRCNNTrainChain(model), arguments + (scales,)
    raise AssertionError(f'no train chain known for {type(model).__name__}; add it here')


def instance_segmentation_train_batch(model, img):
    """(train chain, its arguments) of one image with one instance (its box filled)."""
    device = model.device
    if isinstance(model, (MaskRCNNFPNResNet, MaskRCNNResNet50FPN)):
        prepared = model.prepare(img)
        x = model.pad_batch([prepared])
        bbox, label = _detection_target(prepared.shape[1:])
        mask = numpy.zeros((1,) + prepared.shape[1:], bool)
        x_min, y_min, x_max, y_max = bbox[0].astype(int)
        mask[0, y_min:y_max, x_min:x_max] = True
        chain = MaskRCNNTrainChain(model) if isinstance(model, MaskRCNNFPNResNet) else \
            TorchvisionMaskRCNNTrainChain(model, roi_n_sample=64)
        # masks stay on the host, as the train chains take them
        return chain, (device.send(x), [device.send(bbox)], [device.send(label)], [mask],
                       [prepared.shape[1:]])
    if isinstance(model, FCIS):  # one image at a time, at its own size
        prepared = model.prepare(img)
        bbox, label = _detection_target(prepared.shape[1:])
        mask = numpy.zeros((1,) + prepared.shape[1:], bool)
        x_min, y_min, x_max, y_max = bbox[0].astype(int)
        mask[0, y_min:y_max, x_min:x_max] = True
        return FCISTrainChain(model), (device.send(prepared[None]), [bbox], [label], [mask],
                                       [prepared.shape[2] / img.shape[2]])
    raise AssertionError(f'no train chain known for {type(model).__name__}; add it here')


def keypoint_detection_train_batch(model, img):
    """(train chain, its arguments) of one image with one instance and its keypoints."""
    device = model.device
    if isinstance(model, KeypointRCNNResNet50FPN):
        prepared = model.prepare(img)
        bbox, label = _detection_target(prepared.shape[1:])
        corner, side = bbox[:, None, :2], bbox[:, None, 2:] - bbox[:, None, :2]
        point = corner + side * numpy.random.RandomState(3).uniform(0, 1, (1, model.n_point, 2))
        visible = numpy.ones((1, model.n_point), bool)
        # points stay on the host, as the train chain takes them
        return KeypointRCNNTrainChain(model, roi_n_sample=64), (
            device.send(model.pad_batch([prepared])), [device.send(bbox)],
            [device.send(label)], [point.astype(numpy.float32)], [visible],
            [prepared.shape[1:]])
    raise AssertionError(f'no train chain known for {type(model).__name__}; add it here')


def segmentation_train_batch(model):
    """(train chain, its arguments): one standardised 64 x 64 image and a random label map
    (-1 ignored)."""
    rng = numpy.random.RandomState(1)
    x = rng.uniform(-1, 1, (1, 3, SEGMENTATION_SIZE, SEGMENTATION_SIZE)).astype(numpy.float32)
    label = rng.randint(-1, model.n_class, (1, SEGMENTATION_SIZE, SEGMENTATION_SIZE))
    chain = PSPNetTrainChain(model) if isinstance(model, PSPNet) else \
        SegmentationTrainChain(model)
    device = model.device
    return chain, (device.send(x), device.send(label.astype(numpy.int32)))


class _SoftmaxCrossEntropy:
    """A classifier's loss, as a callable train chain (the model is the link updated)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, x, t):
        return F.softmax_cross_entropy(self.model(x), t)


def classification_train_batch(model, name):
    """(loss callable, its arguments): two random images and their labels."""
    side = CLASSIFIER_INSIZE.get(name, 64)
    x = numpy.random.RandomState(2).uniform(-1, 1, (2, 3, side, side)).astype(numpy.float32)
    t = numpy.array([0, N_CLASS - 1], numpy.int32)
    return _SoftmaxCrossEntropy(model), (model.device.send(x), model.device.send(t))


def train_batch(task, name, model):
    """(callable giving the loss, the link to update, its arguments) of one step."""
    if task == 'classification':
        loss_of, arguments = classification_train_batch(model, name)
        return loss_of, model, arguments
    if task == 'detection':
        chain, arguments = detection_train_batch(model, _image())
    elif task == 'instance_segmentation':
        chain, arguments = instance_segmentation_train_batch(model, _image())
    elif task == 'keypoint_detection':
        chain, arguments = keypoint_detection_train_batch(model, _image())
    else:
        chain, arguments = segmentation_train_batch(model)
    chain.to_device(model.device)
    return chain, chain, arguments


def train_step(task, name, model):
    """One forward, backward and SGD update; returns the loss and the link updated."""
    loss_of, link, arguments = train_batch(task, name, model)
    optimizer = optimizers.SGD(lr=0.01)
    optimizer.setup(link)
    link.cleargrads()
    loss = loss_of(*arguments)
    loss.backward()
    optimizer.update()
    return loss, link


# --- the tests ---------------------------------------------------------------------------

@pytest.mark.parametrize('name', list_models())
def test_predict_on_the_second_gpu(name, build_small_model, gpu_pair):
    two_gpus = gpu_pair  # cuda:0 current, the model on cuda:1 (on cuda:0 with one GPU)
    task, model = _on_cuda_1(name, build_small_model, two_gpus)
    imgs = [_image()]
    model_checks.ASSERTIONS[task](model, imgs, small_models.n_class_of(name))
    assert backend.get_device_from_array(numpy.zeros(1)).kind == 'cpu'
    assert all(param.device == two_gpus[1] for param in model.params())


@pytest.mark.parametrize('name', list_models())
def test_training_step_on_the_second_gpu(name, build_small_model, gpu_pair):
    two_gpus = gpu_pair
    task, model = _on_cuda_1(name, build_small_model, two_gpus)
    before = {path: backend.to_numpy(param.array) for path, param in model.namedparams()}
    loss, link = train_step(task, name, model)
    assert backend.get_device_from_array(loss.array) == two_gpus[1]
    assert numpy.isfinite(backend.to_numpy(loss.array))
    moved = [path for path, param in model.namedparams() if param.device != two_gpus[1]
             or (param.grad is not None
                 and backend.get_device_from_array(param.grad) != two_gpus[1])]
    assert moved == [], f'parameters that left cuda:1: {moved[:5]}'
    params = dict(model.namedparams())
    with_grad = [path for path, param in params.items()
                 if param.grad is not None and backend.to_numpy(param.grad).any()]
    changed = [path for path in with_grad
               if not numpy.array_equal(before[path], backend.to_numpy(params[path].array))]
    assert with_grad, 'no parameter got a gradient'
    assert len(changed) >= 0.9 * len(with_grad), \
        f'{len(with_grad) - len(changed)} parameters with a gradient did not change'


# --- host-sync budgets ----------------------------------------------------------------

TRAIN_BUDGET = 3
PREDICT_BUDGET = 6
BUDGET_MODELS = ['ssd_tiny', 'faster_rcnn_vgg16', 'faster_rcnn_fpn_resnet50',
                 'fasterrcnn_resnet50_fpn', 'retinanet_resnet50_fpn', 'yolov3', 'segnet_basic']


def _report(syncs):
    return '\n'.join(f'{count} x {kind} at {site}' for (kind, site), count in
                     sorted(syncs.items(), key=lambda item: -item[1]))


@pytest.mark.parametrize('name', BUDGET_MODELS)
def test_training_iteration(name, build_small_model, two_gpus, stand_in):
    task, model = _on_cuda_1(name, build_small_model, two_gpus)
    loss_of, link, arguments = train_batch(task, name, model)
    optimizer = optimizers.SGD(lr=0.01)
    optimizer.setup(link)
    for _ in range(2):
        with stand_in.count_syncs() as syncs:
            link.cleargrads()
            loss = loss_of(*arguments)
            loss.backward()
            optimizer.update()
    assert sum(syncs.values()) <= TRAIN_BUDGET, _report(syncs)
    with stand_in.count_syncs() as syncs:
        float(loss.array)
    assert sum(syncs.values()) == 1


@pytest.mark.parametrize('name', BUDGET_MODELS)
def test_predict_per_image(name, build_small_model, two_gpus, stand_in):
    _, model = _on_cuda_1(name, build_small_model, two_gpus)
    model.predict([_image()])
    with stand_in.count_syncs() as syncs:
        model.predict([_image(1)])
    assert sum(syncs.values()) <= PREDICT_BUDGET, _report(syncs)
