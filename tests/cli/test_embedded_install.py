"""A plain (non-editable) install carries the shipped detector and picture: `cvzoo predict`
runs in a fresh virtual environment with no network and an empty $CVZOO_HOME."""

import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What is not part of the source tree: VCS data, build outputs, caches, environments.
_NOT_SOURCE = ('.git', 'build', 'dist', '*.egg-info', '__pycache__', '.pytest_cache', '.venv*',
               'result*')


def _closed_port():
    """A local port that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


@pytest.fixture(scope='module')
def installed(tmp_path_factory):
    """The bin folder of a fresh venv holding cvzoo installed from a copy of the tree."""
    tmp = tmp_path_factory.mktemp('install')
    source = tmp / 'source'
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*_NOT_SOURCE))
    venv = tmp / 'venv'
    # NOTE: without its own pip, the venv runs the system's pip and setuptools (venv's
    # bundled setuptools can be too old to build a wheel with the system's `wheel`)
    subprocess.run([sys.executable, '-m', 'venv', '--system-site-packages', '--without-pip',
                    str(venv)], check=True)
    bin_dir = venv / 'bin'
    subprocess.run([str(bin_dir / 'python'), '-m', 'pip', 'install', '--quiet', '--no-deps',
                    '--no-build-isolation', '--no-index', str(source)],
                   check=True, cwd=tmp, env=_offline_env(tmp))
    return bin_dir


def _offline_env(tmp):
    """No mirror, an empty $CVZOO_HOME, proxies at a closed port, no path into the tree."""
    env = {k: v for k, v in os.environ.items()
           if k not in ('CVZOO_WEIGHTS_MIRROR', 'PYTHONPATH', 'NO_PROXY', 'no_proxy')}
    proxy = f'http://127.0.0.1:{_closed_port()}'
    for name in ('HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy',
                 'all_proxy'):
        env[name] = proxy
    home = tmp / 'empty_home'
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    env['CVZOO_HOME'] = str(home)
    return env


def _run(bin_dir, tmp, *argv):
    return subprocess.run([str(bin_dir / argv[0]), *argv[1:]], capture_output=True, text=True,
                          cwd=tmp, env=_offline_env(tmp), timeout=300)


def _detections(out):
    found = {}
    for score, name in re.findall(r'^\s+([0-9.]+)\s+(\S+)\s+\(', out, flags=re.MULTILINE):
        found[name] = max(found.get(name, 0.0), float(score))
    return found


def _check_dog_bicycle_car(result):
    assert result.returncode == 0, result.stderr
    found = _detections(result.stdout)
    # Darknet's scores for yolo-fastest-xl-voc on dog.jpg (../shared/data/README.md)
    for name, score in {'dog': 0.950, 'bicycle': 0.996, 'car': 0.997}.items():
        assert abs(found.get(name, 0.0) - score) < 2e-3, (name, result.stdout)


@pytest.mark.slow
def test_the_install_carries_the_shipped_files(installed, tmp_path):
    result = _run(installed, tmp_path, 'python', '-c',
                  'import cvzoo.models.weights.embedded as e; print(e.EMBEDDED_DIR)')
    folder = pathlib.Path(result.stdout.strip())
    assert folder.is_relative_to(installed.parent), folder  # the venv's copy, not the tree
    assert {'dog.jpg', 'yolo-fastest-xl-voc.cfg', 'yolo-fastest-xl-voc.weights'} \
        <= {p.name for p in folder.iterdir()}


@pytest.mark.slow
def test_predict_with_no_arguments_offline(installed, tmp_path):
    _check_dog_bicycle_car(_run(installed, tmp_path, 'cvzoo', 'predict'))


@pytest.mark.slow
def test_predict_explicit_model_offline(installed, tmp_path):
    image = tmp_path / 'picture.jpg'
    result = _run(installed, tmp_path, 'python', '-c',
                  'import cvzoo.models.weights.embedded as e; print(e.sample_image_path())')
    shutil.copyfile(result.stdout.strip(), image)
    _check_dog_bicycle_car(_run(installed, tmp_path, 'cvzoo', 'predict', '--model',
                                'yolo_fastest_xl', '--pretrained-model', 'voc', str(image)))
