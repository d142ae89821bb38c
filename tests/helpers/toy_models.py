"""The smallest models the tests build: those the zoo's loading and download tests
register, and a small network the data-parallel tests split over two devices."""

import typing

import numpy

import cvzoo.core.functions as F
from cvzoo.core import backend
from cvzoo.core import links as L
from cvzoo.core.links import link
from cvzoo.core.variable import Parameter
from cvzoo.models import zoo


class OneParameterModel(link.Link):
    """A model with one (3,) float32 parameter ``W`` that loads ``pretrained_model``.

    Subclass it with a ``weights`` table of your own: the registry reads the class's.
    """

    weights: typing.ClassVar[dict] = {}

    def __init__(self, pretrained_model=None):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(numpy.zeros(3, numpy.float32))
        if pretrained_model:
            zoo.load_weights(self, pretrained_model)


class Affine(link.Link):
    """``W`` (n_out, n_in) and ``b`` (n_out,), zero-filled: the layer of toy weight files."""

    def __init__(self, n_in, n_out):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(numpy.zeros((n_out, n_in), numpy.float32))
            self.b = Parameter(numpy.zeros(n_out, numpy.float32))


class ConvNet(L.Chain):
    """A 3x3 convolution, relu and a linear layer over (N, 2, 4, 4) inputs: four classes,
    small enough to split a batch of five over two devices."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(2, 3, 3, pad=1)
            self.fc = L.Linear(3 * 4 * 4, 4)

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)))


def host_grads(link):
    """{parameter path: its gradient as a host array}."""
    return {path: backend.to_numpy(p.grad) for path, p in link.namedparams()}
