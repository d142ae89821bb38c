"""Links (layers with parameters): ``import cvzoo.core.links as L``.

Link, Chain, ChainList, Sequential and the layer links (one per module, in the family
folders activation/, composite/, connection/, model/, normalization/), re-exported here flat.
"""

from cvzoo.core.links.activation.prelu import PReLU
from cvzoo.core.links.composite.conv2d_bn_activ import Conv2DBNActiv
from cvzoo.core.links.connection.bias import Bias
from cvzoo.core.links.connection.convolution_2d import Convolution2D
from cvzoo.core.links.connection.deconvolution_2d import Deconvolution2D
from cvzoo.core.links.connection.depthwise_convolution_2d import DepthwiseConvolution2D
from cvzoo.core.links.connection.dilated_convolution_2d import DilatedConvolution2D
from cvzoo.core.links.connection.embed_id import EmbedID
from cvzoo.core.links.connection.linear import Linear
from cvzoo.core.links.connection.scale import Scale
from cvzoo.core.links.link import Chain, ChainList, Link
from cvzoo.core.links.model.classifier import Classifier
from cvzoo.core.links.model.data_parallel import DataParallel
from cvzoo.core.links.normalization.batch_normalization import BatchNormalization
from cvzoo.core.links.normalization.group_normalization import GroupNormalization
from cvzoo.core.links.normalization.layer_normalization import LayerNormalization
from cvzoo.core.links.sequential import Sequential

__all__ = [
    'BatchNormalization',
    'Bias',
    'Chain',
    'ChainList',
    'Classifier',
    'Conv2DBNActiv',
    'Convolution2D',
    'DataParallel',
    'Deconvolution2D',
    'DepthwiseConvolution2D',
    'DilatedConvolution2D',
    'EmbedID',
    'GroupNormalization',
    'LayerNormalization',
    'Linear',
    'Link',
    'PReLU',
    'Scale',
    'Sequential',
]
