/* Enlight's packet caster (seed 001 part 2, sections 2.4 and 4.11): a work-group is a packet
 * of PW x PH pixels. It walks the grid slice by slice along the main axis of its central ray;
 * in each slice, the corner rays bound the cells the packet can meet (Wald et al.'s coherent
 * grid traversal). Each such cell's triangles are culled against the packet's frustum by the
 * whole work-group into local memory; then every ray of the packet that passes through the
 * cell casts it as the single primary boolean cell caster does, skipping the culled ones.
 * Slower than single rays on GPUs, as the seed found: two barriers per cell. */

#ifndef PW
#define PW 8
#endif
#ifndef PH
#define PH 8
#endif
/* cells with more pairs than this are cast without culling */
#ifndef CULL_MAX
#define CULL_MAX 1024
#endif

#define CULL_PARAM , PS_LOCAL_PARAM const uchar *keep, int cull
#define CULL_ARG , keep, cull
#define PAIR_CULLED(k) (cull && !keep[(k) - begin])

#include "cell_casting.h"

/* the ray through image point (fx, fy), in pixels from the top-left corner, not normalised */
inline vec3 image_ray(__global const REAL *cam, REAL fx, REAL fy, uint width, uint height)
{
    REAL sx = (REAL)2 * fx / (REAL)width - (REAL)1;
    REAL sy = (REAL)1 - (REAL)2 * fy / (REAL)height;
    return add3(load3(cam + 3), add3(scale3(load3(cam + 6), sx), scale3(load3(cam + 9), sy)));
}

/* where the ray o + t d (d not normalised) meets the plane coordinate[axis] = x, not behind o */
inline vec3 on_plane(vec3 o, vec3 d, int axis, REAL x)
{
    REAL t = (x - get3(o, axis)) / get3(d, axis);
    return add3(o, scale3(d, PS_MAX(t, (REAL)0)));
}

__kernel __attribute__((reqd_work_group_size(PW, PH, 1))) void packet(
    __global const REAL *cam, uint width, uint height, __global const REAL *box, __global const int *dims,
    __global const uint *cell_start, GEOMETRY, OUTPUT)
{
    __local uchar keep[CULL_MAX];
    __local int busy;
    uint i = get_global_id(0), j = get_global_id(1);
    uint lid = get_local_id(1) * PW + get_local_id(0);
    size_t pixel = (size_t)j * width + i;
    int active = i < width && j < height && out_tri[pixel] < 0;
    grid_t g = load_grid(box, dims);
    vec3 o = load3(cam);
    vec3 d = pixel_ray(cam, PS_MIN(i, width - 1), PS_MIN(j, height - 1), width, height);
    REAL best_t = FAR;
    uint best_tri = 0;
    int done = !active;

    /* the packet's corner rays through the outer corners of its pixels, clockwise, and the
     * frustum's four planes through the eye, normals pointing inwards */
    REAL x0 = (REAL)(get_group_id(0) * PW), y0 = (REAL)(get_group_id(1) * PH);
    vec3 corner[4];
    corner[0] = image_ray(cam, x0, y0, width, height);
    corner[1] = image_ray(cam, x0 + PW, y0, width, height);
    corner[2] = image_ray(cam, x0 + PW, y0 + PH, width, height);
    corner[3] = image_ray(cam, x0, y0 + PH, width, height);
    vec3 centre = image_ray(cam, x0 + (REAL)0.5 * PW, y0 + (REAL)0.5 * PH, width, height);
    vec3 plane[4];
    for (int k = 0; k < 4; ++k) {
        plane[k] = cross3(corner[k], corner[(k + 1) % 4]);
        if (dot3(plane[k], centre) < (REAL)0)
            plane[k] = scale3(plane[k], (REAL)-1);
    }
    /* the main axis, and whether every corner ray runs along it the same way */
    int m = fabs(centre.x) >= fabs(centre.y) ? (fabs(centre.x) >= fabs(centre.z) ? 0 : 2)
                                              : (fabs(centre.y) >= fabs(centre.z) ? 1 : 2);
    REAL dm = get3(centre, m);
    int coherent = dm != (REAL)0;
    for (int k = 0; k < 4; ++k)
        coherent = coherent && get3(corner[k], m) * dm > (REAL)0;
    int a1 = (m + 1) % 3, a2 = (m + 2) % 3;
    int step = dm > (REAL)0 ? 1 : -1;
    int first = step > 0 ? g.c0[m] : g.c1[m] - 1;
    int slices = g.c1[m] - g.c0[m];
    REAL widen = (REAL)CELL_EPS;
    REAL slack = cell_slack(&g);

    for (int s = 0; s < slices; ++s) {
        int slice = first + step * s;
        REAL lo_m = get3(g.origin, m) + (REAL)slice * get3(g.cell, m);
        REAL hi_m = lo_m + get3(g.cell, m);
        /* the cells of this slice the packet's rays can pass through */
        int r0[2] = {g.c0[a1], g.c0[a2]}, r1[2] = {g.c1[a1] - 1, g.c1[a2] - 1};
        if (coherent) {
            REAL mn[2] = {FAR, FAR}, mx[2] = {-FAR, -FAR};
            for (int k = 0; k < 8; ++k) {
                vec3 p = on_plane(o, corner[k & 3], m, k < 4 ? lo_m : hi_m);
                for (int q = 0; q < 2; ++q) {
                    REAL x = get3(p, q == 0 ? a1 : a2);
                    mn[q] = PS_MIN(mn[q], x);
                    mx[q] = PS_MAX(mx[q], x);
                }
            }
            if (get3(o, m) >= lo_m && get3(o, m) <= hi_m) { /* the eye in the slice */
                for (int q = 0; q < 2; ++q) {
                    REAL x = get3(o, q == 0 ? a1 : a2);
                    mn[q] = PS_MIN(mn[q], x);
                    mx[q] = PS_MAX(mx[q], x);
                }
            }
            for (int q = 0; q < 2; ++q) {
                int axis = q == 0 ? a1 : a2;
                REAL org = get3(g.origin, axis), h = get3(g.cell, axis);
                r0[q] = PS_MAX(r0[q], (int)floor((mn[q] - org) / h - widen));
                r1[q] = PS_MIN(r1[q], (int)floor((mx[q] - org) / h + widen));
            }
        }
        for (int c2 = r0[1]; c2 <= r1[1]; ++c2) {
            for (int c1 = r0[0]; c1 <= r1[0]; ++c1) {
                int cell[3];
                cell[m] = slice;
                cell[a1] = c1;
                cell[a2] = c2;
                uint c = local_cell(&g, cell[0], cell[1], cell[2]);
                uint begin = cell_start[c], end = cell_start[c + 1];
                /* empty cells are the same for the whole packet: no barrier is skipped unevenly */
                if (begin < end) {
                    int cull = end - begin <= CULL_MAX;
                    barrier(CLK_LOCAL_MEM_FENCE);
                    if (cull) {
                        for (uint k = begin + lid; k < end; k += PW * PH) {
                            vec3 a, b, cc;
                            load_triangle(tris, TRI_OF(pair_tri[k]), &a, &b, &cc);
                            a = sub3(a, o);
                            b = sub3(b, o);
                            cc = sub3(cc, o);
                            int outside = 0;
                            for (int q = 0; q < 4; ++q)
                                outside = outside || (dot3(plane[q], a) < (REAL)0 && dot3(plane[q], b) < (REAL)0 &&
                                                      dot3(plane[q], cc) < (REAL)0);
                            keep[k - begin] = (uchar)!outside;
                        }
                    }
                    barrier(CLK_LOCAL_MEM_FENCE);
                    /* this ray's stretch through the cell */
                    REAL t0 = (REAL)0, t1 = done ? (REAL)-1 : FAR;
                    for (int k = 0; k < 3; ++k) {
                        REAL lo = get3(g.origin, k) + (REAL)cell[k] * get3(g.cell, k);
                        REAL hi = lo + get3(g.cell, k);
                        REAL dk = get3(d, k), ok = get3(o, k);
                        if (dk == (REAL)0) {
                            if (ok < lo || ok > hi)
                                t1 = (REAL)-1;
                        } else {
                            REAL ta = (lo - ok) / dk, tb = (hi - ok) / dk;
                            t0 = PS_MAX(t0, PS_MIN(ta, tb));
                            t1 = PS_MIN(t1, PS_MAX(ta, tb));
                        }
                    }
                    uint found;
                    REAL t;
                    if (t0 <= t1 && t0 < best_t &&
                        primary_cell(o, d, t0 - slack, t1 + slack, begin, end, &found, &t, GEOMETRY_ARGS CULL_ARG) &&
                        t < best_t) {
                        best_t = t;
                        best_tri = TRI_OF(pair_tri[begin + found]);
                    }
                }
            }
        }
        /* slices come in each ray's order when the packet is coherent: a ray that has hit is done */
        if (best_t < FAR && coherent)
            done = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0)
            busy = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!done)
            busy = 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!busy)
            break;
    }
    if (active && best_t < FAR)
        write_hit(pixel, best_tri, best_t, o, d, tris, tri_volume, OUTPUT_ARGS);
}
