"""Dataset protocol and combinators."""

import pytest

from cvzoo.datasets import (ConcatenatedDataset, SubDataset, TransformDataset, TupleDataset,
                            split_dataset, split_dataset_random)


def test_tuple_and_slicing():
    dataset = TupleDataset([1, 2, 3], 'abc')
    assert len(dataset) == 3
    assert dataset[-1] == (3, 'c')
    assert dataset[0:3:2] == [(1, 'a'), (3, 'c')]
    assert dataset[[1, 0]] == [(2, 'b'), (1, 'a')]
    with pytest.raises(IndexError, match='index'):
        dataset[3]
    with pytest.raises(ValueError, match='lengths'):
        TupleDataset([1], [1, 2])


def test_transform_is_lazy():
    calls = []
    dataset = TransformDataset([1, 2, 3], lambda x: calls.append(x) or x * 2)
    assert calls == []
    assert dataset[1] == 4 and calls == [2]
    with pytest.raises(TypeError, match='transform'):
        TransformDataset([1], 3)


def test_concatenated():
    dataset = ConcatenatedDataset([0, 1], [], [2, 3, 4])
    assert len(dataset) == 5
    assert [dataset[i] for i in range(5)] == [0, 1, 2, 3, 4]
    assert dataset[-1] == 4


def test_sub_and_splits():
    base = list(range(10))
    assert list(SubDataset(base, 2, 5)) == [2, 3, 4]
    first, second = split_dataset(base, 3)
    assert list(first) == [0, 1, 2] and len(second) == 7
    a, b = split_dataset_random(base, 4, seed=0)
    c, _ = split_dataset_random(base, 4, seed=0)
    assert sorted(list(a) + list(b)) == base and list(a) == list(c)
    with pytest.raises(ValueError, match='first_size'):
        split_dataset(base, 11)
