"""Every registered classifier, semantic segmenter, SSD and YOLO trains as a CUDA graph.

For each ``list_models()`` entry that :func:`captured_by_graph` selects (by task and by
family, so that a new registration of those kinds is included without a line), the model
is built small (``cvzoo.testing.small_models``), given random examples of its task
(``cvzoo.testing.synthetic_examples``) and trained by ``cvzoo.training.train`` with its
recipe, batches of 2, on ``'cuda:0'`` of the CuPy stand-in (``pytest --fake-cuda``) with
``cuda_graph=True``: three eager warm-up steps (``GraphedUpdate``'s ``DEFAULT_WARMUP``),
the capture, and launches of the graph. A refused capture warns (a RuntimeWarning naming
the operation and its call site), which fails the test here. The graphed run then equals
an eager run of the same iterations bit for bit: losses, parameters, persistent arrays
(batch-norm statistics), the optimizer's state and counters, the iterator.

The stand-in replays each recorded operation at a launch, so a graphed run costs what an
eager one does (the capture about one step more). Every selected entry is captured without
refusal and replayed; the bit-for-bit comparison runs for one entry of each family
(:data:`COMPARED`). SSD512's capture is too large for the stand-in to record on a CI
machine and is marked slow (:data:`TOO_LARGE_TO_RECORD`).
"""

import gc
import importlib
import warnings

import numpy
import pytest

from cvzoo.core.cuda_graph import DEFAULT_WARMUP
from cvzoo.core.serializers.dictionary import DictionarySerializer
from cvzoo.core.training.extensions import read_log
from cvzoo.models import get_model_class, list_models, model_info
from cvzoo.models.detection.darknet.darknet_detector import DarknetDetector
from cvzoo.models.detection.ssd.ssd import SSD
from cvzoo.testing import small_models
from cvzoo.testing.synthetic_examples import synthetic_examples
from cvzoo.training import train
from tests.helpers.registry_runs import small_for_training

# the tasks every model of which trains as a graph
CAPTURED_TASKS = ('classification', 'semantic_segmentation')
# the detector families (base classes) whose train chains are captured: SSD, and YOLO's
# (the recipe pads each image's boxes to max_boxes, assigned to anchors on the device)
CAPTURED_DETECTORS = (SSD, DarknetDetector)
# the warm-up, the capture (which launches its graph) and one launch more
ITERATIONS = DEFAULT_WARMUP + 2
# one entry per family whose graphed run is compared with an eager one, bit for bit: what
# could make them differ is what the step reads from the host (the recipe's optimizer and
# schedule, the train chain's loss, dropout's generator), which a family shares. The VGG16s
# (vgg16, ssd300, ssd300_vgg16) take a minute each at their fixed sides of 224 and 300 and
# are captured only: the SSD train chain is compared on ssd_tiny, dropout on squeezenet1_1.
COMPARED = ('small_cnn', 'se_resnext50', 'mobilenet_v2', 'mobilenet_v3_large', 'squeezenet1_1',
            'deeplabv3_resnet50', 'pspnet_resnet50', 'deeplab_v3plus_xception65',
            'lraspp_mobilenet_v3_large', 'segnet_basic', 'espnet', 'ssd_tiny', 'yolov2_tiny',
            'yolov3')
# entries whose capture the stand-in cannot hold in a CI machine's memory: it keeps every
# array a recorded step makes (no reuse within the graph's pool), 24 GB for an SSD512's
# step at 512 x 512; its layers are SSD300's, which is captured here
TOO_LARGE_TO_RECORD = ('ssd512',)

def captured_by_graph(name):
    """Whether the registered model ``name`` trains as a CUDA graph (its task or family
    is one whose train chains are captured)."""
    return (model_info(name)['task'] in CAPTURED_TASKS
            or issubclass(get_model_class(name), CAPTURED_DETECTORS))


CAPTURED = [name for name in list_models() if captured_by_graph(name)]


def _params(names):
    return [pytest.param(name, marks=pytest.mark.slow) if name in TOO_LARGE_TO_RECORD
            else name for name in names]


def _train(name, stand_in, out, cuda_graph, build_small_model):
    """``name``'s small model trained ITERATIONS steps on cuda:0 (a refused capture
    raises its RuntimeWarning; numerical ones, such as an exp overflowing in a decoder of
    random weights, stay warnings); the TrainingResult."""
    stand_in.install().random.seed(0)  # lazily shaped layers draw from CuPy's generator
    task, model = small_for_training(name, build_small_model)
    n_class = small_models.n_class_of(name)
    examples = synthetic_examples(task, n_class, n=4, n_point=getattr(model, 'n_point', 17))
    with warnings.catch_warnings():
        warnings.filterwarnings('error', message='.*the training step runs eagerly',
                                category=RuntimeWarning)
        return train(model, examples, task, [f'class{k}' for k in range(n_class)],
                     out=str(out), iterations=ITERATIONS, batchsize=2, device='cuda:0',
                     progress=False, model_name=name, cuda_graph=cuda_graph,
                     model_kwargs=small_models.small_kwargs(name))


def _updater_state(result):
    """The updater's state as a snapshot holds it: the model's parameters and persistent
    arrays, the optimizer's counters and per-parameter state, the iterator."""
    state = DictionarySerializer()
    result.trainer.updater.serialize(state)
    return state.target


def _losses(out):
    return [entry['main/loss'] for entry in read_log(out / 'log')]


@pytest.fixture
def unsaved(monkeypatch):
    """Keep ``train`` from writing its snapshots (one per iteration in so short a run, of
    hundreds of MB for the large models) and model_final.npz: the registry training
    test and tests/core/test_cuda_graph.py write and resume them. Collect each run's
    cycles after the test: a captured step holds every array of the step, gigabytes for
    an SSD512, which the next test would otherwise find still held."""
    module = importlib.import_module('cvzoo.training.train')
    monkeypatch.setattr(module, 'save_trained_model', lambda *args, **kwargs: None)
    monkeypatch.setattr(module, '_save_uncompressed', lambda path, target: None)
    yield
    gc.collect()


def test_the_selection_holds_the_classifiers_segmenters_ssds_and_yolos():
    tasks = {model_info(name)['task'] for name in CAPTURED}
    assert tasks == {'classification', 'semantic_segmentation', 'detection'}
    assert {'ssd300', 'ssd512', 'ssd300_vgg16', 'ssd_tiny'} <= set(CAPTURED)
    assert {'yolov2', 'yolov2_tiny', 'yolov3', 'yolo_fastest', 'yolo_fastest_xl'} <= set(CAPTURED)
    assert not {'retinanet_resnet50_fpn', 'faster_rcnn_vgg16', 'mask_rcnn_tiny'} & set(CAPTURED)
    assert set(COMPARED) <= set(CAPTURED)


@pytest.mark.parametrize('name', _params(CAPTURED))
def test_the_train_chain_is_captured_and_trains_as_eager(name, stand_in, unsaved, tmp_path,
                                                        build_small_model):
    graphed = _train(name, stand_in, tmp_path / 'graphed', True, build_small_model)
    step = graphed.trainer.updater.graphed_update
    assert step.captured and step.fallback_reason is None
    assert step.optimizer.t == ITERATIONS
    losses = _losses(tmp_path / 'graphed')
    assert len(losses) == ITERATIONS and all(numpy.isfinite(losses))
    if name not in COMPARED:
        return
    eager = _train(name, stand_in, tmp_path / 'eager', False, build_small_model)
    assert losses == _losses(tmp_path / 'eager')
    a, b = _updater_state(graphed), _updater_state(eager)
    assert sorted(a) == sorted(b)
    for key in a:
        numpy.testing.assert_array_equal(a[key], b[key], err_msg=key)
