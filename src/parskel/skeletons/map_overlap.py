"""MapOverlap: f over each element and its neighbours within a radius, on Vectors, Matrices,
Tensor3 and Tensor4, with a choice of boundary (seed 004: SkelCL's and SkePU's MapOverlap).
Template ``kernels/skeletons/map_overlap.cl``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..containers.base import Container
from ..errors import ShapeError, UserFunctionError
from ..runtime import Buffer, Device, Kernel, round_to_multiple
from . import pipelined
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
#: The most elements of a Tensor3's or Tensor4's window: a Matrix's largest, (2 * 16 + 1)^2.
WINDOW_ND = (2 * RADIUS_2D + 1) ** 2


@dataclass(frozen=True)
class _Plan:
    kernel: Kernel
    group: int
    neutral: Buffer


class MapOverlap(Skeleton):
    """``MapOverlap(f, radius, boundary="neutral", neutral=0)(a, *extra)``.

    ``f``'s first parameter is the element's window: on a Vector ``x[k]`` for
    ``-radius <= k <= radius``; on a Matrix ``x[dr, dc]`` in Python, ``ps_get(x, dr, dc)`` in C
    (where the window is a pointer, ``const float *x``); on a Tensor3 ``x[di, dj, dk]`` and
    ``ps_get(x, di, dj, dk)``, on a Tensor4 the same with four offsets, first axis first.
    ``radius`` is one radius for every axis, or a tuple of one per axis. Outside the container
    the window holds ``neutral`` (boundary ``"neutral"``), the nearest element (``"clamp"``),
    the element from the other end (``"wrap"``) or its mirror image about the edge
    (``"mirror"``, NumPy's ``reflect``); with ``"none"`` (SkePU's ``Edge::None``) the elements
    nearer an edge than the radius along that axis are not computed: they keep their values in
    ``out=``, and are zero in a new result. The radius goes up to 256 on a Vector and 16 on a
    Matrix; a Tensor3's or Tensor4's window holds up to 1089 elements (the product of
    ``2 * r + 1`` over the axes: radius 4 in 3D, 2 in 4D). Index parameters receive the flat
    index, or one index per axis.

    >>> blur = ps.MapOverlap(lambda x: (x[-1] + x[0] + x[1]) / 3, radius=1, boundary="clamp")
    >>> blur(ps.Vector(np.array([3, 0, 0, 6], np.float32))).numpy()
    array([2., 1., 2., 4.], dtype=float32)
    >>> blur = ps.MapOverlap("float f(const float *x) { return (x[-1] + x[0] + x[1]) / 3; }",
    ...                      radius=1, boundary="clamp")
    >>> blur(ps.Vector(np.array([3, 0, 0, 6], np.float32))).numpy()
    array([2., 1., 2., 4.], dtype=float32)
    >>> depth = ps.MapOverlap(lambda x: x[-1, 0, 0] + x[1, 0, 0], radius=(1, 0, 0), boundary="wrap")
    >>> depth(ps.Tensor3(np.arange(3, dtype=np.float32).reshape(3, 1, 1))).numpy().ravel()
    array([3., 2., 1.], dtype=float32)
    """

    name = "MapOverlap"

    def __init__(
        self,
        source: UserSource,
        radius: int | tuple[int, ...] = 1,
        boundary: Boundary = "neutral",
        neutral: Any = 0,
    ) -> None:
        super().__init__()
        if boundary not in BOUNDARIES:
            raise UserFunctionError(f"MapOverlap: boundary must be one of {BOUNDARIES}, got {boundary!r}")
        radii = tuple(radius) if isinstance(radius, (tuple, list)) else (radius,)
        if not 1 <= len(radii) <= 4 or any(
            isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 0 <= r <= RADIUS_1D for r in radii
        ):
            raise UserFunctionError(
                f"MapOverlap: radius must be an int in 0..{RADIUS_1D} (0..{RADIUS_2D} on a Matrix), or a tuple of "
                f"one such int per axis, got {radius!r}"
            )
        self.fn = UserFunction(source, self.name, "user", 1)
        window = self.fn.elements[0]
        if not window.pointer or window.is_global:
            raise UserFunctionError(
                f"MapOverlap: the first parameter of {self.fn.signature.name!r} is the window, a "
                f"private pointer such as 'const float *x'; got {window.declaration()!r}"
            )
        self.radius: int | tuple[int, ...] = (
            tuple(int(r) for r in radii) if isinstance(radius, (tuple, list)) else int(radii[0])
        )
        self.boundary, self.neutral = boundary, neutral
        self._out_dtype = dtype_of(self.fn.return_type, self.fn.where)

    def radii(self, ndim: int) -> tuple[int, ...]:
        """The radius along each axis of an input of ``ndim`` axes.

        >>> ps.MapOverlap("float f(const float *w) { return w[0]; }", radius=2).radii(3)
        (2, 2, 2)
        """
        if isinstance(self.radius, int):
            return (self.radius,) * ndim
        if len(self.radius) != ndim:
            given = len(self.radius)
            raise ShapeError(
                f"MapOverlap: the radius {self.radius} gives {given} ax{'es' if given > 1 else 'is'}, "
                f"the input has {ndim}"
            )
        return self.radius

    def _check_window(self, a: Container) -> tuple[int, ...]:
        """The input's radii, refused where its window would not fit a work-item's private memory."""
        radii = self.radii(a.ndim)
        if a.ndim == 2 and max(radii) > RADIUS_2D:
            raise ShapeError(
                f"MapOverlap: a Matrix takes a radius up to {RADIUS_2D}, got {self.radius}: each work-item "
                f"copies its window of (2r + 1)^2 elements into private memory"
            )
        size = int(np.prod([2 * r + 1 for r in radii]))
        if a.ndim > 2 and size > WINDOW_ND:
            raise ShapeError(
                f"MapOverlap: the window of radius {self.radius} on a {type(a).__name__} holds {size} elements, "
                f"more than the {WINDOW_ND} a work-item copies into private memory (radius up to 4 on a Tensor3, "
                "2 on a Tensor4, or larger along fewer axes: radius=(0, 4, 16), ...)"
            )
        return radii

    def _build(self, dev: Device, a: Container) -> _Plan:
        fn = self.fn
        radii = self._check_window(a)
        if fn.elements[0].type != a.c_type:
            raise ShapeError(
                f"MapOverlap: the window is declared {fn.elements[0].type!r}, the input holds {a.c_type!r}"
            )
        # the kernel for 3 and 4 axes sees a Tensor3 as a Tensor4 of extent 1 and radius 0 on axis 0
        axes = (
            ["ps_i"] if a.ndim == 1 else ["ps_row", "ps_col"] if a.ndim == 2 else ["ps_i0", "ps_i1", "ps_i2", "ps_i3"]
        )
        kernel_radii = radii if a.ndim < 3 else (0,) * (4 - a.ndim) + radii
        indices = fn.element_indices(a.ndim, "ps_i", axes[len(axes) - a.ndim :])
        glue = (
            f"#define PS_DIMS {a.ndim}\n"
            f"#define PS_IN_T {a.c_type}\n#define PS_OUT_T {fn.return_type}\n"
            f"#define PS_BOUNDARY {BOUNDARIES.index(self.boundary)}\n"
            + "".join(f"#define PS_R{k} {r}\n" for k, r in enumerate(kernel_radii))
            + f"#define PS_EXTRA_PARAMS{fn.extra_params('ps_x')}\n"
            f"#define PS_ELEMENT {fn.call(['ps_center'], indices, 'ps_x')}\n"
        )
        program = build(dev, self.name, TEMPLATE, [fn], [a.dtype, self._out_dtype], glue, window_getter(radii))
        kernel = program.kernel(KERNELS[min(a.ndim, 3)])
        neutral = dev.to_device(as_buffer_value(self.neutral, a.dtype, "MapOverlap neutral"))
        return _Plan(kernel, group_size(kernel, dev, TILE * TILE if a.ndim == 2 else None), neutral)

    def __call__(self, a: Container | np.ndarray, *extra: Any, out: Any = None) -> Container | np.ndarray:
        if isinstance(a, np.ndarray):  # a host array, in chunks where that pays
            return pipelined.map_overlap(self, a, extra, out)
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
        head = (src, dst, plan.neutral)
        if a.ndim == 1:
            dev.launch(plan.kernel, round_to_multiple(a.size, plan.group), plan.group, *head, np.uint32(a.size), *args)
        elif a.ndim == 2:
            rows, cols = a.shape
            side = 1 << ((plan.group.bit_length() - 1) // 2)
            dev.launch(
                plan.kernel,
                (round_to_multiple(cols, side), round_to_multiple(rows, side)),
                (side, side),
                *head,
                np.uint32(rows),
                np.uint32(cols),
                *args,
            )
        else:
            extents = [np.uint32(e) for e in (1,) * (4 - a.ndim) + a.shape]
            dev.launch(
                plan.kernel,
                round_to_multiple(a.size, plan.group),
                plan.group,
                *head,
                np.uint32(a.size),
                *extents,
                *args,
            )
        result.mark_device_written()
        mark_written(written)
        return result


#: The kernel for 1, 2, and 3 or 4 axes.
KERNELS = {1: "ps_map_overlap_1d", 2: "ps_map_overlap_2d", 3: "ps_map_overlap_nd"}


def window_getter(radii: tuple[int, ...]) -> str:
    """The definition of ``ps_get(w, d0, ...)``, the window element at the given offsets (one per
    axis) from the centre, for user functions in C; the window is stored row-major.

    >>> print(window_getter((1, 2)), end="")
    #define ps_get(w, d0, d1) ((w)[((d0)) * 5 + (d1)])
    """
    offset = "(d0)"
    for k, r in enumerate(radii[1:], start=1):
        offset = f"({offset}) * {2 * r + 1} + (d{k})"
    names = ", ".join(f"d{k}" for k in range(len(radii)))
    return f"#define ps_get(w, {names}) ((w)[{offset}])\n"
