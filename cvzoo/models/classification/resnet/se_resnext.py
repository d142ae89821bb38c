"""SE-ResNeXt-50/101 32x4d (Hu et al., "Squeeze-and-Excitation Networks", CVPR 2018).

ResNeXt bottlenecks (32 groups, mid channels 128, 256, 512, 1024) with an SEBlock on
each residual branch. The weights are the authors' Caffe models converted by ChainerCV:
the stride sits in the 3x3 convolution (``arch='fb'``, fixed), pool1 is unpadded with
``cover_all`` and BN eps is 2e-5 (``compat='chainercv'``, the default).

Arguments as for :mod:`cvzoo.models.classification.resnet.se_resnet`; the only weights
key is ``'imagenet'``.
"""

from cvzoo.models import zoo
from cvzoo.models.classification.resnet import resnet, se_resnet


@zoo.register('se_resnext50', task='classification')
class SEResNeXt50(resnet.ResNet):
    """SE-ResNeXt-50 32x4d; weights ``'imagenet'``: top-1 error 20.9 % (paper 21.0 %)."""

    _mid_channels = (128, 256, 512, 1024)
    _groups = 32
    _add_seblock = True
    _conv1_bias_layers = ()
    _fixed_arch = 'fb'

    def __init__(self, n_class=None, pretrained_model=None, **kwargs):
        super().__init__(50, n_class, pretrained_model, **kwargs)


@zoo.register('se_resnext101', task='classification')
class SEResNeXt101(resnet.ResNet):
    """SE-ResNeXt-101 32x4d; weights ``'imagenet'``: top-1 error 19.7 % (paper 19.8 %)."""

    _mid_channels = (128, 256, 512, 1024)
    _groups = 32
    _add_seblock = True
    _conv1_bias_layers = ()
    _fixed_arch = 'fb'

    def __init__(self, n_class=None, pretrained_model=None, **kwargs):
        super().__init__(101, n_class, pretrained_model, **kwargs)


SEResNeXt50.weights = se_resnet.weights_of('se_resnext50', 20.9, 21.0)
SEResNeXt101.weights = se_resnet.weights_of('se_resnext101', 19.7, 19.8)
