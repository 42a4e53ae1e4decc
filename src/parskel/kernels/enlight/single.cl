/* Enlight's single-ray casters (seed 001 part 2, sections 4.5-4.10): one work-item per pixel,
 * the ray walks the grid with 3D-DDA, skipping cells without triangles (outside and inside
 * cells). A pixel already hit is left alone, so that sub-grids cast front to back (out of
 * core, section 4.13) fill only the pixels that nearer ones left empty. */
#include "cell_casting.h"

#define CASTER_ARGS                                                                            \
    __global const REAL *cam, uint width, uint height, __global const REAL *box, __global const int *dims, \
        __global const uint *cell_start, GEOMETRY, OUTPUT

/* the start of every caster: the pixel, its ray, its first cell; 0 when there is nothing to do */
#define BEGIN_RAY                                                                              \
    uint i = get_global_id(0), j = get_global_id(1);                                           \
    if (i >= width || j >= height)                                                             \
        return;                                                                                \
    size_t pixel = (size_t)j * width + i;                                                      \
    if (out_tri[pixel] >= 0)                                                                   \
        return;                                                                                \
    grid_t g = load_grid(box, dims);                                                           \
    vec3 o = load3(cam);                                                                       \
    vec3 d = pixel_ray(cam, i, j, width, height);                                              \
    dda_t w;                                                                                   \
    if (!dda_start(&g, o, d, &w))                                                              \
        return;                                                                                \
    REAL slack = cell_slack(&g);

#define CELL_PAIRS                                                                             \
    uint c = local_cell(&g, w.cell[0], w.cell[1], w.cell[2]);                                  \
    uint begin = cell_start[c], end = cell_start[c + 1];

/* section 4.5: the nearest hit on any triangle, with no counting (wrong where volumes overlap
 * the stock's surface, as in the seed's figure 14) */
__kernel void single_ray(CASTER_ARGS)
{
    BEGIN_RAY
    do {
        CELL_PAIRS
        REAL lo = w.t - slack, hi = dda_exit(&w) + slack, best = FAR;
        uint best_k = 0;
        for (uint k = begin; k < end; ++k) {
            vec3 a, b, c;
            load_triangle(tris, TRI_OF(pair_tri[k]), &a, &b, &c);
            REAL t, u, v, det;
            if (intersect(o, d, a, b, c, &t, &u, &v, &det) && t >= lo && t <= hi && t < best) {
                best = t;
                best_k = k;
            }
        }
        if (best < FAR) {
            write_hit(pixel, TRI_OF(pair_tri[best_k]), best, o, d, tris, tri_volume, OUTPUT_ARGS);
            return;
        }
    } while (dda_step(&g, &w));
}

/* section 4.6: one counter for the whole ray, from -1 (inside the inverted stock); wrong
 * wherever classification dropped a volume's triangles, as the seed says */
__kernel void single_boolean(CASTER_ARGS)
{
    BEGIN_RAY
    int counter = -1;
    do {
        CELL_PAIRS
        if (begin == end)
            continue;
        /* a hit on a cell's boundary counts in the cell it enters */
        REAL lo = w.t, hi = dda_exit(&w);
        REAL ht[MAX_HITS];
        uint hk[MAX_HITS];
        int nh = 0;
        for (uint k = begin; k < end && nh < MAX_HITS; ++k) {
            vec3 a, b, c;
            load_triangle(tris, TRI_OF(pair_tri[k]), &a, &b, &c);
            REAL t, u, v, det;
            if (intersect(o, d, a, b, c, &t, &u, &v, &det) && t >= lo && t < hi)
                push_hit(ht, hk, &nh, t, ((k - begin) << 1) | (uint)(det > (REAL)0));
        }
        uint found;
        REAL t;
        if (walk_hits(ht, hk, nh, &counter, &found, &t)) {
            write_hit(pixel, TRI_OF(pair_tri[begin + found]), t, o, d, tris, tri_volume, OUTPUT_ARGS);
            return;
        }
    } while (dda_step(&g, &w));
}

/* section 4.7: the counter fixed at every cell's entry point by secondary rays to each
 * volume's reference point, then the cell's hits walked from there */
__kernel void single_boolean_cell(CASTER_ARGS)
{
    BEGIN_RAY
    do {
        CELL_PAIRS
        if (begin == end)
            continue;
        REAL lo = w.t, hi = dda_exit(&w) + slack;
        vec3 entry = add3(o, scale3(d, lo));
        int counter = 0;
        uint k = begin;
        while (k < end) {
            uint s_begin = k++;
            while (k < end && !(pair_tri[k] & FIRST_OF_VOLUME))
                ++k;
            counter -= secondary_inside(entry, s_begin, k, GEOMETRY_ARGS);
        }
        REAL ht[MAX_HITS];
        uint hk[MAX_HITS];
        int nh = 0, overflow = 0;
        for (k = begin; k < end; ++k) {
            vec3 a, b, c;
            load_triangle(tris, TRI_OF(pair_tri[k]), &a, &b, &c);
            REAL t, u, v, det;
            if (intersect(o, d, a, b, c, &t, &u, &v, &det) && t >= lo && t <= hi) {
                if (nh < MAX_HITS)
                    push_hit(ht, hk, &nh, t, ((k - begin) << 1) | (uint)(det > (REAL)0));
                else
                    overflow = 1;
            }
        }
        uint found;
        REAL t;
        int hit = overflow ? walk_unbuffered(o, d, lo, hi, begin, end, &counter, &found, &t, GEOMETRY_ARGS)
                           : walk_hits(ht, hk, nh, &counter, &found, &t);
        if (hit) {
            write_hit(pixel, TRI_OF(pair_tri[begin + found]), t, o, d, tris, tri_volume, OUTPUT_ARGS);
            return;
        }
    } while (dda_step(&g, &w));
}

/* section 4.10, the default: primary hits fix the counter where they can (primary_cell) */
__kernel void single_primary_boolean_cell(CASTER_ARGS)
{
    BEGIN_RAY
    do {
        CELL_PAIRS
        if (begin == end)
            continue;
        uint found;
        REAL t;
        if (primary_cell(o, d, w.t - slack, dda_exit(&w) + slack, begin, end, &found, &t, GEOMETRY_ARGS CULL_ARG)) {
            write_hit(pixel, TRI_OF(pair_tri[begin + found]), t, o, d, tris, tri_volume, OUTPUT_ARGS);
            return;
        }
    } while (dda_step(&g, &w));
}
