"""torchvision's RoIAlign in plain torch, for reference tests on CPU torch.

torchvision's compiled op cannot load beside CPU torch here, and its pure-torch fallback
is torch.compile'd (minutes) or very slow eagerly. tests/models/detection/faster_rcnn/
test_torchvision_fpn_reference.py checks this one against that fallback.
"""


def _axis_weights(start, bin_size, n_bin, n_sample, size):
    """(K, n_bin, size): the summed bilinear weights of each bin's samples on one axis."""
    import torch  # optional: imported only where a reference test runs

    bins = torch.arange(n_bin, dtype=start.dtype)[None, :, None]
    offsets = (torch.arange(n_sample, dtype=start.dtype)[None, None, :] + 0.5) / n_sample
    coord = start[:, None, None] + (bins + offsets) * bin_size[:, None, None]
    valid = ((coord >= -1) & (coord <= size)).to(start.dtype)
    coord = coord.clamp(min=0)
    low = coord.floor().long()
    at_end = low >= size - 1
    low = torch.where(at_end, torch.full_like(low, size - 1), low)
    high = torch.where(at_end, low, low + 1)
    frac = torch.where(at_end, torch.zeros_like(coord), coord - low) * valid
    weights = torch.zeros(start.shape[0], n_bin, size, dtype=start.dtype)
    weights.scatter_add_(2, low, valid - frac)
    weights.scatter_add_(2, high, frac)
    return weights


def roi_align(input, rois, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """torchvision.ops.roi_align for sampling_ratio > 0 and aligned=False, separably:
    bin (p, q) of RoI k is ``Wy[k, p] @ X[image of k] @ Wx[k, q]^T / sampling_ratio^2``."""
    import torch

    assert sampling_ratio > 0 and not aligned
    out_h, out_w = (output_size,) * 2 if isinstance(output_size, int) else output_size
    _, _, H, W = input.shape
    box = rois[:, 1:] * spatial_scale
    extent = (box[:, 2:] - box[:, :2]).clamp(min=1.0)
    wy = _axis_weights(box[:, 1], extent[:, 1] / out_h, out_h, sampling_ratio, H)
    wx = _axis_weights(box[:, 0], extent[:, 0] / out_w, out_w, sampling_ratio, W)
    image = rois[:, 0].long()
    result = input.new_zeros((len(rois), input.shape[1], out_h, out_w))
    for b in image.unique():  # NOTE: per image of the batch
        members = torch.where(image == b)[0]
        rows = torch.einsum('kph,chw->kcpw', wy[members], input[b])
        result[members] = torch.einsum('kcpw,kqw->kcpq', rows, wx[members])
    return result / sampling_ratio ** 2
