"""Checks shared by the torchvision segmenters' reference tests (FCN, DeepLabV3, LR-ASPP).

Each family's ``test_torchvision_reference.py`` builds pairs with :func:`build_pair` and
runs the checks below; torch and torchvision come from the ``torchvision`` fixture of
tests/conftest.py.
"""

import dataclasses
import pathlib

import numpy

from cvzoo.core import config
from cvzoo.models import zoo
from tests.helpers import torchvision_weights

KEY = 'coco_voc'
TORCHVISION_WEIGHTS = 'COCO_WITH_VOC_LABELS_V1'
SIZE = (96, 128)
SMALL_SHORTER_SIDE = 96  # the preset's 520, scaled down to keep the forward passes short


def torchvision_weights_of(torchvision, name):
    """The torchvision ``Weights`` member of cvzoo's ``name``/'coco_voc' entry."""
    return torchvision.models.get_model_weights(name)[TORCHVISION_WEIGHTS]


def build_pair(torchvision, name, folder, seed=0, aux=True):
    """torchvision's ``name`` with random weights and cvzoo's model loaded from its file.

    The torchvision model is built as its published weights are (21 classes, the
    auxiliary head when ``aux``), with random BatchNorm statistics (see
    tests/helpers/torchvision_weights.py); the file goes through the 'coco_voc' key.

    Returns:
        (torch.nn.Module, cvzoo model): both in test mode.
    """
    import torch

    torch.manual_seed(seed)
    kwargs = {'aux_loss': True} if aux else {}
    net = torchvision.models.get_model(name, weights=None, weights_backbone=None,
                                       num_classes=21, **kwargs)
    probe = torch.randn((2, 3) + SIZE, generator=torch.Generator().manual_seed(seed))
    torchvision_weights.randomize_batch_norm(torch, net, probe, seed)
    model = torchvision_weights.save_and_load(torch, net, pathlib.Path(folder) / f'{name}.pth',
                                              zoo.get_model_class(name), KEY)
    return net, model


def check_logits(net, model, rng, aux=True):
    """cvzoo's scores equal torchvision's 'out' (and 'aux') on a random 1x3x96x128 input."""
    import torch

    x = rng.uniform(-2.0, 2.0, (1, 3) + SIZE).astype(numpy.float32)
    with torch.no_grad():
        expected = net(torch.from_numpy(x))
    if aux:
        with config.using_config('train', False), config.no_backprop_mode():
            out, aux_out = (h.array for h in model.forward_with_aux(x))
        torchvision_weights.assert_close_to_scale(aux_out, expected['aux'].numpy(),
                                                  err_msg='aux')
    else:
        out = torchvision_weights.forward(model, x)
    torchvision_weights.assert_close_to_scale(out, expected['out'].numpy(), err_msg='out')


def check_preset(torchvision, name):
    """The entry's preset is torchvision's: shorter side 520, bilinear, ImageNet mean/std
    on [0, 255], Pillow-style (antialiased) resizing."""
    transforms = torchvision_weights_of(torchvision, name).transforms()
    preset = zoo.get_model_class(name).weights[KEY].preset
    assert type(transforms).__name__ == 'SemanticSegmentation'
    assert [preset.size] == list(transforms.resize_size)
    assert preset.interpolation == transforms.interpolation.value == 'bilinear'
    assert preset.resize_backend == 'pil' and transforms.antialias
    numpy.testing.assert_allclose(preset.mean, numpy.multiply(transforms.mean, 255), rtol=1e-6)
    numpy.testing.assert_allclose(preset.std, numpy.multiply(transforms.std, 255), rtol=1e-6)


def small_transforms(torchvision):
    """torchvision's own preset class with the shorter side at SMALL_SHORTER_SIDE."""
    from torchvision.transforms import _presets

    return _presets.SemanticSegmentation(resize_size=SMALL_SHORTER_SIDE)


def sample_images(rng):
    """Two integer-valued images: one shrunk by the preset (150x203: antialiasing shows),
    one enlarged (61x50)."""
    return [rng.integers(0, 256, (3, 150, 203)).astype(numpy.float32),
            rng.integers(0, 256, (3, 61, 50)).astype(numpy.float32)]


def check_preprocessing(torchvision, model, imgs):
    """cvzoo's ``prepare`` equals torchvision's SemanticSegmentation transforms (at a
    small size) to float32 rounding; images go to torchvision as float64 tensors in
    [0, 1] (its float32 antialiased resize rounds its kernel to float32)."""
    model.preset = dataclasses.replace(model.preset, size=SMALL_SHORTER_SIDE)
    transforms = small_transforms(torchvision)
    for img in imgs:
        expected = transforms(_as_tensor(img)).numpy()
        actual = model.prepare(img)
        assert actual.shape == expected.shape
        numpy.testing.assert_allclose(actual, expected, rtol=0, atol=1e-6,
                                      err_msg=f'image {img.shape}')


def _as_tensor(img):
    import torch

    return torch.from_numpy(img.astype(numpy.float64) / 255.0)


def check_predict(torchvision, net, model, imgs):
    """``model.predict`` labels equal the arg max of torchvision's 'out' after its own
    (small) preprocessing, resized back to each image's size as cvzoo does (bilinear,
    half-pixel centres). Pixels whose two best scores are within 1e-4 of the largest
    score may go either way; there must be almost none."""
    import torch

    model.preset = dataclasses.replace(model.preset, size=SMALL_SHORTER_SIDE)
    transforms = small_transforms(torchvision)
    labels = model.predict(imgs)
    for img, label in zip(imgs, labels):
        with torch.no_grad():
            out = net(transforms(_as_tensor(img))[None])['out']
            score = torch.nn.functional.interpolate(out, size=img.shape[1:], mode='bilinear',
                                                    align_corners=False)[0].numpy()
        expected = score.argmax(axis=0)
        assert label.shape == expected.shape and label.dtype == numpy.int32
        top2 = numpy.sort(score, axis=0)[-2:]
        near_tie = top2[1] - top2[0] < 1e-4 * float(numpy.abs(score).max())
        assert len(numpy.unique(expected)) > 1, 'the reference should not be constant'
        differ = label != expected
        assert not (differ & ~near_tie).any(), f'{differ.sum()} labels differ'
        assert differ.sum() <= 0.001 * differ.size
