"""Helpers of the ChainerCV reference tests (cvzoo side).

A reference test builds a ChainerCV model with seeded random weights in the ChainerCV
environment (the ``chainercv_reference`` fixture), saves it with
``chainer.serializers.save_npz`` under the file name of a cvzoo weights entry (the
format ChainerCV publishes), and loads that file in cvzoo through
``$CVZOO_WEIGHTS_MIRROR``, exactly as a downloaded file is loaded (the entry's
conversion, preset and label names).
"""

import dataclasses
import pathlib
import warnings

import numpy

from cvzoo.core import config

PRELUDE = pathlib.Path(__file__).with_name('chainercv_reference_prelude.py')


def run(chainercv_reference, body, workdir, constants=None, **arrays):
    """Run ``body`` in the ChainerCV environment after the prelude.

    Args:
        chainercv_reference: the session fixture.
        body (str): the script; it sees the prelude's functions, ``INPUTS``, ``WORKDIR``,
            ``OUTPUTS`` and the ``constants`` as globals.
        workdir (pathlib.Path): the exchange folder (e.g. ``tmp_path``).
        constants (dict or None): name -> a Python literal (str, int, float, tuple).
        **arrays: the script's ``INPUTS``.

    Returns:
        dict: name -> numpy array, what the script put in ``OUTPUTS``.
    """
    lines = [f'{name} = {value!r}' for name, value in (constants or {}).items()]
    script = '\n'.join([PRELUDE.read_text(), *lines, body])
    return chainercv_reference.run(script, workdir, **arrays)


def load_from_mirror(monkeypatch, mirror, model_class, key, **kwargs):
    """``model_class(pretrained_model=key)`` with the entry's file served from ``mirror``.

    The file holds no published hash (ChainerCV's entries are ``UNPUBLISHED``), so its
    first load records it and warns; that warning is expected here.
    """
    monkeypatch.setenv('CVZOO_WEIGHTS_MIRROR', str(mirror))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return model_class(pretrained_model=key, **kwargs)


def forward(model, x):
    """``model(x)`` in test mode without backprop; the outputs' arrays (a tuple if picked).

    ``model`` may be any callable returning Variables or arrays (e.g. a bound method).
    """
    with config.using_config('train', False), config.no_backprop_mode():
        outputs = model(x)
    if isinstance(outputs, tuple):
        return tuple(getattr(output, 'array', output) for output in outputs)
    return getattr(outputs, 'array', outputs)


def assert_features_close(ours, reference, rtol=1e-4, name='features'):
    """``ours`` equals ``reference`` up to ``rtol`` times the reference's largest magnitude.

    Deep float32 networks accumulate rounding of about 1e-6 relative per layer in
    different summation orders; an error in the computation (a wrong mean, pooling
    window, eps or padding) moves values by far more than 1e-4 of their range.
    """
    assert ours.shape == reference.shape, f'{name}: shape {ours.shape} != {reference.shape}'
    scale = float(numpy.abs(reference).max())
    numpy.testing.assert_allclose(ours, reference, rtol=rtol, atol=rtol * scale,
                                  err_msg=f'{name} differ from ChainerCV')


def classifier_outputs(model, imgs, crop_size, scale_size, features):
    """cvzoo's side of ``classifier_reference``: predict() at ChainerCV's sizes, and features.

    The preset keeps the entry's mean and interpolation; only the sizes change, as
    FeaturePredictor(crop_size, scale_size) does.
    """
    model.preset = dataclasses.replace(model.preset, size=crop_size,
                                       crop_fraction=crop_size / scale_size)
    outputs = {'probs': model.predict(list(imgs)), 'prepared': model.prepare(imgs[0])}
    model.pick = tuple(features)
    outputs.update(zip(features, forward(model, numpy.stack([model.prepare(img)
                                                             for img in imgs]))))
    return outputs


def assert_labels_equal(ours, reference, scores, tie=1e-5, max_fraction=1e-3):
    """Label maps agree except where ChainerCV's two best scores tie within ``tie``.

    The scores themselves agree to about 1e-6 relative; an arg max can only flip where
    the two best classes are that close, which random weights make rare but possible.

    Args:
        ours, reference (numpy.ndarray): (H, W) int32 label maps.
        scores (numpy.ndarray): (n_class, H, W), ChainerCV's scores behind ``reference``.
        tie (float): the largest gap between the two best scores where a flip is allowed.
        max_fraction (float): the largest fraction of pixels that may differ.
    """
    assert ours.shape == reference.shape, f'label shape {ours.shape} != {reference.shape}'
    differ = ours != reference
    best_two = numpy.sort(scores, axis=0)[-2:]
    gaps = (best_two[1] - best_two[0])[differ]
    assert (gaps <= tie).all(), (f'{differ.sum()} pixels differ from ChainerCV, where its '
                                 f'two best scores are up to {gaps.max()} apart')
    assert differ.mean() <= max_fraction, f'{differ.sum()} of {differ.size} pixels differ'
