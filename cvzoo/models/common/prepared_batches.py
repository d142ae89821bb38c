"""PreparedBatches: the batching of a template predict(): images in, prepared batches out,
each run with the model's device current, in test mode, without backprop."""

import numpy

from cvzoo.core import backend, config
from cvzoo.utils import image as image_utils


class PreparedBatches:
    """Mixin of models whose predict() runs their hooks over batches of prepared images
    (instance segmenters, keypoint detectors).

    Hooks a model provides:

    - ``prepare(img) -> x``: one image, (3, H, W) float32 RGB in [0, 255] on the host, to
      the network's input (3, H', W') float32 on the host;
    - ``pad_batch(prepared) -> x``: the prepared images of a batch as one
      (B, 3, H', W') NumPy array (default: stacked; models taking several sizes pad).

    The model also has ``device`` (a Link's).
    """

    def prepare(self, img):
        """Preprocess one (3, H, W) float32 image for the network (subclass hook)."""
        raise NotImplementedError(f'{type(self).__name__} does not implement prepare')

    def pad_batch(self, prepared):
        """The prepared images of a batch as one (B, 3, H', W') NumPy array (hook)."""
        return numpy.stack(prepared)

    def prepared_batches(self, imgs, batchsize):
        """Yield ``(x, sizes, prepared)`` for each run of at most ``batchsize`` images:
        the padded batch on the model's device, the images' (H, W) and their prepared
        arrays. While the caller handles a batch, the model's device is current, the
        configuration is test mode and backprop is off.

        Args:
            imgs: an iterable of images: (3, H, W) float arrays RGB in [0, 255], (H, W, 3)
                uint8 arrays, PIL images or file paths.
            batchsize (int): images per batch.

        Raises:
            ValueError: ``batchsize`` is not an int >= 1.
        """
        if not isinstance(batchsize, int) or batchsize < 1:
            raise ValueError(f'batchsize: expected an int >= 1, got {batchsize!r}')
        imgs = image_utils.as_chw_images(imgs)
        for start in range(0, len(imgs), batchsize):
            chunk = imgs[start:start + batchsize]
            prepared = [self.prepare(img) for img in chunk]
            x = backend.to_device(self.pad_batch(prepared), self.device)
            with self.device, config.using_config('train', False), \
                    config.no_backprop_mode():
                yield x, [img.shape[1:] for img in chunk], prepared


def to_host(arrays, dtype):
    """Host NumPy copies of per-image ``arrays`` (host or device) as ``dtype``."""
    return [backend.to_numpy(array).astype(dtype, copy=False) for array in arrays]
