"""SBD instance segmentation: the VOC images with the Semantic Boundaries Dataset masks."""

import pathlib

import numpy

from cvzoo import errors
from cvzoo.datasets import dataset_mixin, download_archive
from cvzoo.datasets.voc import voc_label_names
from cvzoo.utils import image, paths

SBD_URL = ('http://www.eecs.berkeley.edu/Research/Projects/CS/vision/grouping/'
           'semantic_contours/benchmark.tgz')
SBD_SHA256 = None  # NOTE: no published checksum; None skips the check


def _load_mat(path):
    try:
        import scipy.io
    except ImportError:
        raise ImportError(f'{path}: reading SBD .mat files needs SciPy '
                          f'(pip install scipy)') from None
    try:
        return scipy.io.loadmat(path)
    except (ValueError, TypeError, OSError, scipy.io.matlab.MatReadError) as error:
        if not pathlib.Path(path).is_file():
            raise errors.MissingFileError(f'{path}: no such file') from None
        raise errors.CorruptFileError(f'{path}: not a readable .mat file ({error})') from None


def read_sbd_instances(path):
    """Read ``inst/<id>.mat``: (H, W) instance ids and the (R,) 1-based class per id.

    Raises:
        cvzoo.errors.CorruptFileError: naming the file and the field.
    """
    data = _load_mat(path)
    if 'GTinst' not in data:
        raise errors.CorruptFileError(f'{path}: missing field GTinst')
    struct = data['GTinst']
    fields = struct.dtype.names or ()
    for field in ('Segmentation', 'Categories'):
        if field not in fields:
            raise errors.CorruptFileError(f'{path}: missing field GTinst.{field}')
    instance = numpy.asarray(struct['Segmentation'][0][0]).astype(numpy.int32)
    categories = numpy.asarray(struct['Categories'][0][0]).astype(numpy.int32).ravel()
    if instance.ndim != 2:
        raise errors.CorruptFileError(f'{path}: field GTinst.Segmentation: expected an '
                                      f'(H, W) map, got shape {instance.shape}')
    return instance, categories


class SBDInstanceSegmentationDataset(dataset_mixin.DatasetMixin):
    """SBD (Hariharan et al., "Semantic Contours from Inverse Detectors", ICCV 2011).

    11,355 VOC 2011 images with instance masks for the 20 VOC classes; reading the
    ``.mat`` annotations needs SciPy.

    Args:
        data_dir (str): 'auto' (``<dataset_root>/sbd/benchmark_RELEASE/dataset``,
            downloaded from eecs.berkeley.edu when absent) or a folder holding
            ``img/<id>.jpg``, ``inst/<id>.mat`` and ``<split>.txt``.
        split (str): 'train' or 'val' (or any list file's name).

    Example i is ``img, mask, label``:

        img    (3, H, W) float32  RGB in [0, 255]
        mask   (R, H, W) bool     one mask per instance, in instance-id order
        label  (R,) int32         index into voc_bbox_label_names

    Raises:
        cvzoo.errors.CorruptFileError: (when read) a .mat file lacks a field, or an
            instance id has no category; the message names the file.
    """

    label_names = voc_label_names.voc_bbox_label_names

    def __init__(self, data_dir='auto', split='train'):
        if data_dir == 'auto':
            if split not in ('train', 'val'):  # checked before a download is started
                raise ValueError(f"split: expected 'train' or 'val', got {split!r}")
            base = paths.dataset_root() / 'sbd'
            root = base / 'benchmark_RELEASE' / 'dataset'
            download_archive.download_archive(SBD_URL, base, root / f'{split}.txt',
                                              sha256=SBD_SHA256, what='SBD')
        else:
            root = pathlib.Path(data_dir)
        list_file = root / f'{split}.txt'
        if not list_file.is_file():
            raise errors.MissingFileError(f'data_dir: expected an SBD folder with img/, inst/ and '
                                          f'{split}.txt, but {list_file} is absent')
        self.data_dir = root
        with open(list_file) as f:
            self.ids = [line.split()[0] for line in f if line.strip()]

    def __len__(self):
        return len(self.ids)

    def get_example(self, i):
        img = image.read_image(self.data_dir / 'img' / f'{self.ids[i]}.jpg')
        mat_path = self.data_dir / 'inst' / f'{self.ids[i]}.mat'
        instance, categories = read_sbd_instances(mat_path)
        ids = numpy.unique(instance)
        ids = ids[(ids > 0) & (ids != 255)]
        if len(ids) and ids.max() > len(categories):
            raise errors.CorruptFileError(
                f'{mat_path}: field GTinst.Categories: instance {int(ids.max())} has no '
                f'category ({len(categories)} listed)')
        mask = instance[None] == ids[:, None, None]
        label = categories[ids - 1] - 1
        return img, mask, label.astype(numpy.int32, copy=False)
