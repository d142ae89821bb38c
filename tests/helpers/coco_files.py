"""A small COCO-format json (two images, polygon, RLE and crowd annotations) written by
the tests (tests/datasets, tests/faults)."""

import json

import numpy
from PIL import Image

H, W = 12, 16


def uncompressed_rle(mask):
    """COCO's uncompressed RLE of an (H, W) bool mask (column-major run lengths)."""
    flat = mask.T.ravel().astype(int)
    changes = numpy.flatnonzero(numpy.diff(numpy.r_[0, flat, 1 - flat[-1]]) != 0)
    return {'size': [H, W], 'counts': numpy.diff(numpy.r_[0, changes]).tolist()}


def write_coco(tmp_path, annotations):
    """Write ``tmp_path/instances.json`` with ``annotations`` and images a.png (id 3) and
    b.png (id 7) of (H, W) in ``tmp_path/images``; categories 20 'widget' and 5 'gear'.

    Returns:
        tuple: the json's path and the image folder.
    """
    img_dir = tmp_path / 'images'
    img_dir.mkdir()
    for name in ('a.png', 'b.png'):
        Image.fromarray(numpy.zeros((H, W, 3), numpy.uint8)).save(img_dir / name)
    data = {'images': [{'id': 7, 'file_name': 'b.png', 'width': W, 'height': H},
                       {'id': 3, 'file_name': 'a.png', 'width': W, 'height': H}],
            'categories': [{'id': 20, 'name': 'widget'}, {'id': 5, 'name': 'gear'}],
            'annotations': annotations}
    json_path = tmp_path / 'instances.json'
    json_path.write_text(json.dumps(data))
    return json_path, img_dir


CROWD = numpy.zeros((H, W), bool)
CROWD[6:10, 2:5] = True
# a polygon, an empty RLE and a crowd region, all on image 3
ANNOTATIONS = [
    {'id': 1, 'image_id': 3, 'category_id': 20, 'bbox': [2, 1, 6, 4], 'area': 24,
     'iscrowd': 0, 'segmentation': [[2, 1, 8, 1, 8, 5, 2, 5]]},
    {'id': 2, 'image_id': 3, 'category_id': 5, 'bbox': [10, 8, 10, 10], 'area': 12,
     'iscrowd': 0, 'segmentation': {'size': [H, W], 'counts': ''}},
    {'id': 3, 'image_id': 3, 'category_id': 5, 'bbox': [2, 6, 3, 4], 'area': 12,
     'iscrowd': 1, 'segmentation': uncompressed_rle(CROWD)},
]
