import io

import pytest

from cvzoo.core.training.extensions.progress_bar import ProgressBar


def test_shows_progress_and_eta(make_trainer):
    trainer = make_trainer(stop=(20, 'iteration'))
    out = io.StringIO()
    trainer.extend(ProgressBar(update_interval=5, out=out))
    trainer.run()
    lines = out.getvalue().strip().split('\r')
    assert len(lines) == 4
    assert '100.00%' in lines[-1] and 'iter 20' in lines[-1]
    assert ' 25.00%' in lines[0]
    assert 'ETA' in lines[1]


def test_needs_a_training_length_from_somewhere(make_trainer):
    trainer = make_trainer()
    trainer.stop_trigger = lambda trainer: trainer.updater.iteration >= 2
    trainer.extend(ProgressBar(out=io.StringIO()))
    with pytest.raises(ValueError, match='training_length'):
        trainer.run()


def test_update_interval_must_be_positive():
    with pytest.raises(ValueError, match='update_interval'):
        ProgressBar(update_interval=0)
