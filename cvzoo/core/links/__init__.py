"""Links (layers with parameters): ``import cvzoo.core.links as L``.

Link, Chain, ChainList and Sequential, then the layer links, one per module, re-exported
here flat.
"""

from cvzoo.core.links.link import Chain, ChainList, Link
from cvzoo.core.links.sequential import Sequential

# --- activation ---
from cvzoo.core.links.activation.prelu import PReLU

# --- composite ---
from cvzoo.core.links.composite.conv2d_bn_activ import Conv2DBNActiv

# --- connection ---
from cvzoo.core.links.connection.bias import Bias
from cvzoo.core.links.connection.convolution_2d import Convolution2D
from cvzoo.core.links.connection.deconvolution_2d import Deconvolution2D
from cvzoo.core.links.connection.depthwise_convolution_2d import DepthwiseConvolution2D
from cvzoo.core.links.connection.dilated_convolution_2d import DilatedConvolution2D
from cvzoo.core.links.connection.linear import Linear
from cvzoo.core.links.connection.scale import Scale

# --- normalization ---
from cvzoo.core.links.normalization.batch_normalization import BatchNormalization
from cvzoo.core.links.normalization.group_normalization import GroupNormalization
from cvzoo.core.links.normalization.layer_normalization import LayerNormalization
