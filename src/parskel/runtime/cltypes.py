"""NumPy dtypes as the C types of kernel source (OpenCL C spelling), and the OpenCL vector
types as NumPy dtypes.

A vector type (``float4``, ``uchar4``, ``double2``, ...) is a record dtype whose fields are the
lanes, named as OpenCL names the components: ``x``, ``y``, ``z``, ``w`` for 2, 3 and 4 lanes,
``s0`` .. ``s7`` and ``s0`` .. ``sf`` for 8 and 16. Its size is OpenCL's: ``n`` lanes take
``n`` elements, except 3 lanes, which take 4 (``float3`` is 16 bytes, its last 4 unused), and
a buffer of them is aligned to that size. The dtype carries its C name in its metadata, so that
it stays a vector type where a registered struct of the same layout exists.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import DTypeLike

from ..errors import DTypeError
from .base import Device

_C_TYPES: dict[np.dtype, str] = {
    np.dtype(np.int8): "char",
    np.dtype(np.uint8): "uchar",
    np.dtype(np.int16): "short",
    np.dtype(np.uint16): "ushort",
    np.dtype(np.int32): "int",
    np.dtype(np.uint32): "uint",
    np.dtype(np.int64): "long",
    np.dtype(np.uint64): "ulong",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
}


def c_type(dtype: DTypeLike, device: Device | None = None) -> str:
    """The C name of a scalar dtype; refuses float64 on a device without fp64."""
    dt = np.dtype(dtype)
    if dt.byteorder == ">":
        raise DTypeError(f"big-endian dtype {dt} is not supported; convert it with astype")
    name = _C_TYPES.get(dt)
    if name is None:
        vector = vector_name(dt)
        if vector is not None:
            raise DTypeError(
                f"{vector} elements are vectors, which skeletons with user functions in C take; "
                f"this operation takes scalars ({', '.join(str(d) for d in _C_TYPES)})"
            )
        supported = ", ".join(str(d) for d in _C_TYPES)
        raise DTypeError(f"no kernel type for dtype {dt}; supported: {supported}")
    if name == "double" and device is not None and not device.info.fp64:
        raise DTypeError(f"{device.id} ({device.name}) has no double precision (fp64) support")
    return name


def scalar_types() -> tuple[np.dtype, ...]:
    """Every scalar dtype a kernel can be generated for."""
    return tuple(_C_TYPES)


_VECTOR_KEY = "opencl_vector"
_LANE_NAMES = {2: ("x", "y"), 3: ("x", "y", "z"), 4: ("x", "y", "z", "w")}
_VECTORS: dict[str, np.dtype] = {}
_VECTOR_LAYOUTS: dict[np.dtype, str] = {}


def _vector(scalar: type, lanes: int) -> np.dtype:
    base = np.dtype(scalar)
    name = f"{_C_TYPES[base]}{lanes}"
    names = _LANE_NAMES.get(lanes) or tuple(f"s{k:x}" for k in range(lanes))
    spec = {
        "names": list(names),
        "formats": [base] * lanes,
        "offsets": [k * base.itemsize for k in range(lanes)],
        "itemsize": (4 if lanes == 3 else lanes) * base.itemsize,
    }
    dtype = np.dtype(spec, metadata={_VECTOR_KEY: name})  # type: ignore[call-overload]
    _VECTORS[name] = dtype
    _VECTOR_LAYOUTS[dtype] = name
    return dtype


def vector_name(dtype: np.dtype) -> str | None:
    """The OpenCL name of a vector dtype (``"float4"``), else None."""
    metadata = dtype.metadata
    return metadata.get(_VECTOR_KEY) if metadata else None


def vector_like(dtype: np.dtype) -> str | None:
    """The OpenCL name of the vector type whose layout ``dtype`` has (a vector dtype that lost
    its metadata, e.g. read back from a file), else None."""
    return _VECTOR_LAYOUTS.get(dtype) if dtype.names is not None else None


def vector_dtype(name: str) -> np.dtype | None:
    """The vector dtype of an OpenCL vector type name (``"float4"``), else None."""
    return _VECTORS.get(name)


def vector_types() -> tuple[np.dtype, ...]:
    """Every vector dtype."""
    return tuple(_VECTORS.values())


def alignment(dtype: np.dtype) -> int:
    """The alignment kernels assume for an element of ``dtype``: a vector's size (OpenCL aligns
    ``float4`` to 16 bytes, ``double4`` to 32), else NumPy's alignment."""
    return dtype.itemsize if vector_name(dtype) is not None else dtype.alignment


# the OpenCL vector types (ps.float4, ...)
char2 = _vector(np.int8, 2)  #: OpenCL ``char2``: 2 int8 lanes x, y
char3 = _vector(np.int8, 3)  #: OpenCL ``char3``: 3 int8 lanes x, y, z, in 4 bytes
char4 = _vector(np.int8, 4)  #: OpenCL ``char4``: 4 int8 lanes x, y, z, w
char8 = _vector(np.int8, 8)  #: OpenCL ``char8``: 8 int8 lanes s0 .. s7
char16 = _vector(np.int8, 16)  #: OpenCL ``char16``: 16 int8 lanes s0 .. sf
uchar2 = _vector(np.uint8, 2)  #: OpenCL ``uchar2``: 2 uint8 lanes x, y
uchar3 = _vector(np.uint8, 3)  #: OpenCL ``uchar3``: 3 uint8 lanes x, y, z, in 4 bytes
uchar4 = _vector(np.uint8, 4)  #: OpenCL ``uchar4``: 4 uint8 lanes x, y, z, w (an RGBA pixel)
uchar8 = _vector(np.uint8, 8)  #: OpenCL ``uchar8``: 8 uint8 lanes s0 .. s7
uchar16 = _vector(np.uint8, 16)  #: OpenCL ``uchar16``: 16 uint8 lanes s0 .. sf
short2 = _vector(np.int16, 2)  #: OpenCL ``short2``: 2 int16 lanes x, y
short3 = _vector(np.int16, 3)  #: OpenCL ``short3``: 3 int16 lanes x, y, z, in 8 bytes
short4 = _vector(np.int16, 4)  #: OpenCL ``short4``: 4 int16 lanes x, y, z, w
short8 = _vector(np.int16, 8)  #: OpenCL ``short8``: 8 int16 lanes s0 .. s7
short16 = _vector(np.int16, 16)  #: OpenCL ``short16``: 16 int16 lanes s0 .. sf
ushort2 = _vector(np.uint16, 2)  #: OpenCL ``ushort2``: 2 uint16 lanes x, y
ushort3 = _vector(np.uint16, 3)  #: OpenCL ``ushort3``: 3 uint16 lanes x, y, z, in 8 bytes
ushort4 = _vector(np.uint16, 4)  #: OpenCL ``ushort4``: 4 uint16 lanes x, y, z, w
ushort8 = _vector(np.uint16, 8)  #: OpenCL ``ushort8``: 8 uint16 lanes s0 .. s7
ushort16 = _vector(np.uint16, 16)  #: OpenCL ``ushort16``: 16 uint16 lanes s0 .. sf
int2 = _vector(np.int32, 2)  #: OpenCL ``int2``: 2 int32 lanes x, y
int3 = _vector(np.int32, 3)  #: OpenCL ``int3``: 3 int32 lanes x, y, z, in 16 bytes
int4 = _vector(np.int32, 4)  #: OpenCL ``int4``: 4 int32 lanes x, y, z, w
int8 = _vector(np.int32, 8)  #: OpenCL ``int8``: 8 int32 lanes s0 .. s7
int16 = _vector(np.int32, 16)  #: OpenCL ``int16``: 16 int32 lanes s0 .. sf
uint2 = _vector(np.uint32, 2)  #: OpenCL ``uint2``: 2 uint32 lanes x, y
uint3 = _vector(np.uint32, 3)  #: OpenCL ``uint3``: 3 uint32 lanes x, y, z, in 16 bytes
uint4 = _vector(np.uint32, 4)  #: OpenCL ``uint4``: 4 uint32 lanes x, y, z, w
uint8 = _vector(np.uint32, 8)  #: OpenCL ``uint8``: 8 uint32 lanes s0 .. s7
uint16 = _vector(np.uint32, 16)  #: OpenCL ``uint16``: 16 uint32 lanes s0 .. sf
long2 = _vector(np.int64, 2)  #: OpenCL ``long2``: 2 int64 lanes x, y
long3 = _vector(np.int64, 3)  #: OpenCL ``long3``: 3 int64 lanes x, y, z, in 32 bytes
long4 = _vector(np.int64, 4)  #: OpenCL ``long4``: 4 int64 lanes x, y, z, w
long8 = _vector(np.int64, 8)  #: OpenCL ``long8``: 8 int64 lanes s0 .. s7
long16 = _vector(np.int64, 16)  #: OpenCL ``long16``: 16 int64 lanes s0 .. sf
ulong2 = _vector(np.uint64, 2)  #: OpenCL ``ulong2``: 2 uint64 lanes x, y
ulong3 = _vector(np.uint64, 3)  #: OpenCL ``ulong3``: 3 uint64 lanes x, y, z, in 32 bytes
ulong4 = _vector(np.uint64, 4)  #: OpenCL ``ulong4``: 4 uint64 lanes x, y, z, w
ulong8 = _vector(np.uint64, 8)  #: OpenCL ``ulong8``: 8 uint64 lanes s0 .. s7
ulong16 = _vector(np.uint64, 16)  #: OpenCL ``ulong16``: 16 uint64 lanes s0 .. sf
float2 = _vector(np.float32, 2)  #: OpenCL ``float2``: 2 float32 lanes x, y
float3 = _vector(np.float32, 3)  #: OpenCL ``float3``: 3 float32 lanes x, y, z, in 16 bytes
float4 = _vector(np.float32, 4)  #: OpenCL ``float4``: 4 float32 lanes x, y, z, w
float8 = _vector(np.float32, 8)  #: OpenCL ``float8``: 8 float32 lanes s0 .. s7
float16 = _vector(np.float32, 16)  #: OpenCL ``float16``: 16 float32 lanes s0 .. sf
double2 = _vector(np.float64, 2)  #: OpenCL ``double2``: 2 float64 lanes x, y
double3 = _vector(np.float64, 3)  #: OpenCL ``double3``: 3 float64 lanes x, y, z, in 32 bytes
double4 = _vector(np.float64, 4)  #: OpenCL ``double4``: 4 float64 lanes x, y, z, w
double8 = _vector(np.float64, 8)  #: OpenCL ``double8``: 8 float64 lanes s0 .. s7
double16 = _vector(np.float64, 16)  #: OpenCL ``double16``: 16 float64 lanes s0 .. sf
