/* Enlight (seed 001, part 2): what the grid and caster kernels share.
 *
 * REAL is the precision of every geometric computation (float, or double with -DPS_FP64=1).
 * Points are small structs of three scalars rather than float3, which has no portable layout.
 *
 * Every volume is a closed mesh with outward normals (counter-clockwise seen from outside); the
 * stock comes inverted (its winding reversed on the host), so that the scene is subtraction
 * volumes only, in a world that is filled (seed 001 part 2, section 2.3). A ray that enters a
 * volume meets a triangle whose normal faces it: Moller-Trumbore's determinant is positive. */
#ifndef PARSKEL_ENLIGHT_H
#define PARSKEL_ENLIGHT_H

#include "common/parskel.h"

#if defined(PS_FP64) && PS_FP64 && !defined(PS_CUDA)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#ifndef REAL
#define REAL float
#endif

/* a distance no ray reaches */
#define FAR ((REAL)1e30)

/* cells are widened by this fraction of their size when triangles are binned, so that a
 * triangle on a cell face belongs to the cells on both sides */
#ifndef BIN_EPS
#define BIN_EPS 1e-4
#endif

/* hits this fraction of a cell's size outside a cell's stretch of the ray still count in it */
#ifndef CELL_EPS
#define CELL_EPS 1e-4
#endif

typedef struct {
    REAL x, y, z;
} vec3;

inline vec3 mk3(REAL x, REAL y, REAL z)
{
    vec3 r;
    r.x = x;
    r.y = y;
    r.z = z;
    return r;
}

inline vec3 add3(vec3 a, vec3 b) { return mk3(a.x + b.x, a.y + b.y, a.z + b.z); }
inline vec3 sub3(vec3 a, vec3 b) { return mk3(a.x - b.x, a.y - b.y, a.z - b.z); }
inline vec3 scale3(vec3 a, REAL s) { return mk3(a.x * s, a.y * s, a.z * s); }
inline REAL dot3(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline vec3 cross3(vec3 a, vec3 b)
{
    return mk3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
inline REAL get3(vec3 a, int axis) { return axis == 0 ? a.x : axis == 1 ? a.y : a.z; }
inline vec3 load3(__global const REAL *p) { return mk3(p[0], p[1], p[2]); }

/* Moller-Trumbore: whether the ray o + t d meets triangle (a, b, c); t, the barycentric u, v
 * (of b and c) and the determinant, positive when the ray meets the front (outward) side. */
inline int intersect(vec3 o, vec3 d, vec3 a, vec3 b, vec3 c, REAL *t, REAL *u, REAL *v, REAL *det)
{
    vec3 e1 = sub3(b, a);
    vec3 e2 = sub3(c, a);
    vec3 p = cross3(d, e2);
    REAL dt = dot3(e1, p);
    if (dt == (REAL)0)
        return 0;
    REAL inv = (REAL)1 / dt;
    vec3 s = sub3(o, a);
    REAL uu = dot3(s, p) * inv;
    if (uu < (REAL)0 || uu > (REAL)1)
        return 0;
    vec3 q = cross3(s, e1);
    REAL vv = dot3(d, q) * inv;
    if (vv < (REAL)0 || uu + vv > (REAL)1)
        return 0;
    *t = dot3(e2, q) * inv;
    *u = uu;
    *v = vv;
    *det = dt;
    return 1;
}

/* triangle i of a buffer of 9 REALs per triangle */
inline void load_triangle(__global const REAL *tris, uint i, vec3 *a, vec3 *b, vec3 *c)
{
    __global const REAL *p = tris + 9 * (size_t)i;
    *a = load3(p);
    *b = load3(p + 3);
    *c = load3(p + 6);
}

/* The grid: `box` holds the grid's lower corner, its cell size and the corners of the box
 * traversed (the whole grid, or one sub-grid when casting out of core), 12 REALs; `dims` the
 * cells per axis of the whole grid and the cell range [lo, hi) of the part held, 9 ints. */
typedef struct {
    vec3 origin, cell, lo, hi;
    int n[3];
    int c0[3], c1[3];
} grid_t;

inline grid_t load_grid(__global const REAL *box, __global const int *dims)
{
    grid_t g;
    g.origin = load3(box);
    g.cell = load3(box + 3);
    g.lo = load3(box + 6);
    g.hi = load3(box + 9);
    for (int k = 0; k < 3; ++k) {
        g.n[k] = dims[k];
        g.c0[k] = dims[3 + k];
        g.c1[k] = dims[6 + k];
    }
    return g;
}

/* index of a cell within the part of the grid held */
inline uint local_cell(const grid_t *g, int cx, int cy, int cz)
{
    uint sx = (uint)(g->c1[0] - g->c0[0]);
    uint sy = (uint)(g->c1[1] - g->c0[1]);
    return (uint)(cx - g->c0[0]) + sx * ((uint)(cy - g->c0[1]) + sy * (uint)(cz - g->c0[2]));
}

/* The camera of the issue: 12 REALs, the eye, forward, right scaled by tan(fov_y / 2) W / H
 * and up scaled by tan(fov_y / 2). The ray of pixel (i, j), normalised, so that t is distance. */
inline vec3 pixel_ray(__global const REAL *cam, uint i, uint j, uint width, uint height)
{
    REAL sx = (REAL)2 * ((REAL)i + (REAL)0.5) / (REAL)width - (REAL)1;
    REAL sy = (REAL)1 - (REAL)2 * ((REAL)j + (REAL)0.5) / (REAL)height;
    vec3 d = add3(load3(cam + 3), add3(scale3(load3(cam + 6), sx), scale3(load3(cam + 9), sy)));
    return scale3(d, (REAL)1 / sqrt(dot3(d, d)));
}

/* 3D-DDA (Amanatides and Woo) over the cells of the part of the grid held ----------------- */
typedef struct {
    int cell[3];
    int step[3];
    REAL next[3];  /* t at which the ray crosses into the next cell, per axis */
    REAL delta[3]; /* t the ray needs to cross one cell, per axis */
    REAL t, t_end; /* the current cell's entry, and where the ray leaves the box */
} dda_t;

/* Clip the ray to [lo, hi] (t >= 0) and find its first cell; 0 if the ray misses the box. */
inline int dda_start(const grid_t *g, vec3 o, vec3 d, dda_t *w)
{
    REAL t0 = (REAL)0, t1 = FAR;
    for (int k = 0; k < 3; ++k) {
        REAL ok = get3(o, k), dk = get3(d, k), lo = get3(g->lo, k), hi = get3(g->hi, k);
        if (dk == (REAL)0) {
            if (ok < lo || ok > hi)
                return 0;
            continue;
        }
        REAL a = (lo - ok) / dk, b = (hi - ok) / dk;
        t0 = PS_MAX(t0, PS_MIN(a, b));
        t1 = PS_MIN(t1, PS_MAX(a, b));
    }
    if (t0 > t1)
        return 0;
    w->t = t0;
    w->t_end = t1;
    for (int k = 0; k < 3; ++k) {
        REAL ok = get3(o, k), dk = get3(d, k), org = get3(g->origin, k), h = get3(g->cell, k);
        int c = (int)floor((ok + t0 * dk - org) / h);
        c = clamp(c, g->c0[k], g->c1[k] - 1);
        w->cell[k] = c;
        if (dk > (REAL)0) {
            w->step[k] = 1;
            w->next[k] = (org + (REAL)(c + 1) * h - ok) / dk;
            w->delta[k] = h / dk;
        } else if (dk < (REAL)0) {
            w->step[k] = -1;
            w->next[k] = (org + (REAL)c * h - ok) / dk;
            w->delta[k] = -h / dk;
        } else {
            w->step[k] = 0;
            w->next[k] = FAR;
            w->delta[k] = FAR;
        }
    }
    return 1;
}

/* where the ray leaves the current cell */
inline REAL dda_exit(const dda_t *w)
{
    return PS_MAX(w->t, PS_MIN(w->t_end, PS_MIN(w->next[0], PS_MIN(w->next[1], w->next[2]))));
}

/* Move to the next cell; 0 when the ray leaves the part of the grid held. */
inline int dda_step(const grid_t *g, dda_t *w)
{
    int k = w->next[0] < w->next[1] ? (w->next[0] < w->next[2] ? 0 : 2) : (w->next[1] < w->next[2] ? 1 : 2);
    if (w->next[k] >= w->t_end)
        return 0;
    w->cell[k] += w->step[k];
    if (w->cell[k] < g->c0[k] || w->cell[k] >= g->c1[k])
        return 0;
    w->t = PS_MAX(w->t, w->next[k]);
    w->next[k] += w->delta[k];
    return 1;
}

/* the slack of a cell's t range along a ray */
inline REAL cell_slack(const grid_t *g)
{
    return (REAL)CELL_EPS * PS_MIN(g->cell.x, PS_MIN(g->cell.y, g->cell.z));
}

#endif
