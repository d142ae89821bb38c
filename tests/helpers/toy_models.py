"""The smallest models the zoo's loading and download tests register."""

import typing

import numpy

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
