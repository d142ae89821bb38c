"""Differentiable functions: ``import cvzoo.core.functions as F``.

One public function per module; each is re-exported here, flat, under its family's
banner and sorted within it. Names and argument orders follow Chainer's.
"""

# --- activation ---

# --- array ---
from cvzoo.core.functions.array.broadcast import broadcast_to, sum_to
from cvzoo.core.functions.array.reshape import reshape
from cvzoo.core.functions.array.transpose import transpose

# --- connection ---

# --- evaluation ---

# --- loss ---

# --- math ---
from cvzoo.core.functions.math.basic_math import absolute, add, div, mul, neg, pow, sub
from cvzoo.core.functions.math.exponential import exp, log
from cvzoo.core.functions.math.sum import sum

# --- noise ---

# --- normalization ---

# --- pooling ---

# --- resize ---

# --- vision ---

# --- Variable's operators and methods ---
from cvzoo.core.functions import _variable_methods
from cvzoo.core.functions.math import basic_math as _basic_math

_basic_math.install_variable_arithmetics()
_variable_methods.install()
