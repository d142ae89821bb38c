import numpy

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def test_hard_swish(rng):
    # on both sides of the kinks at -3 and 3, away from them
    x = rng.choice([-4.5, -1.5, 1.0, 4.5], (3, 4)) + rng.uniform(-0.4, 0.4, (3, 4))
    check_function(F.hard_swish, (x,), lambda x: x * numpy.clip(x + 3, 0, 6) / 6,
                   double_backward=True)
