import numpy
import pytest

from cvzoo.core import gemm, parallel


class _FakeControl:
    """Records the thread counts gemm.matmul sets (through limit and restore)."""

    def __init__(self, n_threads):
        self.n_threads = n_threads
        self.calls = []

    def get(self):
        return self.n_threads

    def limit(self, n_threads):
        control, before = self, self.n_threads

        class Limiter:
            def restore_original_limits(self):
                control.calls.append(before)
                control.n_threads = before

        self.calls.append(n_threads)
        self.n_threads = n_threads
        return Limiter()


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


def _numpy_blas_threads():
    """NumPy's BLAS entries of threadpoolctl.threadpool_info(): {filepath: num_threads}."""
    import threadpoolctl

    control = gemm.thread_control()
    if control is None:
        pytest.skip('threadpoolctl finds no BLAS of NumPy here')
    paths = {lib.filepath for lib in control._controller.lib_controllers}
    return {info['filepath']: info['num_threads'] for info in threadpoolctl.threadpool_info()
            if info['filepath'] in paths}


def test_finds_numpys_blas():
    config = numpy.show_config(mode='dicts')['Build Dependencies']['blas']
    if 'openblas' not in config.get('name', '').lower():
        pytest.skip('NumPy is not built on OpenBLAS')
    control = gemm.thread_control()
    assert control is not None
    before = control.get()
    limiter = control.limit(1)
    try:
        assert control.get() == 1
    finally:
        limiter.restore_original_limits()
    assert control.get() == before


def test_blas_threads_outside_cvzoo_unchanged_by_a_product(rng):
    # threadpoolctl reads the same count before and after cvzoo's products (a small
    # one on one BLAS thread, a large one in blocks), and 1 only while one runs
    before = _numpy_blas_threads()
    inside = []
    real_matmul = numpy.matmul

    def spy(*args, **kwargs):
        inside.append(_numpy_blas_threads())
        return real_matmul(*args, **kwargs)

    a, b = rng.normal(size=(300, 300)), rng.normal(size=(300, 300))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gemm.numpy, 'matmul', spy)
        patch.setattr(gemm, 'configured_threads', lambda: 2)
        gemm.matmul(a[:3, :4], b[:4, :5])
        gemm.matmul(a, b)
    assert _numpy_blas_threads() == before
    assert inside and all(set(seen.values()) == {1} for seen in inside)


def test_other_blas_libraries_are_left_alone(rng):
    # SciPy ships its own OpenBLAS: a cvzoo product must not change its thread count
    pytest.importorskip('scipy.linalg')
    import threadpoolctl

    ours = set(_numpy_blas_threads())

    def others():
        return {info['filepath']: info['num_threads'] for info in threadpoolctl.threadpool_info()
                if info['user_api'] == 'blas' and info['filepath'] not in ours}

    if not others():
        pytest.skip("no BLAS besides NumPy's in this process")
    before = others()
    with gemm.one_blas_thread():
        assert others() == before
        assert set(_numpy_blas_threads().values()) == {1}


def test_limit_taken_in_one_thread_is_restored_in_another():
    # thread A enters, thread B enters, A leaves, B leaves: B restores the count
    import threading

    before = _numpy_blas_threads()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with gemm.one_blas_thread():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def second():
        a_in.wait(10)
        with gemm.one_blas_thread():
            b_in.set()
            a_out.wait(10)
            assert set(_numpy_blas_threads().values()) == {1}

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert _numpy_blas_threads() == before


def test_user_limits_work_while_a_thread_that_ran_cvzoo_lives():
    # threadpoolctl lets one thread at a time change OpenBLAS; cvzoo must not keep that
    import threading

    import threadpoolctl

    before = _numpy_blas_threads()
    ran, release = threading.Event(), threading.Event()

    def worker():
        with gemm.one_blas_thread():
            pass
        ran.set()
        release.wait(10)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        ran.wait(10)
        with threadpoolctl.threadpool_limits(limits=1, user_api='blas'):
            assert set(_numpy_blas_threads().values()) == {1}
    finally:
        release.set()
        thread.join(20)
    assert _numpy_blas_threads() == before


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
