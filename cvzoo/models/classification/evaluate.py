"""Evaluate a classifier on ImageNet-style data: top-1 and top-5 error, center or ten crop.

The data (a folder per class or a file list) is read by
:func:`cvzoo.datasets.registry.load_classification_dataset`.

Example, on a folder of ImageNet validation images::

    from cvzoo.datasets import registry
    result = evaluate(model, registry.load_classification_dataset('val/'), crop='ten')
"""

import numpy

import cvzoo.core.functions as F
from cvzoo import transforms
from cvzoo.core import backend, config
from cvzoo.utils import image as image_utils

CROPS = ('center', 'ten')


def _ten_crop_batch(model, img):
    """(10, 3, S, S) float32: the ten crops of ``img`` preprocessed as model.preset says."""
    preset = model.preset
    size = preset.size if isinstance(preset.size, tuple) else (preset.size, preset.size)
    short = round(min(size) / (preset.crop_fraction or 1.0))
    img = transforms.scale(img, short, fit_short=True, interpolation=preset.interpolation)
    crops = transforms.ten_crop(img, size)
    mean = numpy.asarray(preset.mean, numpy.float32)[:, None, None]
    std = numpy.asarray(preset.std, numpy.float32)[:, None, None]
    return ((crops - mean) / std).astype(numpy.float32)


def predict_ten_crop(model, imgs):
    """Class probabilities of each image, averaged over its ten crops: (B, n_class)."""
    rows = []
    with config.using_config('train', False), config.no_backprop_mode():
        for i, img in enumerate(imgs):
            batch = _ten_crop_batch(model, image_utils.as_chw_image(img, f'imgs[{i}]'))
            logits = model.forward(backend.to_device(batch, model.device))
            rows.append(backend.to_numpy(F.softmax(logits).array).mean(axis=0))
    return numpy.stack(rows).astype(numpy.float32)


def evaluate(model, dataset, crop='center', batchsize=32, limit=None, progress=None):
    """Top-1 and top-5 error of ``model`` on ``dataset``.

    Args:
        model: an ImageClassifier (predict() and preset).
        dataset: a sequence of ``img, label``.
        crop (str): ``'center'`` (the preset's crop) or ``'ten'`` (ten crops averaged).
        batchsize (int): images per step.
        limit (int or None): evaluate the first ``limit`` images only.
        progress (callable or None): called with the number of images done.

    Returns:
        dict: ``top1_error`` and ``top5_error`` (fractions) and ``n_image``.
    """
    if crop not in CROPS:
        raise ValueError(f'crop: expected one of {CROPS}, got {crop!r}')
    n_image = len(dataset) if limit is None else min(limit, len(dataset))
    correct = numpy.zeros(2, numpy.int64)
    for start in range(0, n_image, batchsize):
        pairs = [dataset[i] for i in range(start, min(start + batchsize, n_image))]
        imgs, labels = [p[0] for p in pairs], numpy.array([p[1] for p in pairs])
        probs = predict_ten_crop(model, imgs) if crop == 'ten' else model.predict(imgs)
        top5 = numpy.argsort(-probs, axis=1)[:, :5]
        correct += [(top5[:, 0] == labels).sum(), (top5 == labels[:, None]).any(axis=1).sum()]
        if progress is not None:
            progress(start + len(pairs))
    errors_ = 1 - correct / max(n_image, 1)
    return {'top1_error': float(errors_[0]), 'top5_error': float(errors_[1]),
            'n_image': n_image}
