"""ConcatenatedDataset: several datasets read as one (e.g. VOC 2007 + 2012 trainval)."""

import bisect
import itertools

from cvzoo.datasets import dataset_mixin


class ConcatenatedDataset(dataset_mixin.DatasetMixin):
    """The examples of the first dataset, then those of the second, and so on.

    >>> len(ConcatenatedDataset([1, 2], [3]))
    3
    """

    def __init__(self, *datasets):
        self._datasets = datasets
        self._ends = list(itertools.accumulate(len(d) for d in datasets))

    def __len__(self):
        return self._ends[-1] if self._ends else 0

    def get_example(self, i):
        which = bisect.bisect_right(self._ends, i)
        start = self._ends[which - 1] if which else 0
        return self._datasets[which][i - start]
