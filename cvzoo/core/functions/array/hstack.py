"""hstack: join arrays column-wise, as numpy.hstack."""

from cvzoo.core.functions.array import concat


def hstack(xs):
    """Join ``xs`` along axis 1 (axis 0 for 1-D arrays); supports double backprop.

    Args:
        xs (sequence of Variable or array): at least one; same ndim and dtype, same
            shape except along the joined axis.

    Returns:
        Variable: the joined array.
    """
    xs = list(xs)
    if not xs:
        raise ValueError('hstack: xs must hold at least one array, got none')
    return concat.concat(xs, 0 if xs[0].ndim == 1 else 1)
