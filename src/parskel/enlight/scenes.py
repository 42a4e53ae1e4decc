"""Scenes: a stock volume minus subtraction volumes, the grid's size and the camera.

A scene file is JSON; mesh paths are relative to the file::

    {"stock": "stock.stl",
     "subtract": ["a.stl", {"mesh": "b.stl", "translate": [x, y, z], "rotate_deg": [rx, ry, rz], "scale": s}],
     "grid": {"cells": [nx, ny, nz]},
     "camera": {"eye": [...], "look_at": [...], "up": [...], "fov_y": 45, "width": 1024, "height": 768}}

A placed mesh is scaled (``scale``: a number, or one per axis), rotated about x, then y, then
z (``rotate_deg``), then moved (``translate``). ``grid`` and ``camera`` are optional: the grid
is then sized from the triangle count, and the camera looks at the stock from above a corner.
The stock may be placed like a subtraction volume. The generators (:data:`GENERATORS`) write
STL files and a scene file for the seed's three scenes in kind and for random boxes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ParskelError
from .meshes import box, cylinder, load_mesh, sweep, write_stl


class SceneError(ParskelError, ValueError):
    """A scene file that cannot be read or does not describe a scene."""


@dataclass(frozen=True)
class Camera:
    """A pinhole camera. The ray of pixel (column i, row j, row 0 at the top) leaves ``eye``
    along ``forward + sx * right + sy * up'`` (see :meth:`basis`)."""

    eye: tuple[float, float, float]
    look_at: tuple[float, float, float]
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)
    fov_y: float = 45.0
    width: int = 1024
    height: int = 768

    def basis(self) -> np.ndarray:
        """eye, forward, right * tan(fov_y / 2) * W / H and up' * tan(fov_y / 2): (4, 3), where
        forward = normalize(look_at - eye), right = normalize(forward x up), up' = right x forward."""
        eye = np.asarray(self.eye, dtype=np.float64)
        forward = np.asarray(self.look_at, dtype=np.float64) - eye
        forward /= np.linalg.norm(forward)
        right = np.cross(forward, np.asarray(self.up, dtype=np.float64))
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        tan = math.tan(math.radians(self.fov_y) / 2)
        return np.stack([eye, forward, right * tan * self.width / self.height, up * tan])

    def rays(self) -> tuple[np.ndarray, np.ndarray]:
        """The eye (3,) and every pixel's unit ray direction (height, width, 3), float64."""
        eye, forward, right, up = self.basis()
        sx = 2.0 * (np.arange(self.width) + 0.5) / self.width - 1.0
        sy = 1.0 - 2.0 * (np.arange(self.height) + 0.5) / self.height
        d = forward + sx[None, :, None] * right + sy[:, None, None] * up
        return eye, d / np.linalg.norm(d, axis=2, keepdims=True)

    def resized(self, width: int, height: int) -> Camera:
        return replace(self, width=int(width), height=int(height))

    def orbited(self, degrees: float) -> Camera:
        """The camera turned by ``degrees`` about the axis through ``look_at`` along ``up``."""
        axis = np.asarray(self.up, dtype=np.float64)
        axis /= np.linalg.norm(axis)
        centre = np.asarray(self.look_at, dtype=np.float64)
        arm = np.asarray(self.eye, dtype=np.float64) - centre
        a = math.radians(degrees)
        turned = arm * math.cos(a) + np.cross(axis, arm) * math.sin(a) + axis * axis.dot(arm) * (1 - math.cos(a))
        return replace(self, eye=point(centre + turned))


@dataclass
class Scene:
    """Every volume's triangles, outward-wound, the stock first: ``triangles`` (n, 3, 3) float64,
    ``volume`` (n,) the volume of each (0 = stock), ``names`` one per volume."""

    triangles: np.ndarray
    volume: np.ndarray
    names: list[str]
    camera: Camera
    cells: tuple[int, int, int] | None = None
    path: Path | None = field(default=None, compare=False)

    @property
    def volumes(self) -> int:
        return len(self.names)

    @property
    def starts(self) -> np.ndarray:
        """Where each volume's triangles begin, and the end: (volumes + 1,)."""
        return np.searchsorted(self.volume, np.arange(self.volumes + 1)).astype(np.int64)

    def first(self, volumes: int) -> Scene:
        """The scene with its first ``volumes`` volumes only (the stock and volumes - 1 others)."""
        end = int(self.starts[volumes])
        return replace(self, triangles=self.triangles[:end], volume=self.volume[:end], names=self.names[:volumes])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The stock's bounding box, where anything can be visible."""
        stock = self.triangles[: int(self.starts[1])].reshape(-1, 3)
        return stock.min(axis=0), stock.max(axis=0)


def default_camera(lo: np.ndarray, hi: np.ndarray) -> Camera:
    """Looking at the box's centre from above one corner, the whole box in view."""
    centre = (lo + hi) / 2
    radius = float(np.linalg.norm(hi - lo)) / 2
    direction = np.array([1.0, -1.6, 1.2])
    eye = centre + direction / np.linalg.norm(direction) * radius * 2.4
    return Camera(point(eye), point(centre))


def point(values: Any) -> tuple[float, float, float]:
    """Three numbers as a tuple of floats."""
    x, y, z = (float(v) for v in values)
    return (x, y, z)


# placing meshes --------------------------------------------------------------------------------


def rotation(degrees: np.ndarray) -> np.ndarray:
    """Rotation matrices (k, 3, 3) for angles (k, 3) in degrees: about x, then y, then z."""
    rx, ry, rz = np.radians(np.asarray(degrees, dtype=np.float64)).T
    c, s = np.cos, np.sin
    one, zero = np.ones_like(rx), np.zeros_like(rx)
    mx = np.stack([one, zero, zero, zero, c(rx), -s(rx), zero, s(rx), c(rx)], axis=1).reshape(-1, 3, 3)
    my = np.stack([c(ry), zero, s(ry), zero, one, zero, -s(ry), zero, c(ry)], axis=1).reshape(-1, 3, 3)
    mz = np.stack([c(rz), -s(rz), zero, s(rz), c(rz), zero, zero, zero, one], axis=1).reshape(-1, 3, 3)
    return mz @ my @ mx


def place(triangles: np.ndarray, scale: np.ndarray, degrees: np.ndarray, translate: np.ndarray) -> np.ndarray:
    """Copies (k, m, 3, 3) of one mesh's triangles (m, 3, 3), copy i scaled by ``scale[i]`` (3,),
    rotated by ``degrees[i]`` and moved by ``translate[i]``; a mirroring copy is rewound."""
    matrices = rotation(degrees) * np.asarray(scale, dtype=np.float64)[:, None, :]
    placed = np.einsum("kij,mcj->kmci", matrices, triangles) + np.asarray(translate, dtype=np.float64)[:, None, None, :]
    mirrored = np.linalg.det(matrices) < 0
    placed[mirrored] = placed[mirrored][:, :, ::-1]
    return placed


# scene files -------------------------------------------------------------------------------------


def load_scene(path: str | Path) -> Scene:
    """Read a scene file and its meshes (see the module's docstring); raises
    :class:`SceneError` or :class:`~parskel.enlight.meshes.MeshError` naming what is wrong."""
    path = Path(path)
    try:
        spec = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SceneError(f"no scene file {str(path)!r}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SceneError(f"cannot read scene file {str(path)!r}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise SceneError(f"scene file {str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(spec, dict) or "stock" not in spec:
        raise SceneError(f"scene file {str(path)!r} must be a JSON object with a 'stock' mesh")
    entries = spec.get("subtract", [])
    if not isinstance(entries, list):
        raise SceneError(f"scene file {str(path)!r}: 'subtract' must be a list of meshes")
    placed = [_placement(path, "stock", spec["stock"])] + [
        _placement(path, f"subtract[{i}]", e) for i, e in enumerate(entries)
    ]
    cells = _cells(path, spec.get("grid"))
    files = {name: (path.parent / name).resolve() for name in {p[0] for p in placed}}
    by_file: dict[str, list[int]] = {}
    for i, (name, *_) in enumerate(placed):
        by_file.setdefault(name, []).append(i)
    pieces: list[np.ndarray | None] = [None] * len(placed)
    names: list[str] = [""] * len(placed)
    for name, indices in by_file.items():
        tris = load_mesh(files[name]).triangles
        scale, degrees, translate = (np.array([placed[i][k] for i in indices], dtype=np.float64) for k in (1, 2, 3))
        for i, copy in zip(indices, place(tris, scale, degrees, translate)):
            pieces[i] = copy
            names[i] = files[name].name
    triangles = np.concatenate([p for p in pieces if p is not None])
    counts = [len(p) for p in pieces if p is not None]
    volume = np.repeat(np.arange(len(placed), dtype=np.int32), counts)
    lo, hi = triangles[: counts[0]].reshape(-1, 3).min(axis=0), triangles[: counts[0]].reshape(-1, 3).max(axis=0)
    camera = _camera(path, spec.get("camera"), lo, hi)
    return Scene(triangles, volume, names, camera, cells, path)


Triple = tuple[float, float, float]


def _placement(scene: Path, where: str, entry: Any) -> tuple[str, Triple, Triple, Triple]:
    """One entry of a scene file: its mesh path as written, scale, angles and move."""
    if isinstance(entry, str):
        return entry, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    if not isinstance(entry, dict) or not isinstance(entry.get("mesh"), str):
        raise SceneError(f"scene file {str(scene)!r}, {where}: give a mesh path or an object with a 'mesh' path")
    if len(entry) > 1 and not entry.keys() <= {"mesh", "translate", "rotate_deg", "scale"}:
        unknown = set(entry) - {"mesh", "translate", "rotate_deg", "scale"}
        raise SceneError(f"scene file {str(scene)!r}, {where}: unknown keys {sorted(unknown)}")
    try:
        translate = _triple(entry.get("translate", (0.0, 0.0, 0.0)))
        degrees = _triple(entry.get("rotate_deg", (0.0, 0.0, 0.0)))
        s = entry.get("scale", 1.0)
        scale = _triple((s, s, s) if isinstance(s, (int, float)) and not isinstance(s, bool) else s)
    except ValueError as exc:
        raise SceneError(f"scene file {str(scene)!r}, {where}: {exc}") from None
    if 0.0 in scale:
        raise SceneError(f"scene file {str(scene)!r}, {where}: a scale of 0 flattens the mesh")
    return entry["mesh"], scale, degrees, translate


def _triple(value: Any) -> Triple:
    """Three finite numbers; ``ValueError`` otherwise."""
    if isinstance(value, (list, tuple)) and len(value) == 3:
        try:
            x, y, z = (float(v) for v in value if not isinstance(v, (bool, str)))
        except (TypeError, ValueError):
            pass
        else:
            if math.isfinite(x) and math.isfinite(y) and math.isfinite(z):
                return (x, y, z)
    raise ValueError(f"expected three finite numbers, got {value!r}")


def _camera(scene: Path, spec: Any, lo: np.ndarray, hi: np.ndarray) -> Camera:
    default = default_camera(lo, hi)
    if spec is None:
        return default
    if not isinstance(spec, dict):
        raise SceneError(f"scene file {str(scene)!r}: 'camera' must be an object")
    unknown = set(spec) - {"eye", "look_at", "up", "fov_y", "width", "height"}
    if unknown:
        raise SceneError(f"scene file {str(scene)!r}, camera: unknown keys {sorted(unknown)}")
    try:
        camera = Camera(
            eye=_triple(spec.get("eye", default.eye)),
            look_at=_triple(spec.get("look_at", default.look_at)),
            up=_triple(spec.get("up", default.up)),
            fov_y=float(spec.get("fov_y", default.fov_y)),
            width=int(spec.get("width", default.width)),
            height=int(spec.get("height", default.height)),
        )
    except (TypeError, ValueError) as exc:
        raise SceneError(f"scene file {str(scene)!r}, camera: {exc}") from None
    check_camera(camera)
    return camera


def check_camera(camera: Camera) -> None:
    """Raise :class:`SceneError` for a camera that defines no image."""
    if camera.width < 1 or camera.height < 1:
        raise SceneError(f"the image must be at least 1 x 1 pixels, not {camera.width} x {camera.height}")
    if not 0 < camera.fov_y < 180:
        raise SceneError(f"fov_y must lie between 0 and 180 degrees, not {camera.fov_y}")
    forward = np.subtract(camera.look_at, camera.eye)
    if np.linalg.norm(forward) == 0:
        raise SceneError("the camera's eye and look_at are the same point")
    if np.linalg.norm(np.cross(forward, camera.up)) <= 1e-12 * np.linalg.norm(forward) * np.linalg.norm(camera.up):
        raise SceneError("the camera's up vector is parallel to its line of sight")


def _cells(scene: Path, spec: Any) -> tuple[int, int, int] | None:
    if spec is None:
        return None
    cells = spec.get("cells") if isinstance(spec, dict) else None
    if (
        not isinstance(cells, list)
        or len(cells) != 3
        or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in cells)
    ):
        raise SceneError(
            f"scene file {str(scene)!r}: 'grid' must be {{\"cells\": [nx, ny, nz]}} with whole numbers >= 1"
        )
    return (cells[0], cells[1], cells[2])


# generators -----------------------------------------------------------------------------------


@dataclass
class Written:
    """A generated scene on disk: the scene file, and its volume and triangle counts."""

    path: Path
    volumes: int
    triangles: int


def _write(
    out: Path,
    meshes: dict[str, np.ndarray],
    stock: dict[str, Any],
    subtract: list[dict[str, Any]],
    camera: Camera,
) -> Written:
    out.mkdir(parents=True, exist_ok=True)
    for name, tris in meshes.items():
        write_stl(out / name, tris, name=f"parskel {name}")
    spec = {
        "stock": stock,
        "subtract": subtract,
        "camera": {
            "eye": list(camera.eye),
            "look_at": list(camera.look_at),
            "up": list(camera.up),
            "fov_y": camera.fov_y,
            "width": camera.width,
            "height": camera.height,
        },
    }
    path = out / "scene.json"
    path.write_text(json.dumps(spec, indent=None, separators=(",", ":")) + "\n", encoding="utf-8")
    triangles = sum(len(meshes[e["mesh"]]) for e in [stock, *subtract])
    return Written(path, 1 + len(subtract), triangles)


def _entries(mesh: str, scale: np.ndarray, translate: np.ndarray, degrees: np.ndarray | None = None) -> list[dict]:
    """Scene entries for placed copies of one mesh; numbers rounded to what STL keeps."""
    out = []
    for i in range(len(translate)):
        entry: dict[str, Any] = {"mesh": mesh, "scale": [float(f"{x:.9g}") for x in scale[i]]}
        if degrees is not None:
            entry["rotate_deg"] = [float(f"{x:.9g}") for x in degrees[i]]
        entry["translate"] = [float(f"{x:.9g}") for x in translate[i]]
        out.append(entry)
    return out


def menger(out: str | Path, level: int = 3) -> Written:
    """A Menger sponge of ``level``: the unit cube minus 3 (8^level - 1) / 7 square tunnels
    through it (14,043 at level 5, 112,347 at level 6, as in the seed).

    The holes of level l form a Sierpinski carpet on each face; a tunnel runs through the
    whole cube, since the cubes it would spare are cut away at coarser levels. Tunnels are a
    hundredth of the finest hole wider than exact, so that no two share a face plane."""
    if not 1 <= level <= 7:
        raise SceneError(f"a Menger sponge of level 1 to 7, not {level}")
    grow = 0.01 * 3.0**-level
    scales, moves = [], []
    for lvl in range(1, level + 1):
        n = 3**lvl
        a = np.repeat(np.arange(n), n)
        b = np.tile(np.arange(n), n)
        # a new hole: the last base-3 digits of both are 1, and no earlier pair of digits is
        new = (a % 3 == 1) & (b % 3 == 1)
        for k in range(1, lvl):
            new &= ~(((a // 3**k) % 3 == 1) & ((b // 3**k) % 3 == 1))
        a, b = a[new], b[new]
        size = 3.0**-lvl
        for axis in range(3):
            lengths = np.full((len(a), 3), size + 2 * grow)
            lengths[:, axis] = 1.2
            corner = np.empty((len(a), 3))
            others = [k for k in range(3) if k != axis]
            corner[:, axis] = -0.1
            corner[:, others[0]] = a * size - grow
            corner[:, others[1]] = b * size - grow
            scales.append(lengths)
            moves.append(corner)
    camera = default_camera(np.zeros(3), np.ones(3))
    subtract = _entries("box.stl", np.concatenate(scales), np.concatenate(moves))
    return _write(Path(out), {"box.stl": box()}, {"mesh": "box.stl"}, subtract, camera)


def cylinder_head(out: str | Path, segments: int = 350) -> Written:
    """A block of 2 x 1 x 0.5 minus 21 volumes, 28,024 triangles, a cylinder head in kind: four combustion
    chambers from below, eight tilted valve bores and four spark plug bores from above, two
    camshaft grooves along the top, two oil galleries through the block, and a cross slot."""
    placed: list[tuple[str, tuple, tuple, tuple]] = []  # mesh, scale, degrees, translate
    for k in range(4):
        x = 0.3 + 0.466 * k
        placed.append(("cylinder.stl", (0.2, 0.2, 0.16), (0, 0, 0), (x, 0.5, -0.05)))
        for side, tilt in ((-1, -14.0), (1, 14.0)):
            placed.append(("cylinder.stl", (0.06, 0.06, 0.6), (tilt, 0, 0), (x - 0.07, 0.5 + side * 0.1, 0.05)))
        placed.append(("cylinder.stl", (0.035, 0.035, 0.6), (0, 0, 0), (x + 0.1, 0.5, 0.0)))
    for y in (0.22, 0.78):
        placed.append(("cylinder.stl", (0.09, 0.09, 2.2), (0, 90, 0), (-0.1, y, 0.52)))
    for y in (0.08, 0.92):
        placed.append(("cylinder.stl", (0.03, 0.03, 2.2), (0, 90, 0), (-0.1, y, 0.2)))
    placed.append(("box.stl", (0.06, 1.2, 0.1), (0, 0, 0), (0.97, -0.1, 0.43)))
    subtract = [{"mesh": m, "scale": list(s), "rotate_deg": list(r), "translate": list(t)} for m, s, r, t in placed]
    lo, hi = np.zeros(3), np.array([2.0, 1.0, 0.5])
    stock = {"mesh": "box.stl", "scale": [2.0, 1.0, 0.5]}
    meshes = {"box.stl": box(), "cylinder.stl": cylinder(segments)}
    return _write(Path(out), meshes, stock, subtract, default_camera(lo, hi))


def impeller(out: str | Path, volumes: int = 48, triangles: int = 200_000) -> Written:
    """A disc of radius 1 and height 0.4 minus ``volumes`` curved channels, rotated copies of
    one mesh: a swept rectangle along a spiral from the hub out of the rim, tessellated into
    near-square triangles, about ``triangles`` in the whole scene (12.5 million in the seed's
    multi impeller). The blades are what the channels leave."""
    if volumes < 1:
        raise SceneError(f"an impeller needs at least 1 channel, not {volumes}")
    half_u, half_v = 0.55 * math.pi / volumes / 2 + 0.005, 0.2
    fine = 4000
    s = np.linspace(0.0, 1.0, fine + 1)
    rough = _spiral(s)
    length = float(np.linalg.norm(np.diff(rough, axis=0), axis=1).sum())
    perimeter = 4 * (half_u + half_v)
    # square triangles of side h: 2 (length / h) (perimeter / h) of them per channel
    h = math.sqrt(2 * length * perimeter / max(triangles / volumes, 64))
    steps = max(4, math.ceil(length / h))
    parts = (max(1, math.ceil(2 * half_u / h)), max(1, math.ceil(2 * half_v / h)))
    path = _spiral(np.linspace(0.0, 1.0, steps + 1))
    tangent = np.gradient(path, axis=0)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    side = np.cross(tangent, np.tile([0.0, 0.0, 1.0], (len(path), 1)))
    side /= np.linalg.norm(side, axis=1, keepdims=True)
    normal = np.cross(side, tangent)
    channel = sweep(path, side, normal, half_u, half_v, parts)
    disc = cylinder(256)
    degrees = np.zeros((volumes, 3))
    degrees[:, 2] = np.arange(volumes) * 360.0 / volumes
    subtract = _entries("channel.stl", np.ones((volumes, 3)), np.zeros((volumes, 3)), degrees)
    stock = {"mesh": "disc.stl", "scale": [1.0, 1.0, 0.4]}
    camera = Camera((1.3, -2.0, 2.1), (0.0, 0.0, 0.05))
    return _write(Path(out), {"disc.stl": disc, "channel.stl": channel}, stock, subtract, camera)


def _spiral(s: np.ndarray) -> np.ndarray:
    """The impeller channels' centre line at parameters s in [0, 1]: out from the hub, turning
    and sinking towards the rim."""
    radius = 0.25 + 0.95 * s
    angle = 1.1 * s**1.3
    return np.stack([radius * np.cos(angle), radius * np.sin(angle), 0.42 - 0.22 * s], axis=1)


def random_boxes(out: str | Path, volumes: int = 1000, seed: int = 1) -> Written:
    """The unit cube minus ``volumes`` boxes of random size, orientation and place, sized so
    that they remove about half the cube whatever their number."""
    if volumes < 1:
        raise SceneError(f"random-boxes needs at least 1 box, not {volumes}")
    rng = np.random.default_rng(seed)
    edge = 1.3 * volumes ** (-1 / 3)
    scale = edge * rng.uniform(0.3, 1.0, size=(volumes, 3))
    degrees = rng.uniform(0.0, 360.0, size=(volumes, 3))
    translate = rng.uniform(-0.05, 1.0, size=(volumes, 3))
    subtract = _entries("box.stl", scale, translate, degrees)
    return _write(Path(out), {"box.stl": box()}, {"mesh": "box.stl"}, subtract, default_camera(np.zeros(3), np.ones(3)))


GENERATORS: dict[str, Callable[..., Written]] = {
    "menger": menger,
    "cylinder-head": cylinder_head,
    "impeller": impeller,
    "random-boxes": random_boxes,
}
