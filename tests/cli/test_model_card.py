"""`cvzoo models --info NAME`: the model card."""

import typing

import pytest

from cvzoo.cli import main, model_card
from cvzoo.models import discovery, registry, zoo

SHA = 'ab' * 32


class _Card:
    weights: typing.ClassVar[dict] = {}


@pytest.fixture
def card_toy(monkeypatch):
    discovery.import_all_models()
    monkeypatch.setattr(registry, '_REGISTRY', {})
    zoo.register('card_toy', task='detection')(_Card)
    cfg = zoo.WeightFile('https://example.org/toy.cfg', 'cd' * 32, size=6)
    voc = zoo.Weights(
        url='https://example.org/toy.weights', mirrors=('https://mirror.org/toy.weights',),
        sha256=SHA, source_format='darknet', n_class=2, label_names=('cat', 'dog'),
        preset=zoo.Preset(size=(320, 320), mean=(0.0, 0.0, 0.0), resize_backend='darknet'),
        reported=zoo.Score('map_voc07', 0.612, 'voc2007_test', 'the toy README'),
        measured=zoo.Score('map_voc07', 0.6, 'voc2007_test', 'docs/benchmarks.md'),
        license='YOLO license (public domain)', files=(cfg,), notes='a toy')
    coco = zoo.Weights(
        url='https://example.org/coco.npz', sha256=zoo.UNPUBLISHED, source_format='cvzoo_npz',
        n_class=1, label_names=('person',), preset=zoo.Preset(size=8, mean=(1.0, 2.0, 3.0)),
        reported=zoo.Score('map_coco', 0.25, 'coco_test_dev', 'a paper'))
    monkeypatch.setattr(_Card, 'weights', {'voc': voc, 'coco': coco})


def test_card_shows_source_licence_scores_files_preset_and_command(card_toy, capsys):
    assert main.main(['models', '--info', 'card_toy']) == 0
    out = capsys.readouterr().out
    voc, coco = out.split('\ncoco:\n')
    for part in ('card_toy (detection)', 'source: darknet, https://example.org/toy.weights',
                 'licence: YOLO license (public domain)',
                 'reported: map_voc07 61.20 on voc2007_test (the toy README)',
                 'measured (cvzoo): map_voc07 60.00', f'toy.weights  sha256 {SHA}',
                 'https://mirror.org/toy.weights', f'toy.cfg  sha256 {"cd" * 32}, 6 bytes',
                 'size=(320, 320)', 'resize_backend=darknet', 'notes: a toy',
                 'reproduce: python scripts/eval_detection.py --model card_toy '
                 '--pretrained-model voc --dataset voc07-test --use-07-metric'):
        assert part in voc, part
    for part in ('licence: unknown', 'measured (cvzoo): not measured yet',
                 'sha256 unpublished', 'mean=(1.0, 2.0, 3.0)', 'reproduce: none here'):
        assert part in coco, part


def test_unknown_model_is_a_usage_error(card_toy, capsys):
    assert main.main(['models', '--info', 'card_tyo']) == 2
    assert "no model 'card_tyo'" in capsys.readouterr().err


@pytest.mark.parametrize('name', zoo.list_models())
def test_every_registered_model_has_a_card(name):
    card = model_card.model_card(name)
    assert card.startswith(name)
    for key, weights in getattr(zoo.get_model_class(name), 'weights', {}).items():
        assert f'\n{key}:\n' in card and 'licence: unknown' not in card
        assert 'reproduce: ' in card and weights.url in card


@pytest.mark.parametrize('name, key, expected', [
    ('resnet50', 'imagenet', 'scripts/eval_imagenet.py --model resnet50 --pretrained-model '
                             'imagenet --dataset IMAGENET_VAL_DIR'),
    ('espnet', 'camvid', 'scripts/eval_semantic_segmentation.py --model espnet '
                         '--pretrained-model camvid --dataset camvid-test'),
    ('ssd300', 'imagenet', 'none here: the score is that of the ImageNet classifier'),
], ids=['classification', 'segmentation', 'backbone'])
def test_reproduce_command_fits_the_task(name, key, expected):
    entry = zoo.get_model_class(name).weights[key]
    task = zoo.model_info(name)['task']
    assert expected in model_card.eval_command(name, key, entry.reported, task)
