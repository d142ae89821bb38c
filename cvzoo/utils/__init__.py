"""Host-side helpers shared by datasets, evaluators and models.

Import the module you need; this package re-exports nothing, so that importing
``cvzoo.utils`` stays cheap and module names are never shadowed by function names:

    paths       CVZOO_HOME, CVZOO_WEIGHTS_MIRROR, CVZOO_DATASET_ROOT (the only env reads)
    progress    progress() and ProgressBar, on stderr
    image       read_image, read_label, write_image, as_chw_image
    bbox        bbox_iou, bbox_area, clip_bbox, bbox_to_coco, coco_to_bbox, mask_to_bbox,
                mask_iou
    nms         non_maximum_suppression, batched_non_maximum_suppression
    download    download, cached_download, extract_archive
    file_lock   FileLock
    visualize   vis_bbox, vis_semantic_segmentation, vis_instance_segmentation, voc_colormap
"""
