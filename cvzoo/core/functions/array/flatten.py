"""flatten: all elements in one axis."""

from cvzoo.core.functions.array import reshape


def flatten(x):
    """Return the elements of ``x`` as a 1-D array in C order; supports double backprop.

    Args:
        x (Variable or array): input.

    Returns:
        Variable: of shape (x.size,).
    """
    return reshape.reshape(x, (x.size,))
