import numpy
import pytest

from cvzoo.core import gemm, parallel


class _FakeControl:
    """Records the thread counts gemm.matmul sets."""

    def __init__(self, n_threads):
        self.n_threads = n_threads
        self.during = None
        self.calls = []

    def get(self):
        return self.n_threads

    def set(self, n_threads):
        self.calls.append(n_threads)
        self.n_threads = n_threads


@pytest.fixture
def fake_control(monkeypatch):
    control = _FakeControl(2)
    monkeypatch.setattr(gemm, 'thread_control', lambda: control)
    return control


def test_small_product_runs_on_one_thread_then_restores(fake_control, monkeypatch, rng):
    seen = []
    real_matmul = numpy.matmul
    monkeypatch.setattr(gemm.numpy, 'matmul', lambda *args, **kwargs: (
        seen.append(fake_control.n_threads), real_matmul(*args, **kwargs))[1])
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    numpy.testing.assert_array_equal(gemm.matmul(a, b), a @ b)
    assert seen == [1] and fake_control.calls == [1, 2] and fake_control.n_threads == 2


@pytest.mark.parametrize('threads_flops, expected_calls', [(10 ** 9, [1, 2]), (0, [])],
                         ids=['small-one-thread', 'large-openblas-threads'])
def test_too_narrow_product(threads_flops, expected_calls, fake_control, monkeypatch, rng):
    # over the threshold, but too narrow to cut into blocks of MIN_BLOCK
    monkeypatch.setattr(gemm, 'SINGLE_THREAD_FLOPS', 2 * 3 * 4 * 5)
    monkeypatch.setattr(gemm, 'OPENBLAS_THREADS_FLOPS', threads_flops)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    numpy.testing.assert_array_equal(gemm.matmul(a, b), a @ b)
    assert fake_control.calls == expected_calls


def test_batched_product_counts_every_matrix(fake_control, monkeypatch, rng):
    # 2 * (2 * 3 * 4 * 5) flops: over both thresholds only because of the batch of 2;
    # a batched product is never cut into blocks, so OpenBLAS keeps its threads
    monkeypatch.setattr(gemm, 'SINGLE_THREAD_FLOPS', 2 * 3 * 4 * 5 + 1)
    monkeypatch.setattr(gemm, 'OPENBLAS_THREADS_FLOPS', 2 * 3 * 4 * 5 + 1)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
    numpy.testing.assert_array_equal(gemm.matmul(a, b), a @ b)
    assert fake_control.calls == []


@pytest.mark.parametrize('shape', [(4, 5, 23), (23, 5, 4), (9, 3, 9)],
                         ids=['columns', 'rows', 'square'])
@pytest.mark.parametrize('with_out', [False, True], ids=['new', 'out'])
def test_large_product_in_blocks_on_helper_threads(shape, with_out, fake_control,
                                                   monkeypatch, rng):
    monkeypatch.setattr(gemm, 'SINGLE_THREAD_FLOPS', 0)
    monkeypatch.setattr(gemm, 'MIN_BLOCK', 1)
    m, k, n = shape
    a, b = rng.normal(size=(m, k)), rng.normal(size=(k, n)).T.copy().T  # any layout
    blocks = gemm._blocks(m, k, n, 2)
    assert 2 <= len(blocks) <= 2 * gemm.BLOCKS_PER_THREAD
    axis = 0 if m > n else 1
    assert blocks[0][1] == 0 and blocks[-1][2] == shape[2 * axis]
    assert all(block[0] == axis and block[2] == after[1]
               for block, after in zip(blocks, blocks[1:]))
    out = numpy.full((m, n), numpy.nan) if with_out else None
    y = gemm.matmul(a, b, out=out)
    assert y is out or out is None
    numpy.testing.assert_allclose(y, a @ b, rtol=1e-12, atol=1e-12)
    assert fake_control.calls == [1, 2]


@pytest.mark.parametrize('with_out', [False, True], ids=['new', 'out'])
def test_long_reduction_to_a_small_result_is_cut_along_the_reduction(
        with_out, fake_control, monkeypatch, rng):
    # a weight gradient's shape: the (3, 4) result is too small to cut, K = 50 is long
    monkeypatch.setattr(gemm, 'SINGLE_THREAD_FLOPS', 0)
    monkeypatch.setattr(gemm, 'MIN_BLOCK', 8)
    monkeypatch.setattr(gemm, 'MIN_REDUCTION_BLOCK', 8)
    a, b = rng.normal(size=(3, 50)), rng.normal(size=(4, 50)).T  # b transposed, as gW's
    blocks = gemm._blocks(3, 50, 4, 2)
    assert [block[0] for block in blocks] == [2] * 6
    assert blocks[0][1] == 0 and blocks[-1][2] == 50
    out = numpy.full((3, 4), numpy.nan) if with_out else None
    y = gemm.matmul(a, b, out=out)
    assert y is out or out is None
    numpy.testing.assert_allclose(y, a @ b, rtol=1e-12, atol=1e-12)
    assert fake_control.calls == [1, 2]


def test_blocks_done_by_the_caller_when_no_helper_runs(fake_control, monkeypatch, rng):
    class _IdlePool:
        def submit(self, func):
            pass  # a helper that is never scheduled

    monkeypatch.setattr(gemm, 'SINGLE_THREAD_FLOPS', 0)
    monkeypatch.setattr(gemm, 'MIN_BLOCK', 1)
    monkeypatch.setattr(parallel, '_helpers', lambda n: _IdlePool())
    a, b = rng.normal(size=(6, 3)), rng.normal(size=(3, 8))
    numpy.testing.assert_allclose(gemm.matmul(a, b), a @ b, rtol=1e-12, atol=1e-12)


def test_blocked_product_raises_the_error_of_a_block(fake_control, monkeypatch, rng):
    monkeypatch.setattr(gemm, 'SINGLE_THREAD_FLOPS', 0)
    monkeypatch.setattr(gemm, 'MIN_BLOCK', 1)
    with pytest.raises(TypeError):
        gemm.matmul(numpy.ones((6, 3)), numpy.ones((3, 8)), out=numpy.empty((6, 8), int))
    assert fake_control.calls == [1, 2]


def test_threads_restored_when_the_product_fails(fake_control):
    with pytest.raises(ValueError):
        gemm.matmul(numpy.ones((2, 3)), numpy.ones((4, 5)))
    assert fake_control.calls == [1, 2]


def test_out_and_vectors(fake_control, rng):
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    out = numpy.empty((3, 5))
    assert gemm.matmul(a, b, out=out) is out
    numpy.testing.assert_array_equal(out, a @ b)
    numpy.testing.assert_array_equal(gemm.matmul(a, b[:, 0]), a @ b[:, 0])


def test_without_thread_control_it_is_plain_matmul(monkeypatch, rng):
    monkeypatch.setattr(gemm, 'thread_control', lambda: None)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    numpy.testing.assert_array_equal(gemm.matmul(a, b), a @ b)


def test_finds_numpys_openblas():
    config = numpy.show_config(mode='dicts')['Build Dependencies']['blas']
    if 'openblas' not in config.get('name', '').lower():
        pytest.skip('NumPy is not built on OpenBLAS')
    control = gemm.thread_control()
    assert control is not None
    before = control.get()
    control.set(1)
    try:
        assert control.get() == 1
    finally:
        control.set(before)
    assert control.get() == before


def test_openblas_policy_leaves_threads_alone(fake_control, rng):
    from cvzoo.core.config import using_config

    a = rng.standard_normal((3, 4)).astype(numpy.float32)
    b = rng.standard_normal((4, 5)).astype(numpy.float32)
    with using_config('blas_threading', 'openblas'):
        y = gemm.matmul(a, b)
    assert fake_control.calls == []
    numpy.testing.assert_allclose(y, a @ b, rtol=1e-6)


def test_unknown_policy_is_named(rng):
    from cvzoo.core.config import using_config

    a = numpy.ones((2, 2), numpy.float32)
    with using_config('blas_threading', 'fast'), pytest.raises(ValueError, match='blas_threading'):
        gemm.matmul(a, a)
