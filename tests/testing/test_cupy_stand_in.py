"""The CuPy stand-in keeps CuPy's rules: each one is shown to refuse what CuPy refuses.

The stand-in is installed here for each test (and taken out again, unless the run uses
``--fake-cuda``, which keeps it for the whole session).
"""

import re
import threading

import numpy
import pytest

from cvzoo.core import backend
from cvzoo.testing import cupy_stand_in


@pytest.fixture
def cp():
    installed_before = cupy_stand_in.is_installed()
    module = cupy_stand_in.install(n_devices=2)
    module.cuda.Device(0).use()
    yield module
    module.cuda.Device(0).use()
    if not installed_before:
        cupy_stand_in.uninstall()


def test_no_implicit_copy_to_the_host(cp):
    x = cp.arange(3)
    with pytest.raises(TypeError, match='Implicit conversion to a NumPy array'):
        numpy.asarray(x)
    assert isinstance(x.get(), numpy.ndarray)
    numpy.testing.assert_array_equal(cp.asnumpy(x), [0, 1, 2])


def test_host_arrays_are_not_operands(cp):
    x = cp.ones(3)
    for operation in (lambda: x + numpy.ones(3), lambda: numpy.ones(3) * x,
                      lambda: cp.concatenate([x, numpy.ones(3)]),
                      lambda: cp.maximum(x, numpy.zeros(3)), lambda: x.dot(numpy.ones(3))):
        with pytest.raises(TypeError, match='Unsupported type'):
            operation()
    # scalars, and host arrays as indexes or assigned values, are fine (as in CuPy)
    assert (x * 2.0 + numpy.float32(1)).shape == (3,)
    x[numpy.array([0, 2])] = numpy.array([5.0, 6.0])
    numpy.testing.assert_array_equal(x.get(), [5.0, 1.0, 6.0])


def test_numpy_functions_dispatch_to_the_stand_in(cp):
    x = cp.arange(6.0).reshape(2, 3)
    y = numpy.concatenate([x, x])
    assert isinstance(y, cp.ndarray) and y.shape == (4, 3)
    assert isinstance(numpy.exp(x), cp.ndarray)
    with pytest.raises(TypeError):
        numpy.fft.fft(x)  # no implementation in the stand-in, as a missing CuPy one


def test_reductions_give_0d_device_arrays(cp):
    total = cp.arange(4).sum()
    assert isinstance(total, cp.ndarray) and total.shape == ()
    assert isinstance(numpy.max(cp.arange(4)), cp.ndarray)


def test_each_thread_has_a_current_device_and_arrays_refuse_another(cp):
    with cp.cuda.Device(1):
        x = cp.ones(2)
    assert x.device.id == 1
    with pytest.raises(ValueError, match='array device = 1 while current = 0'):
        x + 1
    with pytest.raises(ValueError, match='array device = 1 while current = 0'):
        x.sum()
    seen = {}

    def other_thread():
        seen['device'] = cp.cuda.Device().id

    with cp.cuda.Device(1):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert cp.cuda.Device().id == 1
    assert seen['device'] == 0  # a new thread starts on device 0, as CUDA's runtime
    # copies between devices are allowed, as peer copies
    assert cp.asarray(x).device.id == 0


def test_only_n_devices_exist(cp):
    assert cp.cuda.runtime.getDeviceCount() == 2
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match='invalid device ordinal'):
        cp.cuda.Device(2)


def test_host_syncs_are_counted_per_call_site(cp):
    x = cp.arange(5)
    with cupy_stand_in.count_syncs() as syncs:
        float(x.sum())
        int(x[0])
        bool((x > 2).any())
        x.get()
        x[x > 2]
        cp.nonzero(x)
        cp.unique(x)
        list(x)
        x.item(0)
    kinds = sorted(kind for kind, _ in syncs)
    assert kinds == sorted(['float', 'int', 'bool', 'get', 'boolean mask', 'nonzero',
                            'unique', 'iteration', 'item'])
    assert all(site.startswith(__file__) for _, site in syncs)
    with cupy_stand_in.count_syncs() as syncs:
        (x * 2 + 1).sum()
    assert not syncs


def test_add_at_refuses_what_atomic_add_lacks(cp):
    index = cp.asarray(numpy.array([0, 0]))
    for dtype in (numpy.int64, numpy.uint8, numpy.int8, numpy.bool_):
        with pytest.raises(TypeError, match='atomicAdd'):
            cp.add.at(cp.zeros(2, dtype), index, cp.ones(2, dtype))
    target = cp.zeros(2, numpy.float32)
    cp.add.at(target, index, cp.ones(2, numpy.float32))
    numpy.testing.assert_array_equal(target.get(), [2.0, 0.0])


def test_elementwise_kernel_runs_the_registered_twin(cp):
    kernel = backend.elementwise_kernel('T x', 'T y', 'y = x * x', 'stand_in_square',
                                        lambda x: x * x)
    out = kernel(cp.arange(3.0))
    assert isinstance(out, cp.ndarray)
    numpy.testing.assert_array_equal(out.get(), [0.0, 1.0, 4.0])
    unknown = cp.ElementwiseKernel('T x', 'T y', 'y = x', 'stand_in_never_registered')
    with pytest.raises(KeyError, match='stand_in_never_registered'):
        unknown(cp.arange(3.0))


def test_backend_sees_the_stand_in_as_cupy(cp):
    assert backend.is_cuda_available() and backend.num_gpus() == 2
    x = backend.to_device(numpy.ones(2), 'cuda:1')
    assert backend.get_device_from_array(x) == backend.Device('cuda:1')
    assert backend.get_array_module(x) is cp


def test_each_device_has_its_current_stream_per_thread(cp):
    assert cp.cuda.get_current_stream() == cp.cuda.Stream.null
    stream = cp.cuda.Stream()
    assert stream.device_id == 0 and stream != cp.cuda.Stream.null
    with stream:
        assert cp.cuda.get_current_stream() is stream
        with cp.cuda.Device(1):
            assert cp.cuda.get_current_stream() == cp.cuda.Stream.null  # device 1's own
        assert cp.cuda.get_current_stream(0) is stream
        assert cp.cuda.get_current_stream(1) == cp.cuda.Stream.null
        seen = {}
        thread = threading.Thread(target=lambda: seen.update(s=cp.cuda.get_current_stream()))
        thread.start()
        thread.join()
        assert seen['s'] == cp.cuda.Stream.null  # a new thread starts on the null stream
    assert cp.cuda.get_current_stream() == cp.cuda.Stream.null


def test_a_stream_is_entered_only_on_its_own_device(cp):
    stream = cp.cuda.Stream()
    with cp.cuda.Device(1):
        with pytest.raises(RuntimeError, match=r'created on \(0\) does not match .* \(1\)'):
            with stream:
                pass
        with pytest.raises(RuntimeError, match='does not match'):
            stream.use()
        with cp.cuda.Stream.null:  # the null stream belongs to whichever device is current
            pass


def test_an_event_is_recorded_only_on_a_stream_of_its_device(cp):
    event = cp.cuda.Event()
    with cp.cuda.Device(1):
        with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match='InvalidResourceHandle'):
            event.record()  # the current stream is device 1's
        event_1 = cp.cuda.Stream.null.record()
    with pytest.raises(ValueError, match='Timing must be disabled'):
        cp.cuda.Event(interprocess=True)
    assert isinstance(event_1, cp.cuda.Event)


def test_elapsed_time_needs_recorded_events_the_host_waited_for(cp):
    start, end = cp.cuda.Event(), cp.cuda.Event()
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match='never recorded'):
        cp.cuda.get_elapsed_time(start, end)
    start.record()
    (cp.ones(1000) * 2).sum()
    end.record()
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match='NotReady'):
        cp.cuda.get_elapsed_time(start, end)  # a GPU may not have reached `end` yet
    with cupy_stand_in.count_syncs() as syncs:
        end.synchronize()
    assert [kind for kind, _ in syncs] == ['synchronize']
    elapsed = cp.cuda.get_elapsed_time(start, end)
    assert isinstance(elapsed, float) and elapsed >= 0
    # a wait for the stream or the device also completes the events recorded before it
    for wait in (lambda: cp.cuda.get_current_stream().synchronize(),
                 lambda: cp.cuda.Device(0).synchronize()):
        start.record()
        end.record()
        with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match='NotReady'):
            cp.cuda.get_elapsed_time(start, end)
        wait()
        assert cp.cuda.get_elapsed_time(start, end) >= 0
    # but not a wait for another device
    start.record()
    end.record()
    cp.cuda.Device(1).synchronize()
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match='NotReady'):
        cp.cuda.get_elapsed_time(start, end)


def test_bfloat16_matmul_stays_bfloat16_as_in_cupy(cp):
    """NumPy with ml_dtypes widens a bfloat16 matmul to float32; CuPy keeps bfloat16."""
    ml_dtypes = pytest.importorskip('ml_dtypes')
    a = cp.ones((2, 3), dtype=ml_dtypes.bfloat16)
    b = cp.ones((3, 4), dtype=ml_dtypes.bfloat16)
    for product in (cp.matmul(a, b), a @ b):
        assert product.dtype == numpy.dtype(ml_dtypes.bfloat16)
        numpy.testing.assert_array_equal(product.get().astype(numpy.float32), 3)
    assert cp.matmul(a.astype(numpy.float32), b.astype(numpy.float32)).dtype == numpy.float32


# --- CUDA graph capture ------------------------------------------------------------------

def _step(cp, x, w):
    """A small step: a forward (new arrays) and an in-place update of ``w``."""
    y = cp.tanh(x @ w) * 2.0
    loss = (y * y).mean()
    w -= 0.1 * (x.T @ y)
    return y, loss


def test_capture_runs_nothing_and_launch_replays_into_the_same_arrays(cp):
    rs = numpy.random.RandomState(0)
    x = cp.asarray(rs.randn(4, 3).astype(numpy.float32))
    w = cp.asarray(rs.randn(3, 2).astype(numpy.float32))
    w_eager = w.copy()
    stream = cp.cuda.Stream()
    with stream:
        stream.begin_capture()
        assert stream.is_capturing()
        y, loss = _step(cp, x, w)
        graph = stream.end_capture()
    assert not stream.is_capturing()
    numpy.testing.assert_array_equal(w.get(), w_eager.get())  # a capture runs nothing
    for _ in range(3):
        batch = rs.randn(4, 3).astype(numpy.float32)
        cp.copyto(x, cp.asarray(batch))       # new data into the static input
        graph.launch()
        y_eager, loss_eager = _step(cp, cp.asarray(batch), w_eager)
        numpy.testing.assert_array_equal(y.get(), y_eager.get())
        numpy.testing.assert_array_equal(loss.get(), loss_eager.get())
        numpy.testing.assert_array_equal(w.get(), w_eager.get())  # in place, each launch


def _refusals(cp, x):
    stream = cp.cuda.Stream()
    return {
        'float (a host synchronisation)': lambda: float(x.sum()),
        'item (a host synchronisation)': lambda: x.sum().item(),
        'get (a host synchronisation)': lambda: x.get(),
        'boolean mask (a host synchronisation)': lambda: x[x > 0],
        'nonzero (a host synchronisation)': lambda: cp.nonzero(x),
        'unique (a host synchronisation)': lambda: cp.unique(x),
        'synchronize (a host synchronisation)': lambda: stream.synchronize(),
        'cupy.array of host data (a host-to-device copy)':
            lambda: cp.asarray(numpy.ones(3, numpy.float32)),
        'ndarray.__setitem__ of host data (a host-to-device copy)':
            lambda: x.__setitem__(slice(None), numpy.zeros(3, numpy.float32)),
        'ndarray.set (a host-to-device copy)': lambda: x.set(numpy.zeros(3, numpy.float32)),
        'cupy.random.rand': lambda: cp.random.rand(3),
    }


REFUSED = ('float (a host synchronisation)', 'item (a host synchronisation)',
           'get (a host synchronisation)', 'boolean mask (a host synchronisation)',
           'nonzero (a host synchronisation)', 'unique (a host synchronisation)',
           'synchronize (a host synchronisation)',
           'cupy.array of host data (a host-to-device copy)',
           'ndarray.__setitem__ of host data (a host-to-device copy)',
           'ndarray.set (a host-to-device copy)', 'cupy.random.rand')


@pytest.mark.parametrize('operation', REFUSED)
def test_capture_refuses_what_cuda_refuses_naming_the_operation(cp, operation):
    x = cp.arange(3, dtype=cp.float32)
    refused = _refusals(cp, x)[operation]
    stream = cp.cuda.Stream()
    with stream:
        stream.begin_capture()
        with pytest.raises(cupy_stand_in.CUDARuntimeError) as caught:
            refused()
        line = refused.__code__.co_firstlineno
        assert 'cudaErrorStreamCaptureUnsupported' in str(caught.value)
        assert operation in str(caught.value)
        assert f'test_cupy_stand_in.py:{line}' in str(caught.value)  # the call site
        with pytest.raises(cupy_stand_in.CUDARuntimeError, match='Invalidated'):
            x + 1  # nothing more is recorded on an invalidated capture
        with pytest.raises(cupy_stand_in.CUDARuntimeError,
                           match=f'invalidated by {re.escape(operation)}'):
            stream.end_capture()
    assert not stream.is_capturing()
    float(x.sum())  # outside a capture, all of them are allowed again


def test_capture_refuses_work_off_the_capturing_stream_and_on_the_null_stream(cp):
    x = cp.arange(3, dtype=cp.float32)
    stream = cp.cuda.Stream()
    stream.begin_capture()  # without `with stream:` the work goes to the null stream
    with pytest.raises(cupy_stand_in.CUDARuntimeError, match='cudaErrorStreamCaptureImplicit'):
        x * 2
    with pytest.raises(cupy_stand_in.CUDARuntimeError, match='Invalidated'):
        stream.end_capture()
    with pytest.raises(cupy_stand_in.CUDARuntimeError, match='null stream cannot capture'):
        cp.cuda.Stream.null.begin_capture()
    with pytest.raises(cupy_stand_in.CUDARuntimeError, match='not capturing'):
        stream.end_capture()


def test_arrays_made_in_a_capture_hold_garbage_until_a_launch_fills_them(cp):
    x = cp.ones(3, dtype=cp.float32)
    stream = cp.cuda.Stream()
    with stream:
        stream.begin_capture()
        counter = cp.zeros((), dtype=cp.float32)   # made in the capture: reset each launch
        counter += x.sum()
        total = counter * 1
        index = cp.argmax(x)
        same, view = cp.asarray(x), x.reshape(3, 1)  # x itself and a view of it
        graph = stream.end_capture()
    assert numpy.isnan(float(total)) and int(index) == numpy.iinfo(index.dtype).max
    numpy.testing.assert_array_equal(view.get(), [[1], [1], [1]])  # x's memory is intact
    assert same is x
    for _ in range(2):
        graph.launch()
        assert float(total) == 3.0


def test_kernel_launches_are_counted_and_views_are_not(cp):
    x = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    with cupy_stand_in.count_kernels() as kernels:
        views = [x.reshape(4, 3), x.T, x[1:], x.astype(cp.float32, copy=False), cp.empty(3)]
    assert sum(kernels.values()) == 0
    assert len(views) == 5
    with cupy_stand_in.count_kernels() as kernels:
        (x * 2).sum(axis=0)  # two kernels
        x.T.reshape(-1)  # a copy: the transpose cannot be reshaped in place
        x[cp.asarray([0, 2])]  # a host-to-device copy and a gather
        x[0] = 1
        cp.zeros(3)
        x @ x.T
    assert kernels == {'multiply': 1, 'sum': 1, 'copy': 2, 'gather': 1, 'setitem': 1,
                       'zeros': 1, 'matmul': 1}


def test_kernels_of_own_kernels_are_counted_by_name(cp):
    kernel = backend.elementwise_kernel('T x', 'T y', 'y = x + 1', 'test_count_plus_one',
                                        lambda x: x + 1)
    with cupy_stand_in.count_kernels() as kernels:
        kernel(cp.ones(3))
    assert kernels == {'ones': 1, 'test_count_plus_one': 1}


def test_kernel_parameters_named_by_cpp_keywords_are_refused(cp):
    with pytest.raises(ValueError, match="'T new' is named by a C\\+\\+ keyword"):
        cp.ElementwiseKernel('T old, T new', 'T y', 'y = old + new', 'test_keyword_param')
