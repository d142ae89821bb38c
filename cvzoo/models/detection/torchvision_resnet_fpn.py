"""What torchvision's ResNet-50 FPN detectors (RetinaNet, Faster R-CNN) share in cvzoo:
the frozen-BN ResNet-50 backbone, the resize-and-pad preprocessing, and predict().

A detector class mixes in :class:`TorchvisionResNetFPNDetector` and provides
``extractor.base`` (the ResNet), ``min_size``, ``max_size``, ``pad_stride``,
``forward(x, sizes)``, ``decode(outputs, sizes)`` and ``suppress(*candidates, n_image)``
returning per-image (bboxes, labels, scores) lists in the resized images' pixels.
"""

import numpy

from cvzoo.core import backend, config, initializers
from cvzoo.core.links.normalization import batch_normalization
from cvzoo.models.classification.resnet import resnet
from cvzoo.models.common import network_runtime
from cvzoo.models.detection import detector, torchvision_transform
from cvzoo.utils import image as image_utils

# NOTE: torchvision sets FrozenBatchNorm's eps to 0 for its COCO weights; cvzoo's BN needs
# eps > 0, and the smallest normal float32 leaves var + eps == var for any var > 1e-30.
PRETRAINED_BN_EPS = float(numpy.finfo(numpy.float32).tiny)
# ResNet's parts from the top; torchvision trains the first trainable_backbone_layers
STAGES = ('res5', 'res4', 'res3', 'res2', 'conv1')


def make_resnet50_base(pretrained, pick):
    """torchvision's ResNet-50 ('fb' layout) without its classifier.

    Args:
        pretrained (bool): weights will be loaded (initialise with zeros, cheaply).
        pick (tuple of str): the stages whose outputs the FPN takes.

    Returns:
        cvzoo.models.classification.resnet.resnet.ResNet
    """
    base = resnet.ResNet(50, n_class=1, arch='fb', compat='torchvision',
                         initialW=initializers.Zero() if pretrained else None)
    base.pick = pick
    base.remove_unused()
    return base


def check_positive_int(name, value, optional=False):
    """Raise ValueError naming ``name`` unless ``value`` is an int >= 1 (or None when
    ``optional``)."""
    if optional and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f'{name}: expected an int >= 1{" or None" if optional else ""}, '
                         f'got {value!r}')


def set_bn_eps(base, eps):
    """Set the epsilon of every BN of the ResNet ``base``."""
    for link in base.links():
        if isinstance(link, batch_normalization.BatchNormalization):
            link.eps = eps


def freeze(base, trainable_backbone_layers=3):
    """Stop gradients to every BN's gamma/beta of the ResNet ``base`` and to its stages
    below the ``trainable_backbone_layers`` top ones (``requires_grad = False``)."""
    for link in base.links():
        if isinstance(link, batch_normalization.BatchNormalization):
            for param in link.params():
                param.requires_grad = False
    for name in STAGES[trainable_backbone_layers:]:
        for param in getattr(base, name).params():
            param.requires_grad = False


class TorchvisionResNetFPNDetector(detector.Detector):
    """Mixin: BN epsilon, freezing, preprocessing and predict(); see the module docstring."""

    runtimes = ('cvzoo',)

    def set_bn_eps(self, eps):
        """Set the epsilon of every BN of the backbone."""
        set_bn_eps(self.extractor.base, eps)

    def freeze(self, trainable_backbone_layers=3):
        """Freeze the backbone as torchvision does (:func:`freeze`)."""
        freeze(self.extractor.base, trainable_backbone_layers)

    def prepare(self, img):
        """(3, H, W) RGB in [0, 255] -> normalised and resized (3, H', W') float32."""
        return torchvision_transform.prepare_image(img, self.min_size, self.max_size)

    def pad_batch(self, prepared):
        """Prepared images -> (B, 3, H, W) NumPy batch, zero-padded to multiples of 32."""
        return torchvision_transform.pad_batch(prepared, self.pad_stride)

    def predict(self, imgs, batchsize=8, runtime='cvzoo'):
        """Detect objects in each image; see :meth:`Detector.predict` for the arrays.

        Only ``runtime='cvzoo'``: the network takes the images' sizes besides the batch.
        """
        network_runtime.check_runtime(runtime, self)
        imgs = image_utils.as_chw_images(imgs)
        bboxes, labels, scores = [], [], []
        for start in range(0, len(imgs), batchsize):
            chunk = imgs[start:start + batchsize]
            prepared = [self.prepare(img) for img in chunk]
            sizes = [x.shape[1:] for x in prepared]
            x = backend.to_device(self.pad_batch(prepared), self.device)
            with self.device, config.using_config('train', False), \
                    config.no_backprop_mode():
                candidates = self.decode(self.forward(x, sizes), sizes)
                result = self.suppress(*candidates, len(chunk))
            for img, size, bbox in zip(chunk, sizes, result[0]):
                ratio = numpy.asarray(img.shape[1:], numpy.float32) / \
                    numpy.asarray(size, numpy.float32)
                # NOTE: the float32 ratio may carry a box a rounding error past the image
                limit = numpy.asarray(img.shape[1:], numpy.float32)[[1, 0, 1, 0]]
                bboxes.append(numpy.minimum(bbox * ratio[[1, 0, 1, 0]], limit))
            labels += result[1]
            scores += result[2]
        return bboxes, labels, scores
