"""Sequential: layers applied in order, links named by position."""

import numpy

import cvzoo.core.functions as F
from cvzoo.core import initializers
from cvzoo.core.links.link import Link
from cvzoo.core.links.sequential import Sequential
from cvzoo.core.variable import Parameter


class Scale(Link):
    def __init__(self, value):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(initializers.Constant(value), (1,))

    def forward(self, x):
        return x * F.broadcast_to(self.W, x.shape)


def test_applies_layers_in_order():
    seq = Sequential(Scale(2.0), F.exp, Scale(3.0))
    x = numpy.array([0.5, 1.0], dtype=numpy.float32)
    numpy.testing.assert_allclose(seq(x).array, 3 * numpy.exp(2 * x), rtol=1e-6)


def test_paths_use_layer_positions():
    seq = Sequential(Scale(2.0), F.exp, Scale(3.0))
    assert [p for p, _ in seq.namedparams()] == ['/0/W', '/2/W']
    assert len(seq) == 3 and seq[1] is F.exp
    seq.append(Scale(1.0))
    assert [p for p, _ in seq.namedparams()][-1] == '/3/W'


def test_gradient_flows_to_every_link():
    seq = Sequential(Scale(2.0), F.exp, Scale(3.0))
    y = F.sum(seq(numpy.array([0.5], dtype=numpy.float32)))
    y.backward()
    assert all(p.grad is not None for p in seq.params())


def test_copy_keeps_functions_and_copies_links():
    seq = Sequential(Scale(2.0), F.exp)
    new = seq.copy('copy')
    assert new[1] is F.exp and new[0] is not seq[0]
    new[0].W.array[...] = 5
    assert seq[0].W.array[0] == 2
    assert 'exp' in repr(seq)
