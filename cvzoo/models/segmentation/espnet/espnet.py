"""ESPNet: the ESPNet-C encoder and a light decoder with two skip connections."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core.serializers import dictionary
from cvzoo.datasets.camvid import camvid_label_names
from cvzoo.models import zoo
from cvzoo.models.segmentation import segmentation_model
from cvzoo.models.segmentation.espnet import blocks
from cvzoo.models.segmentation.espnet.encoder import ESPNetEncoder

# cvzoo name of a top-level decoder layer -> its name in the original state dict.
_TORCH_LAYERS = {'proj_l2': 'level3_C', 'bn_l3': 'br', 'up_l3': 'up_l3.0',
                 'combine_br': 'combine_l2_l3.0', 'combine_esp': 'combine_l2_l3.1',
                 'up_l2': 'up_l2.0', 'up_l2_br': 'up_l2.1'}
# Convolutions that the original wraps in a ``C`` module (an extra ``.conv`` in the key).
_WRAPPED_CONVS = ('c1', 'd1', 'd2', 'd4', 'd8', 'd16', 'proj_l2', 'encoder/classifier')
_TORCH_LEAVES = {'W': 'weight', 'gamma': 'weight', 'beta': 'bias', 'avg_mean': 'running_mean',
                 'avg_var': 'running_var'}


def torch_name(path):
    """The original (sacmehta/ESPNet train/Model.py) state-dict key of a cvzoo path.

    Returns None for cvzoo-only state (the batch count ``N`` of batch normalisation).

    >>> torch_name('encoder/level2/0/br/bn/gamma')
    'encoder.level2.0.bn.bn.weight'
    >>> torch_name('proj_l2/W')
    'level3_C.conv.weight'
    """
    *owners, leaf = path.split('/')
    if leaf not in _TORCH_LEAVES:
        return None
    wrapped = owners[-1] in _WRAPPED_CONVS or '/'.join(owners) in _WRAPPED_CONVS
    # NOTE: the closing BR of an ESP block is called ``bn`` in the original.
    owners = [_TORCH_LAYERS.get(owners[0], owners[0])] + [
        'bn' if name == 'br' else name for name in owners[1:]]
    return '.'.join(owners + (['conv'] if wrapped else []) + [_TORCH_LEAVES[leaf]])


@zoo.register('espnet', task='semantic_segmentation')
class ESPNet(segmentation_model.SegmentationModel):
    """ESPNet (Mehta, Rastegari, Caspi, Shapiro and Hajishirzi, "ESPNet: Efficient
    Spatial Pyramid of Dilated Convolutions for Semantic Segmentation", ECCV 2018).

    The ESPNet-C encoder's 1/8-scale scores are upsampled by 2x2 stride-2 transposed
    convolutions, merged with the projected level-2 features (through BR and an ESP
    block) and with the level-1 features (through a 3x3 CBR), and brought back to the
    input size. This is the original's train/Model.py ``ESPNet`` class, the one the
    CamVid weights fit (its last CBR takes the 19 level-1 channels plus the classes).

    Weights keys: ``'camvid'`` (sacmehta/ESPNet's p=2, q=8 CamVid decoder weights; 11
    classes, trained with a twelfth "void" class, see ``void_channel``).

    Differences from the original: any input size works (the transposed convolutions
    are given the skip connection's size, so odd sizes crop the last row or column
    instead of failing); predict() resizes an image to the preset's size and the scores
    back, bilinearly (the original ran CamVid at its native 480x360, where both are
    no-ops); the /255 the original applies after standardising is folded into the
    preset's std.

    Args:
        n_class (int or None): the classes; None takes the weights' (a zoo key is then
            required).
        pretrained_model (str or None): a weights key, a local weight file, or None
            (random weights).
        void_channel (bool or None): the head has one more output channel, a "void"
            class that predict() never outputs. None: True for a weights key (the
            CamVid weights have it), else False.
        p, q (int): the ESP blocks at levels 2 and 3 of the encoder.

    Attributes:
        encoder (ESPNetEncoder): ends with a 1x1 convolution to the head's channels.
        bn_l3, proj_l2, up_l3, combine_br, combine_esp, up_l2, up_l2_br, conv,
        classifier: the decoder (see :meth:`forward`).
    """

    channel_order = 'bgr'

    def __init__(self, n_class=None, pretrained_model=None, *, void_channel=None, p=2, q=8):
        super().__init__()
        cls = type(self)
        built_n_class = segmentation_model.n_class_for(cls, pretrained_model, n_class)
        if void_channel is None:
            void_channel = isinstance(pretrained_model, str) and pretrained_model in cls.weights
        self.void_channel = bool(void_channel)
        _check_n_class(built_n_class, self.void_channel)
        self.preset = cls.weights['camvid'].preset
        with self.init_scope():
            self.encoder = ESPNetEncoder(built_n_class + self.void_channel, p, q)
        self._make_head(built_n_class)
        self._load_pretrained(pretrained_model, n_class)

    def _make_head(self, n_class):
        """(Re)build the decoder for ``n_class`` classes (plus the void channel)."""
        _check_n_class(n_class, self.void_channel)
        n_out = n_class + self.void_channel
        self.n_class = n_class
        with self.encoder.init_scope():
            self.encoder.classifier = L.Convolution2D(256, n_out, 1, nobias=True)
        with self.init_scope():
            self.bn_l3 = L.BatchNormalization(n_out, eps=blocks.BN_EPS)
            self.up_l3 = L.Deconvolution2D(n_out, n_out, 2, 2, nobias=True)
            self.proj_l2 = L.Convolution2D(128 + 3, n_out, 1, nobias=True)
            self.combine_br = blocks.BR(2 * n_out)
            self.combine_esp = blocks.ESPBlock(2 * n_out, n_out, add=False)
            self.up_l2 = L.Deconvolution2D(n_out, n_out, 2, 2, nobias=True)
            self.up_l2_br = blocks.BR(n_out)
            self.conv = blocks.CBR(16 + 3 + n_out, n_out, 3)
            self.classifier = L.Deconvolution2D(n_out, n_out, 2, 2, nobias=True)

    def reset_head(self, n_class):
        """Re-make the decoder (and the encoder's classifier) for ``n_class`` classes.

        The new head has no void channel; its weights are random.
        """
        self.void_channel = False
        self._make_head(n_class)
        self.to_device(self.device)

    def forward(self, x):
        """Class scores of (B, 3, H, W) preprocessed images (BGR, see the preset).

        Returns:
            Variable: (B, n_class (+1 with the void channel), H, W) float32 logits.
        """
        level1, level2, score3 = self.encoder(x)
        up3 = _upsample(self.up_l3, self.bn_l3(score3), level2.shape[2:])
        h = self.combine_esp(self.combine_br(F.concat([self.proj_l2(level2), up3])))
        h = self.up_l2_br(_upsample(self.up_l2, h, level1.shape[2:]))
        h = self.conv(F.concat([h, level1]))
        return _upsample(self.classifier, h, x.shape[2:])

    def convert_weights(self, raw, source):
        """Map the original's state dict (``source='torch'``) onto this model's names.

        Raises:
            ValueError: another ``source``.
            cvzoo.errors.WeightLoadError: keys this model needs are absent, or keys of
                the file are left over (all are named).
        """
        if source != 'torch':
            raise ValueError(f"source: ESPNet converts 'torch' state dicts, got {source!r}")
        own = dictionary.DictionarySerializer()
        self.serialize(own)
        raw = dict(raw)
        arrays, missing = {}, []
        for path, value in own.target.items():
            name = torch_name(path)
            if name is None:
                arrays[path] = value
            elif name in raw:
                arrays[path] = raw.pop(name)
            else:
                missing.append(name)
        if missing or raw:
            raise errors.WeightLoadError(
                f'ESPNet.convert_weights: missing keys {missing}, unused keys {sorted(raw)}')
        return arrays


def _check_n_class(n_class, void_channel):
    # NOTE: the decoder's ESP block splits its n_class (+ void) channels into 5 branches.
    if not isinstance(n_class, int) or n_class + void_channel < 5:
        raise ValueError(f'n_class: expected an int with n_class + void_channel >= 5, got '
                         f'{n_class!r} (void_channel={void_channel})')


def _upsample(deconvolution, x, size):
    """Apply a 2x2 stride-2 transposed convolution whose output is ``size`` (H, W)."""
    return F.deconvolution_2d(x, deconvolution.W, None, 2, 0, outsize=tuple(size))


_CAMVID_MEAN_BGR = (105.65775, 103.329834, 99.625404)
_CAMVID_STD_BGR = (71.11642, 71.676155, 67.87634)

ESPNet.weights = {
    'camvid': zoo.Weights(
        url='https://github.com/sacmehta/ESPNet/raw/afe71c38edaee3514ca44e0adcafdf36109bf437/'
            'pretrained/decoder/espnet_p_2_q_8_camvid.pth',
        sha256='7d354a257170322086dcd4c1e89a482454cf2c9d30b085e70883878dd59301af',
        file_name='espnet_p_2_q_8_camvid.pth',
        source_format='torch_pth',
        n_class=11,
        label_names=camvid_label_names.camvid_label_names,
        # NOTE: RGB order here; the network takes BGR (channel_order). The original
        # divides by 255 after standardising, hence 255 * std.
        preset=zoo.Preset(size=(360, 480), mean=_CAMVID_MEAN_BGR[::-1],
                          std=tuple(255 * s for s in _CAMVID_STD_BGR[::-1]),
                          interpolation='bilinear', resize_backend='cv2'),
        reported=zoo.Score(metric='miou', value=0.5564, dataset='camvid_test',
                           source='https://github.com/sacmehta/ESPNet README (CamVid table)'),
        measured=zoo.Score(metric='miou', value=0.5761, dataset='camvid_test',
                           source='scripts/eval_semantic_segmentation.py, docs/benchmarks.md '
                                  '(233 images; 0.5739 with the void output, as the original)'),
        license='MIT',
        notes='The original never published its CamVid mean/std (computed at training '
              'time over the train list); these are the same statistic over the SegNet '
              'CamVid trainval images. The weights have a 12th "void" output that '
              'predict() ignores.'),
}
