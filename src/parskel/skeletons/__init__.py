"""Algorithmic skeletons (seed 004): built once from user functions, in Python or in OpenCL C,
called many times.

Each skeleton is a class beside its kernel template in ``kernels/skeletons/``; results stay on
the device until the host reads them, so calls compose: ``total(square(v))``.
"""

from .all_pairs import AllPairs
from .generate import Generate
from .map import Map
from .map_array import MapArray
from .map_overlap import MapOverlap
from .map_reduce import MapReduce
from .pyfunc import Index, PyFunction, function
from .reduce import Reduce
from .scan import Scan
from .scatter import Gather, Scatter
from .zip import Zip

__all__ = [
    "AllPairs",
    "Gather",
    "Generate",
    "Index",
    "Map",
    "MapArray",
    "MapOverlap",
    "MapReduce",
    "PyFunction",
    "Reduce",
    "Scan",
    "Scatter",
    "Zip",
    "function",
]
