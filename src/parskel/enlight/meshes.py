"""Triangle meshes: STL (binary and ASCII) and PLY read through trimesh, binary STL written.

A volume of a scene must be a closed mesh whose triangles are all wound the same way: every
edge is shared by exactly two triangles that run along it in opposite directions. A mesh that
is closed and consistent but inside out (negative volume) is turned outward; one that is open
or inconsistently oriented is refused with its name, since the casters' entry and exit
counting (seed 001 part 2, section 2.3) would draw it wrongly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ParskelError


class MeshError(ParskelError, ValueError):
    """A mesh file that cannot be read, or a mesh that is not a closed, oriented volume."""


@dataclass(frozen=True)
class Mesh:
    """Indexed triangles: ``vertices`` (n, 3) float64 and ``faces`` (m, 3) int64, wound
    counter-clockwise seen from outside."""

    name: str
    vertices: np.ndarray
    faces: np.ndarray

    @property
    def triangles(self) -> np.ndarray:
        """The corners of every triangle, (m, 3, 3)."""
        return self.vertices[self.faces]


def load_mesh(path: str | Path) -> Mesh:
    """Read an STL or PLY file as a closed, outward-oriented :class:`Mesh`.

    Duplicate vertices (STL stores each triangle's corners apart) are merged before the mesh
    is checked; raises :class:`MeshError` naming the file for a missing or unreadable file or
    a mesh that is open or inconsistently oriented.
    """
    path = Path(path)
    if not path.is_file():
        raise MeshError(f"no mesh file {str(path)!r}")
    import trimesh

    try:
        loaded = trimesh.load_mesh(str(path), process=False)
    except Exception as exc:  # trimesh raises many kinds for a malformed file
        raise MeshError(f"cannot read mesh {str(path)!r}: {exc}") from None
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        raise MeshError(f"mesh {str(path)!r} holds no triangles")
    triangles = np.asarray(loaded.vertices, dtype=np.float64)[np.asarray(loaded.faces)]
    return from_triangles(path.name, triangles)


def from_triangles(name: str, triangles: np.ndarray) -> Mesh:
    """A checked :class:`Mesh` from separate triangles (m, 3, 3), equal corners merged."""
    triangles = np.asarray(triangles, dtype=np.float64)
    if triangles.ndim != 3 or triangles.shape[1:] != (3, 3):
        raise MeshError(f"mesh {name!r}: expected triangles of shape (m, 3, 3), got {triangles.shape}")
    if not np.isfinite(triangles).all():
        raise MeshError(f"mesh {name!r} has coordinates that are not finite numbers")
    vertices, inverse = np.unique(triangles.reshape(-1, 3), axis=0, return_inverse=True)
    faces = inverse.reshape(-1, 3).astype(np.int64)
    degenerate = (faces[:, 0] == faces[:, 1]) | (faces[:, 1] == faces[:, 2]) | (faces[:, 2] == faces[:, 0])
    faces = faces[~degenerate]
    if len(faces) == 0:
        raise MeshError(f"mesh {name!r} holds no triangles")
    check_closed(name, faces)
    mesh = Mesh(name, vertices, faces)
    if signed_volume(mesh.triangles) < 0:
        mesh = Mesh(name, vertices, faces[:, ::-1].copy())
    return mesh


def check_closed(name: str, faces: np.ndarray) -> None:
    """Raise :class:`MeshError` unless every directed edge of ``faces`` occurs once and its
    reverse once: a closed mesh, consistently oriented."""
    directed = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    n = int(faces.max()) + 1
    codes = directed[:, 0] * n + directed[:, 1]
    reverse = directed[:, 1] * n + directed[:, 0]
    unique, counts = np.unique(codes, return_counts=True)
    repeated = int((counts > 1).sum())
    lonely = int((~np.isin(reverse, unique)).sum())
    if repeated:
        raise MeshError(
            f"mesh {name!r} is inconsistently oriented (or not a manifold): {repeated} edge(s) run the same "
            "way in two triangles; fix its winding before using it as a volume"
        )
    if lonely:
        raise MeshError(
            f"mesh {name!r} is open: {lonely} edge(s) belong to one triangle only; a volume must be a closed mesh"
        )


def signed_volume(triangles: np.ndarray) -> float:
    """The volume a closed mesh encloses, negative when it is wound inside out."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def write_stl(path: str | Path, triangles: np.ndarray, *, name: str = "parskel") -> None:
    """Write triangles (m, 3, 3) as a binary STL file, with their normals."""
    triangles = np.asarray(triangles, dtype=np.float64)
    normals = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    lengths = np.linalg.norm(normals, axis=1, keepdims=True)
    normals = np.divide(normals, lengths, out=np.zeros_like(normals), where=lengths > 0)
    record = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attribute", "<u2")])
    data = np.zeros(len(triangles), dtype=record)
    data["normal"] = normals
    data["corners"] = triangles
    header = name.encode("ascii", "replace")[:80].ljust(80, b" ")
    with open(path, "wb") as f:
        f.write(header)
        f.write(np.uint32(len(triangles)).tobytes())
        f.write(data.tobytes())


# shapes for the scene generators -----------------------------------------------------------


def box() -> np.ndarray:
    """The unit cube [0, 1]^3 as 12 outward-wound triangles."""
    corner = np.array([[(i >> 0) & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=np.float64)
    faces = [
        (0, 2, 3), (0, 3, 1), (4, 5, 7), (4, 7, 6), (0, 1, 5), (0, 5, 4),
        (2, 6, 7), (2, 7, 3), (0, 4, 6), (0, 6, 2), (1, 3, 7), (1, 7, 5),
    ]  # fmt: skip
    return corner[np.array(faces)]


def cylinder(segments: int) -> np.ndarray:
    """A cylinder of radius 1 around the z axis from z = 0 to 1, ``segments`` around: 4
    triangles per segment."""
    angle = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    ring = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    nxt = np.roll(ring, -1, axis=0)
    zero, one = np.zeros((segments, 1)), np.ones((segments, 1))
    b0, b1 = np.hstack([ring, zero]), np.hstack([nxt, zero])
    t0, t1 = np.hstack([ring, one]), np.hstack([nxt, one])
    bottom_centre = np.zeros((segments, 3))
    top_centre = np.tile([0.0, 0.0, 1.0], (segments, 1))
    return np.concatenate(
        [
            np.stack([bottom_centre, b1, b0], axis=1),
            np.stack([top_centre, t0, t1], axis=1),
            np.stack([b0, b1, t1], axis=1),
            np.stack([b0, t1, t0], axis=1),
        ]
    )


def sweep(
    path: np.ndarray, frame_u: np.ndarray, frame_v: np.ndarray, half_u: float, half_v: float, parts: tuple[int, int]
) -> np.ndarray:
    """A closed tube of rectangular cross-section (2 half_u x 2 half_v) swept along the points
    ``path`` (k, 3), the rectangle spanned by the unit vectors ``frame_u``, ``frame_v`` (k, 3)
    at each point, its sides cut into ``parts`` (along u, along v) strips: a finely
    tessellated surface, as CAD exports are, with 4 (parts_u + parts_v) triangles per step and
    as many for the two ends (fans from the path's first and last points)."""
    pu, pv = parts
    # the rectangle's outline, counter-clockwise in (u, v), in steps of the strips
    su = np.linspace(-1.0, 1.0, pu + 1)[:-1]
    sv = np.linspace(-1.0, 1.0, pv + 1)[:-1]
    outline = np.concatenate(
        [
            np.stack([su, -np.ones(pu)], axis=1),
            np.stack([np.ones(pv), sv], axis=1),
            np.stack([-su, np.ones(pu)], axis=1),
            np.stack([-np.ones(pv), -sv], axis=1),
        ]
    )
    rings = (
        path[:, None, :]
        + outline[None, :, 0, None] * half_u * frame_u[:, None, :]
        + outline[None, :, 1, None] * half_v * frame_v[:, None, :]
    )
    a, b = rings[:-1], rings[1:]
    a1, b1 = np.roll(a, -1, axis=1), np.roll(b, -1, axis=1)
    sides = np.concatenate([np.stack([a, a1, b1], axis=2), np.stack([a, b1, b], axis=2)]).reshape(-1, 3, 3)
    first, last = rings[0], rings[-1]
    start_fan = np.stack([np.broadcast_to(path[0], first.shape), np.roll(first, -1, axis=0), first], axis=1)
    end_fan = np.stack([np.broadcast_to(path[-1], last.shape), last, np.roll(last, -1, axis=0)], axis=1)
    tube = np.concatenate([sides, start_fan, end_fan])
    if signed_volume(tube) < 0:
        tube = tube[:, ::-1]
    return tube
