import pytest

import cvzoo.core.functions as F
from cvzoo.testing import check_function

CASES = [None, (1, 0, 2), (2, 0, 1), (-1, 0, 1)]


@pytest.mark.parametrize('axes', CASES, ids=[str(c) for c in CASES])
def test_transpose(axes, rng):
    check_function(lambda x: F.transpose(x, axes), (rng.standard_normal((2, 3, 4)),),
                   lambda x: x.transpose(axes), double_backward=True)


def test_bad_axes_are_named(rng):
    with pytest.raises(ValueError, match='not a permutation'):
        F.transpose(rng.standard_normal((2, 3)), (0, 0))
