"""vstack: join arrays row-wise, as numpy.vstack."""

from cvzoo.core.functions.array import concat, reshape


def vstack(xs):
    """Join ``xs`` along axis 0, 1-D arrays as rows; supports double backprop.

    Args:
        xs (sequence of Variable or array): at least one; same dtype; 1-D ones are
            taken as (1, N).

    Returns:
        Variable: the joined array, at least 2-D.
    """
    xs = list(xs)
    if not xs:
        raise ValueError('vstack: xs must hold at least one array, got none')
    xs = [reshape.reshape(x, (1,) + tuple(x.shape)) if x.ndim < 2 else x for x in xs]
    return concat.concat(xs, 0)
