"""The model zoo."""
