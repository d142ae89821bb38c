"""COCOKeypointDataset and the registry's keypoint datasets on a small person_keypoints json."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.datasets import COCOKeypointDataset, coco_keypoint_names, registry
from tests.helpers.coco_files import (H, KEYPOINT_ANNOTATIONS, W,
                                      write_coco_keypoints)


def test_points_visible_labels_boxes_in_x_y(tmp_path):
    json_path, img_dir = write_coco_keypoints(tmp_path)
    dataset = COCOKeypointDataset.from_json(json_path, img_dir)
    assert len(dataset) == 2 and dataset.label_names == ('person',)
    assert dataset.point_names == ('nose', 'left_eye', 'right_eye')
    img, point, visible, label, bbox = dataset[0]  # image id 3 first; crowd left out
    assert img.shape == (3, H, W)
    assert point.shape == (2, 3, 2) and point.dtype == numpy.float32
    numpy.testing.assert_array_equal(point[0], [[4, 2], [5.5, 1.5], [3, 1.5]])  # (x, y)
    numpy.testing.assert_array_equal(point[1], [[10, 6], [0, 0], [12, 7]])
    # v = 1 (labelled, hidden) counts as visible; v = 0 does not
    assert visible.dtype == bool and visible.tolist() == [[True, True, True],
                                                          [True, False, True]]
    assert label.dtype == numpy.int32 and label.tolist() == [0, 0]
    numpy.testing.assert_array_equal(bbox, [[2, 1, 8, 5], [9, 5, 14, 11]])
    _, point, visible, label, bbox = dataset[1]  # no annotation
    assert point.shape == (0, 3, 2) and visible.shape == (0, 3) and bbox.shape == (0, 4)


def test_crowds_and_areas_when_asked(tmp_path):
    json_path, img_dir = write_coco_keypoints(tmp_path)
    dataset = COCOKeypointDataset.from_json(json_path, img_dir, use_crowded=True,
                                            return_crowded=True, return_area=True)
    img, point, visible, label, bbox, crowded, area = dataset[0]
    assert crowded.tolist() == [False, False, True]
    numpy.testing.assert_array_equal(area, [20.5, 25, 9])
    assert not visible[2].any() and point.shape == (3, 3, 2)


def test_official_layout_and_coco_names_by_default(tmp_path):
    (tmp_path / 'annotations').mkdir()
    person = {'id': 1, 'name': 'person'}  # no 'keypoints' list: COCO's 17 names
    ann = dict(KEYPOINT_ANNOTATIONS[0], keypoints=[1, 2, 2] * 17)
    json_path, img_dir = write_coco_keypoints(
        tmp_path, [ann], [person], json_name='annotations/person_keypoints_val2017.json')
    img_dir.rename(tmp_path / 'val2017')
    dataset = COCOKeypointDataset(str(tmp_path), split='val', year='2017')
    assert dataset.point_names == coco_keypoint_names
    _, point, visible, _, _ = dataset[0]
    assert point.shape == (1, 17, 2) and visible.all()


@pytest.mark.parametrize('keypoints', [[1, 2, 2] * 2, None, [1, float('nan'), 2] * 3, 'x'],
                         ids=['too-few', 'missing', 'nan', 'not-a-list'])
def test_bad_keypoints_name_the_file_and_annotation(tmp_path, keypoints):
    ann = dict(KEYPOINT_ANNOTATIONS[0])
    if keypoints is None:
        del ann['keypoints']
    else:
        ann['keypoints'] = keypoints
    json_path, img_dir = write_coco_keypoints(tmp_path, [ann])
    dataset = COCOKeypointDataset.from_json(json_path, img_dir)
    with pytest.raises(errors.AnnotationError, match=r"person_keypoints.json: annotations\[0\] "
                                                     r"\(id 11\): 'keypoints'"):
        dataset[0]


def test_registry_resolves_a_json_a_folder_and_coco_val2017(tmp_path):
    json_path, img_dir = write_coco_keypoints(tmp_path)
    data = registry.load_keypoint_detection_dataset(str(json_path), data_dir=str(img_dir),
                                                    limit=1)
    assert (data.protocol, data.label_names, len(data.dataset)) == ('coco', ('person',), 1)
    img, point, visible, label, bbox, crowded, area = data.dataset[0]
    assert crowded.tolist() == [False, False, True]  # crowds kept for the protocol
    # the model's classes: the person becomes label 2
    data = registry.load_keypoint_detection_dataset(str(json_path), ('cat', 'dog', 'person'),
                                                    data_dir=str(img_dir))
    _, point, visible, label, *_ = data.dataset[0]
    assert label.tolist() == [2, 2, 2] and visible.dtype == bool
    root = tmp_path / 'layout'
    (root / 'annotations').mkdir(parents=True)
    json_path.rename(root / 'annotations' / 'person_keypoints_val2017.json')
    img_dir.rename(root / 'val2017')
    for name in (str(root), str(root / 'annotations' / 'person_keypoints_val2017.json')):
        assert len(registry.load_keypoint_detection_dataset(name).dataset) == 2
    data = registry.load_keypoint_detection_dataset('coco-val2017', data_dir=str(root))
    assert data.dataset[0][1].shape == (3, 3, 2)
    with pytest.raises(ValueError, match='dataset'):
        registry.load_keypoint_detection_dataset(str(tmp_path / 'absent'))
