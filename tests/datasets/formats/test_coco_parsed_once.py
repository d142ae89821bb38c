"""A COCO json is parsed once by load_training_data(format='auto'): telling its format and
reading its examples share the parse, for each of its layouts and a --val json."""

import json
import os
import pathlib
import shutil

import pytest

from cvzoo import errors
from cvzoo.datasets.formats import detect_format, load_training_data, parse_once
from cvzoo.testing import synthetic_data


@pytest.fixture
def parses(monkeypatch):
    """The files json.load parses, in order (a list that fills as they are read)."""
    seen = []
    original = json.load

    def load(file, **kwargs):
        seen.append(pathlib.Path(file.name).name)
        return original(file, **kwargs)
    monkeypatch.setattr(json, 'load', load)
    return seen


@pytest.mark.parametrize('format, name', [('coco_instances', 'instances_train.json'),
                                          ('coco_keypoints', 'person_keypoints_train.json')])
def test_a_json_given_alone_is_parsed_once(format, name, tmp_path, parses):
    root = synthetic_data.make_dataset(format, tmp_path / 'data', 3, 0, 32)
    data = load_training_data(root / 'annotations' / name)
    assert data.format == format and len(data.train) + len(data.val) == 3
    assert parses == [name]


@pytest.mark.parametrize('format, prefix', [('coco_instances', 'instances'),
                                            ('coco_keypoints', 'person_keypoints')])
def test_a_coco_folder_parses_each_split_once(format, prefix, tmp_path, parses):
    root = synthetic_data.make_dataset(format, tmp_path / 'data', 3, 2, 32)
    data = load_training_data(root)
    assert (data.format, len(data.train), len(data.val)) == (format, 3, 2)
    assert sorted(parses) == [f'{prefix}_train.json', f'{prefix}_val.json']


def test_roboflow_jsons_and_a_val_json_are_parsed_once_each(tmp_path, parses):
    """The jsons beside their images are parsed to find them, then read from that parse."""
    written = synthetic_data.make_dataset('coco_instances', tmp_path / 'written', 3, 2, 32)
    root = tmp_path / 'export'
    for split, folder in (('train', 'train'), ('val', 'valid')):
        shutil.copytree(written / split, root / folder)
        shutil.copy(written / 'annotations' / f'instances_{split}.json',
                    root / folder / '_annotations.coco.json')
    val = written / 'annotations' / 'instances_val.json'
    del parses[:]
    data = load_training_data(root, val=val)
    assert (data.format, len(data.train), len(data.val)) == ('coco_instances', 3, 2)
    assert sorted(parses) == ['_annotations.coco.json'] * 2 + ['instances_val.json']


def test_each_call_outside_a_block_parses_afresh(tmp_path, parses):
    """Documents are let go when the call ends: a json rewritten since is read as it is."""
    root = synthetic_data.make_dataset('coco_instances', tmp_path / 'data', 3, 0, 32)
    json_path = root / 'annotations' / 'instances_train.json'
    assert load_training_data(json_path, val_fraction=0).label_names == (
        synthetic_data.SHAPE_NAMES)
    document = json.loads(json_path.read_text())
    document['categories'][0]['name'] = 'disc'
    json_path.write_text(json.dumps(document))
    assert load_training_data(json_path, val_fraction=0).label_names[0] == 'disc'
    assert parses == ['instances_train.json'] * 2


def test_a_file_changed_inside_a_block_is_parsed_again(tmp_path, parses):
    root = synthetic_data.make_dataset('coco', tmp_path / 'data', 2, 0, 32)
    json_path = root / 'annotations' / 'instances_train.json'
    with parse_once():
        assert detect_format(json_path) == 'coco'
        assert detect_format(json_path, 'detection') == 'coco'
        assert len(parses) == 1
        json_path.write_text(json_path.read_text() + ' ')  # one byte more
        assert detect_format(json_path) == 'coco'
    assert len(parses) == 2


def test_a_broken_json_is_still_named(tmp_path, parses):
    path = tmp_path / 'instances_train.json'
    path.write_text('{"images": [')
    with pytest.raises(errors.CorruptFileError, match='not valid json') as error:
        load_training_data(path)
    assert str(path) in str(error.value)
    os.remove(path)
    with pytest.raises(errors.MissingFileError, match='does not exist'):
        load_training_data(path)
