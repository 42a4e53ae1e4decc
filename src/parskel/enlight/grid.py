"""The regular grid of seed 001 part 2 (sections 2.2, 3.2, 3.3), built on a device.

Triangles are binned into cells with parskel's own primitives: a count of candidate cells per
triangle, :func:`~parskel.algorithms.scans.scan_buffer` to place them, an exact clip of each
triangle against each candidate cell, another scan to compact the overlaps into (cell,
triangle) pairs, and :func:`~parskel.algorithms.sorts.sort_buffer` (the stable radix sort) to
order the pairs by cell. Cells are classified per volume as surface (the volume's triangles
pass through), inside or outside (parity of the volume's crossings along each row of cell
centres), and merged by the seed's Table 1: a cell stays relevant (surface) if it lies in the
stock, holds some volume's surface and lies wholly inside no subtraction volume. Only the
pairs of surface cells are kept; adding a volume classifies it alone and merges its pairs
into the sorted list (:meth:`Grid.add`), so an update costs the new volume's cells plus one
pass over the kept pairs.

Device buffers (``REAL`` is float32 or float64):

- ``tris``: 9 REALs per triangle, the stock's wound inward, its corners 1 and 2 swapped (the
  inverted stock of section 2.3); ``tri_volume``: uint32 per triangle.
- ``pair_cell``, ``pair_tri``: uint32 per kept pair, sorted by cell, the volumes' triangles in
  volume order within a cell; bit 31 of ``pair_tri`` (:data:`FIRST_OF_VOLUME`) marks the first
  pair of each volume in its cell, the rest is the triangle; ``pair_ref``: 4 REALs per pair,
  the centroid and area of the triangle's part inside the cell (the secondary rays' reference
  points, section 3.4).
- ``cell_start``: uint32 per cell and one more, where each cell's pairs begin.
- ``flags``: uint32 per cell, the classification bits of ``kernels/enlight/grid.cl``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms.scans import scan_buffer
from ..algorithms.sorts import sort_buffer
from ..errors import DTypeError, ShapeError
from ..runtime import Buffer, Device, round_to_multiple
from .scenes import Scene

#: work-items per work-group of the grid kernels
WG = 64
#: flags of a cell (kernels/enlight/grid.cl)
SURFACE, IN_STOCK, IN_SUBTRACTION = 1, 2, 4
#: the bit of ``pair_tri`` that starts a volume's run of pairs in a cell
FIRST_OF_VOLUME = np.uint32(1 << 31)
#: the grid's box is the stock's, widened by this fraction of its largest side on each side
PAD = 0.005
#: the automatic grid aims at this many cells per triangle, within [MIN_CELLS, MAX_CELLS]
CELLS_PER_TRIANGLE = 4
MIN_CELLS, MAX_CELLS = 8**3, 256**3


def real_dtype(precision: str, device: Device | None = None) -> np.dtype:
    """float32 for ``"single"``, float64 for ``"double"``; :class:`DTypeError` where the
    device has no double precision."""
    if precision not in ("single", "double"):
        raise DTypeError(f"precision is 'single' or 'double', not {precision!r}")
    if precision == "double" and device is not None and not device.info.fp64:
        raise DTypeError(f"{device.id} has no double precision")
    return np.dtype(np.float32 if precision == "single" else np.float64)


def defines(dtype: np.dtype) -> dict[str, Any]:
    """The kernels' build options for a precision."""
    return {"REAL": "double" if dtype == np.float64 else "float", "PS_FP64": int(dtype == np.float64)}


def auto_cells(lo: np.ndarray, hi: np.ndarray, triangles: int) -> tuple[int, int, int]:
    """Cells per axis, near cubic, about :data:`CELLS_PER_TRIANGLE` per triangle."""
    extent = np.maximum(hi - lo, 1e-12 * max(float(np.max(hi - lo)), 1e-300))
    target = min(max(CELLS_PER_TRIANGLE * triangles, MIN_CELLS), MAX_CELLS)
    side = (float(np.prod(extent)) / target) ** (1 / 3)
    n = np.maximum(1, np.round(extent / side)).astype(int)
    return int(n[0]), int(n[1]), int(n[2])


@dataclass(frozen=True)
class Layout:
    """Where the grid lies: ``origin`` (3,), ``cell`` size (3,) and ``n`` cells per axis."""

    origin: np.ndarray
    cell: np.ndarray
    n: tuple[int, int, int]

    @property
    def cells(self) -> int:
        return self.n[0] * self.n[1] * self.n[2]

    @property
    def hi(self) -> np.ndarray:
        return self.origin + self.cell * np.array(self.n)

    @classmethod
    def around(cls, scene: Scene, cells: tuple[int, int, int] | None = None) -> Layout:
        """The grid over the scene's stock, sized by ``cells`` or the scene's or :func:`auto_cells`."""
        lo, hi = scene.bounds()
        pad = PAD * max(float(np.max(hi - lo)), 1e-9)
        lo, hi = lo - pad, hi + pad
        n = cells or scene.cells or auto_cells(lo, hi, len(scene.triangles))
        if len(n) != 3 or min(n) < 1:
            raise ShapeError(f"a grid has at least one cell per axis, not {n}")
        if n[0] * n[1] * n[2] >= 2**31:
            raise ShapeError(f"a grid of {n[0]} x {n[1]} x {n[2]} cells is too large (at most 2^31 cells)")
        return cls(lo, (hi - lo) / np.array(n), (int(n[0]), int(n[1]), int(n[2])))

    def cell_range(self, lo: np.ndarray, hi: np.ndarray, margin: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The cells [first, last] (inclusive, per axis) that boxes (k, 3) touch, ``margin``
        cells wider, clamped to the grid; empty where first > last."""
        first = np.floor((lo - self.origin) / self.cell).astype(np.int64) - margin
        last = np.floor((hi - self.origin) / self.cell).astype(np.int64) + margin
        n = np.array(self.n)
        return np.maximum(first, 0), np.minimum(last, n - 1)


@dataclass
class Stats:
    """What a grid holds, and how long building it and its last update took (seconds)."""

    triangles: int = 0
    volumes: int = 0
    cells: int = 0
    pairs: int = 0
    build_seconds: float = 0.0
    update_seconds: float = 0.0


class Grid:
    """A scene's triangles in a classified regular grid on ``device``.

    ``cells`` per axis override the scene's (or the automatic) grid size; ``precision`` is
    ``"single"`` or ``"double"``, for the grid and the casters that cast it. :meth:`add`
    subtracts one more volume; ``stats`` counts what the grid holds and how long it took.

    >>> import tempfile
    >>> from parskel.enlight import meshes, scenes
    >>> scene = scenes.load_scene(scenes.menger(tempfile.mkdtemp(), 1).path)
    >>> grid = Grid(ps.device(), scene, cells=(9, 9, 9))
    >>> grid.stats.volumes, grid.stats.triangles
    (4, 48)
    >>> seconds = grid.add(meshes.box() * 0.2 + 0.4)      # one more subtraction volume
    >>> grid.stats.volumes, int((grid.classes() == 2).sum())
    (5, 472)
    """

    def __init__(
        self,
        device: Device,
        scene: Scene,
        *,
        cells: tuple[int, int, int] | None = None,
        precision: str = "single",
    ) -> None:
        self.device = device
        self.dtype = real_dtype(precision, device)
        self.layout = Layout.around(scene, cells)
        self.stats = Stats(cells=self.layout.cells)
        self._program = device.program("enlight/grid.cl", defines(self.dtype))
        lo, cell, n = self.layout.origin, self.layout.cell, self.layout.n
        self.box = device.to_device(np.concatenate([lo, cell, lo, self.layout.hi]).astype(self.dtype))
        self.dims = device.to_device(np.array([*n, 0, 0, 0, *n], dtype=np.int32))
        self.flags = device.alloc(4 * self.layout.cells)
        device.fill(self.flags, np.uint32(0))
        self.tris = device.alloc(0)
        self.tri_volume = device.alloc(0)
        self.pair_cell = device.alloc(0)
        self.pair_tri = device.alloc(0)
        self.pair_ref = device.alloc(0)
        self.cell_start = device.alloc(4 * (self.layout.cells + 1))
        device.fill(self.cell_start, np.uint32(0))
        self._scene_parts: list[tuple[np.ndarray, np.ndarray]] = []
        self._scene: tuple[np.ndarray, np.ndarray] | None = None
        start = time.perf_counter()
        self._add(scene.triangles, scene.volume)
        device.finish()
        self.stats.build_seconds = time.perf_counter() - start

    # public ---------------------------------------------------------------------------------
    def add(self, triangles: np.ndarray) -> float:
        """Subtract one more volume, triangles (m, 3, 3) wound outward; returns the seconds the
        update took, the device finished."""
        triangles = np.asarray(triangles, dtype=np.float64)
        if triangles.ndim != 3 or triangles.shape[1:] != (3, 3) or len(triangles) == 0:
            raise ShapeError(f"a volume is triangles of shape (m, 3, 3), m >= 1, not {triangles.shape}")
        start = time.perf_counter()
        volume = np.full(len(triangles), self.stats.volumes, dtype=np.int32)
        self._add(triangles, volume)
        self.device.finish()
        self.stats.update_seconds = time.perf_counter() - start
        return self.stats.update_seconds

    @property
    def scene_triangles(self) -> np.ndarray:
        """Every triangle added, outward-wound as the scene has them, (n, 3, 3): what the
        casters' triangle ids refer to."""
        return self._joined()[0]

    @property
    def scene_volume(self) -> np.ndarray:
        """The volume of each of :attr:`scene_triangles`."""
        return self._joined()[1]

    def _joined(self) -> tuple[np.ndarray, np.ndarray]:
        if self._scene is None:
            self._scene = (
                np.concatenate([t for t, _ in self._scene_parts]),
                np.concatenate([v for _, v in self._scene_parts]),
            )
        return self._scene

    def surface_cells(self) -> int:
        """How many cells hold triangles (reads the cell starts back)."""
        start = np.empty(self.layout.cells + 1, np.uint32)
        self.device.download(self.cell_start, start)
        return int(np.count_nonzero(np.diff(start)))

    def classes(self) -> np.ndarray:
        """Every cell's class, (nz, ny, nx): 0 outside, 1 inside, 2 surface."""
        flags = np.empty(self.layout.cells, dtype=np.uint32)
        self.device.download(self.flags, flags)
        relevant = ((flags & IN_STOCK) != 0) & ((flags & IN_SUBTRACTION) == 0)
        out = np.where(relevant, np.where(flags & SURFACE, 2, 1), 0).astype(np.int8)
        n = self.layout.n
        return out.reshape(n[2], n[1], n[0])

    def host_arrays(self) -> dict[str, np.ndarray]:
        """The grid's buffers read back (``cell_start``, ``pair_cell``, ``pair_tri``, ``pair_ref``,
        ``tris``, ``tri_volume``), for casting out of core and for tests."""
        pairs, tris = self.stats.pairs, self.stats.triangles
        out = {
            "cell_start": np.empty(self.layout.cells + 1, np.uint32),
            "pair_cell": np.empty(pairs, np.uint32),
            "pair_tri": np.empty(pairs, np.uint32),
            "pair_ref": np.empty(4 * pairs, self.dtype),
            "tris": np.empty(9 * tris, self.dtype),
            "tri_volume": np.empty(tris, np.uint32),
        }
        for name, array in out.items():
            self.device.download(getattr(self, name), array)
        return out

    # building -------------------------------------------------------------------------------
    def _launch(self, name: str, n: int, *args: Any) -> None:
        if n > 0:
            self.device.launch(self._program.kernel(name), round_to_multiple(n, WG), WG, *args)

    def _offsets(self, counts: Buffer, n: int) -> tuple[Buffer, int]:
        """Exclusive prefix sums of ``n`` uint32 counts in a buffer of n + 1 (the last the
        total, which is read back)."""
        self.device.fill(counts, np.uint32(0), 4, offset=4 * n)
        scan_buffer(self.device, counts, counts, n + 1, np.uint32)
        total = np.empty(1, np.uint32)
        self.device.download(counts, total, offset=4 * n)
        return counts, int(total[0])

    def _add(self, triangles: np.ndarray, volume: np.ndarray) -> None:
        dev, u32 = self.device, np.uint32
        first_tri, n = self.stats.triangles, len(triangles)
        if first_tri + n >= FIRST_OF_VOLUME:
            raise ShapeError(f"a grid holds fewer than 2^31 triangles, not {first_tri + n}")
        first_vol = self.stats.volumes
        volumes = int(volume.max()) + 1 - first_vol
        self._scene_parts.append((triangles, volume.astype(np.int32)))
        self._scene = None
        device_tris = triangles.copy()
        stock = volume == 0
        device_tris[stock] = device_tris[stock][:, [0, 2, 1]]  # the inverted stock
        self.tris = self._grown(self.tris, 9 * first_tri * self.dtype.itemsize, device_tris.astype(self.dtype))
        self.tri_volume = self._grown(self.tri_volume, 4 * first_tri, volume.astype(np.uint32))
        vol_box, vol_marks, marks_total, col_offsets, columns = self._volume_boxes(triangles, volume, first_vol)
        self.stats.triangles += n
        self.stats.volumes += volumes
        tris, tri_volume, box, dims = self.tris, self.tri_volume, self.box, self.dims
        args = (u32(first_tri), u32(n))

        # (cell, triangle) pairs of the new triangles
        counts = dev.alloc(4 * (n + 1))
        self._launch("count_candidates", n, tris, *args, box, dims, counts)
        offsets, candidates = self._offsets(counts, n)
        hit = dev.alloc(4 * (candidates + 1))
        self._launch("clip_candidates", candidates, tris, *args, offsets, u32(candidates), box, dims, hit)
        positions = dev.alloc(4 * (candidates + 1))
        dev.copy(positions, hit, 4 * candidates)
        positions, pairs = self._offsets(positions, candidates)
        cell, tri, ref = dev.alloc(4 * pairs), dev.alloc(4 * pairs), dev.alloc(4 * pairs * self.dtype.itemsize)
        self._launch(
            "emit_pairs", candidates, tris, *args, offsets, u32(candidates), box, dims, hit, positions, cell, tri, ref
        )
        del hit, positions

        # classification of the new volumes, merged into the flags
        marks = dev.alloc(4 * marks_total)
        dev.fill(marks, u32(0))
        vols = (u32(first_vol), vol_box, vol_marks)
        self._launch("mark_pairs", pairs, cell, tri, u32(pairs), tri_volume, *vols, dims, marks, self.flags)
        self._launch("count_crossings", n, tris, *args, tri_volume, u32(first_vol), vol_box, box, dims, counts)
        offsets, crossings = self._offsets(counts, n)
        self._launch(
            "cross_columns", crossings, tris, *args, offsets, u32(crossings), tri_volume, *vols, box, dims, marks
        )
        self._launch(
            "resolve_columns", columns, u32(volumes), col_offsets, u32(columns), *vols, dims, marks, self.flags
        )
        del marks, counts, offsets

        # the new pairs that stay, sorted by cell, merged with the old ones that stay
        new_cell, new_tri, new_ref, new_n = self._kept(cell, tri, ref, pairs)
        order = dev.alloc(4 * new_n)
        if new_n:
            dev.upload(order, np.arange(new_n, dtype=np.uint32))
        sort_buffer(dev, new_cell, order, new_n, bits=max(4, int(self.layout.cells).bit_length()))
        sorted_tri, sorted_ref = dev.alloc(4 * new_n), dev.alloc(4 * new_n * self.dtype.itemsize)
        self._launch("gather_pairs", new_n, order, u32(new_n), new_tri, new_ref, sorted_tri, sorted_ref)
        old_cell, old_tri, old_ref, old_n = self._kept(self.pair_cell, self.pair_tri, self.pair_ref, self.stats.pairs)
        total = old_n + new_n
        self.pair_cell, self.pair_tri = dev.alloc(4 * total), dev.alloc(4 * total)
        self.pair_ref = dev.alloc(4 * total * self.dtype.itemsize)
        self._launch(
            "merge_pairs",
            total,
            old_cell,
            old_tri,
            old_ref,
            u32(old_n),
            new_cell,
            sorted_tri,
            sorted_ref,
            u32(new_n),
            self.pair_cell,
            self.pair_tri,
            self.pair_ref,
        )
        self._launch("mark_volumes", total, self.pair_cell, self.pair_tri, u32(total), self.tri_volume)
        cells = self.layout.cells
        dev.fill(self.cell_start, u32(0))
        self._launch("count_cells", total, self.pair_cell, u32(total), self.cell_start)
        self._offsets(self.cell_start, cells)
        self.stats.pairs = total

    def _grown(self, old: Buffer, used: int, extra: np.ndarray) -> Buffer:
        """A buffer of the first ``used`` bytes of ``old`` followed by ``extra``."""
        grown = self.device.alloc(used + extra.nbytes)
        if used:
            self.device.copy(grown, old, used)
        self.device.upload(grown, np.ascontiguousarray(extra), offset=used)
        return grown

    def _kept(self, cell: Buffer, tri: Buffer, ref: Buffer, n: int) -> tuple[Buffer, Buffer, Buffer, int]:
        """The pairs of surface cells among ``n``, compacted in their order."""
        dev, u32 = self.device, np.uint32
        keep = dev.alloc(4 * (n + 1))
        self._launch("keep_pairs", n, cell, u32(n), self.flags, keep)
        positions = dev.alloc(4 * (n + 1))
        dev.copy(positions, keep, 4 * n)
        positions, kept = self._offsets(positions, n)
        out = dev.alloc(4 * kept), dev.alloc(4 * kept), dev.alloc(4 * kept * self.dtype.itemsize)
        self._launch("compact_pairs", n, keep, positions, u32(n), cell, tri, ref, *out)
        return out[0], out[1], out[2], kept

    def _volume_boxes(
        self, triangles: np.ndarray, volume: np.ndarray, first_vol: int
    ) -> tuple[Buffer, Buffer, int, Buffer, int]:
        """Each new volume's box of cells (6 ints: first cell, size), where its marks begin,
        their total, where its columns begin, and their total, as device buffers."""
        starts = np.searchsorted(volume, np.arange(first_vol, int(volume.max()) + 2))
        corners = triangles.reshape(-1, 9)
        lo = np.minimum.reduceat(np.minimum(np.minimum(corners[:, 0:3], corners[:, 3:6]), corners[:, 6:9]), starts[:-1])
        hi = np.maximum.reduceat(np.maximum(np.maximum(corners[:, 0:3], corners[:, 3:6]), corners[:, 6:9]), starts[:-1])
        first, last = self.layout.cell_range(lo, hi)
        size = np.maximum(last - first + 1, 0)
        size[(size == 0).any(axis=1)] = 0
        marks = size.prod(axis=1)
        cols = size[:, 1] * size[:, 2]
        mark_starts = np.concatenate([[0], np.cumsum(marks)])
        col_starts = np.concatenate([[0], np.cumsum(cols)])
        if mark_starts[-1] >= 2**32 or col_starts[-1] >= 2**32:
            raise ShapeError("the volumes' boxes hold more than 2^32 cells; use a coarser grid")
        boxes = np.concatenate([first, size], axis=1).astype(np.int32)
        dev = self.device
        return (
            dev.to_device(boxes),
            dev.to_device(mark_starts[:-1].astype(np.uint32)),
            int(mark_starts[-1]),
            dev.to_device(col_starts.astype(np.uint32)),
            int(col_starts[-1]),
        )
