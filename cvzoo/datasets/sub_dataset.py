"""SubDataset and the split helpers (split_dataset, split_dataset_random)."""

import numpy

from cvzoo.datasets import dataset_mixin


class SubDataset(dataset_mixin.DatasetMixin):
    """Examples ``start .. finish - 1`` of a dataset, optionally through an index order.

    Args:
        dataset: the base dataset.
        start, finish (int): the range of positions kept, 0 <= start <= finish.
        order (sequence of int or None): position j reads ``dataset[order[j]]``; None
            reads ``dataset[j]``. Its length must equal the dataset's.
    """

    def __init__(self, dataset, start, finish, order=None):
        n = len(dataset)
        if not 0 <= start <= finish <= n:
            raise ValueError(f'start, finish: expected 0 <= start <= finish <= {n}, got '
                             f'{start}, {finish}')
        if order is not None and len(order) != n:
            raise ValueError(f'order: expected {n} indexes (the dataset length), got '
                             f'{len(order)}')
        self._dataset = dataset
        self._start = start
        self._finish = finish
        self._order = order

    def __len__(self):
        return self._finish - self._start

    def get_example(self, i):
        index = self._start + i
        if self._order is not None:
            index = int(self._order[index])
        return self._dataset[index]


def split_dataset(dataset, first_size, order=None):
    """Split into ``dataset[:first_size]`` and the rest, as two SubDatasets.

    >>> first, second = split_dataset(list('abcde'), 2)
    >>> (len(first), second[0])
    (2, 'c')
    """
    n = len(dataset)
    if not 0 <= first_size <= n:
        raise ValueError(f'first_size: expected an int in [0, {n}], got {first_size}')
    return (SubDataset(dataset, 0, first_size, order),
            SubDataset(dataset, first_size, n, order))


def split_dataset_random(dataset, first_size, seed=None):
    """Split into two SubDatasets of a random permutation (repeatable with ``seed``)."""
    order = numpy.random.default_rng(seed).permutation(len(dataset))
    return split_dataset(dataset, first_size, order)
