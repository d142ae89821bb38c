"""End-to-end smoke test of scripts/eval_semantic_segmentation.py on a tiny folder."""

import dataclasses

import numpy
import pytest

from cvzoo.core.serializers import npz
from cvzoo.evaluators.metrics.eval_semantic_segmentation import eval_semantic_segmentation
from cvzoo.models.segmentation import evaluate
from cvzoo.models.segmentation.espnet import espnet
from cvzoo.utils import image
from tests.helpers.scripts import load_script


@pytest.fixture(scope='module')
def script():
    return load_script('eval_semantic_segmentation')


def _folder(root, rng, n_image=3, size=(20, 28)):
    (root / 'images').mkdir(parents=True)
    (root / 'labels').mkdir()
    for i in range(n_image):
        image.write_image(rng.uniform(0, 255, (3,) + size), root / 'images' / f'{i}.png')
        label = rng.integers(0, 5, size).astype(numpy.uint8)
        label[:2] = 255  # ignored
        image.write_image(label[None], root / 'labels' / f'{i}.png')
    return root


def test_folder_dataset_with_a_local_weight_file(script, tmp_path, rng, capsys, monkeypatch):
    root = _folder(tmp_path / 'data', rng)
    model = espnet.ESPNet(n_class=5)
    npz.save_npz(tmp_path / 'model.npz', model)
    # NOTE: keep the run small: the default preset would resize to 360 x 480.
    small = dataclasses.replace(model.preset, size=(24, 32))
    monkeypatch.setattr(espnet.ESPNet, 'weights', {'camvid': dataclasses.replace(
        espnet.ESPNet.weights['camvid'], preset=small)})
    report = script.main(['--model', 'espnet', '--pretrained-model', str(tmp_path / 'model.npz'),
                          '--dataset', str(root), '--n-class', '5', '--ignore-label', '255',
                          '--limit', '2', '--batchsize', '1'])
    out = capsys.readouterr().out
    assert 'on ' + str(root) + ': 2 images' in out
    assert 'mIoU' in out and 'pixel accuracy' in out and 'reported' not in out
    assert evaluate.format_report(report, [str(k) for k in range(5)], {}) in out
    labels = [image.read_label(root / 'labels' / f'{i}.png') for i in range(2)]
    for label in labels:
        label[label == 255] = -1
    model.preset = small
    imgs = [image.read_image(root / 'images' / f'{i}.png') for i in range(2)]
    expected = eval_semantic_segmentation(model.predict(imgs), labels)
    assert report['miou'] == pytest.approx(expected['miou'])
    assert report['pixel_accuracy'] == pytest.approx(expected['pixel_accuracy'])


