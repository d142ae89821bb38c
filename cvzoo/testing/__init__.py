"""Public contract checks, used by cvzoo's tests and by users who add their own parts.

``check_function`` tests a differentiable function (forward, backward, double backward,
retention); the ``assert_is_*`` checks test models and datasets against DESIGN.md.
"""

from cvzoo.testing.function_checks import check_forward, check_function, check_retention

__all__ = ['check_forward', 'check_function', 'check_retention']
