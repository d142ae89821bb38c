"""create_multi_node_optimizer: all-reduce the mean gradient before each update."""

from cvzoo import errors


class _MultiNodeOptimizer:
    """Wrap an optimizer; reads and writes of other attributes go to it (lr, target...)."""

    def __init__(self, actual_optimizer, communicator, double_buffering, zero_fill):
        object.__setattr__(self, 'actual_optimizer', actual_optimizer)
        object.__setattr__(self, 'communicator', communicator)
        object.__setattr__(self, 'double_buffering', double_buffering)
        object.__setattr__(self, 'zero_fill', zero_fill)
        object.__setattr__(self, 'needs_broadcast', True)
        object.__setattr__(self, '_previous_grads', None)

    def __getattr__(self, name):
        return getattr(self.actual_optimizer, name)

    def __setattr__(self, name, value):
        setattr(self.actual_optimizer, name, value)

    def setup(self, link):
        """Set up the wrapped optimizer on ``link`` and return this wrapper, so that the
        chained ``create_multi_node_optimizer(Adam(), comm).setup(model)`` stays
        multi-node (forwarded, ``setup`` would return the plain optimizer)."""
        self.actual_optimizer.setup(link)
        object.__setattr__(self, 'needs_broadcast', True)
        return self

    def update(self, lossfun=None, *args, **kwargs):
        """Compute the local gradient, average it over the ranks, update.

        The first call broadcasts rank 0's parameters first. When the model still had
        uninitialised (lazy) parameters before that forward pass, the gradients of that
        call came from different parameters, so the call only broadcasts and skips the
        update (as ChainerMN does).
        """
        if self.double_buffering and self.actual_optimizer.loss_scaler is not None:
            raise errors.UsageError(
                'create_multi_node_optimizer: double_buffering=True cannot be used with a '
                'loss_scaler: each step would update with gradients scaled by the previous '
                "step's scale; use double_buffering=False")
        target = self.actual_optimizer.target
        skip = False
        if self.needs_broadcast:
            skip = not all(p.is_initialized for p in target.params())
            if not skip:
                self._broadcast(target)
        if lossfun is not None:
            target.cleargrads()
            loss = lossfun(*args, **kwargs)
            self.actual_optimizer.scale_loss(loss).backward()
            del loss
        if self.needs_broadcast:
            self._broadcast(target)
        if skip:
            return
        self.communicator.allreduce_grad(target, self.zero_fill)
        if self.double_buffering and not self._swap_grads(target):
            return
        self.actual_optimizer.update()

    def _broadcast(self, target):
        self.communicator.bcast_data(target)
        object.__setattr__(self, 'needs_broadcast', False)

    def _swap_grads(self, target):
        """Update with the previous step's averaged gradient; False on the first step.

        The gradients trade places with the buffers kept from the first step by copies,
        in place, so that a step captured as a CUDA graph swaps them again at each replay
        (a replay cannot redo a reassignment of Python references)."""
        previous = self._previous_grads
        if previous is None:
            object.__setattr__(self, '_previous_grads', {
                path: p.grad.copy() for path, p in target.namedparams() if p.grad is not None})
            return False
        for path, param in target.namedparams():
            kept, grad = previous.get(path), param.grad
            if kept is not None and grad is not None:
                current = grad.copy()
                grad[...] = kept
                kept[...] = current
            elif kept is not None:  # no gradient this step (zero_fill=False)
                param.grad = previous.pop(path)
            elif grad is not None:  # none the step before
                previous[path] = grad.copy()
                param.grad = None
        return True


def create_multi_node_optimizer(actual_optimizer, communicator, double_buffering=False,
                                zero_fill=True):
    """Return an optimizer that averages gradients over the ranks before each update.

    With every rank drawing a different batch of size B, an update equals one process's
    update with the batch of size ``B * comm.size`` (for a mean loss).

    Args:
        actual_optimizer: an optimizer, set up already or set up through the returned
            wrapper (``create_multi_node_optimizer(Adam(), comm).setup(model)``, as in
            ChainerMN).
        communicator: from ``create_communicator``.
        double_buffering (bool): update with the previous step's averaged gradient (one
            step stale), as ChainerMN's double buffering; the first call does not update.
            On GPUs with NCCL ChainerMN overlaps that communication with the next step's
            computation; here the communication is synchronous, so only the staleness is
            reproduced.
        zero_fill (bool): a parameter without gradient takes part as zeros.
    """
    return _MultiNodeOptimizer(actual_optimizer, communicator, double_buffering, zero_fill)
