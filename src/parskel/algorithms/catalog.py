"""Imports every family module, so that importing this registers every variant."""

from . import basics  # noqa: F401
from . import matmuls  # noqa: F401
from . import scans  # noqa: F401
from . import sorts  # noqa: F401
