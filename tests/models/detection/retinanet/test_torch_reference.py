"""RetinaNet against a plain-PyTorch transcription of torchvision's v1 RetinaNet.

The reference below is written from torchvision's documented behaviour (ResNet-50 with
BN eps 0, FPN with P6/P7 from P5, the shared heads, AnchorGenerator, BoxCoder,
GeneralizedRCNNTransform, postprocess_detections with a greedy NMS) and needs only
torch. Its random state_dict, saved with torch.save in torchvision's names (91-way
head), is loaded into cvzoo, and both detect on two small images of different sizes.
"""

import math

import numpy
import pytest

from cvzoo.datasets.coco.coco_label_names import coco_category_id_to_label
from cvzoo.models.detection.retinanet import retinanet

torch = pytest.importorskip('torch')
nn = torch.nn
TF = torch.nn.functional

# NOTE: slow: the 34M-parameter file is written, converted and loaded (~10 s here).
pytestmark = [pytest.mark.reference, pytest.mark.slow]
MIN_SIZE, MAX_SIZE = 96, 160
N_CLASS = 91
NA_IDS = (0, 12, 26, 29, 30, 45, 66, 68, 69, 71, 83)


class Bottleneck(nn.Module):
    def __init__(self, in_channels, mid, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, mid, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(mid, eps=1e-38)
        self.conv2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(mid, eps=1e-38)
        self.conv3 = nn.Conv2d(mid, mid * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(mid * 4, eps=1e-38)
        self.downsample = None
        if stride != 1 or in_channels != mid * 4:
            self.downsample = nn.Sequential(nn.Conv2d(in_channels, mid * 4, 1, stride, bias=False),
                                            nn.BatchNorm2d(mid * 4, eps=1e-38))

    def forward(self, x):
        h = TF.relu(self.bn1(self.conv1(x)))
        h = TF.relu(self.bn2(self.conv2(h)))
        h = self.bn3(self.conv3(h))
        return TF.relu(h + (x if self.downsample is None else self.downsample(x)))


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64, eps=1e-38)
        in_channels = 64
        for index, (n_block, mid) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512))):
            blocks = []
            for k in range(n_block):
                blocks.append(Bottleneck(in_channels, mid, 2 if k == 0 and index else 1))
                in_channels = mid * 4
            setattr(self, f'layer{index + 1}', nn.Sequential(*blocks))

    def forward(self, x):
        x = TF.max_pool2d(TF.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        c2 = self.layer1(x)
        c3 = self.layer2(c2)
        c4 = self.layer3(c3)
        return [c3, c4, self.layer4(c4)]


class ExtraBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.p6 = nn.Conv2d(256, 256, 3, 2, 1)
        self.p7 = nn.Conv2d(256, 256, 3, 2, 1)


class FPN(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner_blocks = nn.ModuleList([nn.Conv2d(c, 256, 1) for c in (512, 1024, 2048)])
        self.layer_blocks = nn.ModuleList([nn.Conv2d(256, 256, 3, 1, 1) for _ in range(3)])
        self.extra_blocks = ExtraBlocks()

    def forward(self, cs):
        last = self.inner_blocks[-1](cs[-1])
        results = [self.layer_blocks[-1](last)]
        for index in (1, 0):
            lateral = self.inner_blocks[index](cs[index])
            last = lateral + TF.interpolate(last, size=lateral.shape[-2:], mode='nearest')
            results.insert(0, self.layer_blocks[index](last))
        p6 = self.extra_blocks.p6(results[-1])
        return results + [p6, self.extra_blocks.p7(TF.relu(p6))]


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Body()
        self.fpn = FPN()


def _tower():
    layers = []
    for _ in range(4):
        layers += [nn.Conv2d(256, 256, 3, 1, 1), nn.ReLU()]
    return nn.Sequential(*layers)


class ClassificationHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = _tower()
        self.cls_logits = nn.Conv2d(256, 9 * N_CLASS, 3, 1, 1)


class RegressionHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = _tower()
        self.bbox_reg = nn.Conv2d(256, 9 * 4, 3, 1, 1)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.classification_head = ClassificationHead()
        self.regression_head = RegressionHead()


class TorchRetinaNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.head = Head()


def _flatten(y, n_out):
    N, _, H, W = y.shape
    return y.view(N, -1, n_out, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, n_out)


def _anchors(img_size, grid_sizes):
    levels = []
    for base, (H, W) in zip((32, 64, 128, 256, 512), grid_sizes):
        sizes = torch.as_tensor([base, int(base * 2 ** (1 / 3)), int(base * 2 ** (2 / 3))],
                                dtype=torch.float32)
        h_ratio = torch.sqrt(torch.as_tensor([0.5, 1.0, 2.0]))
        ws = (1 / h_ratio[:, None] * sizes[None, :]).view(-1)
        hs = (h_ratio[:, None] * sizes[None, :]).view(-1)
        cell = (torch.stack([-ws, -hs, ws, hs], dim=1) / 2).round()
        sy, sx = img_size[0] // H, img_size[1] // W
        yy, xx = torch.meshgrid(torch.arange(H) * sy, torch.arange(W) * sx, indexing='ij')
        shifts = torch.stack((xx.reshape(-1), yy.reshape(-1)) * 2, dim=1)
        levels.append((shifts.view(-1, 1, 4) + cell.view(1, -1, 4)).reshape(-1, 4))
    return levels


def _decode(loc, anchor):
    widths, heights = anchor[:, 2] - anchor[:, 0], anchor[:, 3] - anchor[:, 1]
    ctr_x, ctr_y = anchor[:, 0] + 0.5 * widths, anchor[:, 1] + 0.5 * heights
    dw = torch.clamp(loc[:, 2], max=math.log(1000.0 / 16))
    dh = torch.clamp(loc[:, 3], max=math.log(1000.0 / 16))
    x, y = loc[:, 0] * widths + ctr_x, loc[:, 1] * heights + ctr_y
    w, h = torch.exp(dw) * widths, torch.exp(dh) * heights
    return torch.stack((x - 0.5 * w, y - 0.5 * h, x + 0.5 * w, y + 0.5 * h), dim=1)


def _iou(box, boxes):
    lt = torch.maximum(box[:2], boxes[:, :2])
    rb = torch.minimum(box[2:], boxes[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=1)
    area = (box[2:] - box[:2]).prod()
    areas = (boxes[:, 2:] - boxes[:, :2]).prod(dim=1)
    return inter / (area + areas - inter)


def _batched_nms(boxes, scores, labels, thresh):
    offset = labels.to(boxes.dtype)[:, None] * (boxes.max() + 1)
    shifted = boxes + offset
    order = torch.argsort(scores, descending=True)
    keep = []
    alive = torch.ones(len(order), dtype=torch.bool)
    for rank, index in enumerate(order.tolist()):
        if not alive[rank]:
            continue
        keep.append(index)
        # NOTE: as torchvision's kernel: drop at IoU > thresh (0 / 0 = nan drops nothing)
        alive[rank + 1:] &= ~(_iou(shifted[index], shifted[order[rank + 1:]]) > thresh)
    return torch.as_tensor(keep, dtype=torch.int64)


def _transform(imgs):
    mean = torch.as_tensor([0.485, 0.456, 0.406])[:, None, None]
    std = torch.as_tensor([0.229, 0.224, 0.225])[:, None, None]
    resized = []
    for img in imgs:
        img = (img - mean) / std
        shape = torch.tensor(img.shape[-2:])
        scale = torch.min(float(MIN_SIZE) / torch.min(shape).to(torch.float32),
                          float(MAX_SIZE) / torch.max(shape).to(torch.float32))
        resized.append(TF.interpolate(img[None], scale_factor=scale.item(), mode='bilinear',
                                      recompute_scale_factor=True, align_corners=False)[0])
    H = int(math.ceil(max(r.shape[1] for r in resized) / 32) * 32)
    W = int(math.ceil(max(r.shape[2] for r in resized) / 32) * 32)
    batch = torch.zeros(len(resized), 3, H, W)
    for i, r in enumerate(resized):
        batch[i, :, :r.shape[1], :r.shape[2]] = r
    return batch, [tuple(r.shape[1:]) for r in resized]


def _postprocess(net, batch, sizes, score_thresh, nms_thresh):
    features = net.backbone.fpn(net.backbone.body(batch))
    cls_head, reg_head = net.head.classification_head, net.head.regression_head
    logits = [_flatten(cls_head.cls_logits(cls_head.conv(f)), N_CLASS) for f in features]
    locs = [_flatten(reg_head.bbox_reg(reg_head.conv(f)), 4) for f in features]
    anchors = _anchors(batch.shape[-2:], [f.shape[-2:] for f in features])
    results = []
    for i, (H, W) in enumerate(sizes):
        boxes, scores, labels = [], [], []
        for logit, loc, anchor in zip(logits, locs, anchors):
            score = torch.sigmoid(logit[i]).flatten()
            keep = torch.where(score > score_thresh)[0]
            score, order = score[keep].topk(min(1000, len(keep)))
            keep = keep[order]
            anchor_index = torch.div(keep, N_CLASS, rounding_mode='floor')
            box = _decode(loc[i][anchor_index], anchor[anchor_index])
            box[:, 0::2] = box[:, 0::2].clamp(min=0, max=W)
            box[:, 1::2] = box[:, 1::2].clamp(min=0, max=H)
            boxes.append(box)
            scores.append(score)
            labels.append(keep % N_CLASS)
        boxes, scores, labels = torch.cat(boxes), torch.cat(scores), torch.cat(labels)
        keep = _batched_nms(boxes, scores, labels, nms_thresh)[:300]
        results.append((boxes[keep], scores[keep], labels[keep]))
    return results


def _randomise(net, generator):
    """Random weights whose scores spread over (0, 1); 'N/A' classes never score."""
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, nn.Conv2d):
                fan_in = module.weight[0].numel()
                module.weight.normal_(0, math.sqrt(1.0 / fan_in), generator=generator)
                if module.bias is not None:
                    module.bias.uniform_(-0.1, 0.1, generator=generator)
            elif isinstance(module, nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.0, generator=generator)
                module.bias.uniform_(-0.2, 0.2, generator=generator)
                module.running_mean.uniform_(-0.1, 0.1, generator=generator)
                module.running_var.uniform_(0.5, 2.0, generator=generator)
        cls_logits = net.head.classification_head.cls_logits
        cls_logits.weight *= 8.0
        cls_logits.bias.fill_(-4.0).view(9, N_CLASS)[:, list(NA_IDS)] = -30.0
        net.head.regression_head.bbox_reg.weight *= 0.5


@pytest.fixture(scope='module')
def reference(tmp_path_factory):
    generator = torch.Generator().manual_seed(0)
    net = TorchRetinaNet().eval()
    _randomise(net, generator)
    path = tmp_path_factory.mktemp('retinanet') / 'retinanet_random.pth'
    torch.save(net.state_dict(), path)
    model = retinanet.RetinaNetResNet50FPN(pretrained_model=str(path), min_size=MIN_SIZE,
                                           max_size=MAX_SIZE)
    return net, model


@pytest.mark.parametrize('preset', ['visualize', 'evaluate'])
def test_same_detections_as_the_torch_reference(reference, preset):
    net, model = reference
    model.use_preset(preset)
    rng = numpy.random.default_rng(1)
    imgs = [rng.uniform(0, 255, (3, 75, 100)).astype(numpy.float32),
            rng.uniform(0, 255, (3, 61, 47)).astype(numpy.float32)]
    with torch.no_grad():
        batch, sizes = _transform([torch.from_numpy(img / numpy.float32(255)) for img in imgs])
        expected = _postprocess(net, batch, sizes, model.score_thresh, model.nms_thresh)
    bboxes, labels, scores = model.predict(imgs, batchsize=2)
    for img, size, bbox, label, score, (ref_box, ref_score, ref_label) in zip(
            imgs, sizes, bboxes, labels, scores, expected):
        ratio = torch.tensor(img.shape[1:], dtype=torch.float32) / \
            torch.tensor(size, dtype=torch.float32)
        ref_box = (ref_box * ratio[[1, 0, 1, 0]]).numpy()
        ref_label = numpy.array([coco_category_id_to_label[int(c)] for c in ref_label])
        assert len(ref_score) > 10, 'the reference should detect something'
        assert len(score) == len(ref_score)
        numpy.testing.assert_allclose(score, ref_score.numpy(), rtol=1e-4, atol=1e-5)
        _assert_same_detections((bbox, label, score), (ref_box, ref_label, ref_score.numpy()))


def _assert_same_detections(actual, expected):
    """Pair each detection with the reference one of the same label and nearest box and
    score (near-equal scores may come in either order); the pairing must be one-to-one."""
    bbox, label, score = actual
    ref_box, ref_label, ref_score = expected
    distance = numpy.abs(bbox[:, None] - ref_box[None]).max(axis=2) \
        + 1e3 * numpy.abs(score[:, None] - ref_score[None]) \
        + 1e6 * (label[:, None] != ref_label[None])
    nearest = distance.argmin(axis=1)
    assert len(set(nearest.tolist())) == len(nearest), 'detections pair up one to one'
    numpy.testing.assert_array_equal(label, ref_label[nearest])
    numpy.testing.assert_allclose(score, ref_score[nearest], rtol=1e-4, atol=1e-5)
    numpy.testing.assert_allclose(bbox, ref_box[nearest], rtol=1e-4, atol=2e-3)
