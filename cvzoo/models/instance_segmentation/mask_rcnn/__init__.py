"""Mask R-CNN (He et al., ICCV 2017) with a Feature Pyramid Network."""
