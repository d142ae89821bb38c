import threading

import pytest

from cvzoo.core.config import config, no_backprop_mode, using_config


def test_using_config_restores_on_exit():
    with using_config('train', False):
        assert config.train is False
    assert config.train is True


def test_using_config_restores_on_error():
    with pytest.raises(RuntimeError):
        with no_backprop_mode():
            raise RuntimeError
    assert config.enable_backprop is True


def test_unknown_field_is_refused():
    with pytest.raises(AttributeError, match='unknown config field'):
        with using_config('trian', False):
            pass


def test_config_is_per_thread():
    seen = []
    with using_config('train', False):
        thread = threading.Thread(target=lambda: seen.append(config.train))
        thread.start()
        thread.join()
    assert seen == [True]
