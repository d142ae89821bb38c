"""Host-side helpers shared by datasets, evaluators and models.

The modules, and the helpers each defines:

    paths       CVZOO_HOME, CVZOO_WEIGHTS_MIRROR, CVZOO_DATASET_ROOT (the only env reads)
    progress    progress() and ProgressBar, on stderr
    image       read_image, read_label, write_image, as_chw_image
    bbox        bbox_iou, bbox_area, clip_bbox, bbox_to_coco, coco_to_bbox, mask_to_bbox,
                mask_iou
    nms         non_maximum_suppression, batched_non_maximum_suppression
    download    download, cached_download, extract_archive
    file_lock   FileLock
    visualize   vis_bbox, vis_semantic_segmentation, vis_instance_segmentation, voc_colormap

Each helper can also be taken from the package, as in ChainerCV
(``from cvzoo.utils import read_image``). The package imports a module only when one of
its names is first asked for, so ``import cvzoo.utils`` stays cheap (no Pillow, no
requests). ``download`` and ``progress`` are module names, so ``cvzoo.utils.download``
and ``cvzoo.utils.progress`` are the modules; their functions of the same name are
``download.download`` and ``progress.progress``.
"""

import importlib

# Helper name -> the module of this package that defines it.
_HELPERS = {
    'ProgressBar': 'progress',
    'read_image': 'image',
    'read_label': 'image',
    'write_image': 'image',
    'as_chw_image': 'image',
    'bbox_iou': 'bbox',
    'bbox_area': 'bbox',
    'clip_bbox': 'bbox',
    'bbox_to_coco': 'bbox',
    'coco_to_bbox': 'bbox',
    'mask_to_bbox': 'bbox',
    'mask_iou': 'bbox',
    'non_maximum_suppression': 'nms',
    'batched_non_maximum_suppression': 'nms',
    'cached_download': 'download',
    'extract_archive': 'download',
    'FileLock': 'file_lock',
    'vis_bbox': 'visualize',
    'vis_semantic_segmentation': 'visualize',
    'vis_instance_segmentation': 'visualize',
    'voc_colormap': 'visualize',
}
_MODULES = ('paths', 'progress', 'image', 'bbox', 'nms', 'download', 'file_lock', 'visualize')


def __getattr__(name):
    """Import a helper's module on first use (PEP 562) and return the helper."""
    if name in _HELPERS:
        module = importlib.import_module(f'{__name__}.{_HELPERS[name]}')
        value = getattr(module, name)
        globals()[name] = value  # later lookups skip this function
        return value
    if name in _MODULES:
        return importlib.import_module(f'{__name__}.{name}')
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def __dir__():
    """The package's own names, its modules and every helper, imported or not."""
    return sorted(set(globals()) | set(_MODULES) | set(_HELPERS))
