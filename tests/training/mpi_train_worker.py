"""Run by tests/training/test_train_mpi.py under ``mpiexec -n 2``: ``cvzoo.training.train``
of small_cnn on 8 examples with a communicator (case ``mpi``; ``nccl_graph``: the NCCL
communicator on each rank's GPU of the CuPy stand-in, which CVZOO_FAKE_CUDA=1 installs,
with the training step captured as a CUDA graph); each rank writes what it saw to
``OUT/rank<r>.json``."""

import hashlib
import json
import os
import sys
import warnings

from cvzoo.core import backend
from cvzoo.testing.small_models import build_small_model
from cvzoo.testing.synthetic_examples import synthetic_examples
from cvzoo.training import train

LABELS = ('a', 'b', 'c')
# case: (communicator, device, cuda_graph, iterations: past the warm-up's 3 when graphed)
CASES = {'mpi': ('mpi', None, False, 3), 'nccl_graph': ('nccl', 'cuda:0', True, 5)}


def _digest(model):
    """A hash of the model's parameters: equal on the ranks when they trained together."""
    digest = hashlib.sha256()
    for path, param in sorted(model.namedparams()):
        digest.update(path.encode() + backend.to_numpy(param.array).tobytes())
    return digest.hexdigest()


def main(case, out):
    if os.environ.get('CVZOO_FAKE_CUDA') == '1':
        from cvzoo.testing import cupy_stand_in

        cupy_stand_in.install(n_devices=2)
    communicator, device, cuda_graph, iterations = CASES[case]
    model = build_small_model('small_cnn', insize=8, width=4)[1]
    examples = synthetic_examples('classification', 3, n=8, size=(10, 12))
    val = synthetic_examples('classification', 3, n=5, size=(10, 12), seed=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', RuntimeWarning)
        result = train(model, examples, 'classification', LABELS, out=f'{out}/run',
                       val_dataset=val, iterations=iterations, batchsize=2,
                       communicator=communicator, device=device, cuda_graph=cuda_graph,
                       progress=False, model_name='small_cnn',
                       model_kwargs={'insize': 8, 'width': 4})
    trainer = result.trainer
    comm = trainer.updater.get_optimizer('main').communicator
    graphed = trainer.updater.graphed_update
    with open(f'{out}/rank{comm.rank}.json', 'w') as handle:
        json.dump({'elapsed_time': result.elapsed_time, 'metrics': result.metrics,
                   'lr': trainer.get_extension('lr_schedule').init,
                   'recipe_lr': model.training_recipe().lr_for(2),
                   'n_examples': len(trainer.updater.get_iterator('main').dataset),
                   'captured': graphed is not None and graphed.captured,
                   'warnings': [str(w.message) for w in caught
                                if issubclass(w.category, RuntimeWarning)],
                   'params': _digest(model)},
                  handle)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
