"""Faster R-CNN (Ren et al., NeurIPS 2015) on VGG16 and with FPN (Lin et al., CVPR 2017)."""
