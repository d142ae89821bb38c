"""DeepLab V3+ (Chen et al., ECCV 2018): Xception-65, separable ASPP and a decoder."""
