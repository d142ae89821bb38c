"""Shared fixtures: seeded RNG, device, paths to the optional real data."""

import os
import pathlib
import zlib

import numpy
import pytest

SHARED_DATA = pathlib.Path(__file__).resolve().parents[1].parent / 'shared' / 'data'

# run in the ChainerCV environment, never imported here (also not by --doctest-modules)
collect_ignore = ['helpers/chainercv_reference_prelude.py']


@pytest.fixture
def rng(request):
    """A NumPy Generator seeded from the test's name, so each test is repeatable.

    crc32, not hash(): Python salts str hashes per process, which would give every run
    other random inputs.
    """
    seed = zlib.crc32(request.node.nodeid.encode())
    numpy.random.seed(seed % (2 ** 31))
    return numpy.random.default_rng(seed)


@pytest.fixture(autouse=True)
def _private_cvzoo_home(tmp_path_factory, monkeypatch):
    """Every test gets its own $CVZOO_HOME, so no download or converted cache leaks
    between tests or from the user's ~/.cache/cvzoo."""
    monkeypatch.setenv('CVZOO_HOME', str(tmp_path_factory.mktemp('cvzoo_home')))


@pytest.fixture(params=['cpu', 'cuda:0'])
def device(request):
    """Each device test runs on the CPU, and on cuda:0 when CuPy and a GPU are present."""
    if request.param.startswith('cuda'):
        from cvzoo.core import backend

        if not backend.is_cuda_available():
            pytest.skip('no CUDA device')
    return request.param


@pytest.fixture
def two_gpus():
    """cuda:0 and cuda:1 (two fake GPUs under --fake-cuda); skips with fewer."""
    from cvzoo.core import backend

    if backend.num_gpus() < 2:
        pytest.skip('needs two GPUs (run pytest --fake-cuda for the CuPy stand-in)')
    return [backend.Device('cuda:0'), backend.Device('cuda:1')]


@pytest.fixture
def gpu_pair():
    """[current, target]: cuda:0 current and models on cuda:1, or on cuda:0 when only one
    GPU exists (so the model tests still run on a machine with one real GPU)."""
    from cvzoo.core import backend

    n_gpu = backend.num_gpus()
    if n_gpu == 0:
        pytest.skip('needs a GPU (run pytest --fake-cuda for the CuPy stand-in)')
    return [backend.Device('cuda:0'), backend.Device(f'cuda:{min(n_gpu, 2) - 1}')]


@pytest.fixture
def stand_in():
    """The CuPy stand-in module (for its sync counting); skips without --fake-cuda."""
    from cvzoo.testing import cupy_stand_in

    if not cupy_stand_in.is_installed():
        pytest.skip('needs the CuPy stand-in (pytest --fake-cuda)')
    return cupy_stand_in


@pytest.fixture
def shared_data():
    """The folder of real weights and images (../shared/data); skips when absent."""
    root = pathlib.Path(os.environ.get('CVZOO_SHARED_DATA', SHARED_DATA))
    if not root.is_dir():
        pytest.skip(f'real data folder {root} is absent')
    return root


def _greedy_nms_reference(boxes, scores, iou_threshold):
    """torchvision.ops.nms in plain torch: highest score first, drop IoU > threshold."""
    import torch
    from torchvision.ops.boxes import box_iou

    order = torch.argsort(scores, descending=True, stable=True)
    iou = box_iou(boxes[order], boxes[order])
    suppressed = torch.zeros(len(order), dtype=torch.bool)
    keep = []
    for i in range(len(order)):
        if not suppressed[i]:
            keep.append(i)
            suppressed |= iou[i] > iou_threshold
    return order[torch.as_tensor(keep, dtype=torch.int64)]


@pytest.fixture(scope='session')
def torchvision():
    """The real torchvision package, as a reference for models with torchvision weights.

    Skips when torch or torchvision is absent. PyPI has only CUDA builds of torchvision,
    whose compiled ops cannot load beside the CPU build of torch; its models are plain
    Python, so then the compiled-op registrations are skipped, roi_align runs
    torchvision's own pure-torch fallback, and nms is replaced by a greedy plain-torch NMS
    (same rule: keep the highest score, drop boxes with IoU > threshold).
    """
    import importlib.util
    import sys
    import types

    torch = pytest.importorskip('torch')
    spec = importlib.util.find_spec('torchvision')
    if spec is None:
        pytest.skip('torchvision is not installed (.ci/run installs it with torch)')
    compiled_ops = pathlib.Path(spec.origin).parent / '_C.so'
    try:
        torch.ops.load_library(str(compiled_ops))
        has_compiled_ops = True
    except (OSError, RuntimeError):
        has_compiled_ops = False
        sys.modules.setdefault('torchvision._meta_registrations',
                               types.ModuleType('torchvision._meta_registrations'))
    import torchvision as module

    if not has_compiled_ops:
        module.ops.boxes.nms = _greedy_nms_reference
        module.ops.nms = _greedy_nms_reference
    return module


class ChainerCVReference:
    """Runs code in the separate Chainer/ChainerCV environment (see tools/make_chainercv_env).

    Attributes:
        python (str): the environment's interpreter command.
    """

    _DRIVER = (
        'import sys, numpy\n'
        'INPUTS = dict(numpy.load(sys.argv[1]))\n'
        'WORKDIR = sys.argv[3]\n'
        'OUTPUTS = {}\n'
        'exec(compile(open(sys.argv[4]).read(), "chainercv_reference_script", "exec"))\n'
        'numpy.savez(sys.argv[2], **{k: numpy.asarray(v) for k, v in OUTPUTS.items()})\n')

    def __init__(self, python):
        self.python = python

    def run(self, script, workdir, **inputs):
        """Execute ``script`` there and return the arrays it put in ``OUTPUTS``.

        Args:
            script (str): Python code run with the globals ``INPUTS`` (dict name -> array,
                from ``inputs``), ``WORKDIR`` (str, ``workdir``) and ``OUTPUTS`` (an empty
                dict the script fills with arrays).
            workdir (pathlib.Path): a folder for the exchange files (e.g. ``tmp_path``).
            **inputs: arrays passed to the script.

        Returns:
            dict: name -> numpy array.

        Raises:
            AssertionError: the script failed; the message carries its stderr.
        """
        import subprocess

        workdir = pathlib.Path(workdir)
        in_path, out_path = workdir / 'chainercv_in.npz', workdir / 'chainercv_out.npz'
        script_path, driver_path = workdir / 'chainercv_script.py', workdir / 'chainercv_driver.py'
        numpy.savez(in_path, **inputs)
        script_path.write_text(script)
        driver_path.write_text(self._DRIVER)
        env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'PYTHONHOME')}
        env.setdefault('OMP_NUM_THREADS', '1')
        done = subprocess.run([self.python, str(driver_path), str(in_path), str(out_path),
                               str(workdir), str(script_path)],
                              capture_output=True, text=True, env=env)
        assert done.returncode == 0, f'ChainerCV reference script failed:\n{done.stderr[-4000:]}'
        with numpy.load(out_path) as outputs:
            return dict(outputs)


@pytest.fixture(scope='session')
def chainercv_reference():
    """ChainerCV 0.13.1 on Chainer 7.8.1, the origin of cvzoo's ChainerCV weights.

    It lives in its own environment (Chainer needs NumPy < 2), made by
    ``tools/make_chainercv_env DIR``; set ``CVZOO_CHAINERCV_PYTHON=DIR/python`` (.ci/run
    does). Skips when that is unset.
    """
    python = os.environ.get('CVZOO_CHAINERCV_PYTHON')
    if not python:
        pytest.skip('CVZOO_CHAINERCV_PYTHON is unset (tools/make_chainercv_env makes one)')
    if not os.access(python, os.X_OK):
        pytest.fail(f'CVZOO_CHAINERCV_PYTHON={python!r} is not an executable file')
    return ChainerCVReference(python)


# --- http_server, trickle_server: downloads served from 127.0.0.1 ---
import http.server  # noqa: E402
import socket  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import urllib.parse  # noqa: E402


class _HttpServerState:
    """What the http_server fixture serves and what it saw.

    Attributes:
        root (pathlib.Path): the folder served; put files here.
        url (str): ``'http://127.0.0.1:<port>'``.
        requests (list of str): the path of every GET, in order.
    """

    def __init__(self, root):
        self.root = root
        self.url = ''
        self.requests = []
        self.drops = {}     # name -> [n_bytes_to_send, times_left]
        self.failures = {}  # name -> [status, times_left]
        self.lock = threading.Lock()

    def url_for(self, name):
        """The URL of file ``name`` under root."""
        return f'{self.url}/{name}'

    def count(self, name):
        """How many GET requests asked for ``name``."""
        return sum(1 for path in self.requests if path.lstrip('/') == name)

    def drop_after(self, name, n_bytes, times=1):
        """The next ``times`` GETs of ``name`` announce the full length but close the
        connection after ``n_bytes`` bytes of the body."""
        self.drops[name] = [n_bytes, times]

    def fail(self, name, status=500, times=1):
        """The next ``times`` GETs of ``name`` answer with HTTP ``status``."""
        self.failures[name] = [status, times]

    def _take(self, table, name):
        with self.lock:
            entry = table.get(name)
            if entry is None or entry[1] <= 0:
                return None
            entry[1] -= 1
            return entry[0]


def _make_handler(state):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, *args):
            pass

        def do_GET(self):
            name = urllib.parse.unquote(self.path.split('?')[0]).lstrip('/')
            with state.lock:
                state.requests.append('/' + name)
            status = state._take(state.failures, name)
            path = state.root / name
            if status is not None or not path.is_file():
                self._send_empty(status or 404)
                return
            data = path.read_bytes()
            start = self._range_start(len(data))
            if start is None:
                self._send_empty(416)
                return
            self.send_response(206 if start else 200)
            self.send_header('Content-Length', str(len(data) - start))
            if start:
                self.send_header('Content-Range', f'bytes {start}-{len(data) - 1}/{len(data)}')
            self.end_headers()
            drop = state._take(state.drops, name)
            body = data[start:] if drop is None else data[start:start + drop]
            self.wfile.write(body)
            self.wfile.flush()
            if drop is not None:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)

        def _range_start(self, size):
            spec = self.headers.get('Range')
            if not spec or not spec.startswith('bytes=') or not spec.endswith('-'):
                return 0
            start = int(spec[len('bytes='):-1])
            return start if start < size else None

        def _send_empty(self, status):
            self.send_response(status)
            self.send_header('Content-Length', '0')
            self.end_headers()

    return Handler


@pytest.fixture
def http_server(tmp_path):
    """A threaded HTTP server on 127.0.0.1 serving a temporary folder.

    Yields an object with ``root`` (the folder to fill), ``url``, ``url_for(name)``,
    ``requests`` and ``count(name)`` (GETs seen), ``drop_after(name, n_bytes, times=1)``
    (close the connection mid-file) and ``fail(name, status=500, times=1)``. Byte
    ranges of the form ``bytes=N-`` are honoured with 206 answers.
    """
    root = tmp_path / 'http_root'
    root.mkdir()
    state = _HttpServerState(root)
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), _make_handler(state))
    server.daemon_threads = True
    state.url = f'http://127.0.0.1:{server.server_address[1]}'
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05},
                              daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def trickle_server():
    """The URL of a server on 127.0.0.1 that announces 1000 bytes and sends one every
    0.2 s (``/no-length/...``: without a Content-Length), for download deadlines."""
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            if 'no-length' not in self.path:
                self.send_header('Content-Length', '1000')
            self.end_headers()
            try:
                for _ in range(1000):
                    self.wfile.write(b'x')
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass  # the client hung up

    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f'http://127.0.0.1:{server.server_address[1]}'
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
