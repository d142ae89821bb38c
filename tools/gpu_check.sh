#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU (CuPy, PyTorch and cuDNN installed; no
# internet needed), install cvzoo, run the device tests on the real GPU and time
# bench/bench_gpu.py against PyTorch.
#
#     tools/gpu_check.sh OUTDIR
#
# Writes into OUTDIR: env.txt, install.log, gpu_smoke.log, tests.log (+ tests.xml when
# pytest finishes), bench.log, bench.md, bench_train.log, bench_train.md, cudnn.log,
# cudnn.md, and summary.txt with one line per step: its exit status (124 = cut by its
# time limit) and its duration. Every step runs under `timeout` (killed 5 s after it if
# it ignores the signal). The limits: environment 20 s, install 40 s, gpu_smoke 40 s,
# tests 135 s, bench 100 s (ResNet-50 steps eager and graphed; SSD300 and YOLOv3 predict
# eager, graphed and in bfloat16), bench_train 70 s (SSD300 and Mask R-CNN FPN training
# iterations against torchvision's), cudnn 50 s: 455 s, so the whole check ends within
# 8 minutes. A failing step does not stop the next ones;
# the script exits 1 if any step failed or any bench row says "failed".
# Without --fake-cuda the tests see the real GPU(s): tests needing two GPUs skip on one.
# Set PYTHON to choose the interpreter (default: python).

set -u -o pipefail

if [ "$#" -ne 1 ]; then
  echo "usage: tools/gpu_check.sh OUTDIR" >&2
  exit 2
fi
mkdir -p "$1"
OUT="$(cd "$1" && pwd)"
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
SUMMARY="$OUT/summary.txt"
FAILED=()
START=$SECONDS

echo "gpu_check.sh $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)" > "$SUMMARY"
trap 'echo "gpu_check.sh: interrupted after $((SECONDS - START)) s" >> "$SUMMARY"; exit 130' INT TERM

# step NAME LIMIT_S LOG COMMAND...: run COMMAND under timeout, output to OUT/LOG, and
# write its exit status and duration to summary.txt
step() {
  local name="$1" limit="$2" log="$OUT/$3"
  shift 3
  local began=$SECONDS shown
  printf -v shown '%q ' "$@"
  echo "== $name: ${shown% } (limit ${limit} s)" | tee -a "$SUMMARY"
  timeout --kill-after=5 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  local note=""
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then note=" (cut by the ${limit} s limit)"; fi
  echo "   $name: exit $rc$note, $((SECONDS - began)) s, log $(basename "$log")" | tee -a "$SUMMARY"
  if [ "$rc" -ne 0 ]; then FAILED+=("$name"); fi
  return 0
}

environment() {
  nvidia-smi || echo "nvidia-smi: not found or failed"
  "$PYTHON" - <<'EOF'
import importlib, platform
print('python', platform.python_version())
for name in ('numpy', 'cupy', 'torch', 'torchvision'):
    try:
        print(name, importlib.import_module(name).__version__)
    except Exception as exc:  # noqa: BLE001
        print(name, 'not importable:', exc)
try:
    import cupy
    print('CUDA runtime', cupy.cuda.runtime.runtimeGetVersion(),
          'devices', cupy.cuda.runtime.getDeviceCount())
except Exception as exc:  # noqa: BLE001
    print('CuPy CUDA:', exc)
try:
    import cudnn
    print('cudnn frontend', getattr(cudnn, '__version__', '?'), 'cuDNN',
          cudnn.backend_version())
except Exception as exc:  # noqa: BLE001
    print('cudnn frontend not importable:', exc)
EOF
}

# Offline, so no isolated build (it would fetch setuptools); old setuptools without the
# wheel package cannot build an editable install that way, so the plain command is the
# fallback. The tests and the bench also run from the checkout if both fail.
install() {
  "$PYTHON" -m pip install --no-deps --no-build-isolation -e . \
    || "$PYTHON" -m pip install --no-deps --retries 0 --timeout 10 -e .
  local rc=$?
  (cd / && "$PYTHON" -c 'import cvzoo; print("cvzoo imports from", cvzoo.__file__)')
  return $rc
}

# Fails when cvzoo sees no GPU (then every GPU test would skip and pytest pass), and
# compiles and runs one of cvzoo's own kernels on cuda:0 against its NumPy twin.
gpu_smoke() {
  "$PYTHON" - <<'EOF'
import numpy
import cvzoo.core.functions as F
from cvzoo.core import backend
n = backend.num_gpus()
print('GPUs seen by cvzoo:', n, backend.try_all_gpus())
assert n >= 1, 'cvzoo sees no GPU: the GPU tests would all skip'
device = backend.try_gpu()
rng = numpy.random.default_rng(0)
x, y = rng.standard_normal((2, 1000)).astype(numpy.float32)
out = F.squared_difference(backend.to_device(x, device), backend.to_device(y, device))
assert backend.get_device_from_array(out.array) == device
numpy.testing.assert_allclose(backend.to_numpy(out.array), (x - y) ** 2, rtol=1e-6)
a = rng.standard_normal((256, 512)).astype(numpy.float32)
b = rng.standard_normal((512, 128)).astype(numpy.float32)
c = backend.to_numpy(F.matmul(backend.to_device(a, device), backend.to_device(b, device)).array)
numpy.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
print('squared_difference kernel and matmul on', device, 'agree with NumPy')
# the guides' habits: a timer (CUDA events), work on a stream, waiting for the device
with backend.timer(device) as timer:
    with device.stream():
        d = F.matmul(backend.to_device(a, device), backend.to_device(b, device)).array
device.synchronize()
assert timer.elapsed_ms is not None and timer.elapsed_ms >= 0, timer.elapsed_ms
print(f'a matmul on a stream of {device}: {timer.elapsed_ms:.3f} ms by CUDA events')
# float16 autocast: the product in float16, within float16's precision of float32's
from cvzoo.core import autocast
with autocast('float16'):
    h = F.matmul(backend.to_device(a, device), backend.to_device(b, device)).array
assert h.dtype == numpy.float16, h.dtype
numpy.testing.assert_allclose(backend.to_numpy(h).astype(numpy.float32), a @ b, rtol=2e-2,
                              atol=0.2)
print('float16 autocast matmul agrees with float32 within float16 precision')
EOF
}

export PYTHON
export -f environment install gpu_smoke
step environment 20 env.txt bash -c environment
step install 40 install.log bash -c install
step gpu_smoke 40 gpu_smoke.log bash -c gpu_smoke

# the files that exercise devices most come first, so a cut run still reports them
TESTS=()
for path in tests/test_gpu_docs.py tests/core/test_devices.py tests/core/test_cuda_graph.py \
    tests/core/optimizers/test_multi_tensor.py tests/models/test_predict_options.py \
    tests/core/functions/test_autocast.py tests/core/optimizers/test_loss_scaler.py \
    tests/core/test_data_parallel.py \
    tests/models/test_models_on_devices.py tests/core tests/utils/test_nms.py tests/bench/test_bench_gpu.py; do
  if [ -e "$path" ]; then TESTS+=("$path"); else echo "   (no $path here)" >> "$SUMMARY"; fi
done
step tests 135 tests.log "$PYTHON" -m pytest -m 'gpu or not slow' -p no:cacheprovider -v -rs \
  --durations=20 --junitxml="$OUT/tests.xml" "${TESTS[@]}"
tail -n 1 "$OUT/tests.log" | sed 's/^/   tests: /' >> "$SUMMARY"

step bench 100 bench.log "$PYTHON" bench/bench_gpu.py --max-seconds 5 --out "$OUT/bench.md" \
  --parts resnet50 resnet50_graphed ssd300 ssd300_vgg16 yolov3 ssd300_graphed yolov3_graphed \
  ssd300_bf16
step bench_train 70 bench_train.log "$PYTHON" bench/bench_gpu.py --warmup 2 --max-seconds 8 \
  --out "$OUT/bench_train.md" --parts ssd300_train mask_rcnn_fpn_train
# bench_gpu.py shows a failing workload in its row and still exits 0
for table in bench.md bench_train.md; do
  failed_rows="$(grep -c '| failed:' "$OUT/$table" 2>/dev/null)"
  if [ "${failed_rows:-0}" -gt 0 ]; then
    echo "   bench: $failed_rows workload(s) failed, see $table" | tee -a "$SUMMARY"
    FAILED+=("bench_rows")
  fi
done

# cvzoo.core.cudnn against the im2col/CuPy path (outputs, gradients, running statistics
# of each case) and a ResNet-50 batch-32 step with use_cudnn never vs auto; only where
# the cuDNN frontend imports (pip install nvidia-cudnn-frontend nvidia-cudnn-cu12)
if "$PYTHON" -c 'import cudnn' > /dev/null 2>&1; then
  step cudnn 50 cudnn.log "$PYTHON" bench/bench_cudnn.py --require-cudnn --warmup 1 --runs 3 \
    --out "$OUT/cudnn.md"
else
  echo "== cudnn: skipped, the cudnn frontend does not import" | tee -a "$SUMMARY"
fi

if [ "${#FAILED[@]}" -eq 0 ]; then
  echo "all steps passed in $((SECONDS - START)) s" | tee -a "$SUMMARY"
  exit 0
fi
echo "failed steps: ${FAILED[*]} ($((SECONDS - START)) s)" | tee -a "$SUMMARY"
exit 1
