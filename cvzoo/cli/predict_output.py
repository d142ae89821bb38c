"""What ``cvzoo predict`` prints and draws for each task."""

import numpy

from cvzoo import datasets, errors
from cvzoo.utils import bbox as bbox_utils
from cvzoo.utils import image as image_utils
from cvzoo.utils import visualize


def _name(label_names, label):
    if label_names is None:
        return str(label)
    if not 0 <= label < len(label_names):
        raise errors.WeightLoadError(
            f'--pretrained-model: the model predicted class {label}, but its weights name '
            f'only {len(label_names)} classes (label_names is shorter than the class count)')
    return label_names[label]


def _instance_line(box, label, score, label_names, extra=''):
    """One printed instance: its score, label name, box and ``extra``."""
    coords = ', '.join(f'{v:.1f}' for v in box)
    return f'  {score:.3f}  {_name(label_names, int(label)):<14s} ({coords})  {extra}'.rstrip()


# The column order of the instance lines, printed after the count of instances.
BOX_COLUMNS = 'score, label, box (x_min, y_min, x_max, y_max) in pixels'


def _count_line(path, n, noun, extra=''):
    """The line that heads an image's instances: how many, and what each line holds."""
    return f'{path}: {n} {noun}: {BOX_COLUMNS}{extra}'


def _read_for_visualize(model, path, args):
    """The image at ``path``, after the model took its 'visualize' preset and
    ``--score-thresh``."""
    model.use_preset('visualize')
    if args.score_thresh is not None:
        model.score_thresh = args.score_thresh
    return image_utils.read_image(path)


def classification(model, path, args, out):
    """Print the top-k classes with their probabilities."""
    probs = model.predict([path])[0]
    if model.label_names is not None and len(model.label_names) != len(probs):
        raise errors.WeightLoadError(
            f'--pretrained-model: the model scores {len(probs)} classes, but its weights '
            f'name {len(model.label_names)} (label_names)')
    print(path)
    for label in numpy.argsort(-probs)[:args.topk]:
        print(f'  {probs[label]:.4f}  {_name(model.label_names, int(label))}')


def detection(model, path, args, out):
    """Print one line per detected box; draw the boxes when ``out`` is given."""
    img = _read_for_visualize(model, path, args)
    bboxes, labels, scores = model.predict([img])
    bbox, label, score = bboxes[0], labels[0], scores[0]
    label_names = getattr(model, 'label_names', None)
    print(_count_line(path, len(bbox), 'detections'))
    for box, lab, sc in zip(bbox, label, score):
        print(_instance_line(box, lab, sc, label_names))
    if out:
        visualize.vis_bbox(img, bbox, label, score, label_names=label_names, out=out)
        print(f'wrote {out}')


def instance_segmentation(model, path, args, out):
    """Print one line per instance (score, label, box, mask area); draw the masks, boxes,
    captions and a legend of the instances when ``out`` is given."""
    img = _read_for_visualize(model, path, args)
    masks, labels, scores = model.predict([img])
    mask, label, score = masks[0], labels[0], scores[0]
    label_names = getattr(model, 'label_names', None)
    bbox = bbox_utils.mask_to_bbox(mask)
    areas = mask.sum(axis=(1, 2))
    print(_count_line(path, len(mask), 'instances', ', mask area'))
    for box, lab, sc, area in zip(bbox, label, score, areas):
        print(_instance_line(box, lab, sc, label_names, f'{int(area)} pixels'))
    if out:
        visualize.vis_instance_segmentation(img, mask, label, score, label_names=label_names,
                                            out=out, legend=True)
        print(f'wrote {out}')


def keypoint_detection(model, path, args, out):
    """Print one line per instance (score, label, box, how many of its keypoints score
    above 0); draw the boxes with their captions and those keypoints, joined by COCO's
    skeleton for COCO's person keypoints, when ``out`` is given."""
    img = _read_for_visualize(model, path, args)
    bboxes, points, point_scores, labels, scores = model.predict_with_bboxes([img])
    bbox, point, label, score = bboxes[0], points[0], labels[0], scores[0]
    # NOTE: the point scores are heatmap logits (torchvision's keypoints_scores)
    visible = point_scores[0] > 0
    label_names = getattr(model, 'label_names', None)
    print(_count_line(path, len(bbox), 'instances', ', points scoring above 0'))
    for box, lab, sc, shown in zip(bbox, label, score, visible):
        print(_instance_line(box, lab, sc, label_names,
                             f'{int(shown.sum())}/{len(shown)} points'))
    if out:
        drawn = visualize.vis_bbox(img, bbox, label, score, label_names=label_names)
        skeleton = datasets.coco_point_skeleton if tuple(
            getattr(model, 'point_names', None) or ()) == tuple(datasets.coco_keypoint_names) \
            else None
        visualize.vis_point(drawn.transpose(2, 0, 1), point, visible, skeleton=skeleton,
                            out=out)
        print(f'wrote {out}')


def semantic_segmentation(model, path, args, out):
    """Print the share of each class; draw the label overlay with a legend when asked."""
    img = image_utils.read_image(path)
    label = model.predict([img])[0]
    label_names = getattr(model, 'label_names', None)
    counts = numpy.bincount(label[label >= 0].ravel())
    print(f'{path}: {label.shape[1]}x{label.shape[0]}')
    for lab in numpy.argsort(-counts):
        if counts[lab]:
            print(f'  {100 * counts[lab] / label.size:5.1f}%  {_name(label_names, int(lab))}')
    if out:
        colors = getattr(model, 'label_colors', None) or _known_colors(label_names)
        visualize.vis_semantic_segmentation(img, label, label_names=label_names,
                                            label_colors=colors, out=out)
        print(f'wrote {out}')


# The colours a data set's own tools draw its classes in, found by its label names.
_PALETTES = (
    (datasets.camvid_label_names, datasets.camvid_label_colors),
    (datasets.cityscapes_semantic_segmentation_label_names,
     datasets.cityscapes_semantic_segmentation_label_colors),
    (datasets.voc_semantic_segmentation_label_names,
     datasets.voc_semantic_segmentation_label_colors),
)


def _known_colors(label_names):
    for names, colors in _PALETTES:
        if label_names is not None and tuple(label_names) == tuple(names):
            return colors
    return None


PRINTERS = {
    'classification': classification,
    'detection': detection,
    'instance_segmentation': instance_segmentation,
    'keypoint_detection': keypoint_detection,
    'semantic_segmentation': semantic_segmentation,
}
