"""cvzoo's forward beside onnxruntime running the same network exported by cvzoo.export,
and beside PyTorch for ResNet-50: print a table, never assert.

Workloads (random weights, test mode): ResNet-50 at 224 x 224, batch 1 and 8; the
SSD300 network (VGG-16 extractor and multibox heads, 300 x 300, batch 1, without decode
and NMS); SegNet (segnet_basic, 360 x 480 CamVid size, batch 1). Each is exported once
with ``to_onnx`` and run by an onnxruntime session with its default graph
optimisations and thread count. The runs are interleaved (one of each in turn), each
time is the median of ``--repeat`` runs after one warm-up run.

``--mode predict`` times ``model.predict([img])`` end to end instead, with
``runtime='cvzoo'`` and ``runtime='onnxruntime'`` (preprocessing and decoding in cvzoo
both times; the warm-up run builds the session): ResNet-50 (one 375 x 500 image), SSD300
(one 375 x 500 image, 'visualize' preset: with random weights no box reaches its 0.6,
so the time is preprocessing, network and decoding; the NMS, cvzoo's in both runtimes,
adds the same to both) and SegNet (one 360 x 480 image).

    OMP_WAIT_POLICY=PASSIVE python bench/bench_onnx.py --repeat 7
    OMP_WAIT_POLICY=PASSIVE python bench/bench_onnx.py --mode predict --repeat 7
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

# NOTE: torch reads this when it is imported; idle OpenMP threads must not spin and
# steal the cores the other runtimes use.
os.environ.setdefault('OMP_WAIT_POLICY', 'PASSIVE')

import numpy  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))

from cvzoo.core import config  # noqa: E402
from cvzoo.export import to_onnx  # noqa: E402
from cvzoo.models import get_model_class  # noqa: E402

# name, registry key, build arguments, input shape
WORKLOADS = [
    ('ResNet-50 b1', 'resnet50', {'n_class': 1000}, (1, 3, 224, 224)),
    ('ResNet-50 b8', 'resnet50', {'n_class': 1000}, (8, 3, 224, 224)),
    ('SSD300 network b1', 'ssd300', {'n_fg_class': 20}, (1, 3, 300, 300)),
    ('SegNet b1', 'segnet_basic', {'n_class': 11}, (1, 3, 360, 480)),
]
# name, registry key, build arguments, preset, image (H, W)
PREDICT_WORKLOADS = [
    ('ResNet-50 predict b1', 'resnet50', {'n_class': 1000}, None, (375, 500)),
    ('SSD300 predict b1', 'ssd300', {'n_fg_class': 20}, 'visualize', (375, 500)),
    ('SegNet predict b1', 'segnet_basic', {'n_class': 11}, None, (360, 480)),
]


def _cvzoo_runner(model, x):
    def run():
        with config.using_config('train', False), config.no_backprop_mode():
            model(x)
    return run


def _onnx_runner(model, x, folder):
    import onnxruntime  # noqa: PLC0415

    path = to_onnx(model, x[:1], os.path.join(folder, 'model.onnx'))
    session = onnxruntime.InferenceSession(path, providers=['CPUExecutionProvider'])
    return lambda: session.run(None, {'input': x})


def _torch_runner(shape):
    """PyTorch's ResNet-50 (bench/torch_resnet50.py), or None without torch."""
    try:
        import torch  # noqa: PLC0415

        import torch_resnet50  # noqa: PLC0415
    except ImportError:
        return None
    net = torch_resnet50.resnet50().eval()
    x = torch.from_numpy(numpy.random.RandomState(0).standard_normal(shape).astype('f'))

    def run():
        with torch.inference_mode():
            net(x)
    return run


def _medians(runners, repeat):
    """Median seconds of each runner, run interleaved after one warm-up each."""
    for run in runners.values():
        run()
    times = {name: [] for name in runners}
    for _ in range(repeat):
        for name, run in runners.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def _predict_runners(model, img):
    return {runtime: (lambda runtime=runtime: model.predict([img], runtime=runtime))
            for runtime in ('cvzoo', 'onnxruntime')}


def _bench_networks(repeat):
    with tempfile.TemporaryDirectory() as folder:
        for label, name, kwargs, shape in WORKLOADS:
            numpy.random.seed(0)
            model = get_model_class(name)(**kwargs)
            x = numpy.random.RandomState(1).standard_normal(shape).astype(numpy.float32)
            runners = {'cvzoo': _cvzoo_runner(model, x),
                       'onnxruntime': _onnx_runner(model, x, folder)}
            torch_run = _torch_runner(shape) if name == 'resnet50' else None
            if torch_run is not None:
                runners['torch'] = torch_run
            print(_row(label, _medians(runners, repeat)), flush=True)


def _bench_predict(repeat):
    for label, name, kwargs, preset, size in PREDICT_WORKLOADS:
        numpy.random.seed(0)
        model = get_model_class(name)(**kwargs)
        if preset is not None:
            model.use_preset(preset)
        img = numpy.random.RandomState(1).uniform(0, 255, (3,) + size).astype(numpy.float32)
        print(_row(label, _medians(_predict_runners(model, img), repeat)), flush=True)


def _row(label, medians):
    cells = [f'{medians[k] * 1000:.1f}' if k in medians else '-'
             for k in ('cvzoo', 'onnxruntime', 'torch')]
    speedup = medians['cvzoo'] / medians['onnxruntime']
    return f'| {label} | ' + ' | '.join(cells) + f' | {speedup:.2f}x |'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeat', type=int, default=7, help='timed runs per runtime')
    parser.add_argument('--mode', choices=('network', 'predict'), default='network',
                        help="time the exported network alone or model.predict() end to end")
    args = parser.parse_args()
    import onnxruntime  # noqa: PLC0415

    print(f'# {os.cpu_count()} cores, onnxruntime {onnxruntime.__version__}, median of '
          f'{args.repeat} interleaved runs after a warm-up (ms)')
    print('| workload | cvzoo | onnxruntime | PyTorch | cvzoo / onnxruntime |')
    print('| --- | ---: | ---: | ---: | ---: |')
    if args.mode == 'predict':
        _bench_predict(args.repeat)
    else:
        _bench_networks(args.repeat)


if __name__ == '__main__':
    main()
