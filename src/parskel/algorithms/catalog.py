"""Imports every family module, so that importing this registers every variant."""

from . import (
    basics,  # noqa: F401
    matmuls,  # noqa: F401
    scans,  # noqa: F401
    single_pass,  # noqa: F401
    sorts,  # noqa: F401
)
