"""SegNetBasic: four 7x7 encoder stages, four decoder stages upsampled by pooling indices."""

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import initializers, variable
from cvzoo.datasets.camvid import camvid_label_names
from cvzoo.models import zoo
from cvzoo.models.segmentation import segmentation_model

N_STAGE = 4
N_CHANNEL = 64
# NOTE: no mean/std: the local response normalisation that opens the network scales the
# raw [0, 255] input; the size is CamVid's, but predict() keeps each image's own size.
RAW_PRESET = zoo.Preset(size=(360, 480), mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0))


@zoo.register('segnet_basic', task='semantic_segmentation')
class SegNetBasic(segmentation_model.SegmentationModel):
    """SegNet Basic (Badrinarayanan, Kendall and Cipolla, "SegNet: A Deep Convolutional
    Encoder-Decoder Architecture for Image Segmentation", TPAMI 2017), as in ChainerCV.

    Local response normalisation of the raw image, then four encoder stages (7x7
    convolution without bias, batch normalisation, ReLU, 2x2 max pooling that keeps the
    position of each maximum) and four decoder stages (the values put back where the
    maxima were, 7x7 convolution, batch normalisation, no activation), and a 1x1
    classifier. The parameter names are ChainerCV's (``conv1``, ``conv1_bn``, ...,
    ``conv_decode1_bn``, ``conv_classifier``), so its .npz files load as they are.

    Weights keys: ``'camvid'`` (ChainerCV's segnet_camvid_trained_2018_12_05.npz, the
    file behind ChainerCV's own ``SegNetBasic(pretrained_model='camvid')``; mIoU 49.4 %
    on the CamVid test split as ChainerCV reports, against 46.3 % in the paper). A
    ChainerCV .npz also loads with ``pretrained_model=PATH``.

    predict() runs the network at each image's own size on RGB values in [0, 255], and
    resizes the scores back when pooling odd sizes made them larger, as ChainerCV does.

    Args:
        n_class (int or None): the classes (required unless a zoo key gives them).
        pretrained_model (str or None): a weights key, a local weight file or None.
        initialW: initializer of the convolutions (default HeNormal).

    Attributes:
        conv1 .. conv4, conv_decode4 .. conv_decode1 (L.Convolution2D),
        conv1_bn .. conv_decode1_bn (L.BatchNormalization), conv_classifier
        (L.Convolution2D with bias).
    """

    preset = RAW_PRESET
    resize_input = False

    def __init__(self, n_class=None, pretrained_model=None, initialW=None):
        super().__init__()
        built_n_class = segmentation_model.n_class_for(type(self), pretrained_model, n_class)
        self.initialW = initialW or initializers.HeNormal()
        with self.init_scope():
            for name in self._stage_names():
                in_channels = 3 if name == 'conv1' else N_CHANNEL
                setattr(self, name, L.Convolution2D(in_channels, N_CHANNEL, 7, 1, 3,
                                                    nobias=True, initialW=self.initialW))
                setattr(self, f'{name}_bn',
                        L.BatchNormalization(N_CHANNEL, initial_beta=0.001))
        self.reset_head(built_n_class)
        self._load_pretrained(pretrained_model, n_class)

    @staticmethod
    def _stage_names():
        encoder = [f'conv{k}' for k in range(1, N_STAGE + 1)]
        return encoder + [f'conv_decode{k}' for k in range(N_STAGE, 0, -1)]

    def reset_head(self, n_class):
        """Re-make the 1x1 classifier for ``n_class`` classes (random weights)."""
        if not isinstance(n_class, int) or n_class < 1:
            raise ValueError(f'n_class: expected a positive int, got {n_class!r}')
        self.n_class = n_class
        with self.init_scope():
            self.conv_classifier = L.Convolution2D(N_CHANNEL, n_class, 1, 1, 0,
                                                   initialW=self.initialW)
        self.conv_classifier.to_device(self.device)

    def forward(self, x):
        """Class scores of (B, 3, H, W) RGB images in [0, 255].

        Returns:
            Variable: (B, n_class, H', W') float32, (H', W') = (H, W) when they are
            multiples of 16, else slightly larger (the pooling covers every pixel).
        """
        # NOTE: as a Variable, so that ``array * Variable`` inside the normalisation is
        # the Variable's operation on every array module
        h = F.local_response_normalization(variable.as_variable(x), 5, 1, 1e-4 / 5, 0.75)
        indexes = []
        for k in range(1, N_STAGE + 1):
            h = F.relu(self[f'conv{k}_bn'](self[f'conv{k}'](h)))
            h, index = F.max_pooling_2d(h, 2, 2, return_indices=True)
            indexes.append(index)
        for k in range(N_STAGE, 0, -1):
            h = _unpool(h, indexes[k - 1])
            h = self[f'conv_decode{k}_bn'](self[f'conv_decode{k}'](h))
        return self.conv_classifier(h)

    def convert_weights(self, raw, source):
        """Take a ChainerCV- or cvzoo-named file as it is (zoo hook); the names agree.

        Raises:
            ValueError: another ``source``.
        """
        if source not in ('chainercv', 'cvzoo'):
            raise ValueError(f"source: SegNetBasic loads 'chainercv' or 'cvzoo' names, got "
                             f'{source!r}')
        # NOTE: Chainer's save_npz of a link inside a chain may write '/conv1/W'.
        return {key.removeprefix('/'): value for key, value in raw.items()}


def _unpool(x, indexes):
    """Put x's values back where the 2x2 maxima were; x is cropped to the indexes' size.

    NOTE: a decoder stage is one pixel larger than the encoder stage it mirrors when the
    pooling of an odd size covered the last row or column, hence the crop.
    """
    h, w = indexes.shape[2:]
    x = x[:, :, :h, :w]
    return F.upsampling_2d(x, indexes, 2, 2, outsize=(2 * h, 2 * w))


SegNetBasic.weights = {
    'camvid': zoo.Weights(
        url='https://chainercv-models.preferred.jp/segnet_camvid_trained_2018_12_05.npz',
        sha256=zoo.UNPUBLISHED, source_format='chainercv_npz', n_class=11,
        label_names=camvid_label_names.camvid_label_names,
        preset=RAW_PRESET,
        reported=zoo.Score(
            metric='miou', value=0.494, dataset='camvid_test',
            source='ChainerCV examples/semantic_segmentation/README.md, CamVid table '
                   '(ChainerCV 49.4 %; the SegNet paper reports 46.3 %)'),
        notes='Trained by ChainerCV (examples/segnet, whose README lists '
              'segnet_camvid_2017_05_28.npz at mIoU 49.39 %: most likely these weights '
              'before ChainerCV moved its files; not verified here). ChainerCV publishes no '
              'sha256: the first download records it. predict() runs at each image\'s '
              'own size (CamVid: 360x480), as ChainerCV does.',
        license='MIT (ChainerCV)', convert_from='chainercv'),
}
