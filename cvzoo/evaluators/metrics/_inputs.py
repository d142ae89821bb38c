"""Check and flatten the per-image lists that the eval_* functions take."""

import numpy

from cvzoo import errors

# Labels index the per-class arrays the metrics return ('ap' and the like, of length
# largest label + 1), so a label bounds an allocation. The largest detection vocabularies
# have about 13,000 classes (V3Det); LVIS has 1,203.
MAX_LABEL = 65535


def as_list(name, values, n_img=None):
    """Turn an iterable of per-image arrays into a list; check the image count."""
    if values is None:
        return None
    values = [numpy.asarray(v) for v in values]
    if n_img is not None and len(values) != n_img:
        raise errors.UsageError(f'{name}: expected one array per image ({n_img} images), '
                                f'got {len(values)}')
    return values


def check_rows(name, values, shape_tail, n_rows=None):
    """Check that every array has shape (R_i,) + shape_tail (and R_i == n_rows[i])."""
    for i, value in enumerate(values):
        if value.shape[1:] != tuple(shape_tail) or value.ndim != 1 + len(shape_tail):
            expected = '(R, ' + ', '.join(str(s) for s in shape_tail) + ')'
            raise errors.UsageError(f'{name}[{i}]: expected shape {expected}, got {value.shape}')
        if n_rows is not None and len(value) != n_rows[i]:
            raise errors.UsageError(f'{name}[{i}]: expected {n_rows[i]} rows (one per box or '
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
            raise errors.UsageError(f'{name}[{i}]: expected finite coordinates, got '
                                    f'{value[row].tolist()} in row {row} (image {i})')


def label_problem(label):
    """Why a flat label array is refused ('expected ..., got ...'), or None when every
    label lies in [0, MAX_LABEL]."""
    label = numpy.asarray(label)
    if label.dtype.kind not in 'biuf':
        return f'expected int labels, got an array of dtype {label.dtype}'
    bad = ~((label >= 0) & (label <= MAX_LABEL))
    if not bad.any():
        return None
    value = label[bad].flat[0]
    if value < 0:
        return f'expected labels >= 0, got {value}'
    return f'expected labels in [0, {MAX_LABEL}], got {value}'


def check_labels(name, values):
    """Check that every label is in [0, MAX_LABEL] (detection has no background class;
    a huge label would size the per-class arrays)."""
    for i, value in enumerate(values):
        problem = label_problem(value)
        if problem is not None:
            raise errors.UsageError(f'{name}[{i}]: {problem} (image {i})')
