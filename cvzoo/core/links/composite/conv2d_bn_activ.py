"""Conv2DBNActiv: convolution, batch normalisation and an activation (ChainerCV's block)."""

import cvzoo.core.functions as F
from cvzoo.core.config import config
from cvzoo.core.functions.normalization import batch_normalization as bn_function
from cvzoo.core.functions.normalization import fixed_batch_normalization
from cvzoo.core.links import link
from cvzoo.core.links.connection import convolution_2d
from cvzoo.core.links.normalization import batch_normalization


class Conv2DBNActiv(link.Chain):
    """Convolution2D, then BatchNormalization, then ``activ``.

    ``Conv2DBNActiv(out_channels, ksize, ...)`` infers the input channels.

    Args:
        in_channels (int or None): input channels.
        out_channels (int): output channels.
        ksize, stride, pad, dilate, groups: as in Convolution2D.
        nobias (bool): no convolution bias (default True: BN adds one).
        initialW, initial_bias: as in Convolution2D.
        activ (callable or None): activation; None for none.
        bn_kwargs (dict or None): arguments of BatchNormalization.

    Attributes:
        conv (Convolution2D), bn (BatchNormalization): the children.
    """

    def __init__(self, in_channels, out_channels, ksize=None, stride=1, pad=0, dilate=1,
                 groups=1, nobias=True, initialW=None, initial_bias=None, activ=F.relu,
                 bn_kwargs=None):
        super().__init__()
        if ksize is None:
            in_channels, out_channels, ksize = None, in_channels, out_channels
        self.activ = activ
        with self.init_scope():
            self.conv = convolution_2d.Convolution2D(
                in_channels, out_channels, ksize, stride, pad, nobias, initialW,
                initial_bias, dilate=dilate, groups=groups)
            self.bn = batch_normalization.BatchNormalization(out_channels, **(bn_kwargs or {}))

    def forward(self, x):
        """Apply convolution, normalisation and activation to ``x`` (N, C, H, W)."""
        if self._in_place_inference():
            return self._forward_in_place(x)
        h = self.bn(self.conv(x))
        return h if self.activ is None else self.activ(h)

    def _in_place_inference(self):
        """Whether forward may normalise and rectify the convolution output in place.

        That needs inference (test mode, no graph: the convolution's output array is
        new and nobody else holds it), the library's own convolution and batch
        normalisation links, and relu or no activation.
        """
        return (not config.train and not config.enable_backprop
                and type(self.conv) is convolution_2d.Convolution2D
                and type(self.bn) is batch_normalization.BatchNormalization
                and (self.activ is None or self.activ is F.relu))

    def _forward_in_place(self, x):
        # NOTE: the same arithmetic as relu(bn(conv(x))), minus the two new arrays of
        # the plain path (allocating and first touching them costs as much as the
        # arithmetic): the result is identical.
        h = self.conv(x)
        y, bn = h.array, self.bn
        if bn.avg_mean is None:
            bn._initialize_params(bn._param_shape(y))
        gamma, beta = bn._scale_and_shift()
        params = (gamma.array, beta.array, bn.avg_mean, bn.avg_var)
        if any(param.dtype != y.dtype for param in params):  # the plain path promotes
            h = bn(h)
            return h if self.activ is None else self.activ(h)
        axes = bn_function.reduction_axes('Conv2DBNActiv', y, gamma, bn.axis)
        fixed_batch_normalization.normalize_array(
            y, *params, bn.eps, axes, out=y, relu=self.activ is not None)
        return h
