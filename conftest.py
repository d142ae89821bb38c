"""pytest's options for the whole repository (tests/ and the doctests of cvzoo/)."""

import os


def pytest_addoption(parser):
    parser.addoption(
        '--fake-cuda', action='store_true', default=False,
        help="run the GPU paths on cvzoo.testing.cupy_stand_in, a strict CPU stand-in for "
             "CuPy with two fake GPUs (cuda:0, cuda:1)")
    parser.addoption(
        '--fake-cudnn', action='store_true', default=False,
        help="with --fake-cuda: also install cvzoo.testing.cudnn_stand_in as the 'cudnn' "
             "frontend, so that convolutions and batch normalisation on the stand-in run "
             "through cvzoo.core.cudnn (NumPy twins)")


def pytest_configure(config):
    if config.getoption('--fake-cuda'):
        from cvzoo.testing import cupy_stand_in

        cupy_stand_in.install(n_devices=2)
    if config.getoption('--fake-cudnn'):
        import sys

        from cvzoo.testing import cudnn_stand_in

        sys.modules['cudnn'] = cudnn_stand_in.make_module()


def _record_skip(report):
    """Append a skipped test's (or module's) id and reason to $CVZOO_SKIP_REPORT, one
    tab-separated line each: .ci/run reruns, with the references installed, the tests
    that skipped for want of them."""
    path = os.environ.get('CVZOO_SKIP_REPORT')
    if not path or not report.skipped or hasattr(report, 'wasxfail'):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    with open(path, 'a', encoding='utf-8') as out:
        out.write(f"{report.nodeid}\t{' '.join(reason.split())}\n")


def pytest_runtest_logreport(report):
    _record_skip(report)


def pytest_collectreport(report):
    _record_skip(report)
