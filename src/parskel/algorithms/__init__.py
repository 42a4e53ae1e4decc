"""Algorithms in named variants (matmul, scan, sort, ...); their CPU baselines and peers live in
:mod:`parskel.bench`."""

from . import catalog  # noqa: F401  (registers every variant)
from .basics import MAPPINGS, saxpy, vector_add, work_item_mapping
from .matmuls import matmul
from .ordering import argsort
from .registry import Param, Requirement, Variant, families, get, preferred, variants
from .scans import scan
from .sorts import sort

__all__ = [
    "MAPPINGS",
    "Param",
    "Requirement",
    "Variant",
    "argsort",
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
