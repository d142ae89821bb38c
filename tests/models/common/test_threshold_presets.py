"""use_preset() and the thresholds it sets: finite numbers in [0, 1], checked whenever
they are assigned."""

import pytest

from cvzoo import errors
from cvzoo.models.common import threshold_presets


class _Model(threshold_presets.RCNNThresholdPresets):
    pass


class _BadPresetModel(threshold_presets.ThresholdPresets):
    presets = {'visualize': {'score_thresh': float('nan'), 'nms_thresh': 0.5}}


@pytest.mark.parametrize('name', threshold_presets.THRESHOLDS)
@pytest.mark.parametrize('value', [float('nan'), float('inf'), -0.1, 1.5, '0.5'],
                         ids=['nan', 'inf', 'negative', 'above_1', 'text'])
def test_a_bad_threshold_is_refused_naming_it(name, value):
    model = _Model()
    with pytest.raises(errors.UsageError, match=f'^{name}: expected a finite number in'):
        setattr(model, name, value)
    assert getattr(model, name) == threshold_presets.R_CNN_PRESETS['visualize'][name]


def test_presets_and_the_bounds_pass_and_a_bad_preset_is_refused():
    model = _Model()
    model.use_preset('evaluate')
    assert (model.score_thresh, model.nms_thresh) == (0.05, 0.5)
    model.score_thresh, model.nms_thresh = 0, 1
    with pytest.raises(errors.UsageError, match='^score_thresh: '):
        _BadPresetModel().use_preset('visualize')
