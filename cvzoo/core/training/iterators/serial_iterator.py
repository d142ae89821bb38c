"""SerialIterator: batches of a dataset, in order or shuffled, in the main process."""

import numpy


class SerialIterator:
    """Yield lists of examples of ``batch_size`` from ``dataset``.

    Args:
        dataset: anything with ``len`` and integer indexing.
        batch_size (int): examples per batch.
        repeat (bool): go on past the end of the dataset (training) or stop after one
            pass (evaluation; the last batch may be short).
        shuffle (bool): a new random order every epoch.
        seed (int): seed of the shuffling, for repeatable runs.

    Attributes:
        epoch (int): completed passes.
        is_new_epoch (bool): the last batch finished an epoch.
        epoch_detail (float): epochs done, fractional.

    >>> it = SerialIterator(list(range(5)), 2, repeat=False, shuffle=False)
    >>> [batch for batch in it]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset, batch_size, repeat=True, shuffle=True, seed=None):
        if batch_size <= 0:
            raise ValueError(f'batch_size: expected a positive int, got {batch_size}')
        self.dataset = dataset
        self.batch_size = batch_size
        self._repeat = repeat
        self._shuffle = shuffle
        self._rng = numpy.random.RandomState(seed)
        self.reset()

    def reset(self):
        """Go back to the start of the first epoch."""
        self.current_position = 0
        self.epoch = 0
        self.is_new_epoch = False
        self._previous_epoch_detail = -1.0
        self._order = self._new_order()

    def _new_order(self):
        n = len(self.dataset)
        return self._rng.permutation(n) if self._shuffle else None

    def __iter__(self):
        return self

    def __next__(self):
        n = len(self.dataset)
        if not self._repeat and self.epoch > 0:
            raise StopIteration
        if n == 0:
            raise ValueError('SerialIterator: the dataset is empty')
        self._previous_epoch_detail = self.epoch_detail
        epoch_before = self.epoch
        indexes = []
        position = self.current_position
        while len(indexes) < self.batch_size:
            take = min(self.batch_size - len(indexes), n - position)
            chunk = range(position, position + take)
            indexes.extend(chunk if self._order is None else self._order[position:position + take])
            position += take
            if position < n:
                break
            self.epoch += 1
            position = 0
            self._order = self._new_order()
            if not self._repeat:
                break
        self.is_new_epoch = self.epoch > epoch_before
        self.current_position = position
        return [self.dataset[int(i)] for i in indexes]

    next = __next__

    @property
    def repeat(self):
        """Whether the iterator goes on past the end of the dataset."""
        return self._repeat

    @property
    def epoch_detail(self):
        return self.epoch + self.current_position / len(self.dataset)

    @property
    def previous_epoch_detail(self):
        return None if self._previous_epoch_detail < 0 else self._previous_epoch_detail

    def get_state(self):
        """The position, epoch counters, order and shuffling state, as a tuple."""
        return (self.current_position, self.epoch, self.is_new_epoch,
                self._previous_epoch_detail, self._order, self._rng.get_state())

    def set_state(self, state):
        """Restore a tuple from get_state() (the order array is shared, never mutated)."""
        (self.current_position, self.epoch, self.is_new_epoch, self._previous_epoch_detail,
         self._order, rng_state) = state
        self._rng.set_state(rng_state)

    def serialize(self, serializer):
        """Save or load position, epoch, order and the shuffling state."""
        self.current_position = int(serializer('current_position', self.current_position))
        self.epoch = int(serializer('epoch', self.epoch))
        self.is_new_epoch = bool(serializer('is_new_epoch', self.is_new_epoch))
        self._previous_epoch_detail = float(
            serializer('previous_epoch_detail', self._previous_epoch_detail))
        if self._order is not None:
            self._order = numpy.asarray(serializer('order', self._order))
        state = self._rng.get_state()
        keys = numpy.asarray(serializer('rng_keys', state[1]))
        pos = int(serializer('rng_pos', state[2]))
        self._rng.set_state(('MT19937', keys, pos, state[3], state[4]))

    def finalize(self):
        """Release resources (nothing to release here)."""
