"""detect_format: each layout annotation tools export is recognised, and a folder that is
none of them, or more than one, is refused naming the path and what was looked for."""

import json
import shutil

import pytest

from cvzoo import errors
from cvzoo.datasets.formats import FORMATS, detect_format, load_training_data
from cvzoo.testing import synthetic_data


@pytest.mark.parametrize('n_val', [0, 2])
@pytest.mark.parametrize('format', FORMATS)
def test_each_generated_format_is_recognised(format, n_val, tmp_path):
    root = synthetic_data.make_dataset(format, tmp_path / 'data', 3, n_val, 32)
    assert detect_format(root) == format


def test_files_are_recognised_by_what_they_hold(tmp_path):
    coco = synthetic_data.make_dataset('coco', tmp_path / 'coco', 2, 0, 32)
    instances = synthetic_data.make_dataset('coco_instances', tmp_path / 'masks', 2, 0, 32,
                                            masks='rle')
    keypoints = synthetic_data.make_dataset('coco_keypoints', tmp_path / 'points', 2, 0, 32)
    yolo = synthetic_data.make_dataset('yolo', tmp_path / 'yolo', 2, 0, 32)
    assert detect_format(coco / 'annotations' / 'instances_train.json') == 'coco'
    assert detect_format(instances / 'annotations' / 'instances_train.json') == 'coco_instances'
    assert detect_format(keypoints / 'annotations' / 'person_keypoints_train.json') == (
        'coco_keypoints')
    assert detect_format(yolo / 'data.yaml') == 'yolo'


@pytest.mark.parametrize('task, expected', [
    (None, 'coco_keypoints'), ('keypoint_detection', 'coco_keypoints'),
    ('instance_segmentation', 'coco_instances'), ('detection', 'coco')])
def test_a_coco_json_is_read_for_the_task_asked(task, expected, tmp_path):
    root = synthetic_data.make_dataset('coco_keypoints', tmp_path / 'data', 2, 0, 32)
    assert detect_format(root, task) == expected


def test_a_box_only_coco_json_cannot_train_masks(tmp_path):
    root = synthetic_data.make_dataset('coco', tmp_path / 'data', 2, 0, 32)
    with pytest.raises(errors.UsageError, match='no masks') as error:
        detect_format(root, 'instance_segmentation')
    assert 'instances_train.json' in str(error.value)
    with pytest.raises(errors.UsageError, match="cannot train 'classification'"):
        detect_format(root, 'classification')


def test_keypoints_json_beside_instances_json_is_chosen_by_task(tmp_path):
    root = synthetic_data.make_dataset('coco_instances', tmp_path / 'data', 2, 0, 32)
    points = synthetic_data.make_dataset('coco_keypoints', tmp_path / 'points', 2, 0, 32)
    shutil.copy(points / 'annotations' / 'person_keypoints_train.json', root / 'annotations')
    assert detect_format(root) == 'coco_instances'
    assert detect_format(root, 'keypoint_detection') == 'coco_keypoints'
    data = load_training_data(root, task='keypoint_detection', val_fraction=0)
    assert data.label_names == ('shape',)


def test_roboflow_coco_layout(tmp_path):
    """train/ and valid/ each with _annotations.coco.json beside the images."""
    written = synthetic_data.make_dataset('coco', tmp_path / 'written', 3, 2, 32)
    root = tmp_path / 'export'
    for split, folder in (('train', 'train'), ('val', 'valid')):
        shutil.copytree(written / split, root / folder)
        shutil.copy(written / 'annotations' / f'instances_{split}.json',
                    root / folder / '_annotations.coco.json')
    assert detect_format(root) == 'coco'
    data = load_training_data(root)
    assert (len(data.train), len(data.val)) == (3, 2)
    assert detect_format(root / 'train' / '_annotations.coco.json') == 'coco'


def test_several_unnamed_coco_jsons_are_ambiguous(tmp_path):
    root = synthetic_data.make_dataset('coco', tmp_path / 'data', 2, 0, 32)
    json_path = root / 'annotations' / 'instances_train.json'
    shutil.copy(json_path, root / 'annotations' / 'instances_a.json')
    json_path.rename(root / 'annotations' / 'instances_b.json')
    with pytest.raises(errors.UsageError, match='several COCO jsons') as error:
        load_training_data(root)
    assert 'instances_a.json' in str(error.value) and 'instances_b.json' in str(error.value)


def test_a_json_that_is_not_coco_is_refused(tmp_path):
    path = tmp_path / 'labels.json'
    path.write_text(json.dumps({'labels': [1, 2]}))
    with pytest.raises(errors.UsageError, match='not a COCO json') as error:
        detect_format(path)
    assert str(path) in str(error.value)


@pytest.mark.parametrize('names', [['circle', 'square', 'triangle'],
                                   {0: 'circle', 1: 'square', 2: 'triangle'}])
def test_roboflow_data_yaml_without_path(names, tmp_path):
    """Roboflow writes train: ../train/images relative to the dataset's folder."""
    written = synthetic_data.make_dataset('yolo', tmp_path / 'written', 3, 2, 32)
    root = tmp_path / 'export'
    for split, folder in (('train', 'train'), ('val', 'valid')):
        for kind in ('images', 'labels'):
            shutil.copytree(written / kind / split, root / folder / kind)
    (root / 'data.yaml').write_text(json.dumps(
        {'train': '../train/images', 'val': '../valid/images', 'nc': 3, 'names': names}))
    assert detect_format(root) == 'yolo'
    data = load_training_data(root / 'data.yaml')
    assert (len(data.train), len(data.val)) == (3, 2)
    assert data.label_names == ('circle', 'square', 'triangle')


def test_yolo_with_classes_txt_and_no_yaml(tmp_path):
    """Label Studio's YOLO export: images/, labels/ and classes.txt."""
    root = synthetic_data.make_dataset('yolo', tmp_path / 'data', 3, 0, 32)
    (root / 'data.yaml').unlink()
    (root / 'classes.txt').write_text('circle\nsquare\ntriangle\n')
    assert detect_format(root) == 'yolo'
    assert len(load_training_data(root, val_fraction=0).train) == 3


def test_ambiguous_folder_names_each_layout(tmp_path):
    root = synthetic_data.make_dataset('voc', tmp_path / 'data', 2, 0, 32)
    synthetic_data.make_dataset('yolo', root, 2, 0, 32)
    with pytest.raises(errors.UsageError, match='ambiguous') as error:
        detect_format(root)
    message = str(error.value)
    assert str(root) in message and 'voc' in message and 'yolo' in message


def test_unknown_layout_lists_what_was_looked_for(tmp_path):
    (tmp_path / 'notes').mkdir()
    (tmp_path / 'notes' / 'a.txt').write_text('hello')
    with pytest.raises(errors.UsageError, match='cannot tell the format') as error:
        detect_format(tmp_path / 'notes')
    message = str(error.value)
    assert str(tmp_path / 'notes') in message
    assert all(name in message for name in FORMATS)


def test_missing_path_and_bad_task(tmp_path):
    with pytest.raises(errors.MissingFileError, match='does not exist'):
        detect_format(tmp_path / 'none')
    with pytest.raises(errors.UsageError, match='task'):
        detect_format(tmp_path, 'captioning')


def test_loose_images_are_not_class_folders(tmp_path):
    root = synthetic_data.write_class_folders(tmp_path / 'data',
                                              synthetic_data.texture_images(4, 32))
    shutil.copy(next((root / 'dots').iterdir()), root / 'loose.png')
    with pytest.raises(errors.UsageError, match='cannot tell'):
        detect_format(root)


def test_class_folders_named_train_and_val_are_a_split(tmp_path):
    root = synthetic_data.make_dataset('class_folders', tmp_path / 'data', 8, 4, 32)
    data = load_training_data(root)
    assert (len(data.train), len(data.val)) == (8, 4)
    assert data.label_names == tuple(sorted(synthetic_data.TEXTURE_NAMES))


def test_segmentation_needs_its_class_list(tmp_path):
    root = synthetic_data.make_dataset('segmentation_folders', tmp_path / 'data', 2, 0, 32)
    (root / 'classes.txt').unlink()
    assert detect_format(root) == 'segmentation_folders'
    with pytest.raises(errors.MissingFileError, match='classes.txt'):
        load_training_data(root)


def test_voc_split_lists(tmp_path):
    root = synthetic_data.make_dataset('voc', tmp_path / 'data', 6, 2, 32)
    lists = root / 'ImageSets' / 'Main'
    assert len(load_training_data(root).val) == 2  # train.txt and test.txt
    ids = (lists / 'train.txt').read_text().split()
    (lists / 'train.txt').write_text('\n'.join(ids[:4]))
    (lists / 'val.txt').write_text('\n'.join(ids[4:]))
    data = load_training_data(root)  # train.txt and val.txt before test.txt
    assert (len(data.train), len(data.val)) == (4, 2)
    (lists / 'val.txt').unlink()
    (lists / 'test.txt').write_text('')
    data = load_training_data(root, val_fraction=0.25)  # an empty list is no split
    assert (len(data.train), len(data.val)) == (3, 1)


def test_a_stray_json_does_not_make_a_folder_coco(tmp_path):
    root = synthetic_data.make_dataset('yolo', tmp_path / 'data', 2, 0, 32)
    (root / 'notes.json').write_text(json.dumps({'author': 'me'}))
    assert detect_format(root) == 'yolo'


def test_a_yaml_named_after_the_dataset(tmp_path):
    root = synthetic_data.make_dataset('yolo', tmp_path / 'data', 2, 0, 32)
    (root / 'data.yaml').rename(root / 'shapes8.yaml')
    assert detect_format(root) == 'yolo'
    assert len(load_training_data(root, val_fraction=0).train) == 2
