"""TupleDataset: zip equal-length datasets or arrays into tuples."""

from cvzoo.datasets import dataset_mixin


class TupleDataset(dataset_mixin.DatasetMixin):
    """Example i is ``(a[i], b[i], ...)`` of the given datasets or arrays.

    >>> TupleDataset([1, 2], ['x', 'y'])[1]
    (2, 'y')
    """

    def __init__(self, *datasets):
        if not datasets:
            raise ValueError('datasets: expected at least one dataset, got none')
        lengths = [len(d) for d in datasets]
        if len(set(lengths)) != 1:
            raise ValueError(f'datasets: expected equal lengths, got {lengths}')
        self._datasets = datasets
        self._length = lengths[0]

    def __len__(self):
        return self._length

    def get_example(self, i):
        return tuple(d[i] for d in self._datasets)
