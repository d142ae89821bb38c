import threading

import numpy
import pytest

from cvzoo.core import parallel


@pytest.fixture
def two_threads(monkeypatch):
    """Every pass may use two threads, and a task is at most 16 elements."""
    monkeypatch.setattr(parallel, '_configured_count', lambda: 2)
    monkeypatch.setattr(parallel, 'TASK_ELEMENTS', 16)


class _IdlePool:
    def submit(self, func):
        pass  # a helper that is never scheduled


def test_run_calls_every_task_once_on_caller_and_helper(two_threads):
    seen = []
    lock = threading.Lock()
    started = threading.Barrier(2, timeout=10)

    def task(i):
        def call():
            if i < 2:
                started.wait()  # the first two tasks only end once two threads run them
            with lock:
                seen.append((i, threading.current_thread().name))
        return call

    parallel.run([task(i) for i in range(20)])
    assert sorted(i for i, _ in seen) == list(range(20))
    assert len({name for _, name in seen}) == 2


def test_run_does_every_task_itself_when_no_helper_runs(two_threads, monkeypatch):
    monkeypatch.setattr(parallel, '_helpers', lambda n: _IdlePool())
    seen = []
    parallel.run([lambda i=i: seen.append(i) for i in range(7)])
    assert sorted(seen) == list(range(7))


def test_run_raises_the_error_of_a_task_after_all_ended(two_threads):
    seen = []

    def fail():
        raise KeyError('task 3')

    tasks = [lambda i=i: seen.append(i) for i in range(6)]
    tasks[3] = fail
    with pytest.raises(KeyError, match='task 3'):
        parallel.run(tasks)
    assert sorted(seen) == [0, 1, 2, 4, 5]


def test_nested_passes_stay_on_the_task_thread(two_threads):
    inner = []
    parallel.run([lambda: inner.append(parallel.thread_count()) for _ in range(4)])
    assert inner == [1, 1, 1, 1]
    assert parallel.thread_count() == 2


@pytest.mark.parametrize('length, item, n_threads, expected', [
    (10, 1, 2, [(0, 5), (5, 10)]),            # small: one range per thread
    (10, 8, 2, [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10)]),  # 80 elements, 16 a task
    (1, 1000, 2, [(0, 1)]),                    # one item cannot be cut
    (3, 1, 4, [(0, 1), (1, 2), (2, 3)]),
])
def test_ranges_cover_the_axis(two_threads, length, item, n_threads, expected):
    assert parallel.ranges(length, item, n_threads) == expected


def test_outer_axis_follows_memory_layout():
    x = numpy.zeros((8, 3, 5, 5), numpy.float32)
    assert parallel.outer_axis(x) == 0
    assert parallel.outer_axis(x.transpose(1, 0, 2, 3)) == 1
    assert parallel.outer_axis(numpy.zeros((1, 4, 1))) == 1


@pytest.mark.parametrize('layout', ['c', 'channel_major'])
def test_elementwise_cuts_out_and_same_sized_operands_not_broadcast_ones(two_threads,
                                                                         layout, rng):
    x = rng.normal(size=(4, 6, 3, 3))
    if layout == 'channel_major':
        x = numpy.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    scale = rng.normal(size=(1, 6, 1, 1))
    out = numpy.empty_like(x)
    shapes = []

    def func(out, x, scale, offset):
        shapes.append((x.shape, scale.shape))
        numpy.multiply(x, scale, out=out)
        out += offset

    parallel.elementwise(func, out, x, scale, 0.5, min_elements=1)
    numpy.testing.assert_array_equal(out, x * scale + 0.5)
    assert len(shapes) > 1
    axis = 0 if layout == 'c' else 1
    assert sum(s[0][axis] for s in shapes) == x.shape[axis]


def test_elementwise_below_min_elements_is_one_call(two_threads):
    calls = []
    out = numpy.zeros((4, 4))
    parallel.elementwise(lambda o: calls.append(o.shape), out, min_elements=17)
    assert calls == [(4, 4)]


def test_copy_and_add_match_numpy(two_threads, rng):
    source = rng.normal(size=(5, 7, 4)).transpose(2, 0, 1)
    out = numpy.empty(source.shape)
    parallel.copy(out, source, min_elements=1)
    numpy.testing.assert_array_equal(out, source)
    a, b = rng.normal(size=(300, 300)).astype(numpy.float32), rng.normal(size=(300, 300))
    total = parallel.add(a, b)
    assert total.dtype == numpy.float64
    numpy.testing.assert_array_equal(total, a + b)
    numpy.testing.assert_array_equal(parallel.add(a, 1.0), a + 1.0)  # broadcast: plain


def test_by_slices_fills_outputs_from_slices(two_threads, rng):
    x = rng.normal(size=(2, 9, 4))
    total = numpy.empty((2, 9))
    largest = numpy.empty((2, 9), numpy.int64)
    calls = []

    def func(x):
        calls.append(x.shape[1])
        return x.sum(axis=2), x.argmax(axis=2)

    parallel.by_slices(func, (total, largest), (x,), axis=1, min_elements=1)
    numpy.testing.assert_array_equal(total, x.sum(axis=2))
    numpy.testing.assert_array_equal(largest, x.argmax(axis=2))
    assert sum(calls) == 9 and len(calls) > 1


def test_thread_count_follows_openblas_setting(monkeypatch):
    from cvzoo.core import gemm

    class _Control:
        def get(self):
            return 3

    monkeypatch.setattr(gemm, 'thread_control', lambda: _Control())
    assert parallel.thread_count() == 3
    monkeypatch.setattr(gemm, 'thread_control', lambda: None)
    monkeypatch.setenv('OPENBLAS_NUM_THREADS', '1')
    assert parallel.thread_count() == 1
