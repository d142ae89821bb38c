import numpy

import cvzoo.core.functions as F
from cvzoo.core import Variable, backend
from cvzoo.testing import check_function


def test_copy_on_the_cpu(rng):
    x = rng.standard_normal((2, 3))
    check_function(lambda x: F.copy(x, 'cpu'), (x,), lambda x: x.copy(), double_backward=True)
    y = F.copy(x, -1)
    assert y.device == backend.CPU and not numpy.shares_memory(y.array, x)


def test_copy_between_devices(device, rng):
    x = Variable(rng.standard_normal((2, 3)).astype(numpy.float32))
    y = F.copy(x, device)
    assert y.device == backend.get_device(device)
    z = F.copy(y * 2, 'cpu')
    F.sum(z).backward()
    assert x.grad.dtype == numpy.float32 and x.device == backend.CPU
    numpy.testing.assert_array_equal(x.grad, numpy.full((2, 3), 2, numpy.float32))
