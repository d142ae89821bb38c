"""scripts/train_mask_rcnn.py: argument errors, and a short run on a tiny generated COCO
folder whose model_final.npz rebuilds through get_model."""

import json

import numpy
import pytest

from cvzoo import errors
from cvzoo.models import zoo
from cvzoo.testing import synthetic_data
from cvzoo.testing.model_checks import assert_is_instance_segmentation_model
from tests.helpers import scripts

MODEL = 'mask_rcnn_fpn_resnet50'
# the json's ids of circle, square and triangle, as an export numbers them
CATEGORY_IDS = (3, 1, 2)
# the json's categories sorted by id
NAMES = tuple(sorted(synthetic_data.SHAPE_NAMES,
                     key=dict(zip(synthetic_data.SHAPE_NAMES, CATEGORY_IDS)).get))


@pytest.fixture(scope='module')
def script():
    return scripts.load_script('train_mask_rcnn')


@pytest.fixture(scope='module')
def shapes(tmp_path_factory):
    """The train and val jsons of shapes (3 and 2 images, then 2 without objects each),
    their masks both polygons and RLE runs."""
    root = synthetic_data.write_coco(
        tmp_path_factory.mktemp('shapes'), synthetic_data.shape_scenes(3, 48),
        synthetic_data.shape_scenes(2, 48, seed=1), kind='instances', masks='mixed',
        category_ids=CATEGORY_IDS, unannotated=2)
    return tuple(root / 'annotations' / f'instances_{split}.json' for split in ('train', 'val'))


def _args(train, out, *extra):
    return ['--dataset', str(train), '--model', MODEL, '--pretrained-model', 'none',
            '--min-size', '48', '--max-size', '48', '--iteration', '1', '--batchsize', '1',
            '--out', str(out), *extra]


@pytest.mark.parametrize('extra, named', [
    (['--iteration', '0'], '--iteration'),
    (['--batchsize', '-1'], '--batchsize'),
    (['--min-size', '0'], '--min-size'),
    (['--model', 'mask_rcnn_fpn_resnet18'], '--model'),
    (['--communicator', 'gloo'], '--communicator'),
    (['--lr', 'fast'], '--lr'),
], ids=['iteration', 'batchsize', 'min-size', 'model', 'communicator', 'lr'])
def test_argument_errors_name_the_argument(script, shapes, tmp_path, capsys, extra, named):
    with pytest.raises(SystemExit):
        script.main(_args(shapes[0], tmp_path / 'out', *extra))
    assert named in capsys.readouterr().err
    assert not (tmp_path / 'out' / 'model_final.npz').exists()


def test_a_missing_json_or_unknown_val_class_names_its_option(script, shapes, tmp_path,
                                                             capsys):
    with pytest.raises(errors.UsageError, match='--dataset'):
        script.main(_args(tmp_path / 'missing.json', tmp_path / 'out'))
    val = json.loads(shapes[1].read_text())
    val['categories'][0]['name'] = 'hexagon'
    other = tmp_path / 'other.json'
    other.write_text(json.dumps(val))
    with pytest.raises(errors.UsageError, match='--val.*hexagon'):
        script.main(_args(shapes[0], tmp_path / 'out', '--val', str(other),
                          '--images', str(shapes[1].parent.parent / 'val')))


def test_short_run_writes_a_model_that_get_model_rebuilds(script, shapes, tmp_path, capsys):
    out = tmp_path / 'out'
    result = script.main(_args(shapes[0], out, '--val', str(shapes[1])))
    assert 0 <= result <= 1
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])['mask_map@0.5'] == result
    log = [json.loads(line) for line in (out / 'log').read_text().splitlines()]
    assert {'main/loss', 'main/loss/mask', 'main/loss/head_conf'} <= set(log[-1])
    assert numpy.isfinite(log[-1]['main/loss/mask'])
    model = zoo.get_model(MODEL, pretrained_model=str(out / 'model_final.npz'))
    assert tuple(model.label_names) == NAMES
    assert (model.min_size, model.max_size) == (48, 48)
    rng = numpy.random.RandomState(0)
    imgs = [rng.uniform(0, 255, (3, 40, 56)).astype(numpy.float32),
            rng.uniform(0, 255, (3, 48, 48)).astype(numpy.float32)]
    model.score_thresh = 0.0  # random-looking weights: keep whatever it finds
    assert_is_instance_segmentation_model(model, imgs, len(NAMES))
