"""parskel: portable data-parallel computing on GPUs and CPUs, from Python.

>>> import parskel as ps
>>> ps.device()                       # doctest: +ELLIPSIS
<Device ...>
"""

from . import dist, errors, skeletal  # noqa: F401  (skeletal registers the sorts built from skeletons)
from ._version import __version__
from .algorithms import argsort, matmul, saxpy, scan, sort, vector_add, work_item_mapping
from .containers import Matrix, Tensor3, Tensor4, Vector, struct
from .pipeline import max_device_memory
from .primitives import (
    Select,
    argpartition,
    bincount,
    copy_if,
    histogram,
    partition,
    partition_if,
    reduce_by_key,
    run_length_encode,
    searchsorted,
    segmented_reduce,
    segmented_scan,
    top_k,
    unique,
    unique_by_key,
)
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
    "Select",
    "Tensor3",
    "Tensor4",
    "Timing",
    "Vector",
    "Zip",
    "__version__",
    "argpartition",
    "argsort",
    "bincount",
    "copy_if",
    "device",
    "devices",
    "dist",
    "errors",
    "function",
    "histogram",
    "matmul",
    "max_device_memory",
    "partition",
    "partition_if",
    "reduce_by_key",
    "round_to_multiple",
    "round_to_power_of_two",
    "run_length_encode",
    "saxpy",
    "scan",
    "searchsorted",
    "segmented_reduce",
    "segmented_scan",
    "sort",
    "struct",
    "top_k",
    "unique",
    "unique_by_key",
    "using",
    "vector_add",
    "work_item_mapping",
]
