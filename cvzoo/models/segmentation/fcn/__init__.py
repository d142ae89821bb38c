"""FCN (Long et al., CVPR 2015) on dilated ResNets, as torchvision builds it."""
