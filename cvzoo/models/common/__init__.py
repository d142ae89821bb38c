"""Parts shared by several model families of different folders: the predict bases and
helpers (batching, runtimes, threshold presets, the picked-layer chain), ImageNet
presets, the ResNet blocks and the convolution-activation block.

A family folder imports another family's folder only through this package (or, for
instance segmentation and keypoint detection, from ``detection/``; any family may use a
classifier network of ``classification/`` as its backbone); ``tests/test_repo_rules.py``
keeps it so.
"""
