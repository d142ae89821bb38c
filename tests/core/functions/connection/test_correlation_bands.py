"""Large patch matrices are built in bands of output rows; the result must not change."""

import numpy
import pytest

from cvzoo.core import workspace
from cvzoo.core.functions.connection import correlation

CASES = {
    'plain': dict(k=3, stride=(1, 1), pad=(1, 1), dilate=(1, 1), groups=1, out=None),
    'stride': dict(k=3, stride=(2, 2), pad=(1, 1), dilate=(1, 1), groups=1, out=None),
    'dilate': dict(k=3, stride=(1, 1), pad=(2, 2), dilate=(2, 2), groups=1, out=None),
    'groups': dict(k=3, stride=(1, 2), pad=(1, 0), dilate=(1, 1), groups=2, out=None),
    'kernel7': dict(k=7, stride=(2, 2), pad=(3, 3), dilate=(1, 1), groups=1, out=None),
    'cover_all': dict(k=3, stride=(2, 2), pad=(0, 0), dilate=(1, 1), groups=1, out=(5, 5)),
    'pointwise': dict(k=1, stride=(1, 1), pad=(0, 0), dilate=(1, 1), groups=1, out=None),
}


def _out_size(case, size):
    if case['out'] is not None:
        return case['out']
    return tuple((s + 2 * p - (case['k'] - 1) * d - 1) // st + 1
                 for s, p, d, st in zip(size, case['pad'], case['dilate'], case['stride']))


@pytest.mark.parametrize('name', sorted(CASES))
def test_banded_equals_whole(name, rng, monkeypatch):
    case = CASES[name]
    size = (11, 9)
    x = rng.standard_normal((2, 4) + size).astype(numpy.float32)
    W = rng.standard_normal((6, 4 // case['groups'], case['k'], case['k'])).astype(numpy.float32)
    out_size = _out_size(case, size)
    args = (case['stride'], case['pad'], case['dilate'], case['groups'])
    y = correlation.correlate(x, W, out_size, *args)
    gy = rng.standard_normal(y.shape).astype(numpy.float32)
    gx = correlation.correlate_transpose(gy, W, size, *args)
    gW = correlation.correlate_grad_weight(x, gy, W.shape[2:], *args)

    monkeypatch.setattr(correlation, '_PATCH_BUDGET', 1)  # one output row per band
    assert len(correlation._output_bands(x.shape[:2], W.shape[2:], out_size)) == out_size[0]
    numpy.testing.assert_allclose(correlation.correlate(x, W, out_size, *args), y,
                                  rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(correlation.correlate_transpose(gy, W, size, *args), gx,
                                  rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(correlation.correlate_grad_weight(x, gy, W.shape[2:], *args),
                                  gW, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('limit', [1, 2000])
def test_kernel_rows_in_channel_chunks_equal_whole(limit, rng, monkeypatch):
    # The kernel-row path takes channels in chunks whose column shifts fit the scratch
    # limit: one channel at a time (limit 1), or a few.
    x = rng.standard_normal((2, 5, 8, 7)).astype(numpy.float32)
    W = rng.standard_normal((3, 5, 3, 3)).astype(numpy.float32)
    args = ((1, 1), (1, 1), (1, 1), 1)
    y = correlation.correlate(x, W, (8, 7), *args)
    monkeypatch.setattr(correlation, '_PATCH_BUDGET', 1)
    monkeypatch.setattr(workspace, 'MAX_BYTES', 4 * limit)  # float32: limit elements
    chunks = []
    fill = correlation._fill_column_shifts
    monkeypatch.setattr(correlation, '_fill_column_shifts',
                        lambda block, x, *rest: (chunks.append(x.shape[1]), fill(block, x, *rest)))
    numpy.testing.assert_allclose(correlation.correlate(x, W, (8, 7), *args), y,
                                  rtol=1e-5, atol=1e-5)
    assert sum(chunks) == 5 and len(chunks) == (5 if limit == 1 else 2)
