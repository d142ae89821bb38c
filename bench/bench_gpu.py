"""cvzoo against PyTorch on one GPU: a ResNet-50 training step, SSD300 and YOLOv3 predict().

Workloads, each timed for cvzoo and for PyTorch in the same process, interleaved (cvzoo
run, torch run, cvzoo run, ...) after warm-up runs, with the device synchronised before
and after each timed run; the table shows medians:

- resnet50 train step: cvzoo ``get_model('resnet50')`` (random weights, 1000 classes)
  vs torchvision's ``resnet50``; batch 32 of 224x224 random images, softmax
  cross-entropy, MomentumSGD (lr 0.01, momentum 0.9): forward, backward and update;
- resnet50_graphed: the same step replayed as one CUDA graph, cvzoo's
  ``cvzoo.core.cuda_graph.GraphedUpdate`` (captured after its warm-up steps) vs PyTorch's
  whole-step capture with ``torch.cuda.graph`` (static inputs, warmed up on a side
  stream, ``optimizer.zero_grad(set_to_none=True)`` before the capture, as PyTorch's CUDA
  graphs notes do); on the CPU the cvzoo step runs eagerly (graphs need a GPU) and
  PyTorch is skipped;
- ssd300 / ssd300_vgg16 predict: one 300x300 image, cvzoo's ``predict()`` (host image in,
  NumPy boxes out, 'visualize' preset) vs torchvision's ``ssd300_vgg16`` in eval mode
  with the same thresholds (host tensor in, boxes copied to the host);
- yolov3 predict: one 416x416 image; torchvision has no YOLOv3, so cvzoo only;
- ssd300_graphed / yolov3_graphed: the same predict() with ``cuda_graph=True`` (the network
  replayed from a CUDA graph; eager on the CPU) vs PyTorch's eager predict;
- ssd300_bf16: predict() with ``dtype='bfloat16'`` (the network under autocast) vs
  torchvision's under ``torch.autocast(dtype=torch.bfloat16)``;
- ssd300_train: a training iteration of SSD300 (``--det-batch`` 300x300 images, two boxes
  each; SSDTrainChain, MomentumSGD lr 1e-3 with weight decay 5e-4) vs torchvision's
  ``ssd300_vgg16`` in train mode on the same images and boxes (its box matching runs in
  its forward; cvzoo's targets are encoded beforehand, as its data pipeline does);
- mask_rcnn_fpn_train: a training iteration of ``maskrcnn_resnet50_fpn`` (two 480x640
  images, two boxes and masks each, resized to 800 by the model;
  TorchvisionMaskRCNNTrainChain, MomentumSGD lr 0.02, weight decay 1e-4) vs torchvision's
  ``maskrcnn_resnet50_fpn`` in train mode with the same images, boxes, masks and
  settings.

All models have random weights (20 foreground classes for the detectors), so detectors'
post-processing work is not that of trained weights. PyTorch is skipped (the table says
why) when torch or torchvision is absent or has no CUDA. Prints a markdown table with
the GPU, the versions and the commit, and writes it to --out.

    python bench/bench_gpu.py --out gpu_report/bench.md            # cuda:0
    python bench/bench_gpu.py --device cpu --quick                 # smoke test on the CPU

``--quick`` is the dry mode: every workload at its smallest (ResNet-50 batch 2 of 32x32,
one detector image or training image, Mask R-CNN resized to 64-96 pixels), no warm-up,
one run.
"""

import argparse
import datetime
import os
import pathlib
import statistics
import subprocess
import sys
import time

import numpy

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

import cvzoo.core.functions as F  # noqa: E402
from cvzoo.core import backend, cuda_graph  # noqa: E402
from cvzoo.core.optimizers import MomentumSGD  # noqa: E402
from cvzoo.models import get_model  # noqa: E402
from cvzoo.models.common import network_runtime  # noqa: E402

PARTS = ('resnet50', 'resnet50_graphed', 'ssd300', 'ssd300_vgg16', 'yolov3',
         'ssd300_graphed', 'yolov3_graphed', 'ssd300_bf16', 'ssd300_train',
         'mask_rcnn_fpn_train')
TRAINING_PARTS = ('ssd300_train', 'mask_rcnn_fpn_train')
DETECTOR_SIZES = {'ssd300': 300, 'ssd300_vgg16': 300, 'yolov3': 416}
N_FG_CLASS = 20


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--device', default='cuda:0', help="'cuda:N' or 'cpu'")
    parser.add_argument('--parts', nargs='+', choices=PARTS, default=list(PARTS))
    parser.add_argument('--batch', type=int, default=32, help='ResNet-50 batch size')
    parser.add_argument('--size', type=int, default=224, help='ResNet-50 image side')
    parser.add_argument('--det-batch', type=int, default=8,
                        help='images per SSD300 training iteration')
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--runs', type=int, default=10)
    parser.add_argument('--max-seconds', type=float, default=60.0,
                        help='stop adding runs to a workload after this long')
    parser.add_argument('--quick', action='store_true',
                        help='batch 2 of 32x32, no warm-up, 1 run (a smoke test)')
    parser.add_argument('--no-torch', action='store_true', help='time cvzoo only')
    parser.add_argument('--out', default=None, help='write the table to this file too')
    return parser


# --- devices and synchronisation -----------------------------------------------------

def _cvzoo_sync(device):
    device.synchronize()  # a no-op on the CPU


def _load_torch(device, no_torch):
    """(torch, torchvision, None), or (None, None, why not)."""
    if no_torch:
        return None, None, 'not asked for (--no-torch)'
    try:
        import torch
        import torchvision
    except Exception as exc:  # noqa: BLE001 - any import failure means "no torch here"
        return None, None, f'torch/torchvision not importable ({type(exc).__name__}: {exc})'
    if device.kind == 'cuda' and not torch.cuda.is_available():
        return None, None, 'torch has no CUDA here'
    return torch, torchvision, None


def _torch_device(torch, device):
    return torch.device('cpu' if device.kind == 'cpu' else f'cuda:{device.id}')


def _torch_sync(torch, torch_device):
    if torch_device.type == 'cuda':
        torch.cuda.synchronize(torch_device)


# --- workloads: each builder returns {'cvzoo': run, 'torch': run or None, 'note': str} --

def _resnet50(args, device, torch, torchvision, graphed=False):
    rng = numpy.random.default_rng(0)
    x_host = rng.standard_normal((args.batch, 3, args.size, args.size)).astype(numpy.float32)
    t_host = rng.integers(0, 1000, args.batch).astype(numpy.int32)
    model = get_model('resnet50', n_class=1000).to_device(device)
    optimizer = MomentumSGD(lr=0.01, momentum=0.9).setup(model)
    x, t = backend.to_device(x_host, device), backend.to_device(t_host, device)

    def loss_func(x, t):
        return F.softmax_cross_entropy(model(x), t)

    if graphed and device.kind == 'cuda':
        update = cuda_graph.GraphedUpdate(optimizer, loss_func)
        for _ in range(update.warmup + 1):  # the warm-up steps, then the capture
            update(x, t)

        def cvzoo_step():
            update(x, t)
    else:
        def cvzoo_step():
            optimizer.update(loss_func, x, t)

    note = (f'batch {args.batch}, {args.size}x{args.size}, forward + backward + '
            'MomentumSGD update')
    if graphed and device.kind != 'cuda':
        note += ', eager (CUDA graphs need a GPU)'
    elif graphed:
        note += (', one CUDA graph' if update.fallback_reason is None
                 else f', eager: the capture was refused ({update.fallback_reason})')
    workload = {'cvzoo': cvzoo_step, 'torch': None, 'note': note}
    if torch is not None and (device.kind == 'cuda' or not graphed):
        workload['torch'] = _torch_resnet50_step(torch, torchvision, device, x_host, t_host,
                                                 graphed)
    return workload


def _torch_resnet50_step(torch, torchvision, device, x_host, t_host, graphed):
    """PyTorch's ResNet-50 step: eager, or captured whole with torch.cuda.graph."""
    torch_device = _torch_device(torch, device)
    net = torchvision.models.resnet50(weights=None).to(torch_device).train()
    torch_optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    tx = torch.from_numpy(x_host).to(torch_device)
    tt = torch.from_numpy(t_host.astype(numpy.int64)).to(torch_device)

    def torch_step():
        torch_optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(net(tx), tt).backward()
        torch_optimizer.step()

    if not graphed:
        return torch_step
    side = torch.cuda.Stream(torch_device)
    side.wait_stream(torch.cuda.current_stream(torch_device))
    with torch.cuda.stream(side):
        for _ in range(3):
            torch_step()
    torch.cuda.current_stream(torch_device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    torch_optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        torch.nn.functional.cross_entropy(net(tx), tt).backward()
        torch_optimizer.step()
    return graph.replay


def _detector(name, args, device, torch, torchvision, cuda_graph=False, dtype='float32'):
    size = DETECTOR_SIZES[name]
    img = numpy.random.default_rng(1).uniform(0, 255, (3, size, size)).astype(numpy.float32)
    model = get_model(name, n_fg_class=N_FG_CLASS).to_device(device)
    model.use_preset('visualize')
    graphed = cuda_graph and device.kind == 'cuda'

    def cvzoo_predict():
        model.predict([img], cuda_graph=graphed, dtype=dtype)

    note = f'one {size}x{size} image, random weights, score_thresh {model.score_thresh}'
    if graphed:
        cvzoo_predict()  # the capture
        refused = network_runtime.graphed_network(model, dtype).fallback_reason
        note += ', one CUDA graph' if refused is None else (
            f', eager: the capture was refused ({refused})')
    elif cuda_graph:
        note += ', eager (CUDA graphs need a GPU)'
    if dtype != 'float32':
        note += f', {dtype} autocast'
    workload = {'cvzoo': cvzoo_predict, 'torch': None, 'note': note}
    if torch is not None and name.startswith('ssd300'):
        workload['torch'] = _torch_ssd300_predict(torch, torchvision, device, model, img, dtype)
        workload['note'] += '; torch: torchvision ssd300_vgg16' + (
            f' under torch.autocast({dtype})' if dtype != 'float32' else '')
    return workload


def _torch_ssd300_predict(torch, torchvision, device, model, img, dtype):
    torch_device = _torch_device(torch, device)
    net = torchvision.models.detection.ssd300_vgg16(
        weights=None, weights_backbone=None, num_classes=N_FG_CLASS + 1,
        score_thresh=model.score_thresh, nms_thresh=model.nms_thresh)
    net = net.to(torch_device).eval()
    tensor = torch.from_numpy(img / 255)
    autocast = torch.autocast(torch_device.type, dtype=getattr(torch, dtype),
                              enabled=dtype != 'float32')

    def torch_predict():
        with torch.no_grad(), autocast:
            outputs = net([tensor.to(torch_device)])
        return [{key: value.cpu() for key, value in out.items()} for out in outputs]

    return torch_predict


def _training_boxes(rng, n_image, height, width, n_box=2):
    """``n_box`` boxes (x_min, y_min, x_max, y_max) and labels in [0, N_FG_CLASS) per image."""
    bboxes, labels = [], []
    for _ in range(n_image):
        corner = rng.uniform(0, 0.5, (n_box, 2)) * (width, height)
        side = rng.uniform(0.2, 0.45, (n_box, 2)) * (width, height)
        bboxes.append(numpy.concatenate([corner, corner + side], axis=1).astype(numpy.float32))
        labels.append(rng.integers(0, N_FG_CLASS, n_box).astype(numpy.int32))
    return bboxes, labels


def _ssd300_train(args, device, torch, torchvision):
    from cvzoo.core.optimizers import WeightDecay
    from cvzoo.models.detection.ssd.train_chain import SSDTrainChain

    rng = numpy.random.default_rng(2)
    imgs = rng.uniform(0, 255, (args.det_batch, 3, 300, 300)).astype(numpy.float32)
    bboxes, labels = _training_boxes(rng, args.det_batch, 300, 300)
    model = get_model('ssd300', n_fg_class=N_FG_CLASS).to_device(device)
    chain = SSDTrainChain(model)
    optimizer = MomentumSGD(lr=1e-3, momentum=0.9).setup(chain)
    optimizer.add_hook(WeightDecay(5e-4))
    x = backend.to_device(numpy.stack([model.prepare(img) for img in imgs]), device)
    with device:
        encoded = [model.coder.encode(device.send(b), device.send(lab))
                   for b, lab in zip(bboxes, labels)]
        xp = device.xp
        gt_loc = xp.stack([loc for loc, _ in encoded])
        gt_label = xp.stack([label for _, label in encoded])

    def cvzoo_step():
        optimizer.update(chain, x, gt_loc, gt_label)

    workload = {'cvzoo': cvzoo_step, 'torch': None,
                'note': f'batch {args.det_batch}, 300x300, 2 boxes each, MomentumSGD + '
                        'weight decay'}
    if torch is not None:
        torch_device = _torch_device(torch, device)
        net = torchvision.models.detection.ssd300_vgg16(
            weights=None, weights_backbone=None, num_classes=N_FG_CLASS + 1)
        net = net.to(torch_device).train()
        workload['torch'] = _torch_detection_step(
            torch, net, torch_device, imgs, bboxes, labels, None, lr=1e-3, weight_decay=5e-4)
    return workload


def _mask_rcnn_fpn_train(args, device, torch, torchvision):
    from cvzoo.core.optimizers import WeightDecay
    from cvzoo.models.instance_segmentation.mask_rcnn.mask_rcnn_train_chain import (
        TorchvisionMaskRCNNTrainChain,
    )

    rng = numpy.random.default_rng(3)
    n_image, (height, width) = (1, (48, 64)) if args.quick else (2, (480, 640))
    imgs = rng.uniform(0, 255, (n_image, 3, height, width)).astype(numpy.float32)
    bboxes, labels = _training_boxes(rng, n_image, height, width)
    masks = [_box_masks(bbox, height, width) for bbox in bboxes]
    sizes = {'min_size': 64, 'max_size': 96} if args.quick else {}
    model = get_model('maskrcnn_resnet50_fpn', n_fg_class=N_FG_CLASS, **sizes)
    model.to_device(device)
    chain = TorchvisionMaskRCNNTrainChain(model)
    optimizer = MomentumSGD(lr=0.02, momentum=0.9).setup(chain)
    optimizer.add_hook(WeightDecay(1e-4))
    prepared = [model.prepare(img) for img in imgs]
    scale = prepared[0].shape[1] / height
    arguments = (backend.to_device(model.pad_batch(prepared), device),
                 [backend.to_device(b * scale, device) for b in bboxes],
                 [backend.to_device(lab, device) for lab in labels],
                 [_box_masks(b * scale, *p.shape[1:]) for b, p in zip(bboxes, prepared)],
                 [p.shape[1:] for p in prepared])

    def cvzoo_step():
        optimizer.update(chain, *arguments)

    workload = {'cvzoo': cvzoo_step, 'torch': None,
                'note': f'{n_image} images of {height}x{width} resized to '
                        f'{prepared[0].shape[1]}x{prepared[0].shape[2]}, 2 instances each, '
                        'MomentumSGD + weight decay'}
    if torch is not None:
        torch_device = _torch_device(torch, device)
        net = torchvision.models.detection.maskrcnn_resnet50_fpn(
            weights=None, weights_backbone=None, num_classes=N_FG_CLASS + 1, **sizes)
        net = net.to(torch_device).train()
        workload['torch'] = _torch_detection_step(
            torch, net, torch_device, imgs, bboxes, labels, masks, lr=0.02, weight_decay=1e-4)
    return workload


def _box_masks(bbox, height, width):
    """(R, H, W) bool masks filling each box."""
    mask = numpy.zeros((len(bbox), height, width), bool)
    for i, (x_min, y_min, x_max, y_max) in enumerate(bbox.astype(int)):
        mask[i, y_min:y_max, x_min:x_max] = True
    return mask


def _torch_detection_step(torch, net, torch_device, imgs, bboxes, labels, masks, lr,
                          weight_decay):
    """A torchvision detector's training iteration on the same images and targets."""
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9,
                                weight_decay=weight_decay)
    images = [torch.from_numpy(img / 255).float().to(torch_device) for img in imgs]
    targets = []
    for i, (bbox, label) in enumerate(zip(bboxes, labels)):
        target = {'boxes': torch.from_numpy(bbox).to(torch_device),
                  'labels': torch.from_numpy(label.astype(numpy.int64) + 1).to(torch_device)}
        if masks is not None:
            target['masks'] = torch.from_numpy(masks[i].astype(numpy.uint8)).to(torch_device)
        targets.append(target)

    def torch_step():
        optimizer.zero_grad(set_to_none=True)
        sum(net(images, targets).values()).backward()
        optimizer.step()

    return torch_step


# --- timing ---------------------------------------------------------------------------

def _timed(run, sync):
    sync()
    start = time.perf_counter()
    run()
    sync()
    return time.perf_counter() - start


def measure(workload, args, syncs):
    """Interleave cvzoo and torch runs; return {'cvzoo': [s, ...], 'torch': [s, ...]}."""
    runners = {side: workload[side] for side in ('cvzoo', 'torch') if workload[side]}
    for _ in range(args.warmup):
        for side, run in runners.items():
            _timed(run, syncs[side])
    times = {side: [] for side in runners}
    deadline = time.perf_counter() + args.max_seconds
    for i in range(args.runs):
        if i > 0 and time.perf_counter() > deadline:
            break
        for side, run in runners.items():
            times[side].append(_timed(run, syncs[side]))
    return times


# --- the report -----------------------------------------------------------------------

def _format_time(seconds):
    return f'{seconds * 1000:.1f} ms' if seconds < 10 else f'{seconds:.1f} s'


def _commit():
    try:
        commit = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT,
                                capture_output=True, text=True, timeout=10, check=True)
        dirty = subprocess.run(['git', 'status', '--porcelain', '--untracked-files=no'],
                               cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return 'unknown (no git)'
    suffix = ' with uncommitted changes' if dirty.stdout.strip() else ''
    return commit.stdout.strip() + suffix


def _gpu_name(device, torch):
    if device.kind == 'cpu':
        return f'none (CPU, {os.cpu_count()} cores)'
    try:
        name = device.xp.cuda.runtime.getDeviceProperties(device.id)['name']
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # noqa: BLE001 - the CuPy stand-in has no properties
        if torch is not None:
            return torch.cuda.get_device_name(device.id)
        return 'unknown'


def header(args, device, torch, torch_note):
    xp_version = getattr(device.xp, '__version__', 'unknown')
    lines = [f'GPU: {_gpu_name(device, torch)}; device {device}; '
             f'{"CuPy" if device.kind == "cuda" else "NumPy"} {xp_version}',
             f'commit {_commit()}; {datetime.date.today().isoformat()}; median of up to '
             f'{args.runs} interleaved runs after {args.warmup} warm-up runs each']
    if torch is None:
        lines.append(f'PyTorch: skipped, {torch_note}')
    else:
        cudnn = torch.backends.cudnn
        lines.append(f'PyTorch {torch.__version__} (cuDNN {cudnn.version()}, '
                     f'cudnn.allow_tf32={cudnn.allow_tf32}, cudnn.benchmark='
                     f'{cudnn.benchmark}, matmul TF32: '
                     f'{torch.backends.cuda.matmul.allow_tf32})')
    return lines


def table_row(name, workload, times):
    cvzoo, torch_times = times.get('cvzoo', []), times.get('torch', [])
    cells = [name, '', '', '', workload['note'] if workload else '']
    if cvzoo:
        cells[1] = f'{_format_time(statistics.median(cvzoo))} (n={len(cvzoo)})'
    if torch_times:
        cells[2] = f'{_format_time(statistics.median(torch_times))} (n={len(torch_times)})'
        cells[3] = f'{statistics.median(cvzoo) / statistics.median(torch_times):.2f}x'
    else:
        cells[2] = cells[3] = '-'
    return '| ' + ' | '.join(cells) + ' |'


def _run_part(name, args, device, torch, torchvision, syncs):
    try:
        if name in ('resnet50', 'resnet50_graphed'):
            workload = _resnet50(args, device, torch, torchvision,
                                 graphed=name == 'resnet50_graphed')
        elif name == 'ssd300_train':
            workload = _ssd300_train(args, device, torch, torchvision)
        elif name == 'mask_rcnn_fpn_train':
            workload = _mask_rcnn_fpn_train(args, device, torch, torchvision)
        else:
            detector, _, variant = name.partition('_')
            if detector == 'ssd300' and variant == 'vgg16':
                detector, variant = name, ''
            workload = _detector(detector, args, device, torch, torchvision,
                                 cuda_graph=variant == 'graphed',
                                 dtype='bfloat16' if variant == 'bf16' else 'float32')
        return table_row(name, workload, measure(workload, args, syncs))
    except Exception as exc:  # noqa: BLE001 - a failing workload shows in its row
        message = f'{type(exc).__name__}: {exc}'.replace('|', '/').replace('\n', ' ')[:300]
        return f'| {name} | failed: {message} | - | - | |'


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.quick:
        args.batch, args.size, args.warmup, args.runs, args.det_batch = 2, 32, 0, 1, 1
    device = backend.get_device(args.device)
    torch, torchvision, torch_note = _load_torch(device, args.no_torch)
    syncs = {'cvzoo': lambda: _cvzoo_sync(device)}
    if torch is not None:
        torch_device = _torch_device(torch, device)
        syncs['torch'] = lambda: _torch_sync(torch, torch_device)
    lines = ['## bench_gpu.py', ''] + [f'- {line}' for line in
                                       header(args, device, torch, torch_note)]
    lines += ['', '| workload | cvzoo | PyTorch | cvzoo / PyTorch | notes |',
              '| --- | ---: | ---: | ---: | --- |']
    print('\n'.join(lines), flush=True)
    for name in args.parts:
        row = _run_part(name, args, device, torch, torchvision, syncs)
        print(row, flush=True)
        lines.append(row)
    command = 'python bench/bench_gpu.py ' + ' '.join(argv if argv is not None
                                                       else sys.argv[1:])
    lines += ['', f'`{command.strip()}`', '']
    if args.out:
        out = pathlib.Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text('\n'.join(lines))
    return lines


if __name__ == '__main__':
    main()
