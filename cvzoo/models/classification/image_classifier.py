"""ImageClassifier: the shared predict() and pretrained-weights handling of classifiers.

A classifier subclass builds its layers (as a PickableSequentialChain), ending with a
layer named by ``head_name`` that outputs logits, and implements ``reset_head(n_class)``.
This base gives it:

- ``predict(imgs)``: DESIGN.md's classification contract, using the preset of the
  loaded weights (resize, center crop, mean/std);
- ``_load_pretrained(pretrained_model, n_class)``: a zoo key or a local file, with
  ``n_class`` different from the weights' for fine-tuning (all but the head load).
"""

import numpy

import cvzoo.core.functions as F
from cvzoo import transforms
from cvzoo.core import backend, config
from cvzoo.models import zoo
from cvzoo.models.common import imagenet_presets, network_runtime
from cvzoo.models.common.pickable_sequential_chain import PickableSequentialChain
from cvzoo.models.weights import pretrained
from cvzoo.utils import image as image_utils

# The usual ImageNet evaluation: shorter side to 256, center crop 224, torchvision's mean/std.
DEFAULT_PRESET = zoo.Preset(size=224, mean=imagenet_presets.IMAGENET_MEAN,
                            std=imagenet_presets.IMAGENET_STD, crop_fraction=0.875)


def n_class_for(model_class, pretrained_model, n_class, default):
    """The head size to build with: the weights' when a zoo key is given, else n_class.

    Args:
        model_class: the classifier class.
        pretrained_model: a zoo key, a path or None.
        n_class (int or None): what the user asked for.
        default (int): used when neither says (1000, ImageNet).
    """
    return pretrained.settle_n_class(model_class, pretrained_model, n_class, default)[1]


class ImageClassifier(PickableSequentialChain):
    """Base class of classifiers; see the module docstring.

    Attributes:
        preset (zoo.Preset): the preprocessing predict() applies.
        label_names (tuple of str or None): class names of the loaded weights.
        head_name (str): the layer producing logits.
        runtimes (tuple of str): what predict() can run the network in.
    """

    runtimes = network_runtime.RUNTIMES
    head_name = 'fc'
    preset = DEFAULT_PRESET
    label_names = None

    def _load_pretrained(self, pretrained_model, n_class, source=None):
        """Load weights (a key or a path), then re-make the head when n_class differs."""
        pretrained.load_pretrained_with_preset(self, pretrained_model, n_class, source=source)

    def reset_head(self, n_class):
        """Replace the logits layer by a new one with ``n_class`` outputs."""
        raise NotImplementedError(f'{type(self).__name__} does not implement reset_head')

    def training_recipe(self, **hyper):
        """How this classifier trains (see :mod:`cvzoo.models.classification.training_recipe`)."""
        from cvzoo.models.classification import training_recipe

        return training_recipe.classifier_recipe(self, **hyper)

    def prepare(self, img):
        """Preprocess one image as the preset says: (3, H, W) float32 -> (3, S, S) float32."""
        preset = self.preset
        size = preset.size if isinstance(preset.size, tuple) else (preset.size, preset.size)
        if preset.crop_fraction:
            short = int(round(min(size) / preset.crop_fraction))
            img = transforms.scale(img, short, fit_short=True,
                                   interpolation=preset.interpolation)
            img = transforms.center_crop(img, size)
        else:
            img = transforms.resize(img, size, interpolation=preset.interpolation)
        mean = numpy.asarray(preset.mean, numpy.float32)[:, None, None]
        std = numpy.asarray(preset.std, numpy.float32)[:, None, None]
        return (img - mean) / std

    def predict(self, imgs, batchsize=8, runtime='cvzoo'):
        """Class probabilities of each image.

        Args:
            imgs: an iterable of images: (3, H, W) float arrays in [0, 255] RGB, (H, W, 3)
                uint8 arrays, PIL images or file paths.
            batchsize (int): images per forward pass.
            runtime (str): what runs the network between preprocessing and softmax:
                'cvzoo' or 'onnxruntime' (see :mod:`cvzoo.models.common.network_runtime`).

        Returns:
            numpy.ndarray: (B, n_class) float32 probabilities, one row per image.

        Raises:
            cvzoo.errors.UsageError: ``runtime`` is unknown or cannot run this model.
        """
        network_runtime.check_runtime(runtime, self)
        batch = numpy.stack([self.prepare(img) for img in image_utils.as_chw_images(imgs)])
        rows = []
        with config.using_config('train', False), config.no_backprop_mode():
            for start in range(0, len(batch), batchsize):
                x = backend.to_device(batch[start:start + batchsize], self.device)
                logits = network_runtime.run_network(self, x, runtime)
                rows.append(backend.to_numpy(F.softmax(logits).array))
        return numpy.concatenate(rows).astype(numpy.float32, copy=False)
