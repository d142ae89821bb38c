"""End-to-end smoke test of scripts/eval_imagenet.py on a tiny folder-per-class dataset."""

import dataclasses

import numpy
import PIL.Image
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core.serializers import npz as npz_serializer
from cvzoo.datasets import registry as dataset_registry
from cvzoo.datasets.imagenet import imagenet_label_names
from cvzoo.models import discovery, registry, zoo
from cvzoo.models.classification import evaluate, image_classifier
from cvzoo.models.common import imagenet_presets
from tests.helpers.scripts import load_script

WNIDS = imagenet_label_names.imagenet_wnids


class TinyClassifier(image_classifier.ImageClassifier):
    """conv -> global mean -> fc, 1000 classes, 16x16 input."""

    head_name = 'fc'
    preset = zoo.Preset(size=16, mean=(128.0, 128.0, 128.0), std=(64.0, 64.0, 64.0),
                        crop_fraction=0.8)

    def __init__(self, n_class=None, pretrained_model=None, source=None):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(3, 4, 3, pad=1)
            self.pool = lambda x: F.mean(x, axis=(2, 3))
            self.fc = L.Linear(4, n_class or 1000)
        self._load_pretrained(pretrained_model, n_class, source)


@pytest.fixture
def tiny_model(monkeypatch, tmp_path):
    discovery.import_all_models()
    monkeypatch.setitem(registry._REGISTRY, 'tiny_cls', (TinyClassifier, 'classification'))
    entry = imagenet_presets.torchvision_entry('tiny-0123abcd.pth', 60.0, page='tiny')
    entry = dataclasses.replace(entry, preset=TinyClassifier.preset)
    monkeypatch.setattr(TinyClassifier, 'weights', {'imagenet': entry}, raising=False)
    model = TinyClassifier()
    rng = numpy.random.default_rng(0)
    for param in model.params():
        param.array[...] = rng.standard_normal(param.shape)
    npz_serializer.save_npz(tmp_path / 'tiny.npz', model)
    return model, tmp_path / 'tiny.npz'


def _write_folder(root, rng):
    classes = (WNIDS[3], WNIDS[500], WNIDS[999])
    for wnid in classes:
        (root / wnid).mkdir(parents=True)
        for i in range(2):
            img = rng.integers(0, 256, (20 + 7 * i, 24, 3), dtype=numpy.uint8)
            PIL.Image.fromarray(img).save(root / wnid / f'{i}.png')
    return classes


def _reference_errors(model, dataset, ten):
    truths = numpy.array([label for _, label in dataset])
    imgs = [img for img, _ in dataset]
    probs = evaluate.predict_ten_crop(model, imgs) if ten else model.predict(imgs)
    order = numpy.argsort(-probs, axis=1)
    top1 = 1 - numpy.mean(order[:, 0] == truths)
    top5 = 1 - numpy.mean([t in row[:5] for t, row in zip(truths, order)])
    return top1, top5


def test_wnid_folders_take_imagenet_labels(tmp_path):
    _write_folder(tmp_path / 'val', numpy.random.default_rng(1))
    dataset = dataset_registry.load_classification_dataset(tmp_path / 'val')
    assert list(dataset.labels) == [3, 3, 500, 500, 999, 999]


def test_file_list_and_its_errors(tmp_path):
    _write_folder(tmp_path / 'val', numpy.random.default_rng(2))
    (tmp_path / 'val.txt').write_text(f'val/{WNIDS[3]}/0.png 3\nval/{WNIDS[999]}/1.png 999\n')
    dataset = dataset_registry.load_classification_dataset(tmp_path / 'val.txt')
    assert len(dataset) == 2 and dataset[1][0].shape == (3, 27, 24) and dataset[1][1] == 999
    (tmp_path / 'bad.txt').write_text('only_a_path.png\n')
    with pytest.raises(ValueError, match='line 1: expected "path label"'):
        dataset_registry.load_classification_dataset(tmp_path / 'bad.txt')
    with pytest.raises(ValueError, match='crop: expected'):
        evaluate.evaluate(None, dataset, crop='five')


@pytest.mark.parametrize('crop', ['center', 'ten'])
def test_script_end_to_end(tiny_model, tmp_path, capsys, crop):
    model, weights = tiny_model
    _write_folder(tmp_path / 'val', numpy.random.default_rng(3))
    argv = ['--model', 'tiny_cls', '--pretrained-model', str(weights), '--dataset',
            str(tmp_path / 'val'), '--crop', crop, '--batchsize', '4', '--limit', '5']
    assert load_script('eval_imagenet').main(argv) == 0
    out = capsys.readouterr().out
    dataset = dataset_registry.load_classification_dataset(tmp_path / 'val')
    top1, top5 = _reference_errors(model, [dataset[i] for i in range(5)], crop == 'ten')
    assert f'top-1 error {100 * top1:.2f} %' in out and f'top-5 error {100 * top5:.2f} %' in out
    assert f'crop {crop}, 5 images' in out and '(reported: n/a)' in out


def test_script_prints_the_reported_score(tiny_model, tmp_path, capsys, monkeypatch):
    _, weights = tiny_model
    _write_folder(tmp_path / 'val', numpy.random.default_rng(4))
    monkeypatch.setattr(zoo, 'fetch_weights', lambda entry: [str(weights)])
    argv = ['--model', 'tiny_cls', '--dataset', str(tmp_path / 'val'), '--limit', '2']
    assert load_script('eval_imagenet').main(argv) == 0
    assert 'reported: 40.00 % (torchvision docs' in capsys.readouterr().out
