"""cvzoo.training.class_ids: a training set's class ids checked on the host, per task."""

import numpy
import pytest

from cvzoo import errors
from cvzoo.testing.small_models import build_small_model
from cvzoo.testing.synthetic_examples import synthetic_examples
from cvzoo.training import train
from cvzoo.training.class_ids import CLASS_ID_FIELDS, CheckedClassIds

N_CLASS = 3


def _with_id(task, class_id):
    """Two examples of ``task``'s layout, the second holding ``class_id`` once."""
    examples = [list(example) for example in synthetic_examples(task, N_CLASS, n=2)]
    field = CLASS_ID_FIELDS[task][0]
    ids = numpy.array(examples[1][field])
    if ids.ndim == 0:
        ids = numpy.array(class_id, ids.dtype)
    else:
        ids.flat[0] = class_id
    examples[1][field] = ids
    return [tuple(example) for example in examples]


@pytest.mark.parametrize('task', sorted(CLASS_ID_FIELDS))
@pytest.mark.parametrize('class_id', [N_CLASS, -2])
def test_an_id_out_of_range_is_named_with_its_example(task, class_id):
    dataset = CheckedClassIds(_with_id(task, class_id), task, N_CLASS)
    assert dataset[0] is not None
    with pytest.raises(errors.UsageError, match=(
            rf'^train_dataset: example 1 holds the class id {class_id} \(.*\), not one of '
            rf'the 3 classes of label_names \(0 to 2\)$')):
        dataset[1]


@pytest.mark.parametrize('task', sorted(CLASS_ID_FIELDS))
def test_ids_in_range_pass_unchanged(task):
    examples = _with_id(task, N_CLASS - 1)
    dataset = CheckedClassIds(examples, task, N_CLASS)
    assert len(dataset) == 2 and dataset[1] is examples[1]


def test_a_label_map_may_mark_ignored_pixels():
    examples = _with_id('semantic_segmentation', -1)
    assert CheckedClassIds(examples, 'semantic_segmentation', N_CLASS)[1] is examples[1]


def test_train_refuses_an_example_with_an_id_out_of_range(tmp_path):
    # on a GPU the loss would gather a wrapped id and train on without an error
    examples = synthetic_examples('classification', N_CLASS, n=4)
    examples[2] = (examples[2][0], N_CLASS + 4)
    model = build_small_model('small_cnn', n_class=N_CLASS, insize=8, width=4)[1]
    with pytest.raises(errors.UsageError, match='example 2 holds the class id 7'):
        train(model, examples, 'classification', ['a', 'b', 'c'], out=str(tmp_path),
              iterations=2, batchsize=4, progress=False)
    assert not (tmp_path / 'model_final.npz').exists()
