"""use_preset(): the named thresholds of models that score and suppress what they find."""

import typing

# the presets of the R-CNN family (torchvision's box_score_thresh 0.05 and NMS 0.5 for
# evaluation, ChainerCV's 0.7 for pictures)
R_CNN_PRESETS = {'visualize': {'score_thresh': 0.7, 'nms_thresh': 0.5},
                 'evaluate': {'score_thresh': 0.05, 'nms_thresh': 0.5}}


class ThresholdPresets:
    """Mixin of detectors and instance segmenters: ``use_preset(name)``.

    A subclass sets ``presets``: preset name -> {'score_thresh': float, 'nms_thresh':
    float}, with at least 'visualize' (few, confident results) and 'evaluate' (every
    candidate a metric may count), as ChainerCV's models do.
    """

    presets = {}
    score_thresh = 0.7
    nms_thresh = 0.45

    def use_preset(self, preset):
        """Set ``score_thresh`` and ``nms_thresh`` for 'visualize' or 'evaluate'.

        Raises:
            ValueError: an unknown preset name.
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
