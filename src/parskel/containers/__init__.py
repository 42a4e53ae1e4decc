"""Containers: Vector and Matrix with lazy host/device coherence, and struct element types."""

from .base import Container
from .matrix import Matrix
from .structs import struct
from .vector import Vector

__all__ = ["Container", "Matrix", "Vector", "struct"]
