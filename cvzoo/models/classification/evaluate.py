"""Evaluate a classifier on ImageNet-style data: top-1 and top-5 error, center or ten crop.

The data is a folder per class (ImageNet's validation layout with wnid folder names,
mapped to labels through the sorted synset list, or any class folders, labelled in
sorted order) or a text file of ``relative/path label`` lines.

>>> result = evaluate(model, load_dataset('val/'), crop='ten')  # doctest: +SKIP
"""

import pathlib

import numpy

import cvzoo.core.functions as F
from cvzoo import transforms
from cvzoo.core import backend, config
from cvzoo.datasets.image_folder import directory_parsing_label_dataset as folder_dataset
from cvzoo.datasets.imagenet import imagenet_label_names
from cvzoo.utils import image as image_utils

CROPS = ('center', 'ten')


class _ListDataset:
    """``img, label`` pairs of a file list (paths relative to the list's folder)."""

    def __init__(self, list_path):
        root = pathlib.Path(list_path).parent
        self.img_paths, labels = [], []
        for number, line in enumerate(pathlib.Path(list_path).read_text().splitlines(), 1):
            if not line.strip():
                continue
            parts = line.rsplit(maxsplit=1)
            if len(parts) != 2 or not parts[1].lstrip('-').isdigit():
                raise ValueError(f'dataset: {list_path} line {number}: expected "path label", '
                                 f'got {line!r}')
            self.img_paths.append(root / parts[0])
            labels.append(int(parts[1]))
        self.labels = numpy.array(labels, numpy.int32)

    def __len__(self):
        return len(self.img_paths)

    def __getitem__(self, i):
        return image_utils.read_image(self.img_paths[i]), self.labels[i]


def load_dataset(path):
    """A folder per class or a file list as a sequence of ``img, label``.

    Wnid folder names (``n01440764``...) take their index in ImageNet's sorted synset
    list, so a folder holding only some classes keeps the 1000-class labels.

    Raises:
        FileNotFoundError: ``path`` does not exist.
    """
    path = pathlib.Path(path)
    if path.is_file():
        return _ListDataset(path)
    dataset = folder_dataset.DirectoryParsingLabelDataset(path)
    wnid_index = {w: i for i, w in enumerate(imagenet_label_names.imagenet_wnids)}
    if dataset.label_names and all(n in wnid_index for n in dataset.label_names):
        mapping = numpy.array([wnid_index[n] for n in dataset.label_names], numpy.int32)
        dataset.labels = mapping[dataset.labels]
    return dataset


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
        for img in imgs:
            batch = _ten_crop_batch(model, image_utils.as_chw_image(img))
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
