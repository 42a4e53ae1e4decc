"""The CPU reference of the casters: exact CSG ray hits in double precision (Numba).

It shares nothing with the device casters but the camera: its own uniform grid over every
triangle of the scene (no classification, no cells dropped), and one entry/exit count per
volume along the whole ray from where the ray enters the scene's box, even behind the eye.
A point is material when it lies inside the stock and inside no subtraction volume; the
first place in front of the eye where the ray passes into material is the visible surface.
Where two events fall at the same distance, those that take material away come first (a ray
passing from one subtraction volume into an adjoining one sees no surface there).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .scenes import Camera, Scene


class Reference:
    """The scene's triangles in the reference's own grid, about ``cells_per_triangle`` cells per
    triangle, ready to cast any camera."""

    def __init__(self, scene: Scene, *, cells_per_triangle: float = 2.0) -> None:
        self.tris = np.ascontiguousarray(scene.triangles, dtype=np.float64)
        lo = self.tris.reshape(-1, 3).min(axis=0)
        hi = self.tris.reshape(-1, 3).max(axis=0)
        pad = 1e-6 * max(float(np.max(hi - lo)), 1e-9)
        self.lo, self.hi = lo - pad, hi + pad
        extent = self.hi - self.lo
        target = max(8.0, cells_per_triangle * len(self.tris))
        side = (float(np.prod(np.maximum(extent, 1e-9 * extent.max()))) / target) ** (1 / 3)
        self.n = np.clip(np.ceil(extent / side), 1, 512).astype(np.int64)
        self.cell = extent / self.n
        self.start, self.items = _bin(self.tris, self.lo, self.cell, self.n)
        self.is_stock = (scene.volume == 0).astype(np.int8)

    def cast(self, camera: Camera) -> dict[str, np.ndarray]:
        """Per pixel of ``camera``: ``triangle`` (index into the scene's triangles, -1 for none),
        ``depth`` (distance from the eye, inf for none), ``u``, ``v`` (barycentric, of corners
        1 and 2), as (height, width) arrays."""
        eye, dirs = camera.rays()
        pixels = camera.height * camera.width
        triangle = np.full(pixels, -1, np.int64)
        depth = np.full(pixels, np.inf)
        u = np.zeros(pixels)
        v = np.zeros(pixels)
        _cast(self.tris, self.is_stock, self.lo, self.hi, self.cell, self.n, self.start, self.items, eye,
              dirs.reshape(-1, 3), triangle, depth, u, v)  # fmt: skip
        shape = (camera.height, camera.width)
        out = {"triangle": triangle, "depth": depth, "u": u, "v": v}
        return {name: array.reshape(shape) for name, array in out.items()}


def reference_cast(scene: Scene, camera: Camera) -> dict[str, np.ndarray]:
    """:meth:`Reference.cast` of a new :class:`Reference` of ``scene``."""
    return Reference(scene).cast(camera)


@njit(cache=True)
def _bin(tris, lo, cell, n):  # pragma: no cover - compiled
    """Triangles per cell by bounding box: start (cells + 1,) and the triangle indices."""
    cells = n[0] * n[1] * n[2]
    counts = np.zeros(cells + 1, np.int64)
    ranges = np.empty((len(tris), 6), np.int64)
    for t in range(len(tris)):
        for k in range(3):
            mn = min(tris[t, 0, k], tris[t, 1, k], tris[t, 2, k])
            mx = max(tris[t, 0, k], tris[t, 1, k], tris[t, 2, k])
            a = int(np.floor((mn - lo[k]) / cell[k] - 1e-6))
            b = int(np.floor((mx - lo[k]) / cell[k] + 1e-6))
            ranges[t, k] = max(a, 0)
            ranges[t, 3 + k] = min(b, n[k] - 1)
        for z in range(ranges[t, 2], ranges[t, 5] + 1):
            for y in range(ranges[t, 1], ranges[t, 4] + 1):
                for x in range(ranges[t, 0], ranges[t, 3] + 1):
                    counts[x + n[0] * (y + n[1] * z) + 1] += 1
    start = np.cumsum(counts)
    fill = start[:-1].copy()
    items = np.empty(start[-1], np.int64)
    for t in range(len(tris)):
        for z in range(ranges[t, 2], ranges[t, 5] + 1):
            for y in range(ranges[t, 1], ranges[t, 4] + 1):
                for x in range(ranges[t, 0], ranges[t, 3] + 1):
                    c = x + n[0] * (y + n[1] * z)
                    items[fill[c]] = t
                    fill[c] += 1
    return start, items


@njit(cache=True)
def _intersect(o, d, tris, t):  # pragma: no cover - compiled
    """Moller-Trumbore in double precision on triangle t: (hit, distance, u, v, det)."""
    ax, ay, az = tris[t, 0, 0], tris[t, 0, 1], tris[t, 0, 2]
    e1x, e1y, e1z = tris[t, 1, 0] - ax, tris[t, 1, 1] - ay, tris[t, 1, 2] - az
    e2x, e2y, e2z = tris[t, 2, 0] - ax, tris[t, 2, 1] - ay, tris[t, 2, 2] - az
    px, py, pz = d[1] * e2z - d[2] * e2y, d[2] * e2x - d[0] * e2z, d[0] * e2y - d[1] * e2x
    det = e1x * px + e1y * py + e1z * pz
    if det == 0.0:
        return False, 0.0, 0.0, 0.0, 0.0
    inv = 1.0 / det
    sx, sy, sz = o[0] - ax, o[1] - ay, o[2] - az
    u = (sx * px + sy * py + sz * pz) * inv
    if u < 0.0 or u > 1.0:
        return False, 0.0, 0.0, 0.0, 0.0
    qx, qy, qz = sy * e1z - sz * e1y, sz * e1x - sx * e1z, sx * e1y - sy * e1x
    v = (d[0] * qx + d[1] * qy + d[2] * qz) * inv
    if v < 0.0 or u + v > 1.0:
        return False, 0.0, 0.0, 0.0, 0.0
    return True, (e2x * qx + e2y * qy + e2z * qz) * inv, u, v, det


@njit(cache=True, parallel=True)
def _cast(
    tris, is_stock, lo, hi, cell, n, start, items, eye, dirs, out_tri, out_depth, out_u, out_v
):  # pragma: no cover - compiled
    most = 0
    for c in range(len(start) - 1):
        most = max(most, start[c + 1] - start[c])
    for r in prange(len(dirs)):
        d = dirs[r]
        t0, t1 = -1e300, 1e300
        miss = False
        for k in range(3):
            if d[k] == 0.0:
                if eye[k] < lo[k] or eye[k] > hi[k]:
                    miss = True
                continue
            a = (lo[k] - eye[k]) / d[k]
            b = (hi[k] - eye[k]) / d[k]
            t0 = max(t0, min(a, b))
            t1 = min(t1, max(a, b))
        if miss or t0 > t1 or t1 < 0.0:
            continue
        # the hits of one cell, kept sorted by distance, then those that take material away
        ht = np.empty(most)
        hk = np.empty(most, np.int64)
        hadd = np.empty(most, np.int64)
        hin = np.empty(most, np.int64)
        hu = np.empty(most)
        hv = np.empty(most)
        stock, subtracted = 0, 0
        cur = np.empty(3, np.int64)
        step = np.zeros(3, np.int64)
        nxt = np.full(3, 1e300)
        delta = np.full(3, 1e300)
        for k in range(3):
            c = int(np.floor((eye[k] + t0 * d[k] - lo[k]) / cell[k]))
            cur[k] = min(max(c, 0), n[k] - 1)
            if d[k] > 0:
                step[k] = 1
                nxt[k] = (lo[k] + (cur[k] + 1) * cell[k] - eye[k]) / d[k]
                delta[k] = cell[k] / d[k]
            elif d[k] < 0:
                step[k] = -1
                nxt[k] = (lo[k] + cur[k] * cell[k] - eye[k]) / d[k]
                delta[k] = -cell[k] / d[k]
        t_in = t0
        done = False
        while not done:
            t_out = min(t1, nxt[0], nxt[1], nxt[2])
            last = t_out >= t1
            c = cur[0] + n[0] * (cur[1] + n[1] * cur[2])
            nh = 0
            for j in range(start[c], start[c + 1]):
                t = items[j]
                ok, th, uh, vh, det = _intersect(eye, d, tris, t)
                # a hit on a boundary between cells counts in the cell it enters
                if ok and th >= t_in and (th < t_out or (last and th <= t_out)):
                    # outward normals: a ray entering a volume meets its front side, det > 0
                    enter = det > 0.0
                    add = 1 if (enter == (is_stock[t] == 1)) else 0
                    m = nh
                    while m > 0 and (ht[m - 1] > th or (ht[m - 1] == th and hadd[m - 1] > add)):
                        ht[m] = ht[m - 1]
                        hk[m] = hk[m - 1]
                        hadd[m] = hadd[m - 1]
                        hin[m] = hin[m - 1]
                        hu[m] = hu[m - 1]
                        hv[m] = hv[m - 1]
                        m -= 1
                    ht[m] = th
                    hk[m] = t
                    hadd[m] = add
                    hin[m] = 1 if enter else -1
                    hu[m] = uh
                    hv[m] = vh
                    nh += 1
            for e in range(nh):
                before = stock > 0 and subtracted == 0
                if is_stock[hk[e]] == 1:
                    stock += hin[e]
                else:
                    subtracted += hin[e]
                if not before and stock > 0 and subtracted == 0 and ht[e] >= 0.0:
                    out_tri[r] = hk[e]
                    out_depth[r] = ht[e]
                    out_u[r] = hu[e]
                    out_v[r] = hv[e]
                    done = True
                    break
            if done or last:
                break
            k = 0
            if nxt[1] < nxt[k]:
                k = 1
            if nxt[2] < nxt[k]:
                k = 2
            cur[k] += step[k]
            if cur[k] < 0 or cur[k] >= n[k]:
                break
            t_in = nxt[k]
            nxt[k] += delta[k]
