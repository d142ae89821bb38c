import multiprocessing
import os
import signal
import threading
import time

import numpy
import pytest

from cvzoo.core.serializers import dictionary
from cvzoo.core.training.iterators.multiprocess_iterator import MultiprocessIterator
from cvzoo.core.training.iterators.serial_iterator import SerialIterator


def _shm_blocks():
    return sorted(p for p in os.listdir('/dev/shm') if p.startswith('cvzoo_')) \
        if os.path.isdir('/dev/shm') else []


@pytest.fixture(autouse=True)
def no_leftovers():
    before = _shm_blocks()
    yield
    assert multiprocessing.active_children() == []
    assert _shm_blocks() == before


class _Failing:
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise ValueError('cannot decode example 5')
        return i


class _Slow:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(30)
        return i


def _make(dataset, batch_size, **kwargs):
    kwargs.setdefault('n_processes', 2)
    return MultiprocessIterator(dataset, batch_size, **kwargs)


def test_one_pass_without_repeat_keeps_order():
    with _make(list(range(5)), 2, repeat=False, shuffle=False) as it:
        assert list(it) == [[0, 1], [2, 3], [4]]


def test_repeat_wraps_and_counts_epochs():
    with _make(list(range(5)), 2, shuffle=False) as it:
        seen = [(next(it), it.epoch, it.is_new_epoch) for _ in range(5)]
        assert seen[2] == ([4, 0], 1, True)
        assert seen[3] == ([1, 2], 1, False)
        assert seen[4] == ([3, 4], 2, True)
        assert it.epoch_detail == pytest.approx(2.0)
        assert it.previous_epoch_detail == pytest.approx(1.6)


@pytest.mark.parametrize('n_prefetch', [1, 3], ids=['prefetch1', 'prefetch3'])
def test_same_seed_gives_the_batches_of_serial_iterator(n_prefetch):
    serial = SerialIterator(list(range(11)), 4, seed=5)
    with _make(list(range(11)), 4, seed=5, n_prefetch=n_prefetch) as it:
        for _ in range(9):
            assert next(it) == next(serial)
            assert it.epoch_detail == serial.epoch_detail
            assert it.is_new_epoch == serial.is_new_epoch


@pytest.mark.parametrize('shared_mem', [0, 10 ** 9], ids=['shared_memory', 'pickled'])
def test_arrays_and_dicts_come_back_equal(shared_mem):
    rng = numpy.random.RandomState(0)
    dataset = [(rng.rand(3, 40, 40).astype(numpy.float32), {'label': numpy.int32(i)})
               for i in range(6)]
    with _make(dataset, 3, shuffle=False, repeat=False, shared_mem=shared_mem) as it:
        batches = list(it)
    for k, (img, extra) in enumerate(batches[0] + batches[1]):
        numpy.testing.assert_array_equal(img, dataset[k][0])
        assert img.dtype == numpy.float32 and extra['label'] == k


def test_serialize_resumes_the_same_sequence_even_in_a_serial_iterator():
    with _make(list(range(7)), 3, seed=1, n_prefetch=2) as it:
        for _ in range(4):
            next(it)
        saver = dictionary.DictionarySerializer()
        it.serialize(saver)
        expected = [next(it) for _ in range(6)]
    with _make(list(range(7)), 3, seed=99) as resumed:
        dictionary.DictionaryDeserializer(saver.target).load(resumed)
        assert [next(resumed) for _ in range(6)] == expected
    serial = SerialIterator(list(range(7)), 3, seed=42)
    dictionary.DictionaryDeserializer(saver.target).load(serial)
    assert [next(serial) for _ in range(6)] == expected


def test_worker_error_is_raised_with_the_worker_traceback():
    it = _make(_Failing(), 4, shuffle=False)
    assert next(it) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match='cannot decode example 5') as info:
        next(it)
    assert '__getitem__' in str(info.value.__cause__)  # the worker's traceback
    assert multiprocessing.active_children() == []


def test_keyboard_interrupt_shuts_the_workers_down():
    it = _make(_Slow(), 2)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        next(it)
    assert time.monotonic() - start < 10
    assert multiprocessing.active_children() == []


def test_finalize_is_idempotent_and_the_iterator_restarts():
    it = _make(list(range(6)), 2, shuffle=False)
    assert next(it) == [0, 1]
    it.finalize()
    it.finalize()
    assert multiprocessing.active_children() == []
    assert next(it) == [2, 3]
    it.finalize()


@pytest.mark.parametrize('kwargs, match', [
    ({'n_processes': 0}, 'n_processes'), ({'n_prefetch': 0}, 'n_prefetch')],
    ids=['n_processes', 'n_prefetch'])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MultiprocessIterator([1, 2], 1, **kwargs)
