"""Code run in the ChainerCV environment before each reference script (not in cvzoo's).

tests/helpers/chainercv_reference_tools.py prepends this file to the scripts it hands to
the ``chainercv_reference`` fixture. It gives a randomly initialised ChainerCV model
weights whose outputs are informative: every activation stays in a sane range and the
logits spread over several units, so that a wrong mean, pooling or eps shows up in the
probabilities and label maps instead of drowning in a saturated softmax.
"""

import chainer
import chainer.links
import numpy

# NOTE: Chainer 7.8.1's resize_images still uses the alias that NumPy 1.24 removed.
numpy.float = float


def calibrate_batch_normalization(model, forward, x, shrink=0.01):
    """Random BN scales and shifts, then running statistics measured on ``x``.

    gamma ~ U(0.5, 1.5) and beta ~ U(-0.5, 0.5) first; the convolutions beside a batch
    norm (in the same chain) are scaled by ``shrink``, so that the variances the norms
    divide by are about 1e-4 and their ``eps`` (Chainer's 2e-5) changes the outputs by
    several percent; then one train-mode pass of ``forward(x)`` with ``decay = 0`` makes
    each layer's ``avg_mean``/``avg_var`` the statistics of its own input, so test mode
    reproduces the normalised activations.

    Args:
        model (chainer.Link): holds the BatchNormalization links.
        forward (callable): runs the model on a batch (e.g. ``model`` itself).
        x (numpy.ndarray): a preprocessed float32 batch of two or more images.
        shrink (float): the factor of the convolutions' weights.
    """
    with chainer.using_config('train', False), chainer.no_backprop_mode():
        forward(x)  # NOTE: initialises the lazy (in_channels=None) weights
    for chain in model.links():
        children = list(chain.children()) if isinstance(chain, chainer.Chain) else []
        if any(isinstance(child, chainer.links.BatchNormalization) for child in children):
            for child in children:
                if isinstance(child, chainer.links.Convolution2D):
                    child.W.array[...] *= shrink
    norms = [link for link in model.links()
             if isinstance(link, chainer.links.BatchNormalization)]
    for norm in norms:
        norm.gamma.array[...] = numpy.random.uniform(0.5, 1.5, norm.gamma.shape)
        norm.beta.array[...] = numpy.random.uniform(-0.5, 0.5, norm.beta.shape)
        norm.decay = 0.0
    with chainer.using_config('train', True), chainer.no_backprop_mode():
        forward(x)
    for norm in norms:
        norm.decay = 0.9


def scale_linear_output(link, outputs, std=3.0):
    """Scale ``link.W`` and ``link.b`` so that its ``outputs`` (measured before) get ``std``.

    Args:
        link: the last linear layer (Linear or Convolution2D) before the softmax.
        outputs (numpy.ndarray): what that layer gave with the current weights.
        std (float): the wanted standard deviation of the outputs.
    """
    factor = std / float(numpy.std(outputs))
    link.W.array[...] *= factor
    if link.b is not None:
        link.b.array[...] *= factor


def random_batch(shape):
    """A float32 batch of mean-subtracted uniform noise images of ``shape``."""
    return numpy.random.uniform(-120, 120, shape).astype(numpy.float32)


def classifier_reference(model, head_name, crop_size, scale_size, features, imgs, path):
    """Calibrate a ChainerCV classifier, save it, and predict with FeaturePredictor.

    Args:
        model: a ChainerCV classifier (a PickableSequentialChain ending in ``prob``).
        head_name (str): its last linear layer; it gets a random bias and is scaled to
            logits of std 3.
        crop_size, scale_size (int): FeaturePredictor's sizes (ChainerCV's evaluation
            uses 224 and 256).
        features (tuple of str): layers whose outputs are returned too.
        imgs (numpy.ndarray): (B, 3, H, W) images in [0, 255], RGB.
        path (str): where ``chainer.serializers.save_npz`` writes the model.

    Returns:
        dict: ``probs`` (B, n_class), ``prepared`` (the first image after
        FeaturePredictor's scale, crop and mean), ``mean`` (the model's) and each feature.
    """
    import chainercv.links

    def pick(names):
        model.pick = names
        return model

    calibrate_batch_normalization(model, pick('prob'), random_batch((2, 3, crop_size, crop_size)))
    head = getattr(model, head_name)
    head.b.array[...] = numpy.random.uniform(-1, 1, head.b.shape)
    x = random_batch((2, 3, crop_size, crop_size))
    with chainer.using_config('train', False), chainer.no_backprop_mode():
        scale_linear_output(head, pick(head_name)(x).array)
    chainer.serializers.save_npz(path, model)
    predictor = chainercv.links.FeaturePredictor(model, crop_size, scale_size)
    pick('prob')
    outputs = {'probs': predictor.predict(list(imgs)), 'mean': model.mean,
               'prepared': predictor._prepare(imgs[0])[0]}
    pick(tuple(features))
    outputs.update(zip(features, predictor.predict(list(imgs))))
    return outputs


def center_linear_output(link, outputs):
    """Shift ``link.b`` so that each output channel of ``outputs`` (measured before) has a
    zero mean over the batch and the pixels: a segmenter's labels then change from pixel
    to pixel instead of one class winning everywhere."""
    axes = (0,) + tuple(range(2, outputs.ndim))
    link.b.array[...] -= outputs.mean(axis=axes)


def record_fpn_outputs(model, outputs):
    """Make a ChainerCV FPN detector (Faster or Mask R-CNN) put into ``outputs``, at its
    first call: the input ``x``, the RPN's ``rois`` and ``roi_indices``, and the box
    head's RoIs, RoI indices, ``head/locs`` and ``head/confs`` (RoIs grouped by level)."""
    forward = model.forward

    def recording_forward(x):
        hs, rois, roi_indices = forward(x)
        outputs.setdefault('x', x)
        outputs.setdefault('rois', rois)
        outputs.setdefault('roi_indices', roi_indices)
        return hs, rois, roi_indices

    model.forward = recording_forward
    head_forward = model.bbox_head.forward

    def recording_head_forward(hs, rois, roi_indices):
        locs, confs = head_forward(hs, rois, roi_indices)
        outputs.setdefault('head/rois', numpy.concatenate(rois))
        outputs.setdefault('head/roi_indices', numpy.concatenate(roi_indices))
        outputs.setdefault('head/locs', locs.array)
        outputs.setdefault('head/confs', confs.array)
        return locs, confs

    model.bbox_head.forward = recording_head_forward
