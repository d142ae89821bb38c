"""YOLOBboxDataset and read_data_yaml: normalised centre boxes become pixel corners; a bad
label line or data.yaml is refused naming the file and the line or key."""

import json

import numpy
import pytest

from cvzoo import errors
from cvzoo.datasets.yolo.data_yaml import read_data_yaml
from cvzoo.datasets.yolo.yolo_dataset import YOLOBboxDataset, read_yolo_labels
from cvzoo.utils.image import write_image

NAMES = ('cat', 'dog')


def _folder(tmp_path, lines, W=40, H=20, name='a'):
    """images/train/<name>.png (W x H) and labels/train/<name>.txt holding ``lines``."""
    (tmp_path / 'images' / 'train').mkdir(parents=True, exist_ok=True)
    (tmp_path / 'labels' / 'train').mkdir(parents=True, exist_ok=True)
    img_path = tmp_path / 'images' / 'train' / f'{name}.png'
    write_image(numpy.full((3, H, W), 100, numpy.float32), img_path)
    if lines is not None:
        (tmp_path / 'labels' / 'train' / f'{name}.txt').write_text(lines)
    return img_path


def test_centre_boxes_become_pixel_corners(tmp_path):
    img_path = _folder(tmp_path, '0 0.5 0.5 0.5 0.25\n\n1 0.125 0.75 0.25 0.5\n')
    img, bbox, label = YOLOBboxDataset([img_path], NAMES)[0]
    assert img.shape == (3, 20, 40) and bbox.dtype == numpy.float32
    numpy.testing.assert_allclose(bbox, [[10, 7.5, 30, 12.5], [0, 10, 10, 20]])
    numpy.testing.assert_array_equal(label, numpy.array([0, 1], numpy.int32))


def test_polygon_line_gives_its_box(tmp_path):
    img_path = _folder(tmp_path, '1 0.25 0.5 0.75 0.25 0.5 1.0\n')
    _, bbox, label = YOLOBboxDataset([img_path], NAMES)[0]
    numpy.testing.assert_allclose(bbox, [[10, 5, 30, 20]])
    assert label.tolist() == [1]


def test_image_without_label_file_has_no_boxes(tmp_path):
    img_path = _folder(tmp_path, None)
    _, bbox, label = YOLOBboxDataset([img_path], NAMES)[0]
    assert bbox.shape == (0, 4) and bbox.dtype == numpy.float32
    assert label.shape == (0,) and label.dtype == numpy.int32


@pytest.mark.parametrize('line, expected', [
    ('0 0.5 0.5 0.5', 'expected 5 fields'),
    ('0 0.5 0.5 0.5 0.5 0.5', 'expected 5 fields'),
    ('2 0.5 0.5 0.5 0.5', 'class 2 is not one of the 2 names'),
    ('-1 0.5 0.5 0.5 0.5', 'class -1 is not one of'),
    ('0.5 0.5 0.5 0.5 0.5', 'class 0.5 is not one of'),
    ('0 nan 0.5 0.5 0.5', 'finite and normalised'),
    ('0 0.5 inf 0.5 0.5', 'finite and normalised'),
    ('0 0.5 0.5 1.5 0.5', 'finite and normalised'),
    ('0 12 30 8 8', 'finite and normalised'),
    ('0 0.5 0.5 -0.1 0.5', 'finite and normalised'),
    ('cat 0.5 0.5 0.5 0.5', 'expected numbers'),
], ids=['four_fields', 'six_fields', 'class_too_large', 'class_negative', 'class_fraction',
        'nan', 'inf', 'above_one', 'pixels_not_normalised', 'negative', 'not_a_number'])
def test_bad_line_names_file_and_line(line, expected, tmp_path):
    img_path = _folder(tmp_path, f'0 0.5 0.5 0.2 0.2\n{line}\n')
    with pytest.raises(errors.AnnotationError, match=expected) as error:
        YOLOBboxDataset([img_path], NAMES)
    assert f'{tmp_path / "labels" / "train" / "a.txt"}: line 2:' in str(error.value)


def test_labels_are_checked_when_the_dataset_is_made(tmp_path):
    good = _folder(tmp_path, '0 0.5 0.5 0.2 0.2\n', name='good')
    bad = _folder(tmp_path, '5 0.5 0.5 0.2 0.2\n', name='bad')
    with pytest.raises(errors.AnnotationError, match='bad.txt: line 1'):
        YOLOBboxDataset([good, bad], NAMES)
    label, box = read_yolo_labels(tmp_path / 'labels' / 'train' / 'good.txt', 2)
    assert label.tolist() == [0] and box.shape == (1, 4)


def _yaml(tmp_path, config, text=None):
    path = tmp_path / 'data.yaml'
    path.write_text(text if text is not None else json.dumps(config))
    return path


def test_data_yaml_forms(tmp_path):
    _folder(tmp_path, '0 0.5 0.5 0.2 0.2\n')
    listing = tmp_path / 'train.txt'
    listing.write_text('./images/train/a.png\n')
    text = ("path: .\ntrain: train.txt\nval: [images/train]\n"
            "names:\n  '0': cat\n  '1': dog\n")
    config = read_data_yaml(_yaml(tmp_path, None, text))
    assert config.label_names == NAMES
    assert [p.name for p in config.train] == ['a.png'] and len(config.val) == 1
    assert read_data_yaml(_yaml(tmp_path, {'train': 'images/train',
                                           'names': list(NAMES)})).val is None


@pytest.mark.parametrize('config, expected', [
    ({'names': ['cat']}, "'train' is missing"),
    ({'train': 'images/train'}, "'names' is missing"),
    ({'train': 'images/train', 'names': {0: 'cat', 2: 'dog'}}, 'keys 0 to 1'),
    ({'train': 'images/train', 'names': 'cat dog'}, 'expected a list of class names'),
    ({'train': 'images/train', 'names': []}, 'expected a list of class names'),
    ({'train': 'images/train', 'names': ['cat', 'dog'], 'nc': 3}, "'nc' is 3"),
    ({'train': 5, 'names': ['cat']}, "'train': expected a folder"),
    (['train', 'names'], 'expected a mapping'),
], ids=['no_train', 'no_names', 'names_keys', 'names_string', 'names_empty', 'nc_mismatch',
        'train_number', 'not_a_mapping'])
def test_bad_data_yaml_names_file_and_key(config, expected, tmp_path):
    _folder(tmp_path, '0 0.5 0.5 0.2 0.2\n')
    path = _yaml(tmp_path, config)
    with pytest.raises(errors.AnnotationError, match=expected) as error:
        read_data_yaml(path)
    assert str(path) in str(error.value)


def test_data_yaml_missing_folder_and_bad_yaml(tmp_path):
    path = _yaml(tmp_path, {'train': 'images/nowhere', 'names': ['cat']})
    with pytest.raises(errors.MissingFileError, match="'train': 'images/nowhere'"):
        read_data_yaml(path)
    path = _yaml(tmp_path, None, 'train: [images\nnames: {')
    with pytest.raises(errors.CorruptFileError, match='not valid YAML'):
        read_data_yaml(path)
