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


def write_coco(tmp_path, annotations, categories=None, json_name='instances.json'):
    """Write ``tmp_path/<json_name>`` with ``annotations`` and images a.png (id 3) and
    b.png (id 7) of (H, W) in ``tmp_path/images``; categories 20 'widget' and 5 'gear'
    unless ``categories`` (a list of category objects) is given.

    Returns:
        tuple: the json's path and the image folder.
    """
    img_dir = tmp_path / 'images'
    img_dir.mkdir()
    for name in ('a.png', 'b.png'):
        Image.fromarray(numpy.zeros((H, W, 3), numpy.uint8)).save(img_dir / name)
    data = {'images': [{'id': 7, 'file_name': 'b.png', 'width': W, 'height': H},
                       {'id': 3, 'file_name': 'a.png', 'width': W, 'height': H}],
            'categories': categories or [{'id': 20, 'name': 'widget'},
                                         {'id': 5, 'name': 'gear'}],
            'annotations': annotations}
    json_path = tmp_path / json_name
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


# A person_keypoints json with three keypoints per person (COCO's first three).
PERSON = {'id': 1, 'name': 'person', 'keypoints': ['nose', 'left_eye', 'right_eye'],
          'skeleton': [[1, 2], [1, 3]]}
# two people on image 3 (one with a hidden but labelled eye, one with an unlabelled
# point) and a crowd region without keypoints; image 7 has none
KEYPOINT_ANNOTATIONS = [
    {'id': 11, 'image_id': 3, 'category_id': 1, 'bbox': [2, 1, 6, 4], 'area': 20.5,
     'iscrowd': 0, 'num_keypoints': 3, 'keypoints': [4, 2, 2, 5.5, 1.5, 1, 3, 1.5, 2]},
    {'id': 12, 'image_id': 3, 'category_id': 1, 'bbox': [9, 5, 5, 6], 'area': 25,
     'iscrowd': 0, 'num_keypoints': 2, 'keypoints': [10, 6, 2, 0, 0, 0, 12, 7, 2]},
    {'id': 13, 'image_id': 3, 'category_id': 1, 'bbox': [0, 8, 4, 4], 'area': 9,
     'iscrowd': 1, 'num_keypoints': 0, 'keypoints': [0] * 9},
]


def write_coco_keypoints(tmp_path, annotations=KEYPOINT_ANNOTATIONS, categories=(PERSON,),
                         json_name='person_keypoints.json'):
    """Write a person_keypoints json and images as :func:`write_coco` does.

    Returns:
        tuple: the json's path and the image folder.
    """
    return write_coco(tmp_path, annotations, list(categories), json_name)
