"""Semantic segmentation metrics from a streaming confusion matrix."""

import numpy

from cvzoo import errors

# Classes above this are an input error, refused before the (n_class, n_class) matrix is
# allocated (a stray 100000 would ask for 74 GiB); ADE20K's full label set has 3688.
MAX_N_CLASS = 4096


def calc_semantic_segmentation_confusion(pred_labels, gt_labels):
    """Count (ground truth, prediction) pairs of classes over all pixels.

    Args:
        pred_labels (iterable): one (H, W) int array per image, classes >= 0.
        gt_labels (iterable): one (H, W) int array per image; -1 pixels are ignored.
            Both are consumed one image at a time, so generators keep memory flat.

    Returns:
        (n_class, n_class) int64: entry [i, j] counts pixels of class i predicted as j;
        n_class is one more than the largest class seen.

    Raises:
        ValueError: shapes differ, a prediction is negative, a class is
            >= ``MAX_N_CLASS`` (4096), or the iterables have different lengths.
    """
    confusion = numpy.zeros((0, 0), numpy.int64)
    pred_iter, gt_iter = iter(pred_labels), iter(gt_labels)
    index = 0
    for pred_label in pred_iter:
        gt_label = next(gt_iter, None)
        if gt_label is None:
            raise errors.UsageError(f'gt_labels: has fewer images ({index}) than pred_labels')
        pred_label, gt_label = numpy.asarray(pred_label), numpy.asarray(gt_label)
        for name, value in (('pred_labels', pred_label), ('gt_labels', gt_label)):
            if value.dtype.kind not in 'biuf':
                raise TypeError(f'{name}[{index}]: expected an array of classes, got dtype '
                                f'{value.dtype}')
            if value.dtype.kind == 'f' and (value != numpy.trunc(value)).any():
                raise errors.UsageError(f'{name}[{index}]: expected whole-number classes, got '
                                        f'{value[value != numpy.trunc(value)][0]}')
        pred_label = pred_label.astype(numpy.int64, copy=False)
        gt_label = gt_label.astype(numpy.int64, copy=False)
        if pred_label.ndim != 2 or pred_label.shape != gt_label.shape:
            raise errors.UsageError(
                f'pred_labels[{index}]: expected an (H, W) array of the shape of '
                f'gt_labels[{index}] {gt_label.shape}, got {pred_label.shape}')
        keep = gt_label >= 0
        pred_label, gt_label = pred_label[keep], gt_label[keep]
        if pred_label.size and pred_label.min() < 0:
            raise errors.UsageError(
                f'pred_labels[{index}]: expected classes >= 0 where the ground '
                f'truth is not ignored, got {int(pred_label.min())}')
        n_class = int(max(pred_label.max(initial=-1), gt_label.max(initial=-1))) + 1
        if n_class > MAX_N_CLASS:
            name = 'pred_labels' if pred_label.max(initial=-1) >= MAX_N_CLASS else 'gt_labels'
            raise errors.UsageError(f'{name}[{index}]: expected classes < {MAX_N_CLASS}, got '
                                    f'{n_class - 1}')
        if n_class > len(confusion):
            grown = numpy.zeros((n_class, n_class), numpy.int64)
            grown[:len(confusion), :len(confusion)] = confusion
            confusion = grown
        n_class = len(confusion)
        confusion += numpy.bincount(gt_label * n_class + pred_label,
                                    minlength=n_class * n_class).reshape(n_class, n_class)
        index += 1
    if next(gt_iter, None) is not None:
        raise errors.UsageError(f'pred_labels: has fewer images ({index}) than gt_labels')
    return confusion


def calc_semantic_segmentation_iou(confusion):
    """(n_class,) float64 IoU per class from a confusion matrix; nan for unseen classes."""
    intersection = numpy.diag(confusion).astype(numpy.float64)
    union = confusion.sum(axis=0) + confusion.sum(axis=1) - intersection
    with numpy.errstate(invalid='ignore', divide='ignore'):
        return intersection / union


def eval_semantic_segmentation(pred_labels, gt_labels):
    """Evaluate semantic segmentation: IoU per class, mIoU and accuracies.

    Args:
        pred_labels (iterable): one (H, W) int array per image.
        gt_labels (iterable): one (H, W) int array per image, -1 = ignored pixel.

    Returns:
        dict with
            'iou'                  (n_class,) float64, nan for a class neither present
                                   nor predicted
            'miou'                 float, nanmean of 'iou'
            'pixel_accuracy'       float, correct pixels / counted pixels
            'class_accuracy'       (n_class,) float64, recall of each class (nan if absent)
            'mean_class_accuracy'  float, nanmean of 'class_accuracy'
            'confusion'            (n_class, n_class) int64, see
                                   :func:`calc_semantic_segmentation_confusion`

    >>> gt = [numpy.array([[0, 1], [1, -1]])]
    >>> pred = [numpy.array([[0, 1], [0, 0]])]
    >>> round(eval_semantic_segmentation(pred, gt)['miou'], 4)
    0.5
    """
    confusion = calc_semantic_segmentation_confusion(pred_labels, gt_labels)
    iou = calc_semantic_segmentation_iou(confusion)
    diagonal = numpy.diag(confusion).astype(numpy.float64)
    with numpy.errstate(invalid='ignore', divide='ignore'):
        pixel_accuracy = diagonal.sum() / confusion.sum()
        class_accuracy = diagonal / confusion.sum(axis=1)
    return {
        'iou': iou,
        'miou': _nanmean(iou),
        'pixel_accuracy': float(pixel_accuracy),
        'class_accuracy': class_accuracy,
        'mean_class_accuracy': _nanmean(class_accuracy),
        'confusion': confusion,
    }


def _nanmean(values):
    finite = values[~numpy.isnan(values)]
    return float(finite.mean()) if finite.size else float('nan')
