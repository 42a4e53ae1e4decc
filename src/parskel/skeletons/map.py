"""Map: f(a_i) for every element (seed 004, section 2.4.1), and the element-wise machinery that
Zip, MapArray and Generate share (kernel template ``kernels/skeletons/map.cl``)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..containers.base import Container
from ..containers.structs import element_c_type, stored_c_type
from ..errors import ShapeError
from ..runtime import Buffer, Device, Kernel
from ..runtime.memo import remembered
from ..runtime.traits import aligned, grid_stride_groups
from . import pipelined
from .arguments import bind_extras, mark_written
from .base import Skeleton
from .program import build, check_size, group_size, tuned_group
from .userfn import UserFunction, UserSource, dtype_of

TEMPLATE = "skeletons/map.cl"
# below this many elements a CPU runs the checked kernel alone: a second launch costs more than
# the unchecked kernel saves
_FLAT_MIN = 1 << 14
#: The work-group size on CPUs unless tuned (``parskel tune skeletons.map``), where every element
#: is a number: PoCL runs a group as one vectorised loop, so larger groups cost fewer calls of
#: it. x * x over 2^20 floats on 2 cores (AMD Zen 5, PoCL 3.1), NumPy to NumPy: 101-114 us in
#: groups of 256, 95-104 in 1024, 93-103 in 4096; the tuner chose 1024 at 2^16, 2^20 and 2^22.
#: Elements that are records, and user functions that index arrays, keep the default groups of
#: 256: PoCL keeps a group's private data on its worker thread's stack, and the skeleton sort's
#: Maps over blocks of 8 keys overflowed an 8 MiB stack in groups of 1024 (2^15 keys and more).
CPU_GROUP = 1024


def vector_lanes(device: Device, inputs: Sequence[np.dtype], out: np.dtype | None) -> int:
    """Elements per 16-byte vector for ``ps_map_vec``, or 0 where it does not apply: on GPUs,
    where every input and the result are integer or floating-point scalars of one size, 4 or 8
    bytes (CPUs run the flat kernel, which PoCL vectorises itself).

    >>> class Gpu: type = "gpu"
    >>> f4, f8 = np.dtype(np.float32), np.dtype(np.float64)
    >>> vector_lanes(Gpu(), [f4, np.dtype(np.int32)], f4), vector_lanes(Gpu(), [f8], f8), vector_lanes(Gpu(), [f4], f8)
    (4, 2, 0)
    """
    if device.type == "cpu" or out is None:
        return 0
    every = [*inputs, out]
    size = out.itemsize
    if size not in (4, 8) or any(d.kind not in "iuf" or d.itemsize != size for d in every):
        return 0
    return 16 // size


def _unroll(out: np.dtype | None) -> int:
    """Elements a work-item of the grid-stride kernel loads before it stores: 8 results of at
    most 8 bytes (on an H200, x * x over 2^28 floats took 0.601 ms at 8 and 0.630 ms at 4; a
    copy 0.509), 4 of larger ones, whose registers would cost occupancy.

    >>> _unroll(np.dtype(np.float32)), _unroll(np.dtype([("a", "f8"), ("b", "f8")])), _unroll(None)
    (8, 4, 4)
    """
    return 8 if out is not None and out.itemsize <= 8 else 4


#: Rows of vectors (a vector per work-item) in a tile of ``ps_map_vec``, which takes a
#: work-group per tile: on an H200, x * x over 2^24, 2^26 and 2^28 floats ran at 0.96x, 0.98x and
#: 0.98x of a device copy's speed in tiles of 4 rows of 256 vectors, at 0.92x, 0.91x and 0.91x in
#: a grid that fills the device once, each work-group a run of rows (2026-11-27).
VEC_ROWS = 4


#: The kernel parameters that hold the extents of axes 1, 2 and 3 (1 past the container's last).
EXTENTS = ("ps_e1", "ps_e2", "ps_e3")


def axis_indices(flat: str, extents: Sequence[str]) -> list[str]:
    """C expressions of the per-axis indices, first axis first, of the element at flat index
    ``flat`` of a row-major container whose axes after the first have the extents ``extents``.

    >>> axis_indices("i", ["e1", "e2"])
    ['(i) / e2 / e1', '(i) / e2 % e1', '(i) % e2']
    """
    found = []
    for axis in range(len(extents) + 1):
        inner = "".join(f" / {e}" for e in reversed(extents[axis:]))
        found.append(f"({flat}){inner}" + (f" % {extents[axis - 1]}" if axis else ""))
    return found


@dataclass(frozen=True)
class _Plan:
    kernel: Kernel
    flat: Kernel | None  # unchecked whole work-groups, on CPUs
    vec: Kernel | None  # whole 16-byte vectors, on GPUs (see vector_lanes)
    lanes: int
    group: int
    out_dtype: np.dtype | None
    sizes: dict[Hashable, _Sizes] = field(default_factory=dict)  # per shape called with


# a call's launch arguments: the element count and extents (as kernel scalars), the elements
# the flat kernel takes (whole work-groups, on CPUs; 0: none) and that count as a kernel scalar,
# the other kernel's work-items and the vector kernel's
_Sizes = tuple[np.uint32, list[np.uint32], int, np.uint32, int, int]


def _sizes(plan: _Plan, dev: Device, shape: tuple[int, ...], n: int) -> _Sizes:
    extents = [np.uint32(max(e, 1)) for e in (*shape[1:], 1, 1, 1)[: len(EXTENTS)]]
    first = 0
    if plan.flat is not None and n >= max(plan.group, _FLAT_MIN):
        first = n - n % plan.group
    items = grid_stride_groups(dev, n - first, plan.group) * plan.group if first < n else 0
    vec_items = -(-n // (plan.lanes * plan.group * VEC_ROWS)) * plan.group if plan.lanes else 0
    return np.uint32(n), extents, first, np.uint32(first), items, vec_items


class Elementwise(Skeleton):
    """Elements in a grid-stride loop over work-groups that fill the device; ``inputs``
    element parameters come first."""

    def __init__(self, source: UserSource, inputs: int) -> None:
        super().__init__()
        self.inputs = inputs
        self.fn = UserFunction(source, self.name, "user", inputs)
        self._void = self.fn.return_type == "void"
        self._out_dtype = None if self._void else dtype_of(self.fn.return_type, self.fn.where)

    def _build(self, dev: Device, in_types: tuple[str, ...], dtypes: tuple[np.dtype, ...], ndim: int) -> _Plan:
        fn = self.fn
        indices = fn.element_indices(ndim, "ps_i", axis_indices("ps_i", EXTENTS[: ndim - 1]))
        for k, ctype in enumerate(in_types):
            fn.check_element(k, ctype, f"input {k}")
        if self._out_dtype is not None:
            element_c_type(self._out_dtype, dev)
        out_t = stored_c_type(fn.return_type)
        element = fn.call([f"ps_in{k}[ps_i]" for k in range(len(in_types))], indices, "ps_x")
        glue = [
            "#define PS_INPUT_PARAMS "
            + "".join(f"__global const {stored_c_type(t)} *ps_in{k}, " for k, t in enumerate(in_types)),
            "#define PS_OUT_PARAM " + ("" if self._void else f"__global {out_t} *ps_out,"),
            f"#define PS_OUT_T {out_t}",
            f"#define PS_VOID {int(self._void)}",
            "#define PS_EXTRA_PARAMS " + fn.extra_params("ps_x"),
            f"#define PS_ELEMENT_AT(ps_i) {element}",
            f"#define PS_MAP_UNROLL {_unroll(self._out_dtype)}",
        ]
        lanes = vector_lanes(dev, dtypes, self._out_dtype)
        if lanes:
            at = f"(ps_q * {lanes} + ps_c)"  # the element's index: lane ps_c of vector ps_q
            lane_indices = fn.element_indices(ndim, at, axis_indices(at, EXTENTS[: ndim - 1]))
            lane_call = fn.call([f"ps_q{k}.ps_s" for k in range(len(in_types))], lane_indices, "ps_x")
            glue += [
                f"#define PS_LANES {lanes}",
                f"#define PS_OUT_VT {out_t}{lanes}",
                "#define PS_VEC_LOADS "
                + " ".join(
                    f"{t}{lanes} ps_q{k} = ((__global const {t}{lanes} *)ps_in{k})[ps_q];"
                    for k, t in enumerate(in_types)
                ),
                f"#define PS_VEC_AT(ps_c, ps_s) {lane_call}",
                f"#define PS_VEC_ROWS {VEC_ROWS}",
            ]
        used = list(dtypes) + ([] if self._out_dtype is None else [self._out_dtype])
        program = build(dev, self.name, TEMPLATE, [fn], used, "\n".join(glue) + "\n")
        kernel = program.kernel("ps_map")
        flat = program.kernel("ps_map_flat") if dev.type == "cpu" else None
        vec = program.kernel("ps_map_vec") if lanes else None
        plain = all(d.names is None and d.subdtype is None for d in used) and "[" not in fn.body
        group = group_size(kernel, dev, tuned_group(dev, kernel.name, cpu=CPU_GROUP if plain else None))
        return _Plan(kernel, flat, vec, lanes, group, self._out_dtype)

    def _run(
        self, inputs: list[Container], shape_like: Container, extras: tuple[Any, ...], out: Any
    ) -> Container | None:
        dev = shape_like.device
        ndim = shape_like.ndim
        dtypes = tuple([c.dtype for c in inputs])
        key = (dev, dtypes, ndim)
        plan = self._plans.get(key) or self._plan(
            key, lambda: self._build(dev, tuple(c.c_type for c in inputs), dtypes, ndim)
        )
        n = shape_like.size
        check_size(n, self.name)
        args, written = bind_extras(self.fn, extras, dev) if extras or self.fn.extras else ([], [])
        if written and any(c is w for c in inputs for w in written):
            raise ShapeError(f"{self.name}: a container passed for writing must not also be an input")
        result = None
        head = [c.to_device() for c in inputs]
        if not self._void:
            result = self._output(out, shape_like, shape_like.shape, plan.out_dtype, inputs, may_alias=True)
            if written and any(result is w for w in written):
                raise ShapeError(f"{self.name}: out must not also be an extra argument")
            head.append(result.writable_buffer() if out is not None else result.output_buffer())
        elif out is not None:
            raise ShapeError(f"{self.name}: the user function returns void, so there is no out")
        _launch(plan, dev, shape_like.shape, n, head, args)
        if result is not None:
            result.mark_device_written()
        if written:
            mark_written(written)
        return result

    def _host_plan(self, dev: Device, xs: Sequence[np.ndarray]) -> _Plan | None:
        """The plan of a call on host arrays ``xs`` (one shape) that :meth:`_run_host` can run:
        one whose types were called before (through containers, which check them and build
        the kernels), with a result; else None."""
        plan = self._plans.get((dev, tuple([x.dtype for x in xs]), xs[0].ndim))
        return None if plan is None or plan.out_dtype is None else plan

    def _run_host(
        self, plan: _Plan, dev: Device, xs: Sequence[np.ndarray], extras: tuple[Any, ...], target: np.ndarray
    ) -> None:
        """The call on host arrays ``xs`` into ``target`` (of their shape, and no partial overlap
        with any), through buffers over the arrays themselves: on a device that shares host
        memory nothing is copied, and no container is made."""
        x = xs[0]
        n = x.size
        check_size(n, self.name)
        args = bind_extras(self.fn, extras, dev)[0] if extras or self.fn.extras else []
        result = dev.host_buffer(target, upload=False)
        _launch(plan, dev, x.shape, n, [*[dev.host_buffer(a) for a in xs], result], args)
        dev.download(result, target)


def _launch(plan: _Plan, dev: Device, shape: tuple[int, ...], n: int, head: list[Buffer], args: list[Any]) -> None:
    """The kernels of a call on ``n`` elements of ``shape``: ``head`` holds the inputs' buffers,
    then the output's (if the function returns a value); ``args`` the extras' kernel arguments."""
    sizes = plan.sizes.get(shape) or remembered(plan.sizes, shape, lambda: _sizes(plan, dev, shape, n))
    count, extents, first, first_arg, items, vec_items = sizes
    if vec_items and plan.vec is not None and all([aligned(b, 16) for b in head]):
        dev.launch(plan.vec, vec_items, plan.group, *head, count, *extents, *args)
    else:
        if first and plan.flat is not None:
            dev.launch(plan.flat, first, plan.group, *head, count, *extents, *args)
        if items:
            dev.launch(plan.kernel, items, plan.group, *head, count, *extents, first_arg, *args)


class Map(Elementwise):
    """``Map(f)(a, *extra)``: ``f(a[i], [index], *extra)`` for every element, a new container.

    ``f`` is a Python function (translated for the types of each call) or OpenCL C source. The
    result type is what ``f`` returns; a function that returns nothing writes only through its
    container extras. ``out=`` writes into an existing container (it may be ``a``).

    >>> square = ps.Map(lambda x: x * x)
    >>> square(ps.Vector(np.arange(4, dtype=np.float32))).numpy()
    array([0., 1., 4., 9.], dtype=float32)
    >>> ps.Map("float f(float x) { return x * x; }")(ps.Vector(np.arange(4, dtype=np.float32))).numpy()
    array([0., 1., 4., 9.], dtype=float32)
    """

    name = "Map"

    def __init__(self, source: UserSource) -> None:
        super().__init__(source, 1)

    def __call__(self, a: Container | np.ndarray, *extra: Any, out: Any = None) -> Container | np.ndarray | None:
        if isinstance(a, np.ndarray):  # host arrays in and out, in chunks where that pays
            return pipelined.elementwise(self, (a,), extra, out)
        (a,) = self._inputs([a], ["the input"], bools=True)
        return self._run([a], a, extra, out)
