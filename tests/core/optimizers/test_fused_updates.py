"""On a GPU MomentumSGD and Adam update each parameter in one fused kernel; its result
must equal the NumPy expression's, step after step."""

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.core.links.link import Link
from cvzoo.core.optimizers import adam, momentum_sgd

OPTIMIZERS = {
    'momentum_sgd': lambda: momentum_sgd.MomentumSGD(lr=0.05, momentum=0.8),
    'adam': lambda: adam.Adam(alpha=0.01),
    'adamw': lambda: adam.Adam(alpha=0.01, weight_decay_rate=0.1, eta=0.5),
    'amsgrad': lambda: adam.Adam(alpha=0.01, amsgrad=True),  # not fused: the same result
}


def _run(make_optimizer, device, dtype, steps=3):
    rng = numpy.random.default_rng(0)
    link = Link()
    with link.init_scope():
        link.add_param('W', (3, 4), dtype=dtype)
    link.W.array[...] = rng.standard_normal((3, 4)).astype(dtype)
    link.to_device(device)
    optimizer = make_optimizer().setup(link)
    for _ in range(steps):
        link.W.grad = backend.to_device(rng.standard_normal((3, 4)).astype(dtype), device)
        optimizer.update()
    return backend.to_numpy(link.W.array), {
        name: backend.to_numpy(state) for name, state in link.W.update_rule.state.items()}


@pytest.mark.parametrize('name', sorted(OPTIMIZERS))
@pytest.mark.parametrize('dtype', [numpy.float32, numpy.float64])
def test_device_update_equals_numpy_update(name, dtype, device):
    want_param, want_state = _run(OPTIMIZERS[name], 'cpu', dtype)
    got_param, got_state = _run(OPTIMIZERS[name], device, dtype)
    tolerance = dict(rtol=1e-5, atol=1e-6) if dtype == numpy.float32 else dict(rtol=1e-12)
    numpy.testing.assert_allclose(got_param, want_param, **tolerance)
    assert sorted(got_state) == sorted(want_state)
    for key in want_state:
        numpy.testing.assert_allclose(got_state[key], want_state[key], **tolerance)
    start = numpy.random.default_rng(0).standard_normal((3, 4)).astype(dtype)
    assert not numpy.allclose(got_param, start)  # the steps did move the parameter
