import numpy
import pytest
from PIL import Image

from cvzoo import errors
from cvzoo.utils.image import as_chw_image, as_chw_images, read_image, read_label, write_image


def _rgb(rng, H=5, W=7):
    return rng.integers(0, 256, (H, W, 3), dtype=numpy.uint8)


def test_rgb_png_round_trip(tmp_path, rng):
    hwc = _rgb(rng)
    Image.fromarray(hwc).save(tmp_path / 'a.png')
    img = read_image(tmp_path / 'a.png')
    assert img.shape == (3, 5, 7) and img.dtype == numpy.float32
    numpy.testing.assert_array_equal(img, hwc.transpose(2, 0, 1))
    grey = read_image(tmp_path / 'a.png', color=False)
    assert grey.shape == (1, 5, 7)
    expected = numpy.asarray(Image.fromarray(hwc).convert('L'), numpy.float32)
    numpy.testing.assert_array_equal(grey[0], expected)


@pytest.mark.parametrize('mode', ['L', 'P', 'CMYK', 'RGBA', 'LA', '1'])
def test_modes_become_rgb(tmp_path, rng, mode):
    pil_img = Image.fromarray(_rgb(rng)).convert(mode)
    suffix = '.jpg' if mode == 'CMYK' else '.png'
    pil_img.save(tmp_path / f'a{suffix}')
    img = read_image(tmp_path / f'a{suffix}')
    assert img.shape == (3, 5, 7) and img.dtype == numpy.float32
    assert 0 <= img.min() and img.max() <= 255
    if mode in ('L', 'LA', '1'):
        numpy.testing.assert_array_equal(img[0], img[1])
    if mode in ('P', 'RGBA'):
        expected = numpy.asarray(pil_img.convert('RGB'), numpy.float32).transpose(2, 0, 1)
        numpy.testing.assert_array_equal(img, expected)


def test_palette_with_transparency(tmp_path, rng):
    pil_img = Image.fromarray(_rgb(rng)).convert('P')
    pil_img.info['transparency'] = 0
    pil_img.save(tmp_path / 't.png', transparency=0)
    assert read_image(tmp_path / 't.png').shape == (3, 5, 7)


def test_sixteen_bit_grey_is_scaled(tmp_path):
    values = numpy.array([[0, 257, 65535]], numpy.uint16)
    Image.fromarray(values).save(tmp_path / 'd.png')
    img = read_image(tmp_path / 'd.png')
    numpy.testing.assert_allclose(img[:, 0], [[0, 1, 255]] * 3)
    label = read_label(tmp_path / 'd.png')
    numpy.testing.assert_array_equal(label, [[0, 257, 65535]])


@pytest.mark.parametrize('orientation, transform', [
    (3, lambda a: a[::-1, ::-1]),
    (6, lambda a: numpy.rot90(a, -1)),
    (8, lambda a: numpy.rot90(a, 1)),
], ids=['rot180', 'rot270cw', 'rot90'])
def test_exif_orientation_is_applied(tmp_path, rng, orientation, transform):
    hwc = _rgb(rng, 4, 6)
    pil_img = Image.fromarray(hwc)
    exif = pil_img.getexif()
    exif[0x0112] = orientation
    pil_img.save(tmp_path / 'e.png', exif=exif)
    img = read_image(tmp_path / 'e.png')
    numpy.testing.assert_array_equal(img, transform(hwc).transpose(2, 0, 1))


def test_read_label_keeps_palette_indices(tmp_path):
    index = numpy.array([[0, 1, 2], [255, 1, 0]], numpy.uint8)
    pil_img = Image.fromarray(index, mode='P')
    pil_img.putpalette([10, 20, 30] * 256)
    pil_img.save(tmp_path / 'l.png')
    label = read_label(tmp_path / 'l.png')
    assert label.dtype == numpy.int32
    numpy.testing.assert_array_equal(label, index)


def test_read_label_refuses_colour(tmp_path, rng):
    Image.fromarray(_rgb(rng)).save(tmp_path / 'c.png')
    with pytest.raises(errors.CorruptFileError, match='c.png'):
        read_label(tmp_path / 'c.png')


def test_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match='nothing.png'):
        read_image(tmp_path / 'nothing.png')


def test_truncated_and_non_image_files_are_named(tmp_path, rng):
    Image.fromarray(_rgb(rng, 64, 64)).save(tmp_path / 'full.jpg')
    data = (tmp_path / 'full.jpg').read_bytes()
    (tmp_path / 'cut.jpg').write_bytes(data[: len(data) // 2])
    (tmp_path / 'text.png').write_text('hello')
    with pytest.raises(errors.CorruptFileError, match='cut.jpg'):
        read_image(tmp_path / 'cut.jpg')
    with pytest.raises(errors.CorruptFileError, match='text.png'):
        read_image(tmp_path / 'text.png')
    with pytest.raises(OSError):  # CorruptFileError is an OSError too
        read_label(tmp_path / 'text.png')


def test_write_image_is_atomic_and_rounds(tmp_path):
    img = numpy.array([[[-3.0, 0.4, 254.6, 300.0]]] * 3, numpy.float32)
    write_image(img, tmp_path / 'w.png')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['w.png']
    numpy.testing.assert_array_equal(read_image(tmp_path / 'w.png')[0, 0], [0, 0, 255, 255])
    write_image(img[:1], tmp_path / 'g.png')
    assert Image.open(tmp_path / 'g.png').mode == 'L'
    with pytest.raises(ValueError, match='img'):
        write_image(numpy.zeros((4, 2, 2)), tmp_path / 'x.png')
    with pytest.raises(ValueError, match='extension'):
        write_image(img, tmp_path / 'x.unknown')


def test_as_chw_image_accepts_every_predict_input(tmp_path, rng):
    hwc = _rgb(rng)
    chw = hwc.transpose(2, 0, 1).astype(numpy.float32)
    Image.fromarray(hwc).save(tmp_path / 'p.png')
    for x in (chw, hwc, Image.fromarray(hwc), str(tmp_path / 'p.png'), tmp_path / 'p.png',
              numpy.concatenate([hwc, hwc[:, :, :1]], axis=2)):
        out = as_chw_image(x)
        assert out.dtype == numpy.float32
        numpy.testing.assert_array_equal(out, chw)
    assert as_chw_image(chw[:1]).shape == (3, 5, 7)
    assert as_chw_image(hwc[:, :, 0]).shape == (3, 5, 7)
    with pytest.raises(ValueError, match='img'):
        as_chw_image(numpy.zeros((5, 5, 5), numpy.float32))
    with pytest.raises(TypeError, match='img'):
        as_chw_image(42)


@pytest.mark.parametrize('bad', [numpy.nan, numpy.inf], ids=['nan', 'inf'])
def test_float_tiff_holding_nan_or_inf_is_refused(tmp_path, bad):
    grey = numpy.full((4, 5), 100.0, numpy.float32)
    Image.fromarray(grey).save(tmp_path / 'finite.tif')
    numpy.testing.assert_array_equal(read_image(tmp_path / 'finite.tif')[0], grey)
    grey[2, 3] = bad
    Image.fromarray(grey).save(tmp_path / 'bad.tif')
    with pytest.raises(errors.CorruptFileError, match='bad.tif: a floating-point image'):
        read_image(tmp_path / 'bad.tif')


def test_float_image_arguments_holding_nan_or_inf_are_refused_naming_the_image():
    good = numpy.zeros((3, 4, 5), numpy.float32)
    bad = good.copy()
    bad[1, 2, 3] = numpy.nan
    with pytest.raises(errors.UsageError, match=r'^imgs\[1\]: the image holds NaN or inf'):
        as_chw_images([good, bad])
    pil_bad = Image.fromarray(numpy.full((4, 5), numpy.inf, numpy.float32))
    with pytest.raises(errors.UsageError, match=r'^img: the image holds NaN or inf'):
        as_chw_image(pil_bad)
    assert as_chw_images([good, numpy.zeros((4, 5, 3), numpy.uint8)])[1].shape == (3, 4, 5)
