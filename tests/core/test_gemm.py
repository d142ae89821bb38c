import numpy
import pytest

from cvzoo.core import gemm


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


def test_large_product_keeps_the_threads(fake_control, monkeypatch, rng):
    monkeypatch.setattr(gemm, 'SINGLE_THREAD_FLOPS', 2 * 3 * 4 * 5)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    numpy.testing.assert_array_equal(gemm.matmul(a, b), a @ b)
    assert fake_control.calls == []


def test_batched_product_counts_every_matrix(fake_control, monkeypatch, rng):
    # 2 * (2 * 3 * 4 * 5) flops: over the threshold only because of the batch of 2
    monkeypatch.setattr(gemm, 'SINGLE_THREAD_FLOPS', 2 * 3 * 4 * 5 + 1)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 5))
    numpy.testing.assert_array_equal(gemm.matmul(a, b), a @ b)
    assert fake_control.calls == []


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
