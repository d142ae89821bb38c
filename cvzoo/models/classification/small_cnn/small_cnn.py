"""SmallCNN: a small convolutional classifier for tiny images (digits, icons, thumbnails)."""

import functools
from typing import ClassVar

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers
from cvzoo.models import zoo
from cvzoo.models.classification import image_classifier


@zoo.register('small_cnn', task='classification')
class SmallCNN(image_classifier.ImageClassifier):
    """Two conv-BN-ReLU-maxpool stages, a hidden fully connected layer and the head.

    A LeNet-style network (LeCun et al., "Gradient-based learning applied to document
    recognition", Proc. IEEE 1998) with batch normalization and ReLU, meant for images of
    8 to 64 pixels that train in minutes on a CPU. It has no pretrained weights.

    Layers: conv1 (3x3, ``width``) - bn1 - relu - pool1 (2x2) - conv2 (3x3, 2 ``width``) -
    bn2 - relu - pool2 (2x2) - fc1 (``4 width``) - relu - fc (logits).

    Args:
        n_class (int): number of classes.
        pretrained_model (str or None): a local weight file (no zoo keys).
        insize (int): the side images are resized to by predict() (preset size).
        width (int): channels of the first convolution.
    """

    head_name = 'fc'
    weights: ClassVar[dict] = {}  # no pretrained weights

    def __init__(self, n_class=10, pretrained_model=None, insize=32, width=32):
        super().__init__()
        self.preset = zoo.Preset(size=insize, mean=(127.5,) * 3, std=(127.5,) * 3)
        self.hidden = 4 * width
        kwargs = {'initialW': initializers.HeNormal(), 'nobias': True}
        with self.init_scope():
            self.conv1 = L.Convolution2D(3, width, 3, pad=1, **kwargs)
            self.bn1 = L.BatchNormalization(width)
            self.relu1 = F.relu
            self.pool1 = functools.partial(F.max_pooling_2d, ksize=2, stride=2)
            self.conv2 = L.Convolution2D(width, 2 * width, 3, pad=1, **kwargs)
            self.bn2 = L.BatchNormalization(2 * width)
            self.relu2 = F.relu
            self.pool2 = functools.partial(F.max_pooling_2d, ksize=2, stride=2)
            self.fc1 = L.Linear(None, self.hidden, initialW=initializers.HeNormal())
            self.relu3 = F.relu
            self.fc = L.Linear(self.hidden, n_class)
        self._load_pretrained(pretrained_model, n_class)

    def training_recipe(self, **hyper):
        """How it trains: the classifiers' recipe with its own, smaller numbers (see
        :mod:`cvzoo.models.classification.training_recipe`)."""
        from cvzoo.models.classification import training_recipe

        return training_recipe.classifier_recipe(self, training_recipe.SMALL_CNN, **hyper)

    def reset_head(self, n_class):
        """Replace ``fc`` by a new Linear(hidden, n_class)."""
        delattr(self, 'fc')
        with self.init_scope():
            self.fc = L.Linear(self.hidden, n_class)
        self.fc.to_device(self.device)
