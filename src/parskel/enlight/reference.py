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


def reference_cast(scene: Scene, camera: Camera, *, cells_per_triangle: float = 2.0) -> dict[str, np.ndarray]:
    """Per pixel of ``camera``: ``triangle`` (index into ``scene.triangles``, -1 for none),
    ``depth`` (distance from the eye, inf for none), ``u``, ``v`` (barycentric, of corners 1
    and 2), as (height, width) arrays."""
    tris = np.ascontiguousarray(scene.triangles, dtype=np.float64)
    lo = tris.reshape(-1, 3).min(axis=0)
    hi = tris.reshape(-1, 3).max(axis=0)
    pad = 1e-6 * max(float(np.max(hi - lo)), 1e-9)
    lo, hi = lo - pad, hi + pad
    extent = hi - lo
    target = max(8.0, cells_per_triangle * len(tris))
    side = (float(np.prod(np.maximum(extent, 1e-9 * extent.max()))) / target) ** (1 / 3)
    n = np.clip(np.ceil(extent / side), 1, 512).astype(np.int64)
    cell = extent / n
    start, items = _bin(tris, lo, cell, n)
    eye, dirs = camera.rays()
    h, w = camera.height, camera.width
    triangle = np.full(h * w, -1, np.int64)
    depth = np.full(h * w, np.inf)
    u = np.zeros(h * w)
    v = np.zeros(h * w)
    is_stock = (scene.volume == 0).astype(np.int8)
    _cast(tris, is_stock, lo, hi, cell, n, start, items, eye,
          dirs.reshape(-1, 3), triangle, depth, u, v)  # fmt: skip
    shape = (h, w)
    return {"triangle": triangle.reshape(shape), "depth": depth.reshape(shape), "u": u.reshape(shape),
            "v": v.reshape(shape)}  # fmt: skip


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
def _intersect(o, d, tri):  # pragma: no cover - compiled
    """Moller-Trumbore in double precision: (hit, t, u, v, det)."""
    e1 = tri[1] - tri[0]
    e2 = tri[2] - tri[0]
    p = np.cross(d, e2)
    det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2]
    if det == 0.0:
        return False, 0.0, 0.0, 0.0, 0.0
    inv = 1.0 / det
    s = o - tri[0]
    u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) * inv
    if u < 0.0 or u > 1.0:
        return False, 0.0, 0.0, 0.0, 0.0
    q = np.cross(s, e1)
    v = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) * inv
    if v < 0.0 or u + v > 1.0:
        return False, 0.0, 0.0, 0.0, 0.0
    t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * inv
    return True, t, u, v, det


@njit(cache=True, parallel=True)
def _cast(
    tris, is_stock, lo, hi, cell, n, start, items, eye, dirs, out_tri, out_depth, out_u, out_v
):  # pragma: no cover - compiled
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
            c = cur[0] + n[0] * (cur[1] + n[1] * cur[2])
            m = start[c + 1] - start[c]
            ht = np.empty(m)
            hk = np.empty(m, np.int64)
            hadd = np.empty(m, np.int64)
            hin = np.empty(m, np.int64)
            hu = np.empty(m)
            hv = np.empty(m)
            nh = 0
            for j in range(start[c], start[c + 1]):
                t = items[j]
                ok, th, uh, vh, det = _intersect(eye, d, tris[t])
                last = t_out >= t1
                if ok and th >= t_in and (th < t_out or (last and th <= t_out)):
                    # outward normals: a ray entering a volume meets its front side, det > 0
                    enter = det > 0.0
                    ht[nh] = th
                    hk[nh] = t
                    hin[nh] = 1 if enter else -1
                    # events that add material: entering the stock, leaving a subtraction volume
                    hadd[nh] = 1 if (enter == (is_stock[t] == 1)) else 0
                    hu[nh] = uh
                    hv[nh] = vh
                    nh += 1
            order = np.argsort(ht[:nh] + 0.0, kind="mergesort")
            # stable by distance; then events that take material away first
            i = 0
            while i < nh:
                j = i
                while j + 1 < nh and ht[order[j + 1]] == ht[order[i]]:
                    j += 1
                for pass_add in range(2):
                    for q in range(i, j + 1):
                        e = order[q]
                        if hadd[e] != pass_add:
                            continue
                        before = stock > 0 and subtracted == 0
                        if is_stock[hk[e]] == 1:
                            stock += hin[e]
                        else:
                            subtracted += hin[e]
                        after = stock > 0 and subtracted == 0
                        if not before and after and ht[e] >= 0.0 and not done:
                            out_tri[r] = hk[e]
                            out_depth[r] = ht[e]
                            out_u[r] = hu[e]
                            out_v[r] = hv[e]
                            done = True
                i = j + 1
            if done or t_out >= t1:
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
