"""A one-parameter link and a helper that runs two optimizer steps on fixed gradients."""

import numpy
import pytest

from cvzoo.core.links.link import Link
from cvzoo.core.variable import Parameter


class OneParam(Link):
    def __init__(self, w):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(w.copy())


@pytest.fixture
def two_steps():
    """Return run(optimizer, dtype) -> (w0, [g1, g2], [w after step 1, w after step 2])."""

    def run(optimizer, dtype=numpy.float32):
        rng = numpy.random.RandomState(0)
        w0 = rng.uniform(-1, 1, (2, 3)).astype(dtype)
        grads = [rng.uniform(-1, 1, (2, 3)).astype(dtype) for _ in range(2)]
        link = OneParam(w0)
        optimizer.setup(link)
        weights = []
        for g in grads:
            link.W.grad = g.copy()
            optimizer.update()
            assert link.W.dtype == dtype
            weights.append(link.W.array.copy())
        return w0.astype(numpy.float64), [g.astype(numpy.float64) for g in grads], weights

    return run
