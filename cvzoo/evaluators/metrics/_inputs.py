"""Check and flatten the per-image lists that the eval_* functions take."""

import numpy


def as_list(name, values, n_img=None):
    """Turn an iterable of per-image arrays into a list; check the image count."""
    if values is None:
        return None
    values = [numpy.asarray(v) for v in values]
    if n_img is not None and len(values) != n_img:
        raise ValueError(f'{name}: expected one array per image ({n_img} images), '
                         f'got {len(values)}')
    return values


def check_rows(name, values, shape_tail, n_rows=None):
    """Check that every array has shape (R_i,) + shape_tail (and R_i == n_rows[i])."""
    for i, value in enumerate(values):
        if value.shape[1:] != tuple(shape_tail) or value.ndim != 1 + len(shape_tail):
            expected = '(R, ' + ', '.join(str(s) for s in shape_tail) + ')'
            raise ValueError(f'{name}[{i}]: expected shape {expected}, got {value.shape}')
        if n_rows is not None and len(value) != n_rows[i]:
            raise ValueError(f'{name}[{i}]: expected {n_rows[i]} rows (one per box or '
                             f'mask of that image), got {len(value)}')


def flatten(values, dtype, tail=()):
    """Concatenate per-image arrays; also return the image index of each row."""
    lengths = numpy.array([len(v) for v in values], numpy.int64)
    img = numpy.repeat(numpy.arange(len(values)), lengths)
    if len(values) == 0 or lengths.sum() == 0:
        return numpy.zeros((0,) + tuple(tail), dtype), img
    return numpy.concatenate([numpy.asarray(v, dtype).reshape((-1,) + tuple(tail))
                              for v in values]), img


def check_finite(name, values):
    """Check that no array holds NaN or infinity (a NaN box compares False with every
    threshold, so it would claim a ground truth or escape every filter)."""
    for i, value in enumerate(values):
        if value.dtype.kind not in 'biuf':
            raise TypeError(f'{name}[{i}]: expected numbers, got an array of dtype {value.dtype} '
                            f'(image {i})')
        bad = ~numpy.isfinite(value)
        if bad.any():
            row = int(numpy.argwhere(bad)[0][0])
            raise ValueError(f'{name}[{i}]: expected finite coordinates, got '
                             f'{value[row].tolist()} in row {row} (image {i})')


def check_labels(name, values):
    """Check that every label is >= 0 (detection has no background class)."""
    for i, value in enumerate(values):
        if value.size and value.min() < 0:
            raise ValueError(f'{name}[{i}]: expected labels >= 0, got {int(value.min())} '
                             f'(image {i})')
