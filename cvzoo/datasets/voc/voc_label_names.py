"""PASCAL VOC class names and the VOC segmentation palette."""

voc_bbox_label_names = (
    'aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car', 'cat', 'chair', 'cow',
    'diningtable', 'dog', 'horse', 'motorbike', 'person', 'pottedplant', 'sheep', 'sofa',
    'train', 'tvmonitor')

voc_semantic_segmentation_label_names = ('background',) + voc_bbox_label_names


def _voc_color(index):
    """The colour VOC gives class ``index`` (bits of the index spread over R, G, B)."""
    red = green = blue = 0
    for shift in range(7, -1, -1):
        red |= ((index >> 0) & 1) << shift
        green |= ((index >> 1) & 1) << shift
        blue |= ((index >> 2) & 1) << shift
        index >>= 3
    return red, green, blue


voc_semantic_segmentation_label_colors = tuple(
    _voc_color(i) for i in range(len(voc_semantic_segmentation_label_names)))
