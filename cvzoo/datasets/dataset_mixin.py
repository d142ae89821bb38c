"""The dataset protocol: ``len(dataset)``, ``dataset[i]``, ``dataset[a:b]``, get_example(i)."""

import numbers


class DatasetMixin:
    """Base of every cvzoo dataset: subclasses define ``__len__`` and ``get_example(i)``.

    ``dataset[i]`` calls get_example with a non-negative index (negative indexes count
    from the end); ``dataset[a:b:c]`` and ``dataset[[i, j]]`` return lists of examples.
    Nothing is read until an example is asked for.
    """

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.get_example(i) for i in range(*index.indices(len(self)))]
        if isinstance(index, numbers.Integral):
            n = len(self)
            if not -n <= index < n:
                raise IndexError(f'index: expected an int in [-{n}, {n}), got {index}')
            return self.get_example(int(index) % n)
        if hasattr(index, '__iter__') and not isinstance(index, (str, bytes)):
            return [self[int(i)] for i in index]
        raise TypeError(f'index: expected an int, a slice or a list of ints, got '
                        f'{type(index).__name__}')

    def __len__(self):
        raise NotImplementedError

    def get_example(self, i):
        """Return the i-th example (0 <= i < len(self)); subclasses implement it."""
        raise NotImplementedError

    def __iter__(self):
        return (self.get_example(i) for i in range(len(self)))
