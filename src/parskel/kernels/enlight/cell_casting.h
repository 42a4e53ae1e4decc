/* Enlight: casting one ray through the triangles of one grid cell (seed 001 part 2, sections
 * 3.4, 4.6, 4.7 and 4.10), shared by the single-ray and packet casters. Included, not built
 * alone. A cell's triangles come as pairs begin .. end-1: pair_tri holds each one's triangle
 * (TRI_OF) and marks the first pair of each volume (FIRST_OF_VOLUME), whose triangles are
 * consecutive; pair_ref holds the centroid and area of the triangle's part inside the cell. */
#ifndef PARSKEL_ENLIGHT_CELL_CASTING_H
#define PARSKEL_ENLIGHT_CELL_CASTING_H

#include "enlight.h"

/* the intersections one ray keeps per cell; a cell with more is walked without the buffer */
#ifndef MAX_HITS
#define MAX_HITS 16
#endif

#define GEOMETRY                                                                               \
    __global const uint *pair_tri, __global const REAL *pair_ref, __global const REAL *tris,   \
        __global const uint *tri_volume
#define GEOMETRY_ARGS pair_tri, pair_ref, tris, tri_volume

/* pair_tri's bits: the triangle, and whether the pair starts a volume's run in its cell */
#define FIRST_OF_VOLUME 0x80000000u
#define TRI_OF(p) ((p) & 0x7fffffffu)

/* the packet caster passes the cell's frustum-culling marks to primary_cell through these */
#ifndef CULL_PARAM
#define CULL_PARAM
#define CULL_ARG
#define PAIR_CULLED(k) 0
#endif

/* insert hit (t, code) into ht/hk, kept sorted by t; at equal t entries come first, so that a
 * ray passing from one volume into an adjoining one sees no surface between them */
inline void push_hit(REAL *ht, uint *hk, int *n, REAL t, uint code)
{
    int m = *n;
    while (m > 0 && (ht[m - 1] > t || (ht[m - 1] == t && (code & 1u) && !(hk[m - 1] & 1u)))) {
        ht[m] = ht[m - 1];
        hk[m] = hk[m - 1];
        --m;
    }
    ht[m] = t;
    hk[m] = code;
    *n += 1;
}

/* Walk sorted hits (code: pair offset << 1 | entering) from `counter`; the first exit that
 * brings the counter to zero is the visible surface (section 2.3). */
inline int walk_hits(const REAL *ht, const uint *hk, int n, int *counter, uint *found, REAL *t)
{
    for (int h = 0; h < n; ++h) {
        int enter = (int)(hk[h] & 1u);
        *counter += enter ? -1 : 1;
        if (!enter && *counter == 0) {
            *found = hk[h] >> 1;
            *t = ht[h];
            return 1;
        }
    }
    return 0;
}

/* The same walk without a buffer, for a cell with more than MAX_HITS hits: the next hit in
 * (t, pair) order is searched among all the cell's triangles each time. */
inline int walk_unbuffered(vec3 o, vec3 d, REAL lo, REAL hi, uint begin, uint end, int *counter, uint *found,
                           REAL *found_t, GEOMETRY)
{
    REAL last_t = -FAR;
    uint last_k = 0;
    int started = 0;
    for (;;) {
        REAL best_t = FAR;
        uint best_k = 0;
        int best_enter = 0, any = 0;
        for (uint k = begin; k < end; ++k) {
            vec3 a, b, c;
            load_triangle(tris, TRI_OF(pair_tri[k]), &a, &b, &c);
            REAL t, u, v, det;
            if (!intersect(o, d, a, b, c, &t, &u, &v, &det) || t < lo || t > hi)
                continue;
            int later = !started || t > last_t || (t == last_t && k > last_k);
            if (later && (t < best_t || (t == best_t && k < best_k))) {
                best_t = t;
                best_k = k;
                best_enter = det > (REAL)0;
                any = 1;
            }
        }
        if (!any)
            return 0;
        *counter += best_enter ? -1 : 1;
        if (!best_enter && *counter == 0) {
            *found = best_k - begin;
            *found_t = best_t;
            return 1;
        }
        last_t = best_t;
        last_k = best_k;
        started = 1;
    }
}

/* the pair of s_begin .. s_end-1 whose triangle has the largest part inside the cell: the
 * reference point that is safest from the triangle's edges */
inline uint reference_pair(uint s_begin, uint s_end, __global const REAL *pair_ref)
{
    uint ref = s_begin;
    REAL best = pair_ref[4 * (size_t)s_begin + 3];
    for (uint k = s_begin + 1; k < s_end; ++k) {
        if (pair_ref[4 * (size_t)k + 3] > best) {
            best = pair_ref[4 * (size_t)k + 3];
            ref = k;
        }
    }
    return ref;
}

/* Whether point p lies inside the volume whose pairs in this cell are s_begin .. s_end-1: a
 * secondary ray to the reference point on one of its triangles; the nearest triangle of the
 * volume that it meets on the way tells from its facing (section 3.4). */
inline int secondary_inside(vec3 p, uint s_begin, uint s_end, GEOMETRY)
{
    uint ref = reference_pair(s_begin, s_end, pair_ref);
    vec3 target = load3(pair_ref + 4 * (size_t)ref);
    vec3 dir = sub3(target, p);
    vec3 a, b, c;
    load_triangle(tris, TRI_OF(pair_tri[ref]), &a, &b, &c);
    REAL facing = dot3(dir, cross3(sub3(b, a), sub3(c, a)));
    REAL best = (REAL)1;
    for (uint k = s_begin; k < s_end; ++k) {
        if (k == ref)
            continue;
        load_triangle(tris, TRI_OF(pair_tri[k]), &a, &b, &c);
        REAL t, u, v, det;
        if (intersect(p, dir, a, b, c, &t, &u, &v, &det) && t > (REAL)0 && t < best) {
            best = t;
            facing = -det;
        }
    }
    return facing > (REAL)0;
}

/* The single primary boolean cell caster's work in one cell (section 4.10): one pass over the
 * cell's triangles intersects the ray, keeps the hits, and fixes the counter at the cell's
 * entry per volume from the nearest primary hit on it, or, if the ray meets none of the
 * volume's triangles here, from a secondary ray. Hits count in [lo, hi]. Triangles that
 * PAIR_CULLED marks (outside a packet's frustum, so no ray of it can meet them) are not
 * intersected; the secondary rays still see all of a volume's triangles. */
inline int primary_cell(vec3 o, vec3 d, REAL lo, REAL hi, uint begin, uint end, uint *found, REAL *found_t,
                        GEOMETRY CULL_PARAM)
{
    REAL ht[MAX_HITS];
    uint hk[MAX_HITS];
    int nh = 0, overflow = 0, counter = 0;
    /* containment is the same all along the ray's stretch for a volume it does not meet; the
     * middle of the stretch keeps the secondary rays away from the cell's faces */
    vec3 mid = add3(o, scale3(d, (REAL)0.5 * (lo + hi)));
    uint k = begin;
    while (k < end) {
        uint s_begin = k;
        REAL best_t = FAR;
        int best_enter = 0;
        do {
            vec3 a, b, c;
            REAL t, u, v, det;
            if (!PAIR_CULLED(k))
                load_triangle(tris, TRI_OF(pair_tri[k]), &a, &b, &c);
            if (!PAIR_CULLED(k) && intersect(o, d, a, b, c, &t, &u, &v, &det) && t >= lo && t <= hi) {
                int enter = det > (REAL)0;
                if (nh < MAX_HITS)
                    push_hit(ht, hk, &nh, t, ((k - begin) << 1) | (uint)enter);
                else
                    overflow = 1;
                if (t < best_t) {
                    best_t = t;
                    best_enter = enter;
                }
            }
            ++k;
        } while (k < end && !(pair_tri[k] & FIRST_OF_VOLUME));
        int inside = best_t < FAR ? !best_enter : secondary_inside(mid, s_begin, k, GEOMETRY_ARGS);
        counter -= inside;
    }
    if (overflow)
        return walk_unbuffered(o, d, lo, hi, begin, end, &counter, found, found_t, GEOMETRY_ARGS);
    return walk_hits(ht, hk, nh, &counter, found, found_t);
}

#define OUTPUT __global int *out_tri, __global REAL *out_depth, __global REAL *out_u, __global REAL *out_v
#define OUTPUT_ARGS out_tri, out_depth, out_u, out_v

/* The output of one pixel: the triangle hit, its distance and barycentric coordinates, of the
 * triangle as the scene has it (the stock's corners 1 and 2 were swapped to invert it). */
inline void write_hit(size_t pixel, uint tri, REAL t, vec3 o, vec3 d, __global const REAL *tris,
                      __global const uint *tri_volume, OUTPUT)
{
    vec3 a, b, c;
    load_triangle(tris, tri, &a, &b, &c);
    REAL tt, u = (REAL)0, v = (REAL)0, det;
    intersect(o, d, a, b, c, &tt, &u, &v, &det);
    int stock = tri_volume[tri] == 0;
    out_tri[pixel] = (int)tri;
    out_depth[pixel] = t;
    out_u[pixel] = stock ? v : u;
    out_v[pixel] = stock ? u : v;
}

#endif
