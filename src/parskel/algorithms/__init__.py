"""Algorithms in named variants (matmul, scan, sort, ...) and their CPU baselines."""

import importlib

from .basics import MAPPINGS, saxpy, vector_add, work_item_mapping
from .matmuls import matmul
from .registry import Param, Requirement, Variant, families, get, preferred, variants
from .scans import scan
from .sorts import sort

__all__ = [
    "MAPPINGS",
    "Param",
    "Requirement",
    "Variant",
    "cpu",
    "families",
    "get",
    "matmul",
    "preferred",
    "saxpy",
    "scan",
    "sort",
    "variants",
    "vector_add",
    "work_item_mapping",
]


def __getattr__(name: str) -> object:
    # the CPU baselines import Numba, most of a second: only when they are asked for
    if name == "cpu":
        return importlib.import_module(".cpu", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
