"""Training steps captured as CUDA graphs and replayed equal eager training, bit for bit.

On the CuPy stand-in (``pytest --fake-cuda``) a capture runs nothing and a launch replays
each recorded operation into the same arrays, so these tests prove that the captured step
reads its batch, hyperparameters and random state from the device and that the host-side
counters and reports follow. See docs/gpu.md, "CUDA graphs".
"""

import functools
import warnings

import numpy
import pytest

import cvzoo.core.functions as F
import cvzoo.core.links as L
from cvzoo import errors
from cvzoo.core import backend, device_random, optimizers
from cvzoo.core.cuda_graph import GraphedUpdate
from cvzoo.core.serializers import npz
from cvzoo.core.serializers.dictionary import state_arrays
from cvzoo.core.training import extension
from cvzoo.core.training import trainer as trainer_module
from cvzoo.core.training.extensions.exponential_shift import ExponentialShift
from cvzoo.core.training.iterators.serial_iterator import SerialIterator
from cvzoo.core.training.updaters.standard_updater import StandardUpdater
from cvzoo.models import get_model

N_CLASS = 3


@pytest.fixture
def gpu(stand_in):
    """cuda:0 of the stand-in, with every generator the step draws from seeded."""
    return backend.get_device('cuda:0')


class _DropoutNet(L.Chain):
    """conv - relu - dropout - linear: randomness inside the captured step."""

    def __init__(self):
        super().__init__()
        rng = numpy.random.RandomState(0)
        with self.init_scope():
            self.conv = L.Convolution2D(3, 4, 3, pad=1, initialW=rng.randn(4, 3, 3, 3).astype(
                numpy.float32) * 0.3)
            self.fc = L.Linear(4 * 8 * 8, N_CLASS, initialW=rng.randn(
                N_CLASS, 4 * 8 * 8).astype(numpy.float32) * 0.05)

    def forward(self, x):
        return self.fc(F.dropout(F.relu(self.conv(x)), 0.5))


def _small_cnn():
    numpy.random.seed(0)
    predictor = get_model('small_cnn', n_class=N_CLASS, insize=8, width=4)
    predictor(numpy.zeros((1, 3, 8, 8), numpy.float32))  # shapes lazy layers on the CPU
    return predictor


def _dataset(n=24):
    rng = numpy.random.RandomState(1)
    return [(rng.randn(3, 8, 8).astype(numpy.float32), numpy.int32(rng.randint(N_CLASS)))
            for _ in range(n)]


def _trainer(out, predictor, cuda_graph, n_iter, make_optimizer=None, loss_func=None):
    """A trainer of L.Classifier(predictor) on cuda:0 with lr *= 0.7 after every iteration;
    ``trainer.losses`` gets main/loss of each iteration."""
    device_random.seed(0)
    model = L.Classifier(predictor).to_device('cuda:0')
    optimizer = (make_optimizer or (lambda: optimizers.MomentumSGD(lr=0.1)))().setup(model)
    iterator = SerialIterator(_dataset(), 4, shuffle=False)
    updater = StandardUpdater(iterator, optimizer, device='cuda:0', cuda_graph=cuda_graph,
                              loss_func=loss_func)
    trainer = trainer_module.Trainer(updater, (n_iter, 'iteration'), out=str(out))
    attr = 'alpha' if isinstance(optimizer, optimizers.Adam) else 'lr'
    trainer.extend(ExponentialShift(attr, 0.7), trigger=(1, 'iteration'))
    trainer.losses = []

    @extension.make_extension(trigger=(1, 'iteration'))
    def record(trainer):
        trainer.losses.append(float(trainer.observation['main/loss']))

    trainer.extend(record)
    return trainer


def _state(trainer):
    return state_arrays(trainer.updater.get_optimizer('main').target)


def _assert_same(graphed, eager):
    a, b = _state(graphed), _state(eager)
    assert sorted(a) == sorted(b)
    for key in a:
        numpy.testing.assert_array_equal(a[key], b[key], err_msg=key)
    assert graphed.losses == eager.losses


def _run_eager_and_graphed(tmp_path, make_predictor, n_iter, make_optimizer=None):
    """(graphed, eager) trainers, each run for ``n_iter`` iterations on a fresh model."""
    runs = {}
    for name, cuda_graph in (('eager', False), ('graphed', True)):
        runs[name] = _trainer(tmp_path / name, make_predictor(), cuda_graph, n_iter,
                              make_optimizer)
        runs[name].run()
    return runs['graphed'], runs['eager']


def test_graphed_training_equals_eager_bit_for_bit_with_a_schedule(gpu, tmp_path):
    graphed, eager = _run_eager_and_graphed(tmp_path, _small_cnn, 8)
    updater = graphed.updater
    assert updater.graphed_update.captured and updater.graphed_update.fallback_reason is None
    assert graphed.updater.get_optimizer('main').t == 8
    assert graphed.updater.get_optimizer('main').lr == pytest.approx(0.1 * 0.7 ** 8)
    _assert_same(graphed, eager)  # parameters, batch-norm statistics, each loss
    assert len(set(graphed.losses)) == 8


def test_dropout_draws_a_new_mask_on_each_replay_as_eager_does(gpu, tmp_path):
    graphed, eager = _run_eager_and_graphed(tmp_path, _DropoutNet, 7)
    assert graphed.updater.graphed_update.captured
    _assert_same(graphed, eager)
    # with the generator seeded differently the same replays give other losses
    differently = _trainer(tmp_path / 'other', _DropoutNet(), True, 7)
    device_random.seed(1)
    differently.run()
    assert differently.losses[4:] != graphed.losses[4:]


def test_adam_bias_correction_and_schedule_reach_the_replays(gpu, tmp_path):
    graphed, eager = _run_eager_and_graphed(tmp_path, _small_cnn, 7, optimizers.Adam)
    assert graphed.updater.graphed_update.captured
    a, b = _state(graphed), _state(eager)
    for key in a:
        # 1 - beta1 is computed on the device in float32 inside the graph, on the host in
        # float64 eagerly: equal to float32's rounding
        numpy.testing.assert_allclose(a[key], b[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_resume_from_a_snapshot_continues_as_an_uninterrupted_run(gpu, tmp_path):
    eager = _trainer(tmp_path / 'eager', _DropoutNet(), False, 9)
    eager.run()
    first = _trainer(tmp_path / 'first', _DropoutNet(), True, 5)
    first.run()
    assert first.updater.graphed_update.captured
    npz.save_npz(tmp_path / 'snapshot.npz', first)
    counter = device_random.get_generator(
        first.updater.get_optimizer('main').target.predictor.fc.W.array).counter.copy()
    resumed = _trainer(tmp_path / 'resumed', _DropoutNet(), True, 9)
    npz.load_npz(tmp_path / 'snapshot.npz', resumed)
    # the dropout generator's state is the process's, not the snapshot's: put it back
    device_random.get_generator(counter).counter[...] = counter
    resumed.run()
    assert resumed.updater.graphed_update.captured
    resumed.losses[:0] = first.losses
    _assert_same(resumed, eager)


def _loss_with_a_sync(model, x, t):
    loss = model(x, t)
    if float(loss.array) > 1e9:  # a host sync: cannot be captured
        raise AssertionError
    return loss


def _loss_with_a_mask(model, x, t):
    loss = model(x, t)
    return loss + F.sum(loss.array[loss.array > 1e9])  # a data-dependent shape


def _loss_with_host_randomness(model, x, t):
    import cupy

    return model(x, t) * cupy.random.uniform(1, 1, ()).astype(numpy.float32)


@pytest.mark.parametrize('loss, operation', [
    (_loss_with_a_sync, 'float (a host synchronisation)'),
    (_loss_with_a_mask, 'boolean mask (a host synchronisation)'),
    (_loss_with_host_randomness, 'cupy.random.uniform'),
])
def test_a_step_that_cannot_be_captured_warns_once_and_trains_eagerly(gpu, tmp_path, loss,
                                                                      operation):
    eager = _trainer(tmp_path / 'eager', _small_cnn(), False, 7)
    eager.updater.loss_func = lambda x, t: loss(eager.updater.get_optimizer('main').target,
                                                x, t)
    eager.run()
    graphed = _trainer(tmp_path / 'graphed', _small_cnn(), True, 7)
    graphed.updater.loss_func = lambda x, t: loss(
        graphed.updater.get_optimizer('main').target, x, t)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        graphed.run()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1, messages
    assert operation in messages[0] and 'test_cuda_graph.py:' in messages[0]
    assert 'runs eagerly' in messages[0]
    assert not graphed.updater.graphed_update.captured
    assert operation in graphed.updater.graphed_update.fallback_reason
    _assert_same(graphed, eager)  # the refused capture changed nothing


def test_capture_error_is_a_runtime_error_naming_the_call_site(gpu):
    model = L.Classifier(_small_cnn()).to_device('cuda:0')
    optimizer = optimizers.MomentumSGD(lr=0.1).setup(model)
    x = backend.to_device(numpy.ones((2, 3, 8, 8), numpy.float32), 'cuda:0')
    t = backend.to_device(numpy.zeros(2, numpy.int32), 'cuda:0')
    from cvzoo.core import cuda_graph

    optimizer.update(model, x, t)
    with pytest.raises(errors.GraphCaptureError, match='test_cuda_graph.py') as caught:
        cuda_graph._CapturedStep(optimizer, lambda x, t: _loss_with_a_sync(model, x, t),
                                 (x, t), {})
    assert isinstance(caught.value, RuntimeError)
    assert optimizer.t == 1  # host counters put back


def test_other_batch_shapes_run_eagerly_and_new_arrays_capture_again(gpu):
    model = L.Classifier(_small_cnn()).to_device('cuda:0')
    optimizer = optimizers.MomentumSGD(lr=0.1).setup(model)
    step = GraphedUpdate(optimizer, model, warmup=1)
    rng = numpy.random.RandomState(0)

    def batch(n):
        return (backend.to_device(rng.randn(n, 3, 8, 8).astype(numpy.float32), 'cuda:0'),
                backend.to_device(rng.randint(0, N_CLASS, n).astype(numpy.int32), 'cuda:0'))

    step(*batch(4))
    step(*batch(4))
    graph = step._graph
    assert graph is not None
    step(*batch(3))                 # a shorter last batch: eager, the graph is kept
    assert step._graph is graph and optimizer.t == 3
    model.predictor.fc.W.array = model.predictor.fc.W.array.copy()  # as a loaded snapshot
    step(*batch(4))                 # one eager step, which puts the new arrays in place
    assert not step.captured and optimizer.t == 4
    step(*batch(4))
    assert step._graph is not graph and step.captured and optimizer.t == 5


def test_a_batch_on_the_cpu_warns_once_and_trains_eagerly(tmp_path):
    model = L.Classifier(_small_cnn())
    optimizer = optimizers.MomentumSGD(lr=0.1).setup(model)
    updater = StandardUpdater(SerialIterator(_dataset(), 4, shuffle=False), optimizer,
                              cuda_graph=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        for _ in range(4):
            updater.update()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and 'not on a GPU' in messages[0]
    assert optimizer.t == 4


def _detector_training(name, cuda_graph, n=4, shrink_boxes=False):
    """n steps of ``name``'s small train chain on one image (lr *= 0.8 each step); with
    ``shrink_boxes`` the boxes (argument 1) shrink by 10% at each step: a new batch."""
    import cupy

    from cvzoo.testing.small_models import build_small_model
    from tests.models.test_models_on_devices import _image, detection_train_batch

    numpy.random.seed(0)
    cupy.random.seed(0)  # lazily shaped layers draw from it
    _, model = build_small_model(name)
    if name.startswith('yolo'):
        model.insize = (128, 128)  # a small input (416 x 416 by default) keeps it quick
    model.to_device('cuda:0')
    chain, arguments = detection_train_batch(model, _image())
    chain.to_device('cuda:0')
    optimizer = optimizers.MomentumSGD(lr=0.01).setup(chain)
    step = GraphedUpdate(optimizer, chain, warmup=1) if cuda_graph else functools.partial(
        optimizer.update, chain)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', RuntimeWarning)
        for i in range(n):
            optimizer.lr = 0.01 * 0.8 ** i
            if shrink_boxes:
                step(arguments[0], arguments[1] * (1 - 0.1 * i), *arguments[2:])
            else:
                step(*arguments)
    refusals = [str(w.message) for w in caught if 'runs eagerly' in str(w.message)]
    return step, refusals, state_arrays(chain)


def test_ssd_train_chain_is_captured_and_trains_as_eager(gpu):
    step, refusals, graphed = _detector_training('ssd_tiny', True)
    assert step.captured and refusals == []
    _, _, eager = _detector_training('ssd_tiny', False)
    for key in eager:
        numpy.testing.assert_array_equal(graphed[key], eager[key], err_msg=key)


@pytest.mark.parametrize('name', ['yolov3', 'yolov2'])  # [yolo] heads, a [region] head
def test_yolo_train_chain_is_captured_and_trains_as_eager(gpu, name):
    step, refusals, graphed = _detector_training(name, True, shrink_boxes=True)
    assert step.captured and refusals == []
    _, _, eager = _detector_training(name, False, shrink_boxes=True)
    for key in eager:
        numpy.testing.assert_array_equal(graphed[key], eager[key], err_msg=key)


def test_resize_images_is_captured_once_its_matrices_are_on_the_gpu(gpu):
    import cupy

    rng = numpy.random.RandomState(0)
    x = backend.to_device(rng.randn(1, 2, 4, 5).astype(numpy.float32), 'cuda:0')
    F.resize_images(x, (7, 3))  # warm-up: the interpolation matrices go to the GPU once
    stream = cupy.cuda.Stream()
    with stream:
        stream.begin_capture()
        y = F.resize_images(x, (7, 3))  # no copy from the host inside the capture
        graph = stream.end_capture()
    for _ in range(2):
        new = rng.randn(1, 2, 4, 5).astype(numpy.float32)
        cupy.copyto(x, backend.to_device(new, 'cuda:0'))
        graph.launch()
        numpy.testing.assert_array_equal(backend.to_numpy(y.array),
                                         backend.to_numpy(F.resize_images(new, (7, 3)).array))


def test_a_step_that_replaces_its_parameters_is_refused_and_left_as_it_was(gpu, tmp_path):
    def rebind(optimizer):  # a hook that makes new parameter arrays instead of updating
        for param in optimizer.target.params():
            param.array = param.array * 1.0

    def with_hook(trainer):
        trainer.updater.get_optimizer('main').add_hook(rebind, name='rebind', timing='post')
        return trainer

    eager = with_hook(_trainer(tmp_path / 'eager', _small_cnn(), False, 6))
    eager.run()
    graphed = with_hook(_trainer(tmp_path / 'graphed', _small_cnn(), True, 6))
    with pytest.warns(RuntimeWarning, match='replaces parameter, optimizer-state or persistent'):
        graphed.run()
    assert not graphed.updater.graphed_update.captured
    _assert_same(graphed, eager)  # the refused capture left no array replaced


class _OneRank:
    """A communicator of one rank: the multi-node optimizer's paths without MPI."""

    def bcast_data(self, model):
        pass

    def allreduce_grad(self, model, zero_fill=True):
        pass


def _double_buffered(graphed, warmup):
    """6 steps of a multi-node optimizer with double buffering (no update at the first);
    the parameters and the GraphedUpdate (None when eager)."""
    from cvzoo.core.communicators.multi_node_optimizer import create_multi_node_optimizer

    model = L.Classifier(_small_cnn()).to_device('cuda:0')
    optimizer = create_multi_node_optimizer(optimizers.MomentumSGD(lr=0.1), _OneRank(),
                                            double_buffering=True).setup(model)
    step = GraphedUpdate(optimizer, model, warmup=warmup) if graphed else None
    rng = numpy.random.RandomState(0)
    for _ in range(6):
        x = backend.to_device(rng.randn(4, 3, 8, 8).astype(numpy.float32), 'cuda:0')
        t = backend.to_device(rng.randint(0, N_CLASS, 4).astype(numpy.int32), 'cuda:0')
        (step or functools.partial(optimizer.update, model))(x, t)
    return {path: backend.to_numpy(p.array) for path, p in model.namedparams()}, step


def test_double_buffering_swaps_the_gradients_at_each_replay(gpu):
    expected, _ = _double_buffered(False, None)
    params, step = _double_buffered(True, warmup=2)
    assert step.captured
    for path, array in expected.items():
        numpy.testing.assert_array_equal(params[path], array, err_msg=path)


def test_optimizer_state_first_made_in_a_refused_capture_is_taken_back(gpu):
    """With one warm-up step, double buffering has not updated yet: the optimizer state is
    made in the capture, which is refused (new state arrays); the eager steps after it
    start from no state, not from the capture's garbage."""
    expected, _ = _double_buffered(False, None)
    with pytest.warns(RuntimeWarning, match='optimizer-state'):
        params, step = _double_buffered(True, warmup=1)
    assert not step.captured
    for path, array in expected.items():
        numpy.testing.assert_array_equal(params[path], array, err_msg=path)
