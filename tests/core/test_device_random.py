"""cvzoo.core.device_random: a counter-based generator whose state lives on the device."""

import numpy

from cvzoo.core import backend, device_random


def test_seeded_streams_repeat_advance_and_differ_by_seed():
    generator = device_random.DeviceGenerator(numpy, seed=3)
    first = generator.uniform((4, 5))
    second = generator.uniform((7,))
    assert int(generator.counter) == 27
    generator.seed(3)
    numpy.testing.assert_array_equal(generator.uniform((4, 5)), first)
    numpy.testing.assert_array_equal(generator.uniform((7,)), second)
    assert not numpy.array_equal(device_random.DeviceGenerator(numpy, 4).uniform((4, 5)), first)


def test_numbers_are_uniform_in_the_unit_interval():
    u = device_random.DeviceGenerator(numpy, seed=0).uniform((200_000,))
    assert u.dtype == numpy.float32 and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    counts = numpy.bincount((u * 10).astype(int), minlength=10)
    assert counts.min() > 0.97 * 20_000 and counts.max() < 1.03 * 20_000


def test_the_gpu_draws_the_host_numbers_from_state_on_the_device(gpu_pair):
    gpu = gpu_pair[1]  # cuda:1 where there are two: made there, not on the current GPU
    device_random.seed(5)
    x = backend.zeros((3, 4), device=gpu)
    generator = device_random.get_generator(x)
    assert backend.get_device_from_array(generator.counter) == gpu
    on_gpu = generator.uniform((3, 4))
    assert backend.get_device_from_array(on_gpu) == gpu
    numpy.testing.assert_array_equal(backend.to_numpy(on_gpu),
                                     device_random.DeviceGenerator(numpy, 5).uniform((3, 4)))
    device_random.seed(0)
