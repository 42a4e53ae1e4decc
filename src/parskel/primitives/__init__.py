"""The primitives users of CUB, Thrust and PyOpenCL reach for, built on parskel's own sorts and
scans, with NumPy's names and signatures where NumPy has the operation: ``histogram``,
``bincount``, ``searchsorted``, ``unique``, ``partition``, ``argpartition``; and beside them
counts by a bin function of one's own (``histogram_by``), segmented scans and reductions,
stream compaction by a user predicate (``copy_if``, ``partition_if``, :class:`Select`), runs of
equal keys (``run_length_encode``, ``unique_by_key``, ``reduce_by_key``) and ``top_k``.
docs/primitives.md describes them.

They take NumPy arrays (or anything ``np.asarray`` takes, Vectors included) and CUDA device
arrays, and give results of the same kind, as ``ps.sort`` does.
"""

from .runs import reduce_by_key, run_length_encode, unique, unique_by_key
from .searching import bincount, histogram, histogram_by, searchsorted
from .segments import segmented_reduce, segmented_scan
from .selection import Select, argpartition, copy_if, partition, partition_if, top_k

__all__ = [
    "Select",
    "argpartition",
    "bincount",
    "copy_if",
    "histogram",
    "histogram_by",
    "partition",
    "partition_if",
    "reduce_by_key",
    "run_length_encode",
    "searchsorted",
    "segmented_reduce",
    "segmented_scan",
    "top_k",
    "unique",
    "unique_by_key",
]
