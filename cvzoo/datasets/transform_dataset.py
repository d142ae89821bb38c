"""TransformDataset: apply a function to each example when it is read."""

from cvzoo.datasets import dataset_mixin


class TransformDataset(dataset_mixin.DatasetMixin):
    """Example i is ``transform(dataset[i])``, computed lazily on every access.

    Args:
        dataset: any dataset (or list).
        transform (callable): takes one example and returns the new one.

    >>> TransformDataset([1, 2, 3], lambda x: x * 10)[2]
    30
    """

    def __init__(self, dataset, transform):
        if not callable(transform):
            raise TypeError(f'transform: expected a callable, got {type(transform).__name__}')
        self._dataset = dataset
        self._transform = transform

    def __len__(self):
        return len(self._dataset)

    def get_example(self, i):
        return self._transform(self._dataset[i])
