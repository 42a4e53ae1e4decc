"""MapOverlap: f over each element and its neighbours within a radius, 1D and 2D, with a
choice of boundary (seed 004: SkelCL's and SkePU's MapOverlap). Template
``kernels/skeletons/map_overlap.cl``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..containers.base import Container
from ..errors import ShapeError, UserFunctionError
from ..runtime import Buffer, Device, Kernel, round_to_multiple
from .arguments import as_buffer_value, bind_extras, mark_written
from .base import Skeleton
from .program import build, check_size, group_size
from .userfn import UserFunction, UserSource, dtype_of

TEMPLATE = "skeletons/map_overlap.cl"
Boundary = Literal["neutral", "clamp", "wrap", "mirror", "none"]
BOUNDARIES: tuple[Boundary, ...] = ("neutral", "clamp", "wrap", "mirror", "none")
TILE = 16
#: The largest radius on a Vector, and on a Matrix: each work-item copies its window, 2r + 1 or
#: (2r + 1)^2 elements, into private memory (registers, or the stack on GPUs).
RADIUS_1D = 256
RADIUS_2D = 16


@dataclass(frozen=True)
class _Plan:
    kernel: Kernel
    group: int
    neutral: Buffer


class MapOverlap(Skeleton):
    """``MapOverlap(f, radius, boundary="neutral", neutral=0)(a, *extra)``.

    ``f``'s first parameter is the element's window: on a Vector ``x[k]`` for
    ``-radius <= k <= radius``; on a Matrix ``x[dr, dc]`` in Python, ``ps_get(x, dr, dc)`` in C
    (where the window is a pointer, ``const float *x``). Outside the container the
    window holds ``neutral`` (boundary ``"neutral"``), the nearest element (``"clamp"``), the
    element from the other end (``"wrap"``) or its mirror image about the edge (``"mirror"``,
    NumPy's ``reflect``); with ``"none"`` (SkePU's ``Edge::None``) the elements nearer the edge
    than ``radius`` are not computed: they keep their values in ``out=``, and are zero in a new
    result. The radius goes up to 256 on a Vector and 16 on a Matrix.

    >>> blur = ps.MapOverlap(lambda x: (x[-1] + x[0] + x[1]) / 3, radius=1, boundary="clamp")
    >>> blur(ps.Vector(np.array([3, 0, 0, 6], np.float32))).numpy()
    array([2., 1., 2., 4.], dtype=float32)
    >>> blur = ps.MapOverlap("float f(const float *x) { return (x[-1] + x[0] + x[1]) / 3; }",
    ...                      radius=1, boundary="clamp")
    >>> blur(ps.Vector(np.array([3, 0, 0, 6], np.float32))).numpy()
    array([2., 1., 2., 4.], dtype=float32)
    """

    name = "MapOverlap"

    def __init__(self, source: UserSource, radius: int = 1, boundary: Boundary = "neutral", neutral: Any = 0) -> None:
        super().__init__()
        if boundary not in BOUNDARIES:
            raise UserFunctionError(f"MapOverlap: boundary must be one of {BOUNDARIES}, got {boundary!r}")
        if isinstance(radius, bool) or not isinstance(radius, int) or not 0 <= radius <= RADIUS_1D:
            raise UserFunctionError(
                f"MapOverlap: radius must be an int in 0..{RADIUS_1D} (0..{RADIUS_2D} on a Matrix), got {radius!r}"
            )
        self.fn = UserFunction(source, self.name, "user", 1)
        window = self.fn.elements[0]
        if not window.pointer or window.is_global:
            raise UserFunctionError(
                f"MapOverlap: the first parameter of {self.fn.signature.name!r} is the window, a "
                f"private pointer such as 'const float *x'; got {window.declaration()!r}"
            )
        self.radius, self.boundary, self.neutral = radius, boundary, neutral
        self._out_dtype = dtype_of(self.fn.return_type, self.fn.where)

    def _build(self, dev: Device, a: Container) -> _Plan:
        fn = self.fn
        matrix = a.ndim == 2
        if matrix and self.radius > RADIUS_2D:
            raise ShapeError(
                f"MapOverlap: a Matrix takes a radius up to {RADIUS_2D}, got {self.radius}: each work-item "
                f"copies its window of (2r + 1)^2 elements into private memory"
            )
        fn.check_indices(2 if matrix else 1)
        if fn.elements[0].type != a.c_type:
            raise ShapeError(
                f"MapOverlap: the window is declared {fn.elements[0].type!r}, the input holds {a.c_type!r}"
            )
        indices = ["ps_i"] if len(fn.index_positions) < 2 else ["ps_row", "ps_col"]
        glue = (
            f"#define PS_DIMS {a.ndim}\n"
            f"#define PS_IN_T {a.c_type}\n#define PS_OUT_T {fn.return_type}\n"
            f"#define PS_BOUNDARY {BOUNDARIES.index(self.boundary)}\n"
            f"#define PS_EXTRA_PARAMS{fn.extra_params('ps_x')}\n"
            f"#define PS_ELEMENT {fn.call(['ps_center'], indices, 'ps_x')}\n"
        )
        prelude = (
            f"#define PS_RADIUS {self.radius}\n#define ps_get(w, dr, dc) ((w)[(dr) * (2 * PS_RADIUS + 1) + (dc)])\n"
        )
        program = build(dev, self.name, TEMPLATE, [fn], [a.dtype, self._out_dtype], glue, prelude)
        kernel = program.kernel("ps_map_overlap_2d" if matrix else "ps_map_overlap_1d")
        neutral = dev.to_device(as_buffer_value(self.neutral, a.dtype, "MapOverlap neutral"))
        return _Plan(kernel, group_size(kernel, dev, TILE * TILE if matrix else None), neutral)

    def __call__(self, a: Container | np.ndarray, *extra: Any, out: Any = None) -> Container | np.ndarray:
        if isinstance(a, np.ndarray):  # a host array, in chunks where that pays
            from .pipelined import map_overlap

            return map_overlap(self, a, extra, out)
        (a,) = self._inputs([a], ["the input"])
        dev = a.device
        plan = self._plan((dev, a.dtype, a.ndim), lambda: self._build(dev, a))
        check_size(a.size, self.name)
        args, written = bind_extras(self.fn, extra, dev)
        result = self._output(out, a, a.shape, self._out_dtype, [a, *written], may_alias=False)
        if any(a is w for w in written):
            raise ShapeError("MapOverlap: a container passed for writing must not also be the input")
        src = a.to_device()
        dst = result.writable_buffer() if out is not None else result.output_buffer()
        if out is None and self.boundary == "none":  # the edges, not computed, of a new result
            dev.fill(dst, np.uint8(0))
        if a.ndim == 1:
            dev.launch(
                plan.kernel,
                round_to_multiple(a.size, plan.group),
                plan.group,
                src,
                dst,
                plan.neutral,
                np.uint32(a.size),
                *args,
            )
        else:
            rows, cols = a.shape
            side = 1 << ((plan.group.bit_length() - 1) // 2)
            dev.launch(
                plan.kernel,
                (round_to_multiple(cols, side), round_to_multiple(rows, side)),
                (side, side),
                src,
                dst,
                plan.neutral,
                np.uint32(rows),
                np.uint32(cols),
                *args,
            )
        result.mark_device_written()
        mark_written(written)
        return result
