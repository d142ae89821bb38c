"""Link, Chain, ChainList: registration, traversal, gradients, copies, devices."""

import numpy
import pytest

from cvzoo.core import initializers
from cvzoo.core.links.link import Chain, ChainList, Link
from cvzoo.core.variable import Parameter


class Affine(Link):
    def __init__(self, n_in=3, n_out=2):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(initializers.Normal(1.0), (n_out, n_in))
            self.b = Parameter(0.0, (n_out,))
        self.add_persistent('count', 0)
        self.add_persistent('avg', numpy.zeros(n_out, dtype=numpy.float32))

    def forward(self, x):
        return x @ self.W.T + self.b


class Lazy(Link):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(initializers.One())


class Net(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.fc1 = Affine(3, 4)
            self.blocks = ChainList(Affine(4, 4), Affine(4, 2))


def test_registration_only_inside_init_scope():
    link = Link()
    with link.init_scope():
        link.inside = Parameter(numpy.zeros(2, dtype=numpy.float32))
    link.outside = Parameter(numpy.zeros(2, dtype=numpy.float32))
    assert [path for path, _ in link.namedparams()] == ['/inside']
    assert link.inside.name == 'inside'
    assert link.within_init_scope is False


def test_chain_registers_links_only_inside_init_scope():
    chain = Chain()
    with chain.init_scope():
        chain.a = Affine()
    chain.b = Affine()
    assert [name for name, _ in chain.namedlinks()] == ['/', '/a']
    assert chain['a'] is chain.a


def test_namedparams_paths():
    paths = [path for path, _ in Net().namedparams()]
    assert paths == ['/fc1/W', '/fc1/b', '/blocks/0/W', '/blocks/0/b', '/blocks/1/W',
                     '/blocks/1/b']


def test_namedlinks_and_children():
    net = Net()
    assert [p for p, _ in net.namedlinks()] == ['/', '/fc1', '/blocks', '/blocks/0',
                                                 '/blocks/1']
    assert next(p for p, _ in net.namedlinks(skipself=True)) == '/fc1'
    assert list(net.children()) == [net.fc1, net.blocks]
    assert len(list(net.links())) == 5


def test_add_param_and_duplicate_name():
    link = Link()
    link.add_param('W', (2, 3), initializer=initializers.Zero())
    link.add_param('V', dtype=numpy.float64)
    assert link.W.shape == (2, 3) and link.W.dtype == numpy.float32
    link.V.initialize((4,))
    assert link.V.dtype == numpy.float64
    with pytest.raises(AttributeError, match='W'):
        link.add_param('W', (1,))
    with pytest.raises(AttributeError, match='count'):
        link.add_persistent('count', 0)
        link.add_persistent('count', 1)


def test_lazy_param_is_listed_but_not_counted():
    link = Lazy()
    assert len(list(link.params())) == 1
    assert len(list(link.params(include_uninit=False))) == 0
    assert link.count_params() == 0
    link.W.initialize((2, 5))
    assert link.count_params() == 10
    numpy.testing.assert_array_equal(link.W.array, numpy.ones((2, 5), numpy.float32))


def test_count_params():
    assert Net().count_params() == (12 + 4) + (16 + 4) + (8 + 2)


def test_chainlist_append_getitem_len_iter():
    chain_list = ChainList(Affine())
    chain_list.append(Affine())
    assert len(chain_list) == 2
    assert list(chain_list) == [chain_list[0], chain_list[1]]
    assert chain_list[1].name == '1'
    with pytest.raises(TypeError):
        chain_list.append(lambda x: x)
    with pytest.raises(TypeError, match='append'), chain_list.init_scope():
        chain_list.extra = Affine()


def test_cleargrads_zerograds_addgrads():
    a, b = Net(), Net()
    a.zerograds()
    assert all(numpy.all(p.grad == 0) for p in a.params())
    for p in b.params():
        p.grad = numpy.full(p.shape, 2.0, dtype=p.dtype)
    b.fc1.W.cleargrad()
    a.addgrads(b)
    a.addgrads(b)
    assert numpy.all(a.fc1.W.grad == 0)
    assert numpy.all(a.blocks[1].b.grad == 4.0)
    a.cleargrads()
    assert all(p.grad is None for p in a.params())


def test_copyparams_copies_values_and_persistents():
    a, b = Net(), Net()
    b.blocks[0].count = 7
    b.fc1.avg[...] = 3
    a.copyparams(b)
    for (_, p), (_, q) in zip(a.namedparams(), b.namedparams()):
        numpy.testing.assert_array_equal(p.array, q.array)
        assert p.array is not q.array
    assert a.blocks[0].count == 7
    numpy.testing.assert_array_equal(a.fc1.avg, 3)
    assert a.fc1.avg is not b.fc1.avg


def test_copyparams_initialises_lazy_target():
    a, b = Lazy(), Lazy()
    b.W.initialize((3,))
    b.W.array[...] = 5
    a.copyparams(b)
    numpy.testing.assert_array_equal(a.W.array, 5)


@pytest.mark.parametrize('mode', ['share', 'copy', 'init'])
def test_copy_modes(mode):
    net = Net()
    net.fc1.W.grad = numpy.ones_like(net.fc1.W.array)
    new = net.copy(mode)
    assert new.name is None
    assert [p for p, _ in new.namedparams()] == [p for p, _ in net.namedparams()]
    assert new.fc1 is not net.fc1 and new.blocks[0] is not net.blocks[0]
    assert new.fc1.W is not net.fc1.W and new.fc1.W.grad is None
    shares = new.fc1.W.array is net.fc1.W.array
    assert shares == (mode == 'share')
    if mode == 'copy':
        numpy.testing.assert_array_equal(new.fc1.W.array, net.fc1.W.array)
    if mode == 'init':
        assert not numpy.allclose(new.fc1.W.array, net.fc1.W.array)
        numpy.testing.assert_array_equal(new.fc1.b.array, 0)
    new.blocks.append(Affine())
    assert len(net.blocks) == 2


def test_copy_rejects_unknown_mode():
    with pytest.raises(ValueError, match='mode'):
        Net().copy('deep')


def test_to_device_cpu_returns_self_and_keeps_arrays():
    net = Net()
    assert net.to_device('cpu') is net
    assert str(net.device) == 'cpu' and net.xp is numpy
    assert isinstance(net.fc1.avg, numpy.ndarray) and net.fc1.count == 0


def test_to_device_moves_everything(device):
    net = Net()
    net.fc1.W.grad = numpy.ones_like(net.fc1.W.array)
    net.to_device(device)
    xp = net.xp
    assert all(isinstance(p.array, xp.ndarray) for p in net.params())
    assert isinstance(net.fc1.W.grad, xp.ndarray)
    assert isinstance(net.blocks[1].avg, xp.ndarray)
    assert str(net.blocks[1].device) == device
    lazy = Lazy().to_device(device)
    lazy.W.initialize((2,))
    assert isinstance(lazy.W.array, xp.ndarray)


def test_call_runs_forward():
    link = Affine(3, 2)
    y = link(numpy.ones((1, 3), dtype=numpy.float32))
    expected = link.W.array.sum(axis=1) + link.b.array
    numpy.testing.assert_allclose(y.array[0], expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(NotImplementedError):
        Link()(1)


def test_repr_lists_children():
    text = repr(Net())
    assert '(fc1): Affine()' in text and '(blocks): ChainList(' in text and '(1): Affine()' in text


def test_delattr_unregisters():
    net = Net()
    del net.fc1
    del net.blocks[0].b
    assert [p for p, _ in net.namedparams()] == ['/blocks/0/W', '/blocks/1/W', '/blocks/1/b']


def test_reassignment_replaces_or_unregisters():
    net = Net()
    with net.init_scope():
        net.fc1 = Affine(3, 5)
        net.fc1.W = Parameter(numpy.zeros((5, 3), dtype=numpy.float32))
    assert [p for p, _ in net.namedparams()][:2] == ['/fc1/W', '/fc1/b']
    assert net.fc1.W.shape == (5, 3)
    net.fc1.b = None
    net.blocks = None
    assert [p for p, _ in net.namedparams()] == ['/fc1/W']
    with pytest.raises(AttributeError, match='persistent'), net.fc1.init_scope():
        net.fc1.count = Parameter(numpy.zeros(1, dtype=numpy.float32))
