"""Fixtures of the training tests: models built small, as the model tests build them."""

from tests.models.conftest import build_small_model  # noqa: F401 (a fixture)
