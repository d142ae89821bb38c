"""COCO datasets on a small COCO-format json with polygons, RLE and a crowd region."""

import json

import numpy
import pytest

from cvzoo import errors
from cvzoo.datasets import COCOBboxDataset, COCOInstanceSegmentationDataset
from cvzoo.datasets.coco import coco_mask_decoding
from tests.helpers.coco_files import ANNOTATIONS, CROWD, H, W, write_coco


def test_boxes_labels_crowd_area(tmp_path):
    json_path, img_dir = write_coco(tmp_path, ANNOTATIONS[:1] + ANNOTATIONS[2:])
    dataset = COCOBboxDataset.from_json(json_path, img_dir, use_crowded=True,
                                        return_crowded=True, return_area=True)
    assert dataset.label_names == ('gear', 'widget')  # sorted by category id
    assert len(dataset) == 2
    img, bbox, label, crowded, area = dataset[0]  # image id 3 comes first
    numpy.testing.assert_array_equal(bbox, [[2, 1, 8, 5], [2, 6, 5, 10]])
    assert label.tolist() == [1, 0] and crowded.tolist() == [False, True]
    numpy.testing.assert_array_equal(area, [24, 12])
    _, bbox, label = COCOBboxDataset.from_json(json_path, img_dir)[0]
    assert len(bbox) == 1
    _, bbox, label = COCOBboxDataset.from_json(json_path, img_dir)[1]  # no annotation
    assert bbox.shape == (0, 4) and bbox.dtype == numpy.float32 and label.shape == (0,)


def test_box_outside_image_is_clipped(tmp_path):
    ann = dict(ANNOTATIONS[1])
    ann['segmentation'] = [[10, 8, 15, 8, 15, 11]]
    json_path, img_dir = write_coco(tmp_path, [ann])
    _, bbox, _ = COCOBboxDataset.from_json(json_path, img_dir)[0]
    numpy.testing.assert_array_equal(bbox, [[10, 8, W, H]])


def test_instance_masks_from_polygon_and_rle(tmp_path):
    pycocotools_mask = pytest.importorskip('pycocotools.mask')
    blob = numpy.zeros((H, W), bool)
    blob[3:9, 9:14] = True
    blob[5, 11] = False
    rle = pycocotools_mask.encode(numpy.asfortranarray(blob.astype(numpy.uint8)))
    anns = [dict(ANNOTATIONS[0]), dict(ANNOTATIONS[1]), dict(ANNOTATIONS[2])]
    anns[1]['segmentation'] = {'size': [H, W], 'counts': rle['counts'].decode()}
    json_path, img_dir = write_coco(tmp_path, anns)
    dataset = COCOInstanceSegmentationDataset.from_json(json_path, img_dir, use_crowded=True)
    img, mask, label = dataset[0]
    assert mask.shape == (3, H, W) and mask.dtype == bool
    expected_box = numpy.zeros((H, W), bool)
    expected_box[1:5, 2:8] = True
    numpy.testing.assert_array_equal(mask[0], expected_box)
    numpy.testing.assert_array_equal(mask[1], blob)
    numpy.testing.assert_array_equal(mask[2], CROWD)


def test_polygon_close_to_pycocotools():
    pycocotools_mask = pytest.importorskip('pycocotools.mask')
    polygon = [[10.3, 5.2, 40.7, 8.1, 45.2, 30.9, 20.1, 33.3, 5.5, 20.0]]
    ours = coco_mask_decoding.polygons_to_mask(polygon, (40, 50))
    ref = pycocotools_mask.decode(pycocotools_mask.frPyObjects(polygon, 40, 50))[..., 0]
    assert (ours != ref.astype(bool)).sum() <= 0.02 * ref.sum()


@pytest.mark.parametrize('change, match', [
    ({'bbox': [1, 1, -2, 3]}, "'bbox'"),
    ({'category_id': 99}, "'category_id'"),
    ({'bbox': None}, "'bbox'"),
], ids=['negative_size', 'unknown_category', 'missing_bbox'])
def test_malformed_annotation_names_file_and_field(tmp_path, change, match):
    ann = dict(ANNOTATIONS[0], **change)
    if change.get('bbox', 0) is None:
        del ann['bbox']
    json_path, img_dir = write_coco(tmp_path, [ann])
    with pytest.raises(errors.CorruptFileError, match=match) as info:
        COCOBboxDataset.from_json(json_path, img_dir)
    assert 'instances.json' in str(info.value)


@pytest.mark.parametrize('box', [['1', '1', '2', '2'], None, [1, 1, 2], [1, 1, float('nan'), 2],
                                 'a box', [1, True, 2, 2]],
                         ids=['strings', 'null', 'three', 'nan', 'text', 'bool'])
def test_bbox_of_the_wrong_type_names_file_and_annotation(tmp_path, box):
    json_path, img_dir = write_coco(tmp_path, [dict(ANNOTATIONS[0], bbox=box)])
    with pytest.raises(errors.AnnotationError, match=r"annotations\[0\] \(id 1\): 'bbox'") \
            as info:
        COCOBboxDataset.from_json(json_path, img_dir)[0]
    assert 'instances.json' in str(info.value) and isinstance(info.value, ValueError)


def _write_raw(tmp_path, change):
    json_path, img_dir = write_coco(tmp_path, [dict(ANNOTATIONS[0])])
    data = json.loads(json_path.read_text())
    change(data)
    json_path.write_text(json.dumps(data, allow_nan=True))
    return json_path, img_dir


def _del(entry, key):
    del entry[key]


BAD_JSON = {
    'image_without_id': (lambda d: _del(d['images'][1], 'id'), r"images\[1\]: 'id' is missing"),
    'image_id_string': (lambda d: d['images'][0].update(id='7'),
                        r"images\[0\] \(id '7'\): 'id' must be an int, got str '7'"),
    'category_without_id': (lambda d: _del(d['categories'][0], 'id'),
                            r"categories\[0\]: 'id' is missing"),
    'category_without_name': (lambda d: _del(d['categories'][1], 'name'),
                              r"categories\[1\] \(id 5\): 'name' is missing"),
    'unknown_image_id': (lambda d: d['annotations'][0].update(image_id=99),
                         r"annotations\[0\] \(id 1\): 'image_id' must be the id of an image, "
                         r"got int 99"),
    'annotation_without_image_id': (lambda d: _del(d['annotations'][0], 'image_id'),
                                    r"annotations\[0\] \(id 1\): 'image_id' is missing"),
    'images_not_a_list': (lambda d: d.update(images={'id': 1}), "'images': expected a list"),
    'annotation_not_an_object': (lambda d: d['annotations'].append(3),
                                 r"annotations\[1\]: the entry must be an object, got int 3"),
}


@pytest.mark.parametrize('case', list(BAD_JSON))
def test_malformed_json_entry_names_file_and_entry(tmp_path, case):
    change, match = BAD_JSON[case]
    json_path, img_dir = _write_raw(tmp_path, change)
    with pytest.raises(errors.AnnotationError, match=match) as info:
        COCOBboxDataset.from_json(json_path, img_dir)
    assert 'instances.json' in str(info.value)


def test_bad_rle_and_missing_image(tmp_path):
    ann = dict(ANNOTATIONS[0], segmentation={'size': [H, W], 'counts': [3, 4]})
    json_path, img_dir = write_coco(tmp_path, [ann])
    with pytest.raises(errors.AnnotationError, match=r"annotations\[0\] \(id 1\): "
                                                     r"'segmentation': 'counts'"):
        COCOInstanceSegmentationDataset.from_json(json_path, img_dir)[0]
    (img_dir / 'a.png').unlink()
    with pytest.raises(OSError, match='a.png'):
        COCOBboxDataset.from_json(json_path, img_dir)[0]
