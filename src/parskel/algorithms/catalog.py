"""Imports every family module, so that importing this registers every variant."""

from . import basics  # noqa: F401
