"""scatter_dataset: give each rank its share of a dataset."""

import numpy


class _Subset:
    """The examples of ``dataset`` at ``indexes``."""

    def __init__(self, dataset, indexes):
        self.dataset = dataset
        self.indexes = indexes

    def __len__(self):
        return len(self.indexes)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.dataset[int(k)] for k in self.indexes[i]]
        return self.dataset[int(self.indexes[i])]


def scatter_dataset(dataset, comm, shuffle=False, seed=None, force_equal_length=True):
    """Return this rank's share of ``dataset`` (every rank holds the same dataset object).

    The order (shuffled with a seed that rank 0 chooses and broadcasts when ``seed`` is
    None) is cut into ``comm.size`` contiguous parts.

    Args:
        dataset: anything with ``len`` and integer indexing, the same on every rank.
        comm: a communicator.
        shuffle (bool): shuffle before cutting.
        seed (int or None): the shuffling seed.
        force_equal_length (bool): pad by repeating examples from the start so that every
            rank gets ``ceil(len / size)`` examples (training: the ranks take the same
            number of steps per epoch). Use False for evaluation, where a repeated example
            would be counted twice.

    Returns:
        a dataset view of this rank's examples.
    """
    n = len(dataset)
    order = numpy.arange(n)
    if shuffle:
        if seed is None:
            seed = comm.bcast_obj(int(numpy.random.randint(2 ** 31)) if comm.rank == 0 else None)
        order = numpy.random.RandomState(seed).permutation(n)
    if force_equal_length:
        share = -(-n // comm.size)
        order = numpy.resize(order, share * comm.size)
        return _Subset(dataset, order[comm.rank * share:(comm.rank + 1) * share])
    return _Subset(dataset, numpy.array_split(order, comm.size)[comm.rank])
