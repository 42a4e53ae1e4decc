"""parskel: portable data-parallel computing on GPUs and CPUs, from Python.

>>> import parskel as ps
>>> ps.device()                       # doctest: +ELLIPSIS
<Device ...>
"""

from . import dist, errors, skeletal  # noqa: F401  (skeletal registers the sorts built from skeletons)
from ._version import __version__
from .algorithms import argsort, matmul, saxpy, scan, sort, vector_add, work_item_mapping
from .containers import Matrix, Vector, struct
from .pipeline import max_device_memory
from .runtime import Device, Timing, device, devices, round_to_multiple, round_to_power_of_two, using
from .skeletons import (
    AllPairs,
    Gather,
    Generate,
    Index,
    Map,
    MapArray,
    MapOverlap,
    MapReduce,
    PyFunction,
    Reduce,
    Scan,
    Scatter,
    Zip,
    function,
)

__all__ = [
    "AllPairs",
    "Device",
    "Gather",
    "Generate",
    "Index",
    "Map",
    "MapArray",
    "MapOverlap",
    "MapReduce",
    "Matrix",
    "PyFunction",
    "Reduce",
    "Scan",
    "Scatter",
    "Timing",
    "Vector",
    "Zip",
    "__version__",
    "argsort",
    "device",
    "devices",
    "dist",
    "errors",
    "function",
    "matmul",
    "max_device_memory",
    "round_to_multiple",
    "round_to_power_of_two",
    "saxpy",
    "scan",
    "sort",
    "struct",
    "using",
    "vector_add",
    "work_item_mapping",
]
