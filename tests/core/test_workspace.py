import threading

import numpy
import pytest

import cvzoo.core.functions as F
from cvzoo.core import workspace
from cvzoo.core.functions.connection import correlation


@pytest.fixture(autouse=True)
def empty_workspace():
    workspace.release()
    yield
    workspace.release()


def _channel_major(array):
    """The (N, C, H, W) array laid out as convolutions return their outputs."""
    return numpy.ascontiguousarray(array.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)


def test_scratch_has_the_shape_and_dtype_asked_for():
    array = workspace.scratch('a', (3, 4), numpy.float32)
    assert array.shape == (3, 4) and array.dtype == numpy.float32
    assert array.flags.c_contiguous and array.flags.writeable
    assert workspace.held_bytes() == 48


def test_scratch_reuses_the_buffer_of_its_name_and_grows_it_when_needed():
    first = workspace.scratch('a', (10,), numpy.float64)
    smaller = workspace.scratch('a', (2, 3), numpy.float32)
    assert numpy.shares_memory(first, smaller)
    assert workspace.held_bytes() == 80
    larger = workspace.scratch('a', (30,), numpy.float32)
    assert not numpy.shares_memory(first, larger)
    assert workspace.held_bytes() == 120


def test_scratch_of_different_names_or_threads_never_overlaps():
    a = workspace.scratch('a', (8,), numpy.float32)
    b = workspace.scratch('b', (8,), numpy.float32)
    assert not numpy.shares_memory(a, b)
    other = []
    thread = threading.Thread(
        target=lambda: other.append(workspace.scratch('a', (8,), numpy.float32)))
    thread.start()
    thread.join()
    assert not numpy.shares_memory(a, other[0])


def test_release_frees_the_buffers_of_this_thread():
    workspace.scratch('a', (100,), numpy.float32)
    workspace.release()
    assert workspace.held_bytes() == 0


def test_scratch_above_the_limit_is_a_new_array_that_is_not_kept(monkeypatch):
    monkeypatch.setattr(workspace, 'MAX_BYTES', 40)
    kept = workspace.scratch('a', (10,), numpy.float32)
    large = workspace.scratch('a', (11,), numpy.float32)
    assert large.shape == (11,) and not numpy.shares_memory(kept, large)
    assert workspace.held_bytes() == 40


def test_scratch_on_another_array_module_is_its_plain_empty():
    class FakeModule:
        @staticmethod
        def empty(shape, dtype):
            return ('empty', shape, dtype)

    assert workspace.scratch('a', (2,), numpy.float32, FakeModule) == (
        'empty', (2,), numpy.float32)
    assert workspace.held_bytes() == 0


def _convolution_results(x, gy, W, stride, pad):
    """A convolution's output, its input gradient and its weight gradient."""
    y = F.convolution_2d(x, W, stride=stride, pad=pad).array
    gx = F.deconvolution_2d(gy, W, stride=stride, pad=pad, outsize=x.shape[2:]).array
    gW = correlation.correlate_grad_weight(x, gy, W.shape[2:], (stride, stride),
                                           (pad, pad), (1, 1), 1)
    return [y, gx, gW]


@pytest.mark.parametrize('layout', [numpy.ascontiguousarray, _channel_major])
@pytest.mark.parametrize('ksize, stride, pad, out_size', [(3, 2, 1, 5), (1, 1, 0, 9)])
def test_convolution_results_stay_valid_after_later_convolutions(layout, ksize, stride, pad,
                                                                 out_size):
    # The patch matrices (and the columns of the input gradient) lie in scratch memory
    # that the next call overwrites; none of it may be part of a result.
    rng = numpy.random.default_rng(0)
    W = rng.standard_normal((4, 3, ksize, ksize))

    def results():
        x = layout(rng.standard_normal((2, 3, 9, 9)))
        gy = layout(rng.standard_normal((2, 4, out_size, out_size)))
        return _convolution_results(x, gy, W, stride, pad)

    first = results()
    copies = [array.copy() for array in first]
    results()
    for array, copy in zip(first, copies):
        numpy.testing.assert_array_equal(array, copy)
    buffers = workspace._buffers()
    assert set(buffers) == ({'patches'} if ksize > 1 or layout is numpy.ascontiguousarray
                            else set())  # a channel-major 1x1 input is its own patches
    for buffer in buffers.values():
        assert not any(numpy.shares_memory(buffer, array) for array in first)


@pytest.mark.parametrize('ksize, pad', [(3, 1), (1, 0)])
def test_kernel_row_results_stay_valid_after_later_convolutions(monkeypatch, ksize, pad):
    # Large stride-1 images take the kernel-row path, whose column shifts, row sums and
    # terms lie in scratch memory; a patch budget of one element sends small ones there.
    monkeypatch.setattr(correlation, '_PATCH_BUDGET', 1)
    rng = numpy.random.default_rng(0)
    W = rng.standard_normal((4, 3, ksize, ksize))
    first = F.convolution_2d(rng.standard_normal((2, 3, 9, 9)), W, pad=pad).array
    copy = first.copy()
    F.convolution_2d(rng.standard_normal((2, 3, 9, 9)), W, pad=pad)
    numpy.testing.assert_array_equal(first, copy)
    buffers = workspace._buffers()
    assert {'patches', 'row_sums'} <= set(buffers)
    assert not any(numpy.shares_memory(buffer, first) for buffer in buffers.values())
