"""ResNeXt-50 32x4d (Xie et al., "Aggregated Residual Transformations for Deep Neural
Networks", CVPR 2017), in torchvision's arrangement: a ResNet whose 3x3 convolutions
have 32 groups of 4 channels per group in res2 (mid channels 128, 256, 512, 1024)."""

from cvzoo.models import zoo
from cvzoo.models.classification.resnet import resnet
from cvzoo.models.common import imagenet_presets


@zoo.register('resnext50_32x4d', task='classification')
class ResNeXt50_32x4d(resnet.ResNet):
    """ResNeXt-50 32x4d. Weights keys (both ``arch='fb'``):

    - ``'imagenet'`` (default): torchvision IMAGENET1K_V1, acc@1 77.618;
    - ``'imagenet_v2'``: torchvision IMAGENET1K_V2, acc@1 81.198 (resize 232).

    Arguments as in :class:`cvzoo.models.classification.resnet.resnet.ResNet`
    (``n_layer`` is fixed to 50).
    """

    _mid_channels = (128, 256, 512, 1024)
    _groups = 32

    def __init__(self, n_class=None, pretrained_model=None, arch=None, **kwargs):
        super().__init__(50, n_class, pretrained_model, arch, **kwargs)


ResNeXt50_32x4d.weights = {
    'imagenet': imagenet_presets.torchvision_entry('resnext50_32x4d-7cdf4587.pth', 77.618,
                                                   page='resnext'),
    'imagenet_v2': imagenet_presets.torchvision_entry('resnext50_32x4d-1a0047aa.pth', 81.198,
                                                      page='resnext', v2=True),
}
