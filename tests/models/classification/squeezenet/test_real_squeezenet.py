"""End to end on real weights: the DeepScale SqueezeNet 1.1 on 200 labelled ImageNet images.

``../shared/data/weights/squeezenet1_1_deepscale.pth`` (torchvision's layout) is loaded by
path with ``load_weights(..., source='torchvision')`` and ``DEEPSCALE_PRESET``; cvzoo must
classify ``imagenet_samples/`` as a plain PyTorch SqueezeNet 1.1 does (when torch is
installed) and reach the top-1 accuracy measured with this code: 141 of 200 (70.5 %; the
data README quotes about 66 % for its own PyTorch run, whose resize may differ). Skips
when the folder is absent.
"""

import pathlib
import shutil

import numpy
import pytest

from cvzoo.core import config
from cvzoo.models import zoo
from cvzoo.models.classification.squeezenet import squeezenet
from cvzoo.models.weights import weight_files
from cvzoo.utils import image as image_utils
from tests.helpers import torch_squeezenet

WEIGHTS = 'weights/squeezenet1_1_deepscale.pth'
SHA256 = '22e0095aac5c9b6e5728b19652f4bffa94fd019afd406c87435fdcc2a227e3ee'
MEASURED_TOP1 = {200: 141, 20: 13}  # correct images, measured with cvzoo (and torch)


@pytest.fixture(scope='module')
def samples(tmp_path_factory):
    """(model, paths, labels, weight file copy); skips without ../shared/data."""
    root = pathlib.Path(__file__).resolve().parents[4].parent / 'shared' / 'data'
    if not (root / WEIGHTS).is_file():
        pytest.skip(f'real data {root / WEIGHTS} is absent')
    # NOTE: a copy, so that the converted cache is written beside it, not into shared/data
    path = tmp_path_factory.mktemp('deepscale') / 'squeezenet1_1_deepscale.pth'
    shutil.copyfile(root / WEIGHTS, path)
    assert weight_files.sha256_of_file(path) == SHA256
    model = squeezenet.SqueezeNet1_1()
    assert zoo.load_weights(model, path, source='torchvision') is None
    model.preset = squeezenet.DEEPSCALE_PRESET
    wnids = [line.split()[0] for line in
             (root / 'imagenet_samples' / 'synset_words.txt').read_text().splitlines()]
    paths = sorted((root / 'imagenet_samples').glob('*.JPEG'))
    labels = numpy.array([wnids.index(p.name.split('_')[0]) for p in paths])
    return model, paths, labels, path


def _logits(model, paths):
    batch = numpy.stack([model.prepare(image_utils.as_chw_image(str(p))) for p in paths])
    with config.using_config('train', False), config.no_backprop_mode():
        rows = [model(batch[i:i + 20]).array for i in range(0, len(batch), 20)]
    return batch, numpy.concatenate(rows)


def _torch_logits(weight_path, batch):
    torch = pytest.importorskip('torch')
    net = torch_squeezenet.torch_squeezenet1_1()
    net.load_state_dict(torch.load(weight_path, map_location='cpu', weights_only=True))
    with torch.no_grad():
        return net(torch.from_numpy(batch)).numpy()


def _check(samples, n_image):
    model, paths, labels, weight_path = samples
    step = len(paths) // n_image
    paths, labels = paths[::step][:n_image], labels[::step][:n_image]
    batch, logits = _logits(model, paths)
    assert batch.shape == (n_image, 3, 227, 227) and logits.dtype == numpy.float32
    assert (logits.argmax(axis=1) == labels).sum() == MEASURED_TOP1[n_image]
    probs = model.predict([str(p) for p in paths[:4]])  # the public path agrees
    numpy.testing.assert_array_equal(probs.argmax(axis=1), logits[:4].argmax(axis=1))
    return batch, logits, weight_path


@pytest.fixture(scope='module')
def first_20(samples):
    """Every tenth image, checked once: (batch, cvzoo logits, weight file)."""
    return _check(samples, 20)


def test_deepscale_squeezenet1_1_on_20_images(first_20):
    assert first_20[1].shape == (20, 1000)


@pytest.mark.reference
def test_deepscale_squeezenet1_1_matches_plain_pytorch_on_20_images(first_20):
    batch, logits, weight_path = first_20
    expected = _torch_logits(weight_path, batch)
    numpy.testing.assert_array_equal(logits.argmax(axis=1), expected.argmax(axis=1))
    numpy.testing.assert_allclose(logits, expected, atol=1e-3, rtol=1e-4)


@pytest.mark.slow
def test_deepscale_squeezenet1_1_on_200_images(samples):
    batch, logits, weight_path = _check(samples, 200)
    try:
        expected = _torch_logits(weight_path, batch)
    except pytest.skip.Exception:
        return
    numpy.testing.assert_array_equal(logits.argmax(axis=1), expected.argmax(axis=1))
    numpy.testing.assert_allclose(logits, expected, atol=1e-3, rtol=1e-4)
