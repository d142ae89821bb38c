"""cvzoo.datasets.registry.load_instance_segmentation_dataset: named splits, COCO-format
jsons with their image folders, label names mapped onto a model's."""

import json

import numpy
import pytest

from cvzoo.datasets import registry
from cvzoo.utils import image

MODEL_NAMES = ('cat', 'dog', 'person')


def test_json_with_its_images_in_data_dir(tmp_path):
    """A json anywhere, its images in data_dir; categories follow the model's names."""
    folder = tmp_path / 'elsewhere'
    folder.mkdir()
    image.write_image(numpy.zeros((3, 6, 8), numpy.float32), folder / 'a.png')
    json_path = tmp_path / 'mine.json'
    json_path.write_text(json.dumps({
        'images': [{'id': 1, 'file_name': 'a.png', 'height': 6, 'width': 8}],
        'annotations': [{'id': 1, 'image_id': 1, 'category_id': 2, 'iscrowd': 0,
                         'segmentation': [[1, 1, 4, 1, 4, 3, 1, 3]], 'area': 6.0,
                         'bbox': [1, 1, 3, 2]}],
        'categories': [{'id': 2, 'name': 'person'}]}))
    data = registry.load_instance_segmentation_dataset(str(json_path), MODEL_NAMES,
                                                       data_dir=str(folder))
    assert (data.protocol, data.label_names, len(data.dataset)) == ('coco', MODEL_NAMES, 1)
    _, mask, label, crowded, area = data.dataset[0]
    assert mask.shape == (1, 6, 8) and mask.sum() == 6 and label.tolist() == [2]
    with pytest.raises(ValueError, match=r"\['person'\]"):
        registry.load_instance_segmentation_dataset(str(json_path), ('cat',),
                                                    data_dir=str(folder))
    with pytest.raises(ValueError, match='dataset: expected one of'):
        registry.load_instance_segmentation_dataset(str(tmp_path / 'absent.json'))


def test_sbd_val_uses_the_11_point_ap_and_unknown_names_are_refused(tmp_path):
    (tmp_path / 'val.txt').write_text('')
    data = registry.load_instance_segmentation_dataset('sbd-val', data_dir=str(tmp_path))
    assert (data.protocol, data.use_07_metric, len(data.dataset)) == ('voc', True, 0)
    with pytest.raises(ValueError, match='dataset: expected one of'):
        registry.load_instance_segmentation_dataset('coco-val2099')


def test_coco_layout_json_finds_its_image_folder(tmp_path):
    (tmp_path / 'annotations').mkdir()
    (tmp_path / 'val').mkdir()
    image.write_image(numpy.zeros((3, 4, 4), numpy.float32), tmp_path / 'val' / 'b.png')
    record = {'images': [{'id': 3, 'file_name': 'b.png', 'height': 4, 'width': 4}],
              'annotations': [], 'categories': [{'id': 1, 'name': 'dog'}]}
    (tmp_path / 'annotations' / 'instances_val.json').write_text(json.dumps(record))
    for name in (tmp_path / 'annotations' / 'instances_val.json', tmp_path):
        data = registry.load_instance_segmentation_dataset(str(name), limit=5)
        img, mask, label, crowded, area = data.dataset[0]
        assert img.shape == (3, 4, 4) and mask.shape == (0, 4, 4)
        assert data.label_names == ('dog',) and data.use_07_metric is None


def test_coco_val2017_in_a_data_dir_keeps_crowds_and_areas(tmp_path):
    (tmp_path / 'annotations').mkdir()
    (tmp_path / 'val2017').mkdir()
    image.write_image(numpy.zeros((3, 5, 6), numpy.float32), tmp_path / 'val2017' / 'c.png')
    crowd = {'size': [5, 6], 'counts': [0, 10, 20]}  # the first two columns
    record = {'images': [{'id': 9, 'file_name': 'c.png', 'height': 5, 'width': 6}],
              'annotations': [{'id': 1, 'image_id': 9, 'category_id': 1, 'iscrowd': 1,
                               'segmentation': crowd, 'area': 10.0, 'bbox': [0, 0, 2, 5]}],
              'categories': [{'id': 1, 'name': 'person'}]}
    (tmp_path / 'annotations' / 'instances_val2017.json').write_text(json.dumps(record))
    data = registry.load_instance_segmentation_dataset('coco-val2017', MODEL_NAMES,
                                                       data_dir=str(tmp_path))
    assert data.protocol == 'coco' and data.label_names == MODEL_NAMES
    _, mask, label, crowded, area = data.dataset[0]
    assert mask[0].sum() == 10 and mask[0, :, :2].all()
    assert label.tolist() == [2] and crowded.tolist() == [True] and area.tolist() == [10.0]
