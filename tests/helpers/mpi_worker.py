"""Run by :func:`tests.helpers.mpi_jobs.run_worker` under
``mpiexec -n 2 python -m tests.helpers.mpi_worker CASE OUT``.

Cases: train (multi-node optimizer + Trainer), train_chained (the training code of the
ChainerMN paper's Fig. 5, with the optimizer made and set up in one chained expression),
evaluate (multi-node evaluator),
download (file lock: one rank downloads), raise (rank 1 fails while rank 0 waits),
leave_early (rank 1 ends normally while rank 0 waits), train_gpu_mpi and train_gpu_nccl
(each rank on its own GPU of the CuPy stand-in, which CVZOO_FAKE_CUDA=1 installs),
grads_nccl (the mean of float16 and float64 gradients), graph_nccl (data-parallel steps
captured as a CUDA graph with their NCCL all-reduce, against eager ones) and
streams_nccl (the streams NCCL calls may be queued on, in and out of a capture).
The ``reference_*`` functions compute the single-process answers; the tests import them.
"""

import functools
import json
import os
import sys

import numpy

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo.core import optimizers
from cvzoo.core.serializers import npz

N_EXAMPLES, BATCH, N_STEPS = 32, 4, 6
LR_CHANGE = (3, 0.05)  # (step, learning rate from that step on) of the graph_nccl case


class MLP(L.Chain):
    def __init__(self, seed):
        super().__init__()
        rng = numpy.random.RandomState(seed)
        with self.init_scope():
            self.l1 = L.Linear(5, 16, initialW=rng.randn(16, 5).astype(numpy.float32) * 0.5)
            self.l2 = L.Linear(16, 3, initialW=rng.randn(3, 16).astype(numpy.float32) * 0.5)

    def forward(self, x, t):
        return F.softmax_cross_entropy(self.l2(F.relu(self.l1(x))), t)


def make_dataset():
    rng = numpy.random.RandomState(1)
    x = rng.randn(N_EXAMPLES, 5).astype(numpy.float32)
    t = (x @ rng.randn(5, 3)).argmax(axis=1).astype(numpy.int32)
    return [(x[i], t[i]) for i in range(N_EXAMPLES)]


class FirstPixel:
    """A fixed 'classifier': one-hot of the image's first pixel value."""

    def predict(self, imgs):
        return numpy.stack([numpy.eye(3, dtype=numpy.float32)[int(img[0, 0, 0]) % 3]
                            for img in imgs])


def make_eval_dataset():
    labels = [0, 1, 2, 0, 1, 1, 2, 0, 0]  # 9 examples: shares of 5 and 4
    return [(numpy.full((3, 2, 2), k % 3, numpy.float32), numpy.int32(label))
            for k, label in enumerate(labels)]


def _rows(ranks, step):
    """The examples of ``step`` on ``ranks``: each rank reads its half of the data set."""
    half = N_EXAMPLES // 2
    return [rank * half + (step * BATCH + j) % half for rank in ranks for j in range(BATCH)]


def _batch(data, rows):
    return numpy.stack([data[i][0] for i in rows]), numpy.array([data[i][1] for i in rows])


def reference_train(make_optimizer=lambda: optimizers.MomentumSGD(lr=0.1), ranks=(0, 1),
                    lr_change=None):
    """One process, the doubled batch: rank 0's part then rank 1's part of each step
    (``ranks=(0,)``: rank 0's part alone); ``lr_change`` (step, lr) sets ``lr`` from that
    step on."""
    model = MLP(seed=0)
    optimizer = make_optimizer().setup(model)
    data = make_dataset()
    for step in range(N_STEPS):
        if lr_change is not None and step == lr_change[0]:
            optimizer.lr = lr_change[1]
        optimizer.update(model, *_batch(data, _rows(ranks, step)))
    return {path: p.array for path, p in model.namedparams()}


def reference_evaluate():
    from cvzoo.evaluators import ClassificationEvaluator

    return ClassificationEvaluator(make_eval_dataset(), FirstPixel(), quiet=True).evaluate()


def run_train(comm, out):
    from cvzoo.core.communicators.multi_node_optimizer import create_multi_node_optimizer
    from cvzoo.core.communicators.scatter_dataset import scatter_dataset
    from cvzoo.core.training.iterators.serial_iterator import SerialIterator
    from cvzoo.core.training.trainer import Trainer
    from cvzoo.core.training.updaters.standard_updater import StandardUpdater

    model = MLP(seed=comm.rank)  # different on each rank: bcast_data must fix it
    optimizer = create_multi_node_optimizer(
        optimizers.MomentumSGD(lr=0.1).setup(model), comm)
    shard = scatter_dataset(make_dataset(), comm)
    iterator = SerialIterator(shard, BATCH, shuffle=False)
    trainer = Trainer(StandardUpdater(iterator, optimizer), (N_STEPS, 'iteration'),
                      out=os.path.join(out, f'rank{comm.rank}'))
    trainer.run()
    npz.save_npz(os.path.join(out, f'params_rank{comm.rank}.npz'), model)


def run_train_chained(comm, out):
    """As ChainerMN's Fig. 5 (Akiba et al., 2017): Adam wrapped by the multi-node
    optimizer, set up in the same expression, each rank on its scattered share."""
    from cvzoo.core.communicators.multi_node_optimizer import create_multi_node_optimizer
    from cvzoo.core.communicators.scatter_dataset import scatter_dataset
    from cvzoo.core.training.iterators.serial_iterator import SerialIterator
    from cvzoo.core.training.trainer import Trainer
    from cvzoo.core.training.updaters.standard_updater import StandardUpdater

    model = MLP(seed=comm.rank)  # different on each rank: bcast_data must fix it
    optimizer = create_multi_node_optimizer(optimizers.Adam(), comm).setup(model)
    train = scatter_dataset(make_dataset(), comm)
    train_iter = SerialIterator(train, BATCH, shuffle=False)
    updater = StandardUpdater(train_iter, optimizer)
    trainer = Trainer(updater, (N_STEPS, 'iteration'), out=os.path.join(out, f'rank{comm.rank}'))
    trainer.run()
    npz.save_npz(os.path.join(out, f'params_rank{comm.rank}.npz'), model)


def run_evaluate(comm, out):
    from cvzoo.core.communicators.multi_node_evaluator import create_multi_node_evaluator
    from cvzoo.core.communicators.scatter_dataset import scatter_dataset
    from cvzoo.evaluators import ClassificationEvaluator

    shard = scatter_dataset(make_eval_dataset(), comm, force_equal_length=False)
    evaluator = ClassificationEvaluator(shard, FirstPixel(), quiet=True)
    report = create_multi_node_evaluator(evaluator, comm).evaluate()
    local = evaluator.evaluate()
    with open(os.path.join(out, f'evaluate_rank{comm.rank}.json'), 'w') as handle:
        json.dump({'report': report, 'local': local, 'n': len(shard)}, handle)


def run_download(comm, out):
    from cvzoo.utils import download

    original = download.download

    def counting_download(*args, **kwargs):
        with open(os.path.join(out, 'downloads.txt'), 'a') as handle:
            handle.write(f'{comm.rank}\n')
        return original(*args, **kwargs)

    download.download = counting_download
    source = os.path.join(out, 'weights.bin')
    path = download.cached_download(source, download.sha256_of(source), quiet=True)
    with open(os.path.join(out, f'download_rank{comm.rank}.txt'), 'w') as handle:
        handle.write(str(path))


def run_train_gpu(comm, out):
    """The train case with each rank on its own GPU, chosen by the communicator."""
    from cvzoo.core import backend
    from cvzoo.core.communicators.multi_node_optimizer import create_multi_node_optimizer
    from cvzoo.core.communicators.scatter_dataset import scatter_dataset
    from cvzoo.core.training.iterators.serial_iterator import SerialIterator
    from cvzoo.core.training.trainer import Trainer
    from cvzoo.core.training.updaters.standard_updater import StandardUpdater

    device = getattr(comm, 'device', None) or comm.rank_device('cuda:0')
    current = backend.get_device('cuda:0').xp.cuda.Device().id
    model = MLP(seed=comm.rank).to_device(device)
    optimizer = create_multi_node_optimizer(
        optimizers.MomentumSGD(lr=0.1).setup(model), comm)
    shard = scatter_dataset(make_dataset(), comm)
    iterator = SerialIterator(shard, BATCH, shuffle=False)
    updater = StandardUpdater(iterator, optimizer, device=device)
    Trainer(updater, (N_STEPS, 'iteration'), out=os.path.join(out, f'rank{comm.rank}')).run()
    model.to_device('cpu')
    npz.save_npz(os.path.join(out, f'params_rank{comm.rank}.npz'), model)
    nccl_device = getattr(getattr(comm, 'nccl_comm', None), 'device_id', None)
    with open(os.path.join(out, f'device_rank{comm.rank}.json'), 'w') as handle:
        json.dump({'device': str(device), 'current': current, 'nccl': nccl_device}, handle)


def run_grads_nccl(comm, out):
    """float16 gradients near the top of their range, float64 ones with tiny parts."""
    from cvzoo.core import backend

    results = {}
    for dtype, value in ((numpy.float16, 40000.0 + 1000 * comm.rank),
                         (numpy.float64, 1.0 + 1e-12 * comm.rank)):
        link = L.Linear(2, 2, initialW=numpy.zeros((2, 2), dtype)).to_device(comm.device)
        link.b.array = link.b.array.astype(dtype)
        for param in link.params():
            param.grad = param.xp.full(param.shape, value, dtype)
        comm.allreduce_grad(link)
        grad = backend.to_numpy(link.W.grad)
        results[numpy.dtype(dtype).name] = [str(grad.dtype), float(grad.flat[0])]
    with open(os.path.join(out, f'grads_rank{comm.rank}.json'), 'w') as handle:
        json.dump(results, handle)


def _train_data_parallel(comm, graphed):
    """N_STEPS of MomentumSGD on this rank's half of the data, averaged over the ranks by
    the NCCL communicator, eagerly or as a CUDA graph taken after one eager step; the
    parameters (on the host), whether a graph was used, and the warnings."""
    import warnings

    from cvzoo.core import backend
    from cvzoo.core.communicators.multi_node_optimizer import create_multi_node_optimizer
    from cvzoo.core.cuda_graph import GraphedUpdate

    model = MLP(seed=comm.rank).to_device(comm.device)  # bcast_data makes them equal
    optimizer = create_multi_node_optimizer(
        optimizers.MomentumSGD(lr=0.1).setup(model), comm)
    step = (GraphedUpdate(optimizer, model, warmup=1) if graphed
            else functools.partial(optimizer.update, model))
    data = make_dataset()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        for i in range(N_STEPS):
            if i == LR_CHANGE[0]:
                optimizer.lr = LR_CHANGE[1]
            x, t = _batch(data, _rows([comm.rank], i))
            step(*(backend.to_device(a, comm.device) for a in (x, t)))
    params = {path: backend.to_numpy(p.array) for path, p in model.namedparams()}
    return params, bool(graphed and step.captured), [str(w.message) for w in caught]


def run_graph_nccl(comm, out):
    """The same data-parallel training eagerly and as a CUDA graph holding the all-reduce."""
    results = {}
    for name, graphed in (('eager', False), ('graphed', True)):
        params, captured, messages = _train_data_parallel(comm, graphed)
        numpy.savez(os.path.join(out, f'{name}_rank{comm.rank}.npz'),
                    **{path[1:]: array for path, array in params.items()})
        results[name] = {'captured': captured, 'warnings': messages}
    with open(os.path.join(out, f'graph_rank{comm.rank}.json'), 'w') as handle:
        json.dump(results, handle)


def _error_of(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the test reads which error and its message
        return f'{type(error).__name__}: {error}'
    return None


def run_streams_nccl(comm, out):
    """An all-reduce on the current stream, on a stream of another GPU, on a handle that is
    no stream; in a capture, on the capturing stream, the null stream and another one."""
    import cupy  # the stand-in, which CVZOO_FAKE_CUDA=1 installed

    nccl = comm.nccl

    with comm.device:
        buffer = cupy.full(4, comm.rank + 1.0, numpy.float32)

        def all_reduce(stream):
            comm.nccl_comm.allReduce(buffer.data.ptr, buffer.data.ptr, buffer.size,
                                     nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream)

        side = cupy.cuda.Stream()
        with side:
            all_reduce(side.ptr)  # eager, on the current stream
        results = {'eager_sum': float(buffer[0])}
        with cupy.cuda.Device(1 - comm.device.id):
            elsewhere = cupy.cuda.Stream()
        results['eager_other_device'] = _error_of(lambda: all_reduce(elsewhere.ptr))
        results['eager_no_stream'] = _error_of(lambda: all_reduce(side.ptr + 10 ** 6))
        for name, stream in (('capture_null_stream', 0), ('capture_other_stream', side.ptr)):
            capturing = cupy.cuda.Stream(non_blocking=True)
            with capturing:
                capturing.begin_capture()
                refused = _error_of(functools.partial(all_reduce, stream))
                ended = _error_of(capturing.end_capture)
            results[name] = [refused, ended]
        # recorded on the capturing stream: nothing runs until each launch
        capturing = cupy.cuda.Stream(non_blocking=True)
        cupy.copyto(buffer, cupy.full(4, comm.rank + 1.0, numpy.float32))
        with capturing:
            capturing.begin_capture()
            all_reduce(capturing.ptr)
            graph = capturing.end_capture()
        results['after_capture'] = float(buffer[0])
        graph.launch()
        results['after_launch'] = float(buffer[0])
        graph.launch()
        results['after_second_launch'] = float(buffer[0])
    with open(os.path.join(out, f'streams_rank{comm.rank}.json'), 'w') as handle:
        json.dump(results, handle)


def run_leave_early(comm, out):
    if comm.rank == 0:
        comm.allreduce_obj(1)  # rank 1 never comes: it ended normally


def run_raise(comm, out):
    if comm.rank == 1:
        raise RuntimeError('rank 1 failed on purpose')
    comm.allreduce_obj(1)  # would wait for ever without the abort hook


def main():
    from cvzoo.core.communicators.create_communicator import create_communicator

    case, out = sys.argv[1], sys.argv[2]
    if os.environ.get('CVZOO_FAKE_CUDA') == '1':
        from cvzoo.testing import cupy_stand_in

        cupy_stand_in.install(n_devices=2)
    comm = create_communicator('nccl' if case.endswith('_nccl') else 'mpi')
    {'train': run_train, 'train_chained': run_train_chained, 'evaluate': run_evaluate,
     'download': run_download, 'raise': run_raise, 'leave_early': run_leave_early,
     'train_gpu_mpi': run_train_gpu, 'train_gpu_nccl': run_train_gpu,
     'grads_nccl': run_grads_nccl, 'graph_nccl': run_graph_nccl,
     'streams_nccl': run_streams_nccl}[case](comm, out)
    if case == 'leave_early':
        return  # no barrier: the point is to leave while rank 0 waits
    comm.barrier()
    comm.finalize()


if __name__ == '__main__':
    main()
