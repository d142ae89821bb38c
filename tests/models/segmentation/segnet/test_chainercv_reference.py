"""SegNetBasic with ChainerCV's weights gives ChainerCV's outputs (ChainerCV 0.13.1).

ChainerCV builds SegNetBasic with seeded random weights (batch norms calibrated so the
activations stay informative) and saves it as its published file is saved; cvzoo loads
the file through the ``camvid`` entry (the zoo mirror). Both run predict() on the same
images: 64x80 (multiples of 16: the scores come out at the image's size) and 45x70 (the
poolings cover the odd sides, the unpoolings crop, the scores are one pixel larger and
resized back).

Resizing the scores back is the one place where ChainerCV itself gives two answers:
with OpenCV installed (its default backend, and how it reports its scores) the resize is
plain bilinear with half-pixel centres, which cvzoo does; this reference environment has
no OpenCV, so its predict() resizes with Pillow, whose bilinear filter widens when it
shrinks (46 -> 45 rows: about 1.5 % of the labels of random scores change). For the odd
size the test therefore compares with ChainerCV's scores resized the OpenCV way
(``chainer.functions.resize_images`` without aligned corners is the same interpolation).
CamVid's 360x480 needs no resize at all.
"""


import numpy
import pytest

from cvzoo.models.segmentation.segnet import segnet_basic
from tests.helpers import chainercv_reference_tools as tools


pytestmark = pytest.mark.reference

SIZES = ((64, 80), (45, 70))
SCRIPT = '''
import os
import chainercv.links
numpy.random.seed(0)
model = chainercv.links.SegNetBasic(n_class=11)
x = numpy.random.uniform(0, 255, (2, 3, 64, 80)).astype(numpy.float32)
calibrate_batch_normalization(model, model, x)
with chainer.using_config('train', False), chainer.no_backprop_mode():
    center_linear_output(model.conv_classifier, model(x).array)
    scale_linear_output(model.conv_classifier, model(x).array)
os.makedirs(os.path.join(WORKDIR, 'mirror'))
chainer.serializers.save_npz(os.path.join(WORKDIR, 'mirror', FILE_NAME), model)
for i, img in enumerate(IMGS):
    img = INPUTS[img]
    OUTPUTS[f'label{i}'] = model.predict([img])[0]
    with chainer.using_config('train', False), chainer.no_backprop_mode():
        score = model(img[None])
        OUTPUTS[f'score{i}'] = score.array[0]
        OUTPUTS[f'resized_score{i}'] = chainer.functions.resize_images(
            score, img.shape[1:], align_corners=False).array[0]
'''


def test_predict_equals_chainercv(chainercv_reference, tmp_path, monkeypatch, rng):
    imgs = {f'img{i}': rng.uniform(0, 255, (3,) + size).astype(numpy.float32)
            for i, size in enumerate(SIZES)}
    entry = segnet_basic.SegNetBasic.weights['camvid']
    reference = tools.run(chainercv_reference, SCRIPT, tmp_path, constants={
        'FILE_NAME': entry.main_file.file_name, 'IMGS': tuple(imgs)}, **imgs)

    model = tools.load_from_mirror(monkeypatch, tmp_path / 'mirror',
                                   segnet_basic.SegNetBasic, 'camvid')
    labels = model.predict(list(imgs.values()))
    for i, img in enumerate(imgs.values()):
        score = tools.forward(model, img[None])[0]
        tools.assert_features_close(score, reference[f'score{i}'], name=f'scores of image {i}')
        assert len(numpy.unique(reference[f'label{i}'])) > 5  # informative
        if score.shape[1:] == img.shape[1:]:
            tools.assert_labels_equal(labels[i], reference[f'label{i}'], reference[f'score{i}'])
        else:  # ChainerCV's predict() with OpenCV's resize (see the module docstring)
            resized = reference[f'resized_score{i}']
            tools.assert_labels_equal(labels[i], resized.argmax(axis=0), resized)
