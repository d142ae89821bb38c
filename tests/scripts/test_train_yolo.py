"""scripts/train_yolo.py: smoke runs on a tiny VOC-layout folder with a tiny Darknet cfg."""

import json

import numpy
import pytest

from cvzoo.core.training.convert import images_and_target_lists
from cvzoo.models.detection.darknet.augmentation import YOLOTransform
from tests.helpers import scripts, train_runs
from tests.helpers.darknet_cfgs import TINY_BODY
from tests.helpers.darknet_cfgs import TINY_YOLO_CFG as TINY_CFG


@pytest.fixture(scope='module')
def script():
    return scripts.load_script('train_yolo')


def _args(tmp_path, out, iteration):
    cfg = tmp_path / 'tiny.cfg'
    cfg.write_text(TINY_CFG)
    return ['--cfg', str(cfg), '--dataset', str(train_runs.voc_folder(tmp_path / 'data')),
            '--iteration', str(iteration), '--batchsize', '2', '--insize', '32',
            '--out', str(out)]


def test_smoke_writes_log_plot_snapshot_model_and_map(script, tmp_path, capsys):
    out = tmp_path / 'out'
    result = script.main(_args(tmp_path, out, 3))
    assert 0.0 <= result <= 1.0
    log = [json.loads(line) for line in (out / 'log').read_text().splitlines()]
    assert [entry['iteration'] for entry in log] == [1, 2, 3]
    assert {'main/loss', 'main/loss/xy', 'main/loss/obj', 'lr'} <= set(log[-1])
    assert all(numpy.isfinite(entry['main/loss']) for entry in log)
    assert (out / 'loss.png').exists() and (out / 'model_final.npz').exists()
    assert [p.name for p in out.glob('snapshot_iter_*')] == ['snapshot_iter_3']
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])['map'] == result


def test_resume_continues_from_the_snapshot(script, tmp_path):
    out = tmp_path / 'out'
    script.main(_args(tmp_path, out, 2))
    script.main(_args(tmp_path, out, 4) + ['--resume'])
    assert [p.name for p in out.glob('snapshot_iter_*')] == ['snapshot_iter_4']


def test_transform_keeps_boxes_on_the_object():
    img = numpy.zeros((3, 40, 60), numpy.float32)
    img[:, 10:30, 38:58] = 255  # off-centre, so a flip that forgets the box is seen
    transform = YOLOTransform((32, 32), jitter=0.2, seed=3)
    for _ in range(8):
        x, bbox, label = transform((img, numpy.array([[38, 10, 58, 30]], numpy.float32),
                                    numpy.array([1], numpy.int32)))
        assert x.shape == (3, 32, 32) and x.dtype == numpy.float32 and label.tolist() == [1]
        x_min, y_min, x_max, y_max = numpy.round(bbox[0]).astype(int)
        mask = numpy.zeros((32, 32), bool)
        mask[y_min + 1:y_max - 1, x_min + 1:x_max - 1] = True
        brightness = x.mean(axis=0)
        assert brightness[mask].mean() > brightness[~mask].mean() + 0.2
    batch = [transform((img, numpy.zeros((0, 4), numpy.float32), numpy.zeros(0, numpy.int32)))
             for _ in range(2)]
    x, bboxes, _labels = images_and_target_lists(batch)
    assert x.shape == (2, 3, 32, 32) and [b.shape for b in bboxes] == [(0, 4), (0, 4)]


REGION_CFG = TINY_BODY + """[region]
anchors=1.0,1.5, 2.5,2.0
classes=2
num=2
coords=4
softmax=1
"""


def test_region_cfg_trains_with_the_region_loss(script, tmp_path):
    args = _args(tmp_path, tmp_path / 'out', 3)
    args[1] = str(tmp_path / 'region.cfg')
    (tmp_path / 'region.cfg').write_text(REGION_CFG)
    assert 0.0 <= script.main(args) <= 1.0
    log = [json.loads(line) for line in (tmp_path / 'out' / 'log').read_text().splitlines()]
    assert all(numpy.isfinite(entry['main/loss']) and entry['main/loss/cls'] > 0
               for entry in log)


@pytest.mark.slow  # 14 s: a 15 M parameter model, built, trained one step, saved, evaluated
def test_yolov2_tiny_from_the_zoo(script, tmp_path):
    args = _args(tmp_path, tmp_path / 'out', 1)
    args[:2] = ['--model', 'yolov2_tiny']
    assert 0.0 <= script.main(args) <= 1.0
    assert (tmp_path / 'out' / 'model_final.npz').exists()
