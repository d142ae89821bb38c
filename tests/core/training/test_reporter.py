import numpy
import pytest

import cvzoo.core as C
from cvzoo.core.training import reporter as R


def test_report_prefixes_observer_name():
    reporter = R.Reporter()
    model = object()
    reporter.add_observer('main', model)
    observation = {}
    with reporter.scope(observation):
        R.report({'loss': C.Variable(numpy.asarray(2.0, numpy.float32))}, model)
    assert float(observation['main/loss']) == 2.0


def test_unregistered_observer_is_an_error():
    reporter = R.Reporter()
    with reporter.scope({}), pytest.raises(KeyError, match='not registered'):
        R.report({'loss': 1.0}, object())


def test_report_without_scope_is_a_no_op():
    R.report({'loss': 1.0})


def test_dict_summary_mean_and_std():
    summary = R.DictSummary()
    for value in (1.0, 2.0, 3.0):
        summary.add({'loss': numpy.asarray(value, numpy.float32), 'skip': numpy.zeros(3)})
    stats = summary.make_statistics()
    assert stats['loss'] == pytest.approx(2.0)
    assert stats['loss.std'] == pytest.approx(numpy.std([1.0, 2.0, 3.0]))
    assert 'skip' not in stats
