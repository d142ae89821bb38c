"""An SSD's decode, score threshold, NMS and per-image top-k as ONNX nodes.

``to_onnx(ssd, x, path, with_postprocess=True)`` appends these nodes to the network's
graph, so that the file maps a prepared batch to detections, as ``SSD.predict`` does
after its ``prepare``:

- inputs: ``input`` (B, 3, insize, insize) float32, the prepared images (resized, mean
  subtracted), and ``sizes`` (B, 2) float32, each image's own (H, W);
- outputs, the detections of the whole batch, by image and then by decreasing score:
  ``image_index`` (R,) int64, the image of each detection; ``bbox`` (R, 4) float32
  (x_min, y_min, x_max, y_max) in that image's pixels, clipped to it; ``label`` (R,)
  int32 in [0, n_fg_class); ``score`` (R,) float32.

The steps are those of cvzoo's SSD: softmax over background + classes, anchors decoded
with the coder's variance (:class:`~cvzoo.models.detection.ssd.multibox_coder.MultiboxCoder`),
boxes scaled to each image; the ``nms_top_k`` best scores per image and class kept
(ties included), ONNX ``NonMaxSuppression`` per image and class at the model's
``score_thresh`` and ``nms_thresh``, the ``max_detections`` best per image, boxes
clipped to their image. The thresholds are those of the model when exported.

NOTE: ONNX's NonMaxSuppression keeps scores strictly above ``score_threshold`` and
suppresses at IoU strictly above ``iou_threshold``; cvzoo suppresses at IoU >=
``nms_thresh`` (and SSD300/SSD512 keep scores >= ``score_thresh``), so those thresholds
are written as the next float32 below.
"""

import numpy

from cvzoo.core import backend

OUTPUT_NAMES = ('image_index', 'bbox', 'label', 'score')


def _below(value):
    """The largest float32 below ``value``: ``x > _below(t)`` is ``x >= t`` in float32."""
    return numpy.nextafter(numpy.float32(value), numpy.float32(-numpy.inf))


def settings_of(model):
    """What the nodes need from an SSD, read when it is exported.

    Raises:
        ValueError: ``model`` is not an SSD.
    """
    for name in ('coder', 'insize', 'n_fg_class', 'score_thresh', 'nms_thresh'):
        if not hasattr(model, name):
            raise ValueError(f'with_postprocess: {type(model).__name__} is not an SSD '
                             f'(no {name!r}); only SSD detectors export their post-processing')
    score_thresh = numpy.float32(model.score_thresh)
    return {
        'default_bbox': backend.to_numpy(model.coder.default_bbox).astype(numpy.float32),
        'variance': model.coder.variance,
        'insize': model.insize,
        'score_thresh': _below(score_thresh) if model.inclusive_score_thresh else score_thresh,
        'iou_thresh': _below(model.nms_thresh),
        'nms_top_k': getattr(model, 'nms_top_k', None),
        'max_detections': model.max_detections,
        'inclusive_boxes': model.box_convention == 'inclusive',
    }


def _decode_boxes(b, loc, settings):
    """(B, K, 4) regressions -> (B, K, 4) corners in input pixels (MultiboxCoder)."""
    anchor = settings['default_bbox']
    v0, v1 = settings['variance']
    xy, wh = b.constant(anchor[:, :2]), b.constant(anchor[:, 2:])
    loc_xy = b.node('Slice', [loc, b.int64s([0]), b.int64s([2]), b.int64s([2])])[0]
    loc_wh = b.node('Slice', [loc, b.int64s([2]), b.int64s([4]), b.int64s([2])])[0]
    offset = b.node('Mul', [b.node('Mul', [loc_xy, b.constant(v0)])[0], wh])[0]
    center = b.node('Add', [xy, offset])[0]
    size = b.node('Mul', [wh, b.node('Exp', [b.node('Mul', [loc_wh, b.constant(v1)])[0]])[0]])
    half = b.node('Div', [size[0], b.constant(2.0)])[0]
    corners = [b.node('Sub', [center, half])[0], b.node('Add', [center, half])[0]]
    return b.node('Concat', corners, axis=-1)[0]


def _scores(b, conf, n_fg_class):
    """(B, K, n_fg_class + 1) logits -> (B, K, n_fg_class) foreground probabilities."""
    prob = b.node('Softmax', [conf], axis=-1)[0]
    return b.node('Slice', [prob, b.int64s([1]), b.int64s([n_fg_class + 1]),
                            b.int64s([2])])[0]


def _keep_top_k(b, score, k):
    """Zero every score below the k-th best of its image and class (ties kept)."""
    values = b.node('TopK', [score, b.int64s([k])], outputs=[b.fresh('topk'),
                                                              b.fresh('topk_index')],
                    axis=1)[0]
    kth = b.node('Slice', [values, b.int64s([k - 1]), b.int64s([k]), b.int64s([1])])[0]
    kept = b.node('GreaterOrEqual', [score, kth])[0]
    return b.node('Where', [kept, score, b.constant(0.0)])[0]


def _image_limits(b, sizes):
    """(B, 2) (H, W) -> (B, 4) (W, H, W, H)."""
    return b.node('Gather', [sizes, b.int64s([1, 0, 1, 0])], axis=1)[0]


def _sort_by_image_and_score(b, image_index, score):
    """Order of the detections by image, then by decreasing score (a float64 key)."""
    image = b.node('Cast', [image_index], to=11)[0]  # DOUBLE
    key = b.node('Sub', [b.node('Mul', [image, b.constant(4.0, numpy.float64)])[0],
                         b.node('Cast', [score], to=11)[0]])[0]
    count = b.node('Shape', [key])[0]
    return b.node('TopK', [key, count], outputs=[b.fresh('sorted'), b.fresh('order')],
                  largest=0, sorted=1)[1]


def _rank_in_image(b, image_index, n_image):
    """(R,) position of each detection among those of its image (sorted by image)."""
    images = b.node('Range', [b.constant(0, numpy.int64), n_image,
                              b.constant(1, numpy.int64)])[0]
    hit = b.node('Equal', [b.node('Unsqueeze', [image_index, b.int64s([1])])[0],
                           b.node('Unsqueeze', [images, b.int64s([0])])[0]])[0]
    counts = b.node('ReduceSum', [b.node('Cast', [hit], to=7)[0], b.int64s([0])],
                    keepdims=0)[0]
    starts = b.node('CumSum', [counts, b.constant(0, numpy.int64)], exclusive=1)[0]
    n_detection = b.node('Squeeze', [b.node('Shape', [image_index])[0]])[0]
    position = b.node('Range', [b.constant(0, numpy.int64), n_detection,
                                b.constant(1, numpy.int64)])[0]
    return b.node('Sub', [position, b.node('Gather', [starts, image_index])[0]])[0]


def _take(b, indices, *arrays):
    return [b.node('Gather', [array, indices], axis=0)[0] for array in arrays]


def add_nodes(builder, network_outputs, model):
    """Append the post-processing of the SSD ``model`` to ``builder``'s graph.

    Args:
        builder (OnnxGraphBuilder): the graph holding the network.
        network_outputs (list of str): the names of ``mb_locs`` (B, K, 4) and
            ``mb_confs`` (B, K, n_fg_class + 1).
        model: the SSD (its coder, thresholds and caps are read now).

    Returns:
        tuple: (list of extra graph inputs, list of graph outputs), as ONNX value infos.

    Raises:
        ValueError: ``model`` is not an SSD.
    """
    settings = settings_of(model)
    b, helper = builder, builder.helper
    loc, conf = network_outputs
    sizes = b.reserve('sizes')
    limits = _image_limits(b, sizes)
    scale = b.node('Div', [limits, b.constant(float(settings['insize']))])[0]
    bbox = b.node('Mul', [_decode_boxes(b, loc, settings),
                          b.node('Unsqueeze', [scale, b.int64s([1])])[0]])[0]
    score = _scores(b, conf, model.n_fg_class)
    n_anchor = len(settings['default_bbox'])
    if settings['nms_top_k'] is not None and settings['nms_top_k'] < n_anchor:
        score = _keep_top_k(b, score, settings['nms_top_k'])
    score = b.node('Transpose', [score], perm=[0, 2, 1])[0]  # (B, C, K)
    selected = b.node('NonMaxSuppression', [
        bbox, score, b.int64s([n_anchor]),
        b.constant([settings['iou_thresh']]), b.constant([settings['score_thresh']])])[0]
    image_index, label = (b.node('Gather', [selected, b.int64s([i])], axis=1)[0]
                          for i in (0, 1))
    image_index, label = (b.node('Squeeze', [a, b.int64s([1])])[0] for a in (image_index, label))
    box_index = b.node('Gather', [selected, b.int64s([0, 2])], axis=1)[0]
    bbox = b.node('GatherND', [bbox, box_index])[0]
    score = b.node('GatherND', [score, selected])[0]
    order = _sort_by_image_and_score(b, image_index, score)
    image_index, label, bbox, score = _take(b, order, image_index, label, bbox, score)
    if settings['max_detections'] is not None:
        n_image = b.node('Gather', [b.node('Shape', ['input'])[0], b.int64s([0])])[0]
        n_image = b.node('Squeeze', [n_image])[0]
        rank = _rank_in_image(b, image_index, n_image)
        kept = b.node('Less', [rank, b.constant(settings['max_detections'], numpy.int64)])[0]
        kept = b.node('Squeeze', [b.node('NonZero', [kept])[0], b.int64s([0])])[0]
        image_index, label, bbox, score = _take(b, kept, image_index, label, bbox, score)
    bbox = _clip(b, bbox, _take(b, image_index, limits)[0], settings['inclusive_boxes'])
    names = [b.reserve(name) for name in OUTPUT_NAMES]
    b.node('Identity', [image_index], [names[0]])
    b.node('Identity', [bbox], [names[1]])
    b.node('Cast', [label], [names[2]], to=6)  # INT32
    b.node('Identity', [score], [names[3]])
    float_type, int64, int32 = 1, 7, 6
    outputs = [helper.make_tensor_value_info(names[0], int64, ['n_detection']),
               helper.make_tensor_value_info(names[1], float_type, ['n_detection', 4]),
               helper.make_tensor_value_info(names[2], int32, ['n_detection']),
               helper.make_tensor_value_info(names[3], float_type, ['n_detection'])]
    inputs = [helper.make_tensor_value_info(sizes, float_type, ['batch', 2])]
    return inputs, outputs


def _clip(b, bbox, limit, inclusive):
    """Clip boxes to [0, limit] (continuous) or, for inclusive boxes, to the last pixel
    and make them continuous (``detector.as_continuous``)."""
    if inclusive:
        limit = b.node('Sub', [limit, b.constant(1.0)])[0]
    bbox = b.node('Min', [b.node('Max', [bbox, b.constant(0.0)])[0], limit])[0]
    if inclusive:
        bbox = b.node('Add', [bbox, b.constant([0.0, 0.0, 1.0, 1.0])])[0]
    return bbox
