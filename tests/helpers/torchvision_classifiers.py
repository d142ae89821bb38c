"""Checks shared by the classifiers' torchvision reference tests.

Each family's ``test_torchvision_reference.py`` builds pairs with :func:`build_pair` and
runs the checks below on them; torch and torchvision come from the ``torchvision``
fixture of tests/conftest.py.
"""

import pathlib

import numpy

from cvzoo.models import zoo
from tests.helpers import torchvision_weights


# cvzoo weights key -> torchvision weights enum member of the same file
TORCHVISION_WEIGHTS = {'imagenet': 'IMAGENET1K_V1', 'imagenet_v2': 'IMAGENET1K_V2'}


def torchvision_weights_of(torchvision, name, key):
    """The torchvision ``Weights`` member that a cvzoo entry ``name``/``key`` stands for."""
    return torchvision.models.get_model_weights(name)[TORCHVISION_WEIGHTS[key]]


def build_pair(torchvision, name, folder, seed=0):
    """torchvision's ``name`` with random weights and cvzoo's model loaded from its file.

    The torchvision model (``weights=None``, 1000 classes) gets random BatchNorm
    statistics and a classifier scaled to logits of standard deviation 3 (see
    tests/helpers/torchvision_weights.py); the file goes through the ``'imagenet'`` key.

    Returns:
        (torch.nn.Module, cvzoo model): both in test mode.
    """
    import torch

    torch.manual_seed(seed)
    net = torchvision.models.get_model(name, weights=None)
    probe = probe_images(torch, seed)
    torchvision_weights.randomize_batch_norm(torch, net, probe, seed)
    layers = [m for m in net.modules() if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d))]
    with torch.no_grad():
        torchvision_weights.spread_logits(torch, layers[-1], net(probe))
    model = torchvision_weights.save_and_load(torch, net, pathlib.Path(folder) / f'{name}.pth',
                                              zoo.get_model_class(name), 'imagenet')
    return net, model


def probe_images(torch, seed, size=(64, 64)):
    """A batch of a smooth and a noisy image with the statistics of normalised photos
    (both kinds occur in the tests: enlarged and shrunk images)."""
    generator = torch.Generator().manual_seed(seed)
    smooth = torch.nn.functional.interpolate(torch.randn(1, 3, 8, 8, generator=generator),
                                             size=size, mode='bilinear')
    return torch.cat([smooth * 1.5, torch.randn((1, 3) + size, generator=generator)])


def check_logits(net, model, rng, size=(64, 64)):
    """cvzoo's pre-softmax output equals torchvision's logits on a random batch of 1."""
    import torch

    x = rng.uniform(-2.0, 2.0, (1, 3) + size).astype(numpy.float32)
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()
    assert float(expected.std()) > 1.0, 'the logits should be spread, not near zero'
    torchvision_weights.assert_close_to_scale(torchvision_weights.forward(model, x), expected)


def reference_logits(torchvision, net, name, key, imgs):
    """net(transforms(img)) with the torchvision preprocessing of ``key``'s weights."""
    import torch

    with torch.no_grad():
        batch = torch.stack([torchvision_transform(torchvision, name, key, img)
                             for img in imgs])
        return net(batch).numpy()


def torchvision_transform(torchvision, name, key, img):
    """torchvision's preprocessing of ``key``'s weights applied to ``img``, a (3, H, W)
    image in [0, 255], given to it as a float64 tensor in [0, 1].

    float64 because torchvision's antialiased resize of float32 tensors rounds its kernel
    weights to float32 (errors up to 0.007 grey levels), while cvzoo resizes through
    Pillow, which computes in double precision; on float64 tensors the two agree to
    float32 rounding. The transform returns float32 (its dtype conversion step).
    """
    import torch

    transforms = torchvision_weights_of(torchvision, name, key).transforms()
    out = transforms(torch.from_numpy(img.astype(numpy.float64) / 255.0))
    assert out.dtype == torch.float32
    return out


def check_preprocessing(torchvision, model, name, key, imgs):
    """cvzoo's ``prepare`` with the entry's preset equals torchvision's transforms, to
    float32 rounding (1e-6 in normalised units, i.e. 6e-5 of a grey level)."""
    model.preset = zoo.get_model_class(name).weights[key].preset
    for img in imgs:
        expected = torchvision_transform(torchvision, name, key, img).numpy()
        numpy.testing.assert_allclose(model.prepare(img), expected, rtol=0, atol=1e-6,
                                      err_msg=f'{key}, image {img.shape}')


def check_predict(torchvision, net, model, name, key, imgs):
    """``model.predict`` equals softmax(torchvision's logits after its own preprocessing).

    Compared as log-probabilities (the logits up to a shift), to 1e-4 of the largest
    logit like the logits themselves; probabilities below e^-80 may underflow in float32
    and are left out. (A wrong resize size, mean or interpolation moves them by more
    than 0.08 of the largest logit here.)
    """
    model.preset = zoo.get_model_class(name).weights[key].preset
    logits = reference_logits(torchvision, net, name, key, imgs)
    expected = logits - logits.max(axis=1, keepdims=True)
    expected -= numpy.log(numpy.exp(expected).sum(axis=1, keepdims=True))
    probs = model.predict(imgs)
    assert probs.shape == logits.shape
    numpy.testing.assert_array_equal(probs.argmax(axis=1), logits.argmax(axis=1))
    representable = expected > -80.0  # float32 probabilities below e^-80 may underflow
    numpy.testing.assert_allclose(numpy.log(probs[representable]), expected[representable],
                                  rtol=0, atol=1e-4 * float(numpy.abs(logits).max()))


def sample_images(rng):
    """Two integer-valued images: one enlarged by the preset (40x52), one shrunk
    (301x260, odd sides so the centre crop rounds)."""
    return [rng.integers(0, 256, (3, 40, 52)).astype(numpy.float32),
            rng.integers(0, 256, (3, 301, 260)).astype(numpy.float32)]


def check_entry(torchvision, name, key):
    """The cvzoo entry says what torchvision's own entry says: URL, classes, top-1."""
    entry = zoo.get_model_class(name).weights[key]
    reference = torchvision_weights_of(torchvision, name, key)
    assert entry.url == reference.url
    categories = reference.meta['categories']
    renamed = [(mine, theirs) for mine, theirs in zip(entry.label_names, categories)
               if mine != theirs]
    # torchvision renames the second 'crane' (the bird) and 'maillot' (the tank suit);
    # cvzoo keeps ImageNet's own (duplicate) names there.
    assert renamed == [('crane', 'crane bird'), ('maillot', 'maillot tank suit')], renamed
    assert entry.n_class == len(reference.meta['categories'])
    top1 = reference.meta['_metrics']['ImageNet-1K']['acc@1'] / 100
    assert (entry.reported.metric, entry.reported.dataset) == ('top1', 'imagenet_val')
    assert abs(entry.reported.value - top1) < 1e-6
