"""A tiny classifier, its data and a trainer factory shared by the training tests."""

import types

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import optimizers
from cvzoo.core.training import reporter, trainer
from cvzoo.core.training.iterators.serial_iterator import SerialIterator
from cvzoo.core.training.updaters.standard_updater import StandardUpdater


class TinyClassifier(L.Chain):
    """Linear - ReLU - (dropout) - Linear, with a mean softmax cross-entropy loss."""

    def __init__(self, n_in=4, n_hidden=8, n_class=3, dropout=0.0, seed=0):
        super().__init__()
        rng = numpy.random.RandomState(seed)
        self.dropout = dropout
        with self.init_scope():
            self.l1 = L.Linear(n_in, n_hidden, initialW=rng.randn(n_hidden, n_in).astype(
                numpy.float32) * 0.5)
            self.l2 = L.Linear(n_hidden, n_class, initialW=rng.randn(n_class, n_hidden).astype(
                numpy.float32) * 0.5)

    def forward(self, x, t):
        h = F.relu(self.l1(x))
        if self.dropout:
            h = F.dropout(h, self.dropout)
        y = self.l2(h)
        loss = F.softmax_cross_entropy(y, t)
        reporter.report({'loss': loss, 'accuracy': F.accuracy(y, t)}, self)
        return loss


def make_dataset(n=30, n_in=4, n_class=3, seed=0):
    """A learnable toy problem: the label is the argmax of three fixed projections."""
    rng = numpy.random.RandomState(seed)
    x = rng.randn(n, n_in).astype(numpy.float32)
    t = (x @ rng.randn(n_in, n_class)).argmax(axis=1).astype(numpy.int32)
    return [(x[i], t[i]) for i in range(n)]


@pytest.fixture
def make_trainer(tmp_path):
    """make_trainer(stop=(n, unit), dropout=0., batch_size=4, out=tmp_path, device='cpu')."""

    def build(stop=(10, 'iteration'), dropout=0.0, batch_size=4, out=None, lr=0.1,
              device='cpu'):
        model = TinyClassifier(dropout=dropout).to_device(device)
        optimizer = optimizers.MomentumSGD(lr=lr).setup(model)
        iterator = SerialIterator(make_dataset(), batch_size, seed=0)
        updater = StandardUpdater(iterator, optimizer, device=device)
        return trainer.Trainer(updater, stop, out=str(out or tmp_path))

    return build


@pytest.fixture
def toy():
    """The toy model and data, for tests that build their own updater."""
    return types.SimpleNamespace(TinyClassifier=TinyClassifier, make_dataset=make_dataset)
