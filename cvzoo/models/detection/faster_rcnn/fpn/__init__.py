"""Faster R-CNN with a Feature Pyramid Network (Lin et al., CVPR 2017) on ResNet."""
