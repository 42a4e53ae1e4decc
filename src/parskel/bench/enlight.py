"""Timing an Enlight scene the way seed 001 part 2 reports it (section 5.1): frames per second
at an image size after a warm-up, the grid's build and the update after adding one volume; and
its CPU reference on the same frames (the Embree peer is :mod:`parskel.bench.peers_embree`)."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from ..enlight.casters import DEFAULT, Casting, caster
from ..enlight.grid import Grid, Layout
from ..enlight.scenes import Camera, Scene
from ..runtime import Device


@dataclass
class Measurement:
    """One scene on one device with one caster; times in seconds, medians of ``frames``."""

    scene: str
    device: str
    device_name: str
    caster: str
    precision: str
    width: int
    height: int
    volumes: int
    triangles: int
    cells: tuple[int, int, int]
    surface_cells: int
    cell_triangles: int
    build_seconds: float
    update_seconds: float | None
    frames: int
    frame_seconds: float
    kernel_seconds: float
    parts: int = 1
    peers: dict[str, float] = field(default_factory=dict)

    @property
    def fps(self) -> float:
        return 1.0 / self.frame_seconds if self.frame_seconds > 0 else float("inf")

    def as_dict(self) -> dict[str, Any]:
        return dict(asdict(self), fps=self.fps)


def measure(
    scene: Scene,
    device: Device,
    camera: Camera,
    *,
    name: str = DEFAULT,
    precision: str = "single",
    frames: int = 10,
    cells: tuple[int, int, int] | None = None,
    budget: int | None = None,
) -> tuple[Measurement, Grid]:
    """Build the grid (once without its last volume, which is then added as the update; then
    whole, timed), cast ``frames`` frames after a warm-up; returns the figures and the grid."""
    chosen = caster(name)
    update: float | None = None
    if scene.volumes > 1:
        partial = Grid(device, scene.first(scene.volumes - 1), cells=cells or _cells(scene), precision=precision)
        last = scene.triangles[int(scene.starts[-2]) :]
        update = partial.add(last)  # its kernels were built with the grid
        del partial
    grid = Grid(device, scene, cells=cells, precision=precision)
    casting = Casting(grid if chosen.uses_grid else None, name, device=device, precision=precision, budget=budget)
    casting.cast(camera, reuse=True)
    walls, kernels = [], []
    for _ in range(frames):
        start = time.perf_counter()
        with device.record() as rec:
            casting.cast(camera, reuse=True)
        walls.append(time.perf_counter() - start)
        kernels.append(rec.timing.kernel)
    figures = Measurement(
        scene=str(scene.path or "scene"),
        device=device.id,
        device_name=device.name,
        caster=name,
        precision=precision,
        width=camera.width,
        height=camera.height,
        volumes=scene.volumes,
        triangles=len(scene.triangles),
        cells=grid.layout.n,
        surface_cells=grid.surface_cells(),
        cell_triangles=grid.stats.pairs,
        build_seconds=grid.stats.build_seconds,
        update_seconds=update,
        frames=frames,
        frame_seconds=statistics.median(walls),
        kernel_seconds=statistics.median(kernels),
        parts=casting.parts,
    )
    return figures, grid


def _cells(scene: Scene) -> tuple[int, int, int]:
    """The whole scene's grid size, so that the grid without the last volume matches it."""
    return Layout.around(scene).n


def time_reference(scene: Scene, camera: Camera, frames: int = 3) -> float:
    """Median seconds of the CPU reference per frame, its grid built before and a warm-up
    frame cast (which compiles it)."""
    from ..enlight.reference import Reference

    reference = Reference(scene)
    reference.cast(camera.resized(8, 8))
    times = []
    for _ in range(frames):
        start = time.perf_counter()
        reference.cast(camera)
        times.append(time.perf_counter() - start)
    return statistics.median(times)
