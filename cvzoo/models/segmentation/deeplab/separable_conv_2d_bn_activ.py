"""SeparableConv2DBNActiv: a depthwise and a pointwise convolution, each with BN."""

import cvzoo.core.links as L


class SeparableConv2DBNActiv(L.Chain):
    """Depthwise convolution, BN, ``dw_activ``, then 1x1 convolution, BN, ``pw_activ``.

    The depthwise convolution is a Convolution2D with one group per channel, so it
    takes ``dilate`` (the atrous rate) and ``stride``. Names follow ChainerCV
    (``depthwise``, ``dw_bn``, ``pointwise``, ``pw_bn``).

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels of the pointwise convolution.
        ksize (int): kernel size of the depthwise convolution.
        stride, pad, dilate (int): of the depthwise convolution.
        nobias (bool): no bias in either convolution.
        dw_activ, pw_activ (callable or None): activations (None: none).
        bn_kwargs (dict or None): arguments of both BatchNormalization links.
        initialW: initializer of both convolutions.
    """

    def __init__(self, in_channels, out_channels, ksize, stride=1, pad=0, dilate=1, *,
                 nobias=True, dw_activ=None, pw_activ=None, bn_kwargs=None, initialW=None):
        super().__init__()
        self.dw_activ, self.pw_activ = dw_activ, pw_activ
        bn_kwargs = bn_kwargs or {}
        with self.init_scope():
            self.depthwise = L.Convolution2D(in_channels, in_channels, ksize, stride, pad,
                                             nobias, initialW, dilate=dilate,
                                             groups=in_channels)
            self.dw_bn = L.BatchNormalization(in_channels, **bn_kwargs)
            self.pointwise = L.Convolution2D(in_channels, out_channels, 1, nobias=nobias,
                                             initialW=initialW)
            self.pw_bn = L.BatchNormalization(out_channels, **bn_kwargs)

    def forward(self, x):
        """(B, in_channels, H, W) -> (B, out_channels, H', W')."""
        h = self.dw_bn(self.depthwise(x))
        if self.dw_activ is not None:
            h = self.dw_activ(h)
        h = self.pw_bn(self.pointwise(h))
        return h if self.pw_activ is None else self.pw_activ(h)
