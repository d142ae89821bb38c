"""PSPNet (Zhao et al., CVPR 2017): a dilated ResNet and a pyramid pooling module."""
