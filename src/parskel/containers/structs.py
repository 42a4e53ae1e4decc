"""Structured NumPy dtypes as C structs that user functions can name (and complex64 and
complex128 as ``cfloat`` and ``cdouble``, defined in ``kernels/common/complex.h``, and the
OpenCL vector types of ``runtime/cltypes.py``, ``float4`` and its kin).

``ps.struct("affine", [("a", np.float32), ("b", np.float32)])`` registers a record type under a
C name. Kernels get a ``typedef struct {...} affine;`` generated from the dtype, and the layout
is checked on each device once (``sizeof`` and every field offset, read back by a tiny kernel),
so host and device agree byte for byte or the user hears about it before any data moves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from numpy.lib import recfunctions
from numpy.typing import DTypeLike

from ..errors import DTypeError, ShapeError
from ..runtime import Device, Source
from ..runtime import c_type as scalar_c_type
from ..runtime.cltypes import vector_like, vector_name, vector_types

_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_RESERVED = {
    "char",
    "uchar",
    "short",
    "ushort",
    "int",
    "uint",
    "long",
    "ulong",
    "float",
    "double",
    "half",
    "bool",
    "void",
    "size_t",
    "struct",
    "union",
    "typedef",
    "const",
    "if",
    "else",
    "for",
    "while",
    "do",
    "return",
    "switch",
    "case",
    "default",
    "break",
    "continue",
    "sizeof",
    "signed",
    "unsigned",
    "static",
    "inline",
    "kernel",
    "global",
    "local",
    "constant",
    "private",
    "ps_index",
    "cfloat",
    "cdouble",
    *(vector_name(dt) for dt in vector_types()),
}
#: The C names of complex element types (kernels/common/complex.h).
COMPLEX_TYPES: dict[np.dtype, str] = {np.dtype(np.complex64): "cfloat", np.dtype(np.complex128): "cdouble"}


def _fields(dtype: np.dtype) -> list[tuple[str, np.dtype, int]]:
    """(name, dtype, offset) of every field of a record dtype, in order."""
    found: Mapping[str, Any] = dtype.fields or {}
    return [(name, found[name][0], found[name][1]) for name in dtype.names or ()]


_names: dict[np.dtype, str] = {}
_dtypes: dict[str, np.dtype] = {}
_checked: set[tuple[str, str]] = set()


def struct(name: str, fields: DTypeLike | Sequence[tuple]) -> np.dtype:
    """Register a record dtype under the C type ``name`` and return the dtype.

    ``fields`` is a structured dtype or a NumPy field list; a field list gets C alignment
    (``align=True``). Fields are scalars, registered structs, or fixed-size arrays of them.

    >>> affine = ps.struct("affine", [("a", np.float32), ("b", np.float32)])
    >>> ps.Vector(np.array([(2.0, 1.0)], dtype=affine)).c_type
    'affine'
    """
    if not _IDENT.match(name) or name in _RESERVED or name.startswith("ps_"):
        raise DTypeError(f"{name!r} cannot be a C struct name (a free identifier, not a keyword or ps_*)")
    dtype = fields if isinstance(fields, np.dtype) else np.dtype(fields, align=True)  # type: ignore[arg-type]
    if dtype.names is None:
        raise DTypeError(f"struct {name!r} needs a structured dtype with named fields, got {dtype}")
    _check_host_layout(name, dtype)
    known = _dtypes.get(name)
    if known is not None and known != dtype:
        raise DTypeError(f"struct {name!r} is already registered with a different layout: {known}")
    other = _names.get(dtype)
    if other is not None and other != name:
        raise DTypeError(f"this dtype is already registered as struct {other!r}")
    _names[dtype] = name
    _dtypes[name] = dtype
    return dtype


def struct_name(dtype: np.dtype) -> str:
    """The registered C name of a record dtype."""
    name = _names.get(dtype)
    if name is None:
        raise DTypeError(
            f"the record dtype {dtype} has no C name; register it first with "
            "ps.struct('name', dtype) so that user functions can name it"
        )
    return name


def struct_dtype(name: str) -> np.dtype | None:
    """The dtype registered under a C name, if any."""
    return _dtypes.get(name)


def vector_of(dtype: np.dtype) -> str | None:
    """The OpenCL vector type of an element dtype, else None: a vector dtype, or one of a
    vector's layout that no registered struct has (a vector dtype that lost its metadata)."""
    return vector_name(dtype) or (vector_like(dtype) if dtype not in _names else None)


def element_c_type(dtype: DTypeLike, device: Device | None = None) -> str:
    """The C type of a container element: a scalar, an OpenCL vector type, or a registered
    struct (layout-checked)."""
    dt = np.dtype(dtype)
    if dt.names is not None:  # a struct: its name may be registered anew
        return _element_c_type(dt, device)
    key = (dt, device)
    found = _C_TYPES.get(key)
    if found is None:
        found = _C_TYPES[key] = _element_c_type(dt, device)
    return found


_C_TYPES: dict[tuple[np.dtype, Device | None], str] = {}  # element types found before


def _element_c_type(dt: np.dtype, device: Device | None) -> str:
    vector = vector_of(dt)
    if vector is not None:
        if vector.startswith("double") and device is not None and not device.info.fp64:
            raise DTypeError(f"{device.id} ({device.name}) has no double precision (fp64) for {vector}")
        return vector
    if dt.kind == "b":
        return "bool"
    if dt in COMPLEX_TYPES:
        if dt == np.complex128 and device is not None and not device.info.fp64:
            raise DTypeError(f"{device.id} ({device.name}) has no double precision (fp64) for complex128")
        return COMPLEX_TYPES[dt]
    if dt.names is None:
        if dt.subdtype is not None:
            raise DTypeError(f"sub-array dtype {dt} cannot be an element type; use a struct field")
        return scalar_c_type(dt, device)
    name = struct_name(dt)
    if device is not None:
        for sub in _structs_in(dt):
            check_device_layout(sub, device)
    return name


def vector_elements(data: Any, dtype: DTypeLike | None, *, copy: bool = True) -> Any:
    """``data`` for a container of ``dtype``: where that is a vector type and ``data`` an array
    (or nested lists) of numbers whose last axis holds the lanes, the lanes as records (a view
    of ``data`` where its layout is the records', else a converted copy, which ``copy=False``
    refuses); else ``data`` as is.

    >>> vector_elements(np.arange(8, dtype=np.float32).reshape(2, 4), ps.float4)
    array([(0., 1., 2., 3.), (4., 5., 6., 7.)],
          dtype=[('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('w', '<f4')])
    """
    dt = None if dtype is None else np.dtype(dtype)
    name = None if dt is None else vector_name(dt)
    records = getattr(getattr(data, "dtype", None), "names", None) is not None
    if dt is None or name is None or records:
        return data
    lanes = len(dt.names or ())
    array = np.asarray(data)
    if array.ndim == 0 or array.shape[-1] != lanes:
        raise ShapeError(
            f"{name} elements come from records of ps.{name} or from an array whose last axis holds the "
            f"{lanes} lanes; got an array of shape {array.shape}"
        )
    base = dt.fields[dt.names[0]][0] if dt.fields and dt.names else None
    if array.dtype == base and array.flags.c_contiguous and dt.itemsize == lanes * array.itemsize:
        return array.view(dt)[..., 0]
    if not copy:
        raise DTypeError(
            f"copy=False views the lanes as {name} records, which takes a C-contiguous {base} array"
            f"{' (3 lanes are stored in 4)' if lanes == 3 else ''}; got a {array.dtype} array"
        )
    return recfunctions.unstructured_to_structured(array, dtype=dt)


def stored_c_type(ctype: str) -> str:
    """The C type a buffer of ``ctype`` elements is declared with in a kernel: a bool is a uchar
    there (0 or 1, as NumPy stores it), since kernels take no pointers to bool."""
    return "uchar" if ctype == "bool" else ctype


def _field_base(dtype: np.dtype) -> tuple[np.dtype, tuple[int, ...]]:
    if dtype.subdtype is not None:
        base, shape = dtype.subdtype
        return base, tuple(shape)
    return dtype, ()


def _structs_in(dtype: np.dtype) -> list[np.dtype]:
    """Every record dtype ``dtype`` is made of, dependencies first, ``dtype`` last."""
    order: list[np.dtype] = []

    def visit(dt: np.dtype) -> None:
        for _, fdtype, _ in _fields(dt):
            base, _ = _field_base(fdtype)
            if base.names is not None:
                visit(base)
        if dt not in order:
            order.append(dt)

    visit(dtype)
    return order


def _alignment(dtype: np.dtype) -> int:
    base, _ = _field_base(dtype)
    if base.names is None:
        return base.itemsize
    return max((_alignment(fdtype) for _, fdtype, _ in _fields(base)), default=1)


def _check_host_layout(name: str, dtype: np.dtype) -> None:
    """Refuse a record whose NumPy layout is not the natural C layout of its fields."""
    offset = 0
    for field, fdtype, foffset in _fields(dtype):
        if not _IDENT.match(field) or field in _RESERVED:
            raise DTypeError(f"struct {name!r}: field name {field!r} is not a usable C identifier")
        base, _ = _field_base(fdtype)
        if base.names is None:
            scalar_c_type(base)
        else:
            struct_name(base)
        align = _alignment(fdtype)
        offset = -(-offset // align) * align
        if foffset != offset:
            raise DTypeError(
                f"struct {name!r}: field {field!r} is at byte {foffset}, but C places it at {offset}; "
                "build the dtype with np.dtype(fields, align=True)"
            )
        offset += fdtype.itemsize
    align = _alignment(dtype)
    size = -(-offset // align) * align
    if dtype.itemsize != size:
        raise DTypeError(
            f"struct {name!r}: NumPy's item size is {dtype.itemsize} bytes, C's sizeof is {size}; "
            "build the dtype with np.dtype(fields, align=True)"
        )


def _field_decl(field: str, fdtype: np.dtype) -> str:
    base, shape = _field_base(fdtype)
    ctype = scalar_c_type(base) if base.names is None else struct_name(base)
    return f"    {ctype} {field}{''.join(f'[{n}]' for n in shape)};"


def struct_definitions(dtypes: Iterable[np.dtype]) -> str:
    """C typedefs for the record dtypes among ``dtypes`` (and the structs they contain)."""
    order: list[np.dtype] = []
    for dt in dtypes:
        if dt.names is not None and vector_of(dt) is None:
            for sub in _structs_in(dt):
                if sub not in order:
                    order.append(sub)
    blocks = []
    for dt in order:
        body = "\n".join(_field_decl(f, fdtype) for f, fdtype, _ in _fields(dt))
        blocks.append(f"typedef struct {{\n{body}\n}} {struct_name(dt)};\n")
    return "".join(blocks)


def structs_named_in(text: str) -> list[np.dtype]:
    """The registered structs whose C names occur as words in ``text``."""
    words = set(re.findall(r"[A-Za-z_]\w*", text))
    return [dt for name, dt in _dtypes.items() if name in words]


def check_device_layout(dtype: np.dtype, device: Device) -> None:
    """Compare ``sizeof`` and field offsets on ``device`` with NumPy's; once per device."""
    name = struct_name(dtype)
    key = (name, device.id)
    if key in _checked:
        return
    fields = [f for f, _, _ in _fields(dtype)]
    lines = [f"    out[0] = (ulong)sizeof({name});"]
    for k, field in enumerate(fields, start=1):
        lines.append(f"    out[{k}] = (ulong)((__global char *)&p->{field} - (__global char *)p);")
    body = "\n".join(lines)
    text = (
        f"{struct_definitions([dtype])}\n"
        f"__kernel void ps_layout(__global {name} *p, __global ulong *out)\n{{\n{body}\n}}\n"
    )
    program = device.build(Source.compose([(f"struct_{name}_layout.cl", text)]))
    probe = device.alloc(dtype.itemsize)
    out = device.alloc(8 * (len(fields) + 1))
    device.launch(program.kernel("ps_layout"), 1, 1, probe, out)
    got = np.empty(len(fields) + 1, dtype=np.uint64)
    device.download(out, got)
    want = [dtype.itemsize] + [offset for _, _, offset in _fields(dtype)]
    if [int(g) for g in got] != want:
        raise DTypeError(
            f"struct {name!r} has a different layout on {device.id}: sizeof and offsets "
            f"{[int(g) for g in got]} on the device, {want} in NumPy ({dtype})"
        )
    _checked.add(key)
