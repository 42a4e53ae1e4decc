"""parskel: portable data-parallel computing on GPUs and CPUs, from Python.

>>> import parskel as ps
>>> ps.device()                       # doctest: +SKIP
<Device opencl:0:0: ... (cpu, Portable Computing Language)>
"""

from . import errors
from ._version import __version__
from .algorithms import matmul, saxpy, scan, sort, vector_add, work_item_mapping
from .runtime import Device, Timing, device, devices, round_to_multiple, round_to_power_of_two, using

__all__ = [
    "Device",
    "Timing",
    "__version__",
    "device",
    "devices",
    "errors",
    "matmul",
    "round_to_multiple",
    "round_to_power_of_two",
    "saxpy",
    "scan",
    "sort",
    "using",
    "vector_add",
    "work_item_mapping",
]
