"""pytest's options for the whole repository (tests/ and the doctests of cvzoo/)."""


def pytest_addoption(parser):
    parser.addoption(
        '--fake-cuda', action='store_true', default=False,
        help="run the GPU paths on cvzoo.testing.cupy_stand_in, a strict CPU stand-in for "
             "CuPy with two fake GPUs (cuda:0, cuda:1)")


def pytest_configure(config):
    if config.getoption('--fake-cuda'):
        from cvzoo.testing import cupy_stand_in

        cupy_stand_in.install(n_devices=2)
