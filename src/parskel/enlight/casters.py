"""The casters of seed 001 part 2, chapter 4, as named variants, and casting a frame.

Each caster writes, per pixel, the triangle hit (-1 for none), its distance from the eye
along the ray, and the barycentric coordinates u, v of the hit on that triangle; shading is
done afterwards (:mod:`parskel.enlight.render`). :data:`CASTERS` lists them from the simplest
to the packet caster; :data:`DEFAULT` is the seed's final single-ray caster.

Out of core (section 4.13): with ``budget`` set, the grid is split in halves, the split axis
changing at each level, until each part's cells and pairs fit the budget; the parts are cast
front to back from the eye, each skipping the pixels that nearer ones hit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import BackendUnavailableError, ParskelError, VariantError
from ..runtime import Buffer, Device, round_to_multiple
from .grid import FIRST_OF_VOLUME, Grid, defines, real_dtype
from .scenes import Camera, check_camera


@dataclass(frozen=True)
class Caster:
    """One caster: its kernel (``entry`` in ``kernels/enlight/<source>``), the seed section it
    implements, and whether it casts the scene's grid (the test casters do not)."""

    name: str
    seed: str
    summary: str
    source: str
    entry: str
    uses_grid: bool = True
    local: tuple[int, int] = (8, 8)


CASTERS: dict[str, Caster] = {
    c.name: c
    for c in (
        Caster("test_gradient", "001 §4.2", "no geometry: u and v run across the image", "test_casters.cl",
               "test_gradient", uses_grid=False),
        Caster("test_camera", "001 §4.3", "the camera's rays against a unit cube at the origin", "test_casters.cl",
               "test_camera", uses_grid=False),
        Caster("single_ray", "001 §4.5", "3D-DDA through the grid, nearest hit, no counting", "single.cl",
               "single_ray"),
        Caster("single_boolean", "001 §4.6", "one entry/exit counter along the whole ray", "single.cl",
               "single_boolean"),
        Caster("single_boolean_cell", "001 §4.7", "counter fixed at each cell's entry by secondary rays",
               "single.cl", "single_boolean_cell"),
        Caster("single_primary_boolean_cell", "001 §4.10",
               "one pass per cell; primary hits fix the counter, secondary rays only where they miss",
               "single.cl", "single_primary_boolean_cell"),
        Caster("packet", "001 §4.11", "8 x 8 rays a work-group, slice by slice, frustum culling in local memory",
               "packet.cl", "packet"),
    )
}  # fmt: skip
DEFAULT = "single_primary_boolean_cell"

#: the 12 triangles of the test camera caster's cube, as kernels/enlight/test_casters.cl has them
_CORNERS = (0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4, 2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5)
CUBE = (np.array([[(i >> k) & 1 for k in range(3)] for i in range(8)], dtype=np.float64) - 0.5)[
    np.array(_CORNERS)
].reshape(12, 3, 3)


def caster(name: str) -> Caster:
    """The caster called ``name``; :class:`VariantError` listing them if there is none."""
    try:
        return CASTERS[name]
    except KeyError:
        raise VariantError(f"no caster {name!r}; the casters are {', '.join(CASTERS)}") from None


@dataclass
class Frame:
    """One cast image: ``triangle`` (-1 for none), ``depth`` (inf for none), ``u``, ``v``, each
    (height, width), and the triangles the ids refer to."""

    triangle: np.ndarray
    depth: np.ndarray
    u: np.ndarray
    v: np.ndarray
    triangles: np.ndarray
    volume: np.ndarray | None = None
    #: ``"geometry"``, or ``"gradient"`` for the test gradient (u, v are colours, not a hit)
    kind: str = "geometry"


@dataclass
class _Part:
    """Grid buffers on the device for one cast: the whole grid, or one part out of core."""

    box: Buffer
    dims: Buffer
    cell_start: Buffer
    pair_tri: Buffer
    pair_ref: Buffer
    tris: Buffer
    tri_volume: Buffer
    global_tri: np.ndarray | None = None


class Casting:
    """Casts frames of one grid with one caster on the grid's device, reusing its buffers.

    The test casters take no grid but a ``device`` and a ``precision``. ``budget`` casts out
    of core, in parts of the grid whose cell starts and pairs take at most that many bytes,
    gathered from the grid as it is when the casting is made. ``max_hits`` is the intersections
    a ray keeps per cell before it walks the cell without its buffer.

    >>> import tempfile
    >>> from parskel.enlight import grid, scenes
    >>> scene = scenes.load_scene(scenes.menger(tempfile.mkdtemp(), 1).path)
    >>> casting = Casting(grid.Grid(ps.device(), scene), "single_primary_boolean_cell")
    >>> frame = casting.cast(scene.camera.resized(32, 24))
    >>> frame.depth.shape, bool(np.isfinite(frame.depth).any())
    ((24, 32), True)
    """

    def __init__(
        self,
        grid: Grid | None,
        name: str = DEFAULT,
        *,
        device: Device | None = None,
        precision: str = "single",
        budget: int | None = None,
        max_hits: int = 16,
    ) -> None:
        self.caster = caster(name)
        if grid is None and self.caster.uses_grid:
            raise ParskelError(f"caster {name} needs a grid")
        self.grid = grid
        if grid is not None:
            device, self.dtype = grid.device, grid.dtype
        elif device is None:
            raise ParskelError("give a grid or a device")
        else:
            self.dtype = real_dtype(precision, device)
        self.device: Device = device
        options = {**defines(self.dtype), "MAX_HITS": max_hits}
        self.kernel = device.program(f"enlight/{self.caster.source}", options).kernel(self.caster.entry)
        self._tree: Any = None
        self._hosted: dict[str, np.ndarray] | None = None
        if grid is not None and budget is not None:
            self._hosted = grid.host_arrays()
            self._tree = _split(grid, self._hosted, (0, 0, 0), grid.layout.n, budget, 0)
        self._size: tuple[int, int] = (0, 0)
        self._out: list[Buffer] = []
        self._leaves: dict[Any, dict[str, np.ndarray]] = {}
        self._host: list[np.ndarray] = []
        # out of core: whether each pixel was hit by an earlier part, and its triangle's id
        self._hit = np.zeros(0, dtype=bool)
        self._global = np.zeros(0, dtype=np.int64)

    @property
    def parts(self) -> int:
        """How many parts of the grid a frame casts (1 unless out of core)."""
        return 1 if self._tree is None else sum(1 for _ in _leaves(self._tree, None))

    def _outputs(self, width: int, height: int) -> list[Buffer]:
        if self._size != (width, height):
            pixels = width * height
            r = self.dtype.itemsize
            self._out = [self.device.alloc(4 * pixels)] + [self.device.alloc(r * pixels) for _ in range(3)]
            self._size = (width, height)
            self._host = []
        return self._out

    def _host_arrays(self, shape: tuple[int, int]) -> list[np.ndarray]:
        """Host arrays for the four outputs, in page-locked memory where the device has it, kept
        from frame to frame."""
        if not self._host:
            for dtype in (np.int32, self.dtype, self.dtype, self.dtype):
                try:
                    self._host.append(self.device.empty_pinned(shape, dtype))
                except BackendUnavailableError:
                    self._host.append(np.empty(shape, dtype))
        return self._host

    def enqueue(self, camera: Camera) -> None:
        """Enqueue the kernels of one frame, without reading it back."""
        check_camera(camera)
        w, h = camera.width, camera.height
        out = self._outputs(w, h)
        dev, u32 = self.device, np.uint32
        # what a pixel that nothing hits keeps: the casters write only hits
        dev.fill(out[0], np.int32(-1))
        dev.fill(out[1], self.dtype.type(np.inf))
        dev.fill(out[2], self.dtype.type(0))
        dev.fill(out[3], self.dtype.type(0))
        cam = dev.to_device(camera.basis().astype(self.dtype).ravel())
        lx, ly = self.caster.local
        size = (round_to_multiple(w, lx), round_to_multiple(h, ly))
        if self.caster.name == "test_gradient":
            dev.launch(self.kernel, size, (lx, ly), u32(w), u32(h), *out)
            return
        if self.caster.name == "test_camera":
            dev.launch(self.kernel, size, (lx, ly), cam, u32(w), u32(h), *out)
            return
        if self._tree is not None:
            self._hit = np.zeros(w * h, dtype=bool)
            self._global = np.full(w * h, -1, dtype=np.int64)
        for part in self._cast_parts(camera):
            dev.launch(
                self.kernel,
                size,
                (lx, ly),
                cam,
                u32(w),
                u32(h),
                part.box,
                part.dims,
                part.cell_start,
                part.pair_tri,
                part.pair_ref,
                part.tris,
                part.tri_volume,
                *out,
            )
            if part.global_tri is not None:
                self._remap(part.global_tri, w * h)

    def cast(self, camera: Camera, *, reuse: bool = False) -> Frame:
        """One frame: cast and read back. With ``reuse``, the frame's arrays are this casting's
        own (page-locked where the device has such memory), overwritten by its next frame."""
        self.enqueue(camera)
        shape = (camera.height, camera.width)
        if reuse:
            tri, depth, u, v = self._host_arrays(shape)
        else:
            tri, depth, u, v = np.empty(shape, np.int32), *(np.empty(shape, self.dtype) for _ in range(3))
        for buf, arr in zip(self._out, (tri, depth, u, v)):
            self.device.download(buf, arr, wait=False)
        self.device.finish()
        if self._tree is not None:
            tri[...] = self._global.reshape(shape)
        if self.caster.name == "test_camera":
            return Frame(tri, depth, u, v, CUBE)
        if self.grid is None:
            return Frame(tri, depth, u, v, np.zeros((1, 3, 3)), kind="gradient")
        return Frame(tri, depth, u, v, self.grid.scene_triangles, self.grid.scene_volume)

    # out of core --------------------------------------------------------------------------
    def _cast_parts(self, camera: Camera) -> Iterator[_Part]:
        grid = self.grid
        assert grid is not None
        if self._tree is None:
            yield _Part(grid.box, grid.dims, grid.cell_start, grid.pair_tri, grid.pair_ref, grid.tris, grid.tri_volume)
            return
        for leaf in _leaves(self._tree, np.asarray(camera.eye)):
            yield self._upload(leaf)

    def _upload(self, leaf: tuple[tuple[int, int, int], tuple[int, int, int]]) -> _Part:
        """One part's buffers, gathered from the grid on the host once and uploaded each frame."""
        grid = self.grid
        assert grid is not None
        arrays = self._leaves.get(leaf)
        if arrays is None:
            arrays = self._leaves[leaf] = self._gather(leaf)
        dev = self.device
        return _Part(
            dev.to_device(arrays["box"]),
            dev.to_device(arrays["dims"]),
            dev.to_device(arrays["cell_start"]),
            dev.to_device(arrays["pair_tri"]),
            dev.to_device(arrays["pair_ref"]),
            dev.to_device(arrays["tris"]),
            dev.to_device(arrays["tri_volume"]),
            arrays["global_tri"],
        )

    def _gather(self, leaf: tuple[tuple[int, int, int], tuple[int, int, int]]) -> dict[str, np.ndarray]:
        """The cells c0 <= cell < c1 of the grid as a grid of their own: their pairs, with the
        triangles they use numbered anew (``global_tri`` maps them back)."""
        grid, host = self.grid, self._hosted
        assert grid is not None and host is not None
        (c0, c1), layout = leaf, grid.layout
        ranges = [np.arange(c0[k], c1[k]) for k in range(3)]
        z, y, x = np.meshgrid(ranges[2], ranges[1], ranges[0], indexing="ij")
        cells = (x + layout.n[0] * (y + layout.n[1] * z)).ravel()
        begin, end = host["cell_start"][cells].astype(np.int64), host["cell_start"][cells + 1].astype(np.int64)
        counts = end - begin
        start = np.concatenate([[0], np.cumsum(counts)])
        pairs = np.repeat(begin - start[:-1], counts) + np.arange(start[-1])
        marked = host["pair_tri"][pairs]
        used, local = np.unique(marked & ~FIRST_OF_VOLUME, return_inverse=True)
        lo = layout.origin + layout.cell * np.array(c0)
        hi = layout.origin + layout.cell * np.array(c1)
        return {
            "box": np.concatenate([layout.origin, layout.cell, lo, hi]).astype(self.dtype),
            "dims": np.array([*layout.n, *c0, *c1], dtype=np.int32),
            "cell_start": start.astype(np.uint32),
            "pair_tri": local.astype(np.uint32).ravel() | (marked & FIRST_OF_VOLUME),
            "pair_ref": np.ascontiguousarray(host["pair_ref"].reshape(-1, 4)[pairs]),
            "tris": np.ascontiguousarray(host["tris"].reshape(-1, 9)[used]),
            "tri_volume": host["tri_volume"][used],
            "global_tri": used,
        }

    def _remap(self, global_tri: np.ndarray, pixels: int) -> None:
        tri = np.empty(pixels, np.int32)
        self.device.download(self._out[0], tri)
        new = (tri >= 0) & ~self._hit
        self._global[new] = global_tri[tri[new]]
        self._hit |= new


def _split(grid: Grid, host: dict[str, np.ndarray], c0: tuple, c1: tuple, budget: int, axis: int) -> Any:
    """The kd-tree of grid parts whose cell starts and pairs fit ``budget`` bytes: a leaf is
    (c0, c1), a node (axis, plane, lower, upper)."""
    layout = grid.layout
    z, y, x = np.meshgrid(*(np.arange(c0[k], c1[k]) for k in (2, 1, 0)), indexing="ij")
    cells = (x + layout.n[0] * (y + layout.n[1] * z)).ravel()
    start = host["cell_start"]
    pairs = int((start[cells + 1].astype(np.int64) - start[cells]).sum())
    need = 4 * (len(cells) + 1) + pairs * (4 + 4 * grid.dtype.itemsize)
    if need <= budget:
        return (tuple(c0), tuple(c1))
    for turn in range(3):
        k = (axis + turn) % 3
        if c1[k] - c0[k] > 1:
            break
    else:
        raise ParskelError(f"out-of-core budget of {budget} bytes is too small for one cell of the grid")
    mid = (c0[k] + c1[k]) // 2
    upper0, lower1 = list(c0), list(c1)
    upper0[k], lower1[k] = mid, mid
    nxt = (k + 1) % 3
    return (
        k,
        float(layout.origin[k] + layout.cell[k] * mid),
        _split(grid, host, c0, tuple(lower1), budget, nxt),
        _split(grid, host, tuple(upper0), c1, budget, nxt),
    )


def _leaves(tree: Any, eye: np.ndarray | None) -> Iterator[Any]:
    """The parts front to back from ``eye`` (any order without one)."""
    if len(tree) == 2:
        yield tree
        return
    axis, plane, lower, upper = tree
    first, second = (upper, lower) if eye is not None and eye[axis] >= plane else (lower, upper)
    yield from _leaves(first, eye)
    yield from _leaves(second, eye)
