"""The detector and the picture shipped inside the package: their hashes, their use before
any download, the refusal of a damaged copy, and `cvzoo predict` with no arguments."""

import hashlib
import os
import re
import shutil

import pytest
from PIL import Image

from cvzoo import errors
from cvzoo.cli import main
from cvzoo.models import registry, zoo
from cvzoo.models.weights import embedded, weight_files
from cvzoo.utils import download


def _sha256(path):
    with open(path, 'rb') as file:
        return hashlib.sha256(file.read()).hexdigest()


def _shipped_entry():
    model_name, key = embedded.SHIPPED_WEIGHTS
    return registry.resolve_weights(registry.get_model_class(model_name), key)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """An empty $CVZOO_HOME, no mirror, and every download failing."""
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path / 'home'))
    monkeypatch.delenv('CVZOO_WEIGHTS_MIRROR', raising=False)

    def refuse(url, *args, **kwargs):
        raise errors.DownloadError(f'{url}: this test has no network')

    monkeypatch.setattr(download, 'download', refuse)


def test_shipped_files_match_the_registry_entry():
    entry = _shipped_entry()
    assert [f.file_name for f in entry.all_files] == ['yolo-fastest-xl-voc.weights',
                                                      'yolo-fastest-xl-voc.cfg']
    for weight_file in entry.all_files:
        path = os.path.join(embedded.EMBEDDED_DIR, weight_file.file_name)
        assert _sha256(path) == weight_file.sha256, weight_file.file_name
    shipped = {name for name in os.listdir(embedded.EMBEDDED_DIR)
               if name.endswith(('.cfg', '.weights'))}
    assert shipped == {f.file_name for f in entry.all_files}


def test_sample_image_is_darknets_dog():
    path = embedded.sample_image_path()
    assert os.path.basename(path) == 'dog.jpg'
    assert Image.open(path).size == (768, 576)
    # the hash the folder's README gives, the picture of ../shared/data/images/dog.jpg
    with open(os.path.join(embedded.EMBEDDED_DIR, 'README.md')) as file:
        readme = file.read()
    assert re.search(rf'`dog.jpg` \| {_sha256(path)} \|', readme)


def test_the_entry_resolves_to_the_shipped_files_with_no_network(offline):
    paths = zoo.fetch_weights(_shipped_entry())
    assert [os.path.dirname(p) for p in paths] == [embedded.EMBEDDED_DIR] * 2


def test_a_file_of_the_same_name_and_another_hash_is_not_the_shipped_one(offline):
    cfg = _shipped_entry().files[0]
    other = zoo.WeightFile('https://example.invalid/yolo-fastest-xl-voc.cfg', 'a' * 64,
                           cfg.file_name)
    with pytest.raises(errors.DownloadError, match='example.invalid'):
        weight_files.fetch_file(other)


@pytest.fixture
def damaged(monkeypatch, tmp_path):
    """A copy of the shipped folder whose weights file has one byte changed."""
    folder = tmp_path / 'embedded'
    shutil.copytree(embedded.EMBEDDED_DIR, folder, ignore=shutil.ignore_patterns('*.py*'))
    path = folder / 'yolo-fastest-xl-voc.weights'
    data = bytearray(path.read_bytes())
    data[1000] ^= 0xFF
    path.write_bytes(bytes(data))
    monkeypatch.setattr(embedded, 'EMBEDDED_DIR', str(folder))
    return str(path)


def test_a_damaged_shipped_file_is_refused_by_name(offline, damaged):
    with pytest.raises(errors.CorruptFileError, match=re.escape(damaged)):
        zoo.fetch_weights(_shipped_entry())


def test_predict_refuses_a_damaged_shipped_file(offline, damaged, capsys):
    assert main.main(['predict']) == 2
    err = capsys.readouterr().err
    assert damaged in err and 'damaged' in err


def _detections(out):
    """{label name: score} of the lines `cvzoo predict` prints for one image."""
    found = {}
    for score, name in re.findall(r'^\s+([0-9.]+)\s+(\S+)\s+\(', out, flags=re.MULTILINE):
        found[name] = max(found.get(name, 0.0), float(score))
    return found


def test_predict_with_no_arguments_runs_the_shipped_detector_on_the_sample(offline, capsys):
    assert main.main(['predict']) == 0
    out = capsys.readouterr().out
    assert out.startswith(embedded.sample_image_path() + ':')
    found = _detections(out)
    # Darknet's own scores for yolo-fastest-xl-voc on dog.jpg: dog 0.95, bicycle 0.996,
    # car 0.997 (../shared/data/README.md)
    for name, score in {'dog': 0.950, 'bicycle': 0.996, 'car': 0.997}.items():
        assert abs(found[name] - score) < 2e-3, (name, found)


@pytest.mark.parametrize('argv, message', [
    (['predict', '--model', 'yolo_fastest_xl'], '--pretrained-model: required'),
    (['predict', '--pretrained-model', 'voc'], 'give the model it is for with --model'),
])
def test_model_and_weights_key_come_together(argv, message, capsys):
    assert main.main(argv) == 2
    assert message in capsys.readouterr().err
