"""LR-ASPP (Howard et al., ICCV 2019): the lite segmentation head of MobileNetV3."""
