"""Tiny runs of the train scripts for the fault tests (tests/scripts, tests/faults): their
data, their arguments, and a NaN injected at a chosen iteration."""

import numpy
from PIL import Image

from cvzoo.core.training.updaters import standard_updater
from tests.helpers import scripts
from tests.helpers.darknet_cfgs import TINY_YOLO_CFG

# the file each train script writes last
FINAL = {'ssd': 'model_final.npz', 'yolo': 'model_final.npz', 'classifier': 'model_final.npz'}


def load_train_script(name):
    """The module of ``scripts/train_<name>.py``."""
    return scripts.load_script(f'train_{name}')


def voc_folder(root, n_image=4):
    """A VOC folder of ``n_image`` 40 x 48 images, one square or circle each, listed in
    both the train and test splits."""
    rng = numpy.random.RandomState(0)
    for sub in ('Annotations', 'JPEGImages', 'ImageSets/Main'):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for i in range(n_image):
        img = numpy.full((40, 48, 3), 30, numpy.uint8)
        x_min, y_min = rng.randint(0, 20, 2)
        img[y_min:y_min + 16, x_min:x_min + 20] = 220
        Image.fromarray(img).save(root / 'JPEGImages' / f'{i}.jpg')
        (root / 'Annotations' / f'{i}.xml').write_text(
            f'<annotation><object><name>{("square", "circle")[i % 2]}</name><bndbox>'
            f'<xmin>{x_min + 1}</xmin><ymin>{y_min + 1}</ymin><xmax>{x_min + 20}</xmax>'
            f'<ymax>{y_min + 16}</ymax></bndbox></object></annotation>')
    for split in ('train', 'test'):
        (root / 'ImageSets' / 'Main' / f'{split}.txt').write_text(
            '\n'.join(map(str, range(n_image))) + '\n')
    return root


def class_folders(root):
    """A folder per class (circle, square) of six 12 x 12 images."""
    rng = numpy.random.RandomState(0)
    for k, name in enumerate(('circle', 'square')):
        (root / name).mkdir(parents=True)
        for i in range(6):
            img = (rng.rand(12, 12, 3) * 60 + 100 * k).astype(numpy.uint8)
            Image.fromarray(img).save(root / name / f'{i}.png')
    return root


def train_args(name, tmp_path, out, iteration, seed=0):
    """The command line of a tiny run of ``train_<name>.py`` ('ssd', 'yolo' or
    'classifier') on data written once under ``tmp_path/data``."""
    data = tmp_path / 'data'
    common = ['--iteration', str(iteration), '--out', str(out), '--seed', str(seed)]
    if name == 'classifier':
        if not data.exists():
            class_folders(data)
        return ['--dataset', str(data), '--batchsize', '4', '--insize', '8'] + common
    if not data.exists():
        voc_folder(data)
    if name == 'ssd':
        return ['--dataset', str(data), '--model', 'ssd_tiny', '--insize', '64',
                '--batchsize', '2'] + common
    cfg = tmp_path / 'tiny.cfg'
    cfg.write_text(TINY_YOLO_CFG)
    return ['--cfg', str(cfg), '--dataset', str(data), '--batchsize', '2',
            '--insize', '32'] + common


def poison_at(monkeypatch, iteration):
    """Iteration ``iteration`` (1-based) starts with a NaN parameter: its loss is NaN."""
    original = standard_updater.StandardUpdater.update_core

    def update_core(self):
        if self.iteration + 1 == iteration:  # counted up after update_core
            param = next(iter(self.get_optimizer('main').target.params()))
            param.array[...] = numpy.nan
        original(self)
    monkeypatch.setattr(standard_updater.StandardUpdater, 'update_core', update_core)


def poison_after(monkeypatch, iteration):
    """Update ``iteration`` (1-based) leaves a NaN parameter behind while its loss is still
    finite: what a learning rate far too large does to a run."""
    original = standard_updater.StandardUpdater.update_core

    def update_core(self):
        original(self)
        if self.iteration + 1 == iteration:  # counted up after update_core
            param = next(iter(self.get_optimizer('main').target.params()))
            param.array[...] = numpy.nan
    monkeypatch.setattr(standard_updater.StandardUpdater, 'update_core', update_core)
