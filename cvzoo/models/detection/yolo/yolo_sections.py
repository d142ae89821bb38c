"""The Darknet cfg sections of YOLOv2, YOLOv2-tiny and YOLOv3, written as data.

Each function returns what ``parse_darknet_cfg`` returns for the corresponding cfg of
pjreddie's Darknet (``cfg/yolov2-voc.cfg``, ``cfg/yolov2-tiny-voc.cfg``,
``cfg/yolov3-voc.cfg``; the COCO cfgs ``yolov2.cfg``/``yolov3.cfg`` are the same
networks with 80 classes and, for YOLOv2, other anchors): ``[net]`` first, then one
``(kind, {option: string})`` per layer, in cfg order, which is also the order of the
``.weights`` files. Only the options that change inference are written (no training
options such as jitter or learning rates). ``to_cfg_text`` prints them as a cfg file.
"""

# (w, h) in grid cells of the 13x13 map, as the [region] sections list them
YOLOV2_VOC_ANCHORS = ((1.3221, 1.73145), (3.19275, 4.00944), (5.05587, 8.09892),
                      (9.47112, 4.84053), (11.2364, 10.0071))
YOLOV2_COCO_ANCHORS = ((0.57273, 0.677385), (1.87446, 2.06253), (3.33843, 5.47434),
                       (7.88282, 3.52778), (9.77052, 9.16828))
YOLOV2_TINY_VOC_ANCHORS = ((1.08, 1.19), (3.42, 4.41), (6.63, 11.38), (9.42, 5.11),
                           (16.62, 10.52))
# (w, h) in network-input pixels; masks 6,7,8 / 3,4,5 / 0,1,2 for the 13/26/52 maps
YOLOV3_ANCHORS = ((10, 13), (16, 30), (33, 23), (30, 61), (62, 45), (59, 119), (116, 90),
                  (156, 198), (373, 326))


def _conv(filters, size, stride=1, activation='leaky', batch_normalize=True):
    options = {'filters': str(filters), 'size': str(size), 'stride': str(stride),
               'pad': '1', 'activation': activation}
    if batch_normalize:
        options['batch_normalize'] = '1'
    return ('convolutional', options)


def _head_conv(n_anchor, n_class):
    return _conv(n_anchor * (5 + n_class), 1, activation='linear', batch_normalize=False)


def _maxpool(stride=2):
    return ('maxpool', {'size': '2', 'stride': str(stride)})


def _anchor_text(anchors):
    return ', '.join(f'{w:g},{h:g}' for w, h in anchors)


def _net(insize):
    return ('net', {'height': str(insize[0]), 'width': str(insize[1]), 'channels': '3'})


def _region(anchors, n_class):
    return ('region', {'anchors': _anchor_text(anchors), 'classes': str(n_class),
                       'num': str(len(anchors)), 'coords': '4', 'softmax': '1'})


def yolov2_sections(n_class=20, insize=(416, 416), anchors=YOLOV2_VOC_ANCHORS):
    """YOLOv2: Darknet-19, two 3x3 convolutions, the reorg passthrough, a region head."""
    sections = [_net(insize)]
    for stage, n_conv in enumerate((1, 1, 3, 3, 5, 5)):
        for i in range(n_conv):
            wide = 32 << stage
            sections.append(_conv(wide, 3) if i % 2 == 0 else _conv(wide // 2, 1))
        if stage < 5:
            sections.append(_maxpool())
    sections += [_conv(1024, 3), _conv(1024, 3),
                 ('route', {'layers': '-9'}),  # the last 26x26 convolution (layer 16)
                 _conv(64, 1), ('reorg', {'stride': '2'}),
                 ('route', {'layers': '-1,-4'}),
                 _conv(1024, 3), _head_conv(len(anchors), n_class), _region(anchors, n_class)]
    return sections


def yolov2_tiny_sections(n_class=20, insize=(416, 416), anchors=YOLOV2_TINY_VOC_ANCHORS):
    """YOLOv2-tiny (VOC): seven 3x3 convolutions with max pooling, one more, a region head."""
    sections = [_net(insize)]
    for k in range(6):
        sections += [_conv(16 << k, 3), _maxpool(2 if k < 5 else 1)]
    sections += [_conv(1024, 3), _conv(1024, 3), _head_conv(len(anchors), n_class),
                 _region(anchors, n_class)]
    return sections


def _residual_stage(sections, filters, n_block):
    sections.append(_conv(filters, 3, stride=2))
    for _ in range(n_block):
        sections += [_conv(filters // 2, 1), _conv(filters, 3),
                     ('shortcut', {'from': '-3', 'activation': 'linear'})]


def _yolo_head(sections, filters, mask, n_class):
    for _ in range(3):
        sections += [_conv(filters, 1), _conv(filters * 2, 3)]
    sections += [_head_conv(len(mask), n_class),
                 ('yolo', {'mask': ','.join(str(m) for m in mask),
                           'anchors': _anchor_text(YOLOV3_ANCHORS), 'classes': str(n_class),
                           'num': str(len(YOLOV3_ANCHORS)), 'ignore_thresh': '.5'})]


def yolov3_sections(n_class=20, insize=(416, 416)):
    """YOLOv3: Darknet-53 and three [yolo] heads (13, 26 and 52 cells at 416)."""
    sections = [_net(insize), _conv(32, 3)]
    for stage, n_block in enumerate((1, 2, 8, 8, 4)):
        _residual_stage(sections, 64 << stage, n_block)
    _yolo_head(sections, 512, (6, 7, 8), n_class)
    # the route takes layer 79, the head's fifth convolution; 61 and 36 end the 26x26
    # and 52x52 stages of Darknet-53
    sections += [('route', {'layers': '-4'}), _conv(256, 1), ('upsample', {'stride': '2'}),
                 ('route', {'layers': '-1, 61'})]
    _yolo_head(sections, 256, (3, 4, 5), n_class)
    sections += [('route', {'layers': '-4'}), _conv(128, 1), ('upsample', {'stride': '2'}),
                 ('route', {'layers': '-1, 36'})]
    _yolo_head(sections, 128, (0, 1, 2), n_class)
    return sections


def to_cfg_text(sections):
    """The sections as the text of a Darknet ``.cfg`` file.

    >>> print(to_cfg_text([('net', {'width': '32'}), ('maxpool', {'size': '2'})]))
    [net]
    width=32
    <BLANKLINE>
    [maxpool]
    size=2
    <BLANKLINE>
    """
    blocks = []
    for kind, options in sections:
        lines = [f'[{kind}]'] + [f'{key}={value}' for key, value in options.items()]
        blocks.append('\n'.join(lines) + '\n')
    return '\n'.join(blocks)
