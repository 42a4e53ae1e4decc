"""Algorithms in named variants (matmul, scan, sort, ...) and their CPU baselines."""

from .basics import MAPPINGS, saxpy, vector_add, work_item_mapping

__all__ = ["MAPPINGS", "saxpy", "vector_add", "work_item_mapping"]
