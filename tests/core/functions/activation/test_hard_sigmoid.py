import numpy

import cvzoo.core.functions as F
from cvzoo.testing import check_function


def test_hard_sigmoid(rng):
    # on both sides of the kinks at -2.5 and 2.5, away from them
    x = rng.choice([-4.0, -1.0, 0.5, 4.0], (3, 4)) + rng.uniform(-0.4, 0.4, (3, 4))
    check_function(F.hard_sigmoid, (x,), lambda x: numpy.clip(0.2 * x + 0.5, 0, 1),
                   double_backward=True)
