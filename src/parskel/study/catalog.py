"""Imports every study module, so that importing this registers every study and its variants,
in the seed's order."""

from . import (
    bfs,  # noqa: F401
    crc,  # noqa: F401
    lud,  # noqa: F401
    needle,  # noqa: F401
    srad,  # noqa: F401
)
