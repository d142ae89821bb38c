"""scripts/eval_instance_segmentation.py end to end with registered instance segmenters:
the zoo's model built small (shorter side 64, three classes) with seeded random weights
stands in for the weights key, a COCO-format json, and the script's 12 numbers against
pycocotools' segm evaluation of the same model's predictions (one image per predict()
call on both sides: a padded batch changes a model's outputs near the padding)."""

import numpy
import pytest

from cvzoo.datasets import registry
from cvzoo.models import get_model_class, list_models
from cvzoo.models.detection import evaluate

from tests.helpers import coco_masks
from tests.helpers.coco_masks import MODEL_NAMES, SUMMARY_KEYS
from tests.helpers.scripts import load_script

MODELS = ('fcis_resnet101', 'mask_rcnn_fpn_resnet50',
          pytest.param('maskrcnn_resnet50_fpn', marks=pytest.mark.slow))
SMALL = {'n_fg_class': 3, 'min_size': 64, 'max_size': 96}


@pytest.fixture(scope='module')
def script():
    return load_script('eval_instance_segmentation')


@pytest.mark.reference
@pytest.mark.parametrize('name', MODELS)
def test_script_equals_pycocotools_on_the_models_predictions(script, name, tmp_path,
                                                            monkeypatch, capsys):
    mask_api = pytest.importorskip('pycocotools.mask')
    if name not in list_models('instance_segmentation'):
        pytest.skip(f'{name} is not registered')
    numpy.random.seed(0)
    model = get_model_class(name)(**SMALL)
    model.label_names = MODEL_NAMES
    asked = []

    def get_model(model_name, pretrained_model=None):
        asked.append((model_name, pretrained_model))
        return model

    monkeypatch.setattr(evaluate.zoo, 'get_model', get_model)
    json_path, _ = coco_masks.write_coco_problem(tmp_path / 'coco', mask_api)
    report = script.main(['--model', name, '--pretrained-model', 'tiny', '--dataset',
                          str(json_path), '--batch-size', '1'])
    assert asked == [(name, 'tiny')]
    assert model.score_thresh == model.presets['evaluate']['score_thresh']

    data = registry.load_instance_segmentation_dataset(str(json_path), MODEL_NAMES)
    predictions = [tuple(field[0] for field in model.predict([data.dataset[i][0]]))
                   for i in range(len(data.dataset))]
    assert sum(len(p[0]) for p in predictions) > 0  # random weights still find instances
    expected = coco_masks.pycocotools_segm(json_path, predictions, mask_api)
    ours = numpy.array([report[key] for key in SUMMARY_KEYS])
    numpy.testing.assert_allclose(ours, expected, atol=1e-4)
    out = capsys.readouterr().out
    assert f'{name} (tiny): 4 images' in out and '4 images, coco protocol' in out
