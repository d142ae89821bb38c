"""Where the VOC datasets live, and their download from the official server."""

import pathlib

from cvzoo import errors
from cvzoo.datasets import download_archive
from cvzoo.utils import paths

VOC_URLS = {
    ('2007', 'trainval'): 'http://host.robots.ox.ac.uk/pascal/VOC/voc2007/'
                          'VOCtrainval_06-Nov-2007.tar',
    ('2007', 'test'): 'http://host.robots.ox.ac.uk/pascal/VOC/voc2007/VOCtest_06-Nov-2007.tar',
    ('2012', 'trainval'): 'http://host.robots.ox.ac.uk/pascal/VOC/voc2012/'
                          'VOCtrainval_11-May-2012.tar',
}
# NOTE: the VOC server publishes no checksums; None skips the check. A sha256 set here
# (by a user who pinned a copy) is checked before anything is unpacked.
VOC_SHA256 = {key: None for key in VOC_URLS}
SPLITS = ('train', 'val', 'trainval', 'test')


def resolve_voc_dir(data_dir, split, year, listing='Main'):
    """Return the ``VOC<year>`` folder, downloading the official tar when 'auto' needs it.

    Args:
        data_dir: 'auto' (``<dataset_root>/voc/VOCdevkit/VOC<year>``) or a folder with
            ``Annotations/``, ``JPEGImages/`` and ``ImageSets/<listing>/<split>.txt``.
        split (str): the split name, whose list file must exist.
        year (str): '2007' or '2012' (only used with 'auto').
        listing (str): the ImageSets subfolder ('Main' or 'Segmentation').

    Raises:
        FileNotFoundError: the split list is absent and cannot be downloaded; the
            message says where to put the files.
    """
    if data_dir != 'auto':
        root = pathlib.Path(data_dir)
        if not (root / 'ImageSets' / listing / f'{split}.txt').is_file():
            raise errors.MissingFileError(
                f'data_dir: expected a VOC-layout folder with ImageSets/{listing}/{split}.txt,'
                f' Annotations/ and JPEGImages/, but {root / "ImageSets" / listing} has no '
                f'{split}.txt')
        return root
    year = str(year)
    if year not in ('2007', '2012'):
        raise ValueError(f"year: expected '2007' or '2012', got {year!r}")
    if split not in SPLITS:  # checked before a download is started
        raise ValueError(f'split: expected one of {SPLITS}, got {split!r}')
    base = paths.dataset_root() / 'voc'
    root = base / 'VOCdevkit' / f'VOC{year}'
    list_file = root / 'ImageSets' / listing / f'{split}.txt'
    if not list_file.is_file():
        key = (year, 'test' if split == 'test' else 'trainval')
        if key not in VOC_URLS:
            raise errors.MissingFileError(
                f'VOC{year} {split} is not publicly downloadable; put the VOCdevkit folder '
                f'so that {list_file} exists (or pass data_dir=)')
        download_archive.download_archive(VOC_URLS[key], base, list_file,
                                          sha256=VOC_SHA256.get(key), what=f'VOC{year}')
    return root


def read_ids(root, split, listing='Main'):
    """The image ids listed in ``ImageSets/<listing>/<split>.txt`` (first column)."""
    list_file = pathlib.Path(root) / 'ImageSets' / listing / f'{split}.txt'
    with open(list_file) as f:
        return [line.split()[0] for line in f if line.strip()]
