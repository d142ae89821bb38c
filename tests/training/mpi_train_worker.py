"""Run by tests/training/test_train_mpi.py under ``mpiexec -n 2``: ``cvzoo.training.train``
of small_cnn on 8 examples with a communicator; each rank writes what it saw to
``OUT/rank<r>.json``."""

import json
import sys

from cvzoo.testing.small_models import build_small_model
from cvzoo.testing.synthetic_examples import synthetic_examples
from cvzoo.training import train

LABELS = ('a', 'b', 'c')


def main(case, out):
    model = build_small_model('small_cnn', insize=8, width=4)[1]
    examples = synthetic_examples('classification', 3, n=8, size=(10, 12))
    val = synthetic_examples('classification', 3, n=5, size=(10, 12), seed=1)
    result = train(model, examples, 'classification', LABELS, out=f'{out}/run',
                   val_dataset=val, iterations=3, batchsize=2, communicator=case,
                   progress=False, model_name='small_cnn',
                   model_kwargs={'insize': 8, 'width': 4})
    trainer = result.trainer
    comm = trainer.updater.get_optimizer('main').communicator
    with open(f'{out}/rank{comm.rank}.json', 'w') as handle:
        json.dump({'elapsed_time': result.elapsed_time, 'metrics': result.metrics,
                   'lr': trainer.get_extension('lr_schedule').init,
                   'recipe_lr': model.training_recipe().lr_for(2),
                   'n_examples': len(trainer.updater.get_iterator('main').dataset)},
                  handle)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
