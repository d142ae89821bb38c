import numpy
import pytest

from cvzoo.core.training.iterators.serial_iterator import SerialIterator


def test_one_pass_without_repeat_keeps_order():
    it = SerialIterator(list(range(5)), 2, repeat=False, shuffle=False)
    assert list(it) == [[0, 1], [2, 3], [4]]


def test_repeat_wraps_and_counts_epochs():
    it = SerialIterator(list(range(5)), 2, shuffle=False)
    seen = [(next(it), it.epoch, it.is_new_epoch) for _ in range(5)]
    assert seen[2] == ([4, 0], 1, True)
    assert seen[3] == ([1, 2], 1, False)
    assert seen[4] == ([3, 4], 2, True)
    assert it.epoch_detail == pytest.approx(2.0)
    assert it.previous_epoch_detail == pytest.approx(1.6)


def test_shuffle_visits_every_example_once_per_epoch():
    it = SerialIterator(list(range(10)), 5, seed=0)
    first = next(it) + next(it)
    assert sorted(first) == list(range(10))
    assert first != list(range(10))


def test_seed_makes_order_repeatable():
    a = SerialIterator(list(range(20)), 4, seed=3)
    b = SerialIterator(list(range(20)), 4, seed=3)
    assert [next(a) for _ in range(12)] == [next(b) for _ in range(12)]


class _DictSerializer:
    """Saves into / loads from a dict, with Chainer's serializer protocol."""

    def __init__(self, store, loading):
        self.store, self.loading = store, loading

    def __getitem__(self, key):
        return _DictSerializer(self.store.setdefault(key, {}), self.loading)

    def __call__(self, key, value):
        if self.loading:
            return self.store[key]
        self.store[key] = numpy.array(value).copy()
        return value


def test_serialize_resumes_the_same_sequence():
    it = SerialIterator(list(range(7)), 3, seed=1)
    for _ in range(4):
        next(it)
    store = {}
    it.serialize(_DictSerializer(store, loading=False))
    expected = [next(it) for _ in range(6)]
    resumed = SerialIterator(list(range(7)), 3, seed=99)
    resumed.serialize(_DictSerializer(store, loading=True))
    assert [next(resumed) for _ in range(6)] == expected


def test_batch_size_must_be_positive():
    with pytest.raises(ValueError, match='batch_size'):
        SerialIterator([1], 0)
