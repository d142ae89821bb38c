"""create_multi_node_evaluator: evaluate each rank's share, compute the metric once."""


class _MultiNodeEvaluator:
    """See create_multi_node_evaluator."""

    def __init__(self, evaluator, comm):
        self.evaluator = evaluator
        self.comm = comm
        for attr in ('trigger', 'priority', 'name'):
            if hasattr(evaluator, attr):
                setattr(self, attr, getattr(evaluator, attr))

    def evaluate(self):
        """Return the metric over every rank's examples, on every rank."""
        if hasattr(self.evaluator, 'run') and hasattr(self.evaluator, 'evaluate_outputs'):
            return self._evaluate_gathered()
        return self._evaluate_weighted()

    def _evaluate_gathered(self):
        gathered = self.comm.gather_obj(self.evaluator.run())
        report = None
        if self.comm.rank == 0:
            parts = [p for p in gathered if p[0]]
            n_out = len(parts[0][0]) if parts else 0
            n_truth = len(parts[0][1]) if parts else 0
            outputs = [[v for p in parts for v in p[0][k]] for k in range(n_out)]
            truths = [[v for p in parts for v in p[1][k]] for k in range(n_truth)]
            result = self.evaluator.evaluate_outputs(outputs, truths)
            prefix = getattr(self.evaluator, 'prefix', '')
            report = {prefix + key: value for key, value in result.items()}
        return self.comm.bcast_obj(report)

    def _evaluate_weighted(self):
        run = getattr(self.evaluator, 'evaluate', self.evaluator)
        result, count = run(), getattr(self.evaluator, 'n_examples', 1)
        totals = self.comm.allreduce_obj({key: value * count for key, value in result.items()})
        n_total = self.comm.allreduce_obj(count)
        return {key: value / n_total for key, value in totals.items()}

    def __call__(self, trainer=None):
        report = self.evaluate()
        reporter = getattr(trainer, 'reporter', None)
        if reporter is not None:
            reporter.report(report)
        return report


def create_multi_node_evaluator(evaluator, comm):
    """Return an evaluator that runs on each rank's share and reports one global metric.

    For an evaluator of ``cvzoo.evaluators`` (it has ``run()`` and
    ``evaluate_outputs()``), every rank predicts on its own data (scatter it with
    ``scatter_dataset(..., force_equal_length=False)``), rank 0 gathers the predictions
    and ground truth and computes the metric once (so detection mAP is exact), and the
    report is broadcast to every rank. For any other callable returning a dict of means,
    the per-rank results are averaged, weighted by ``evaluator.n_examples`` when it has
    that attribute (equal weights otherwise).

    Args:
        evaluator: a cvzoo evaluator, an object with ``evaluate()``, or a callable.
        comm: a communicator.

    Returns:
        an object with ``evaluate()`` and ``__call__(trainer)`` (usable as the
        ``evaluator`` of the training Evaluator extension).
    """
    return _MultiNodeEvaluator(evaluator, comm)
