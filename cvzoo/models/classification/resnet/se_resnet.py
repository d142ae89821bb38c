"""SE-ResNet-50/101/152 (Hu et al., "Squeeze-and-Excitation Networks", CVPR 2018).

A ResNet whose every bottleneck gates its residual branch with an SEBlock before the
sum. The weights are the authors' Caffe models (github.com/hujie-frank/SENet) as
converted by ChainerCV: the stride sits in the first 1x1 convolution (``arch='he'``,
fixed), pool1 is unpadded with ``cover_all`` and BN eps is 2e-5 (``compat='chainercv'``,
the default). ``conv1`` has no bias.

Each class takes ``n_class=None, pretrained_model=None`` and the keyword arguments
``compat``, ``source``, ``initialW``, ``fc_kwargs`` of
:class:`cvzoo.models.classification.resnet.resnet.ResNet`. The only weights key is
``'imagenet'`` (ChainerCV's npz, name mapping 'chainercv').
"""

from cvzoo.models import zoo
from cvzoo.models.classification.resnet import resnet
from cvzoo.models.common import imagenet_presets

NOTE = ('Caffe model of Hu et al. converted by ChainerCV; ChainerCV reports its score '
        'with the OpenCV resize.')


@zoo.register('se_resnet50', task='classification')
class SEResNet50(resnet.ResNet):
    """SE-ResNet-50; weights ``'imagenet'``: top-1 error 22.7 % (paper 22.4 %)."""

    _add_seblock = True
    _conv1_bias_layers = ()
    _fixed_arch = 'he'

    def __init__(self, n_class=None, pretrained_model=None, **kwargs):
        super().__init__(50, n_class, pretrained_model, **kwargs)


@zoo.register('se_resnet101', task='classification')
class SEResNet101(resnet.ResNet):
    """SE-ResNet-101; weights ``'imagenet'``: top-1 error 21.8 % (paper 21.8 %)."""

    _add_seblock = True
    _conv1_bias_layers = ()
    _fixed_arch = 'he'

    def __init__(self, n_class=None, pretrained_model=None, **kwargs):
        super().__init__(101, n_class, pretrained_model, **kwargs)


@zoo.register('se_resnet152', task='classification')
class SEResNet152(resnet.ResNet):
    """SE-ResNet-152; weights ``'imagenet'``: top-1 error 21.4 % (paper 21.3 %)."""

    _add_seblock = True
    _conv1_bias_layers = ()
    _fixed_arch = 'he'

    def __init__(self, n_class=None, pretrained_model=None, **kwargs):
        super().__init__(152, n_class, pretrained_model, **kwargs)


def weights_of(file_stem, error, original):
    """The single ChainerCV 'imagenet' entry of an SENet."""
    return {'imagenet': imagenet_presets.chainercv_entry(
        f'{file_stem}_imagenet_converted_2018_06_25.npz'
        if 'resnext' not in file_stem else f'{file_stem}_imagenet_converted_2018_06_28.npz',
        error, original=f'{original} %, Hu et al. 2018', notes=NOTE)}


SEResNet50.weights = weights_of('se_resnet50', 22.7, 22.4)
SEResNet101.weights = weights_of('se_resnet101', 21.8, 21.8)
SEResNet152.weights = weights_of('se_resnet152', 21.4, 21.3)
