"""use_preset(): the named thresholds of models that score and suppress what they find."""

import math
import numbers
import typing

from cvzoo import errors

# the presets of the R-CNN family (torchvision's box_score_thresh 0.05 and NMS 0.5 for
# evaluation, ChainerCV's 0.7 for pictures)
R_CNN_PRESETS = {'visualize': {'score_thresh': 0.7, 'nms_thresh': 0.5},
                 'evaluate': {'score_thresh': 0.05, 'nms_thresh': 0.5}}

THRESHOLDS = ('score_thresh', 'nms_thresh')  # checked whenever they are assigned


def check_threshold(name, value):
    """Return ``value`` once it is a finite number in [0, 1].

    Raises:
        cvzoo.errors.UsageError: naming ``name``, for NaN, inf, a value outside [0, 1] or
            something that is not a number.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(value) or not 0 <= value <= 1:
        raise errors.UsageError(f'{name}: expected a finite number in [0, 1], got {value!r}')
    return value


class ThresholdPresets:
    """Mixin of detectors and instance segmenters: ``use_preset(name)``.

    A subclass sets ``presets``: preset name -> {'score_thresh': float, 'nms_thresh':
    float}, with at least 'visualize' (few, confident results) and 'evaluate' (every
    candidate a metric may count), as ChainerCV's models do.
    """

    presets = {}
    score_thresh = 0.7
    nms_thresh = 0.45

    def __setattr__(self, name, value):
        if name in THRESHOLDS:
            check_threshold(name, value)
        super().__setattr__(name, value)

    def use_preset(self, preset):
        """Set ``score_thresh`` and ``nms_thresh`` for 'visualize' or 'evaluate'.

        Assigning either attribute directly checks it the same way.

        Raises:
            ValueError: an unknown preset name.
            cvzoo.errors.UsageError: a threshold of the preset is not a finite number in
                [0, 1].
        """
        if preset not in self.presets:
            raise ValueError(f'preset: expected one of {sorted(self.presets)}, got {preset!r}')
        self.score_thresh = self.presets[preset]['score_thresh']
        self.nms_thresh = self.presets[preset]['nms_thresh']


class RCNNThresholdPresets(ThresholdPresets):
    """:class:`ThresholdPresets` with :data:`R_CNN_PRESETS`, starting at 'visualize' (the
    base of instance segmenters and keypoint detectors; a subclass may set other
    ``presets``)."""

    presets: typing.ClassVar[dict] = R_CNN_PRESETS
    score_thresh = R_CNN_PRESETS['visualize']['score_thresh']
    nms_thresh = R_CNN_PRESETS['visualize']['nms_thresh']
