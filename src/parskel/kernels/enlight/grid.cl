/* Enlight (seed 001 part 2, section 3.3): triangles binned into the cells of a regular grid
 * and the cells classified, on the device. The host (parskel/enlight/grid.py) strings these
 * kernels together with parskel's scan and radix sort:
 *
 *   count_candidates, scan, clip_candidates, scan, emit_pairs   (cell, triangle) pairs of a batch
 *   mark_pairs                                                 surface cells per volume
 *   count_crossings, scan, cross_columns, resolve_columns      inside cells per volume (parity)
 *   keep_pairs, scan, compact_pairs, radix sort, gather_pairs  the batch's pairs in surface cells
 *   keep_pairs, scan, compact_pairs, merge_pairs, count_cells, scan   merged into the grid's pairs
 *   mark_volumes                                               each volume's first pair in a cell
 *
 * A batch is a range of triangles of whole volumes: all of them for a new grid, one volume
 * when a volume is added. Cell flags only gain bits, so a batch merges by Table 1's rules. */
#include "enlight.h"

/* cell flags: the cell holds some volume's surface; it lies in the stock (inside or on its
 * surface); it lies wholly inside a subtraction volume */
#define SURFACE 1u
#define IN_STOCK 2u
#define IN_SUBTRACTION 4u

/* per-volume cell marks in the volumes' own boxes of cells: parity of the crossings to the
 * cell's +x side (markers until resolved), and whether the volume's surface is in the cell */
#define PARITY 1u
#define ON_SURFACE 2u

/* Table 1: a cell stays relevant (surface) if it lies in the stock, holds a surface, and lies
 * inside no subtraction volume; every other cell is skipped by the casters */
inline int is_surface(uint flags)
{
    return (flags & (SURFACE | IN_STOCK | IN_SUBTRACTION)) == (SURFACE | IN_STOCK);
}

/* The cells [lo, hi] (inclusive) that triangle (a, b, c) may touch, widened by BIN_EPS;
 * 0 when it lies outside the grid. */
inline int triangle_cells(const grid_t *g, vec3 a, vec3 b, vec3 c, int *lo, int *hi)
{
    for (int k = 0; k < 3; ++k) {
        REAL org = get3(g->origin, k), h = get3(g->cell, k);
        REAL mn = PS_MIN(get3(a, k), PS_MIN(get3(b, k), get3(c, k)));
        REAL mx = PS_MAX(get3(a, k), PS_MAX(get3(b, k), get3(c, k)));
        REAL fl = (mn - org) / h - (REAL)BIN_EPS;
        REAL fh = (mx - org) / h + (REAL)BIN_EPS;
        if (fh < (REAL)0 || fl >= (REAL)g->n[k])
            return 0;
        lo[k] = PS_MAX((int)floor(fl), 0);
        hi[k] = PS_MIN((int)floor(fh), g->n[k] - 1);
    }
    return 1;
}

/* last index i in [0, n) with offsets[i] <= x (offsets ascending, offsets[0] <= x) */
inline uint segment_of(__global const uint *offsets, uint n, uint x)
{
    uint lo = 0, hi = n;
    while (hi - lo > 1) {
        uint mid = lo + (hi - lo) / 2;
        if (offsets[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* first index in [0, n) whose key is >= x (or > x with `after`), n if none */
inline uint search_keys(__global const uint *keys, uint n, uint x, int after)
{
    uint lo = 0, hi = n;
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2;
        if (keys[mid] < x || (after && keys[mid] == x))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Sutherland-Hodgman: the part of polygon `in` (n vertices) on the kept side of the plane
 * coordinate[axis] = bound, into `out`; returns its vertex count. */
inline int clip_plane(vec3 *in, int n, vec3 *out, int axis, REAL bound, int keep_above)
{
    int m = 0;
    for (int i = 0; i < n; ++i) {
        vec3 p = in[i], q = in[(i + 1) % n];
        REAL dp = keep_above ? get3(p, axis) - bound : bound - get3(p, axis);
        REAL dq = keep_above ? get3(q, axis) - bound : bound - get3(q, axis);
        if (dp >= (REAL)0)
            out[m++] = p;
        if ((dp >= (REAL)0) != (dq >= (REAL)0))
            out[m++] = add3(p, scale3(sub3(q, p), dp / (dp - dq)));
    }
    return m;
}

/* Clip triangle (a, b, c) to cell (x, y, z) widened by BIN_EPS. Returns whether they
 * overlap; `ref` gets the clipped polygon's centroid and area, the reference point of the
 * secondary rays (section 3.4). */
inline int clip_to_cell(const grid_t *g, vec3 a, vec3 b, vec3 c, int x, int y, int z, REAL *ref)
{
    vec3 poly[9], tmp[9];
    poly[0] = a;
    poly[1] = b;
    poly[2] = c;
    int n = 3;
    int cell[3] = {x, y, z};
    for (int k = 0; k < 3 && n > 0; ++k) {
        REAL org = get3(g->origin, k), h = get3(g->cell, k);
        REAL lo = org + ((REAL)cell[k] - (REAL)BIN_EPS) * h;
        REAL hi = org + ((REAL)cell[k] + (REAL)1 + (REAL)BIN_EPS) * h;
        n = clip_plane(poly, n, tmp, k, lo, 1);
        if (n == 0)
            break;
        n = clip_plane(tmp, n, poly, k, hi, 0);
    }
    if (n < 3)
        return 0;
    vec3 sum = poly[0];
    vec3 area = mk3(0, 0, 0);
    for (int i = 1; i < n; ++i) {
        sum = add3(sum, poly[i]);
        if (i + 1 < n)
            area = add3(area, cross3(sub3(poly[i], poly[0]), sub3(poly[i + 1], poly[0])));
    }
    vec3 centroid = scale3(sum, (REAL)1 / (REAL)n);
    ref[0] = centroid.x;
    ref[1] = centroid.y;
    ref[2] = centroid.z;
    ref[3] = (REAL)0.5 * sqrt(dot3(area, area));
    return 1;
}

/* candidates: the cells of each triangle's box --------------------------------------------- */
__kernel void count_candidates(__global const REAL *tris, uint first, uint n, __global const REAL *box,
                               __global const int *dims, __global uint *counts)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    grid_t g = load_grid(box, dims);
    vec3 a, b, c;
    load_triangle(tris, first + i, &a, &b, &c);
    int lo[3], hi[3];
    uint count = 0;
    if (triangle_cells(&g, a, b, c, lo, hi))
        count = (uint)(hi[0] - lo[0] + 1) * (uint)(hi[1] - lo[1] + 1) * (uint)(hi[2] - lo[2] + 1);
    counts[i] = count;
}

/* candidate j: its triangle (batch index), cell, and whether they overlap */
inline int candidate(__global const REAL *tris, uint first, uint n, __global const uint *offsets, const grid_t *g,
                     uint j, uint *tri, uint *cell, REAL *ref)
{
    uint i = segment_of(offsets, n, j);
    vec3 a, b, c;
    load_triangle(tris, first + i, &a, &b, &c);
    int lo[3], hi[3];
    triangle_cells(g, a, b, c, lo, hi);
    uint k = j - offsets[i];
    uint sx = (uint)(hi[0] - lo[0] + 1), sy = (uint)(hi[1] - lo[1] + 1);
    int x = lo[0] + (int)(k % sx);
    int y = lo[1] + (int)((k / sx) % sy);
    int z = lo[2] + (int)(k / (sx * sy));
    *tri = first + i;
    *cell = (uint)x + (uint)g->n[0] * ((uint)y + (uint)g->n[1] * (uint)z);
    return clip_to_cell(g, a, b, c, x, y, z, ref);
}

__kernel void clip_candidates(__global const REAL *tris, uint first, uint n, __global const uint *offsets,
                              uint total, __global const REAL *box, __global const int *dims, __global uint *hit)
{
    uint j = get_global_id(0);
    if (j >= total)
        return;
    grid_t g = load_grid(box, dims);
    uint tri, cell;
    REAL ref[4];
    hit[j] = (uint)candidate(tris, first, n, offsets, &g, j, &tri, &cell, ref);
}

__kernel void emit_pairs(__global const REAL *tris, uint first, uint n, __global const uint *offsets, uint total,
                         __global const REAL *box, __global const int *dims, __global const uint *hit,
                         __global const uint *positions, __global uint *pair_cell, __global uint *pair_tri,
                         __global REAL *pair_ref)
{
    uint j = get_global_id(0);
    if (j >= total || !hit[j])
        return;
    grid_t g = load_grid(box, dims);
    uint tri, cell;
    REAL ref[4];
    candidate(tris, first, n, offsets, &g, j, &tri, &cell, ref);
    uint p = positions[j];
    pair_cell[p] = cell;
    pair_tri[p] = tri;
    for (int k = 0; k < 4; ++k)
        pair_ref[4 * (size_t)p + k] = ref[k];
}

/* classification ---------------------------------------------------------------------------- */

/* Volume v of the batch owns the cells lo .. lo + size - 1 (vol_box: 6 ints per volume), and
 * their marks from marks[vol_marks[v]] on, x fastest. */
inline size_t mark_index(__global const int *vol_box, __global const uint *vol_marks, uint v, int x, int y, int z)
{
    __global const int *b = vol_box + 6 * v;
    return (size_t)vol_marks[v] + (size_t)(x - b[0]) + (size_t)b[3] * ((size_t)(y - b[1]) + (size_t)b[4] * (size_t)(z - b[2]));
}

__kernel void mark_pairs(__global const uint *pair_cell, __global const uint *pair_tri, uint n,
                         __global const uint *tri_volume, uint first_volume, __global const int *vol_box,
                         __global const uint *vol_marks, __global const int *dims, __global uint *marks,
                         __global uint *flags)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint cell = pair_cell[i];
    uint volume = tri_volume[pair_tri[i]];
    uint nx = (uint)dims[0], ny = (uint)dims[1];
    int x = (int)(cell % nx), y = (int)((cell / nx) % ny), z = (int)(cell / (nx * ny));
    atomic_or(&marks[mark_index(vol_box, vol_marks, volume - first_volume, x, y, z)], ON_SURFACE);
    atomic_or(&flags[cell], SURFACE | (volume == 0 ? IN_STOCK : 0u));
}

/* The columns of cell centres (y, z) along x that triangle i's box covers, inside its volume's
 * box: [lo, hi] per axis, y then z; 0 if none. */
inline int triangle_columns(const grid_t *g, vec3 a, vec3 b, vec3 c, __global const int *vb, int *lo, int *hi)
{
    for (int k = 1; k < 3; ++k) {
        REAL org = get3(g->origin, k), h = get3(g->cell, k);
        REAL mn = PS_MIN(get3(a, k), PS_MIN(get3(b, k), get3(c, k)));
        REAL mx = PS_MAX(get3(a, k), PS_MAX(get3(b, k), get3(c, k)));
        int l = (int)ceil((mn - org) / h - (REAL)0.5);
        int u = (int)floor((mx - org) / h - (REAL)0.5);
        lo[k - 1] = PS_MAX(l, vb[k]);
        hi[k - 1] = PS_MIN(u, vb[k] + vb[3 + k] - 1);
        if (lo[k - 1] > hi[k - 1])
            return 0;
    }
    return 1;
}

__kernel void count_crossings(__global const REAL *tris, uint first, uint n, __global const uint *tri_volume,
                              uint first_volume, __global const int *vol_box, __global const REAL *box,
                              __global const int *dims, __global uint *counts)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    grid_t g = load_grid(box, dims);
    vec3 a, b, c;
    load_triangle(tris, first + i, &a, &b, &c);
    __global const int *vb = vol_box + 6 * (tri_volume[first + i] - first_volume);
    int lo[2], hi[2];
    uint count = 0;
    if (triangle_columns(&g, a, b, c, vb, lo, hi))
        count = (uint)(hi[0] - lo[0] + 1) * (uint)(hi[1] - lo[1] + 1);
    counts[i] = count;
}

/* The edge function of edge p -> q at point (y, z) in the yz plane, computed from the edge's
 * endpoints in a canonical order, so that the two triangles sharing an edge get exactly
 * opposite values; a zero is decided as if the point sat at (y + e, z + e^2) for a tiny e
 * (simulation of simplicity). So every line of cell centres crosses a closed mesh an even
 * number of times, also through edges and vertices. Returns the side: 1, or -1. */
inline int edge_side(REAL py, REAL pz, REAL qy, REAL qz, REAL y, REAL z)
{
    REAL sign = (REAL)1;
    if (qy < py || (qy == py && qz < pz)) {
        REAL ty = py, tz = pz;
        py = qy;
        pz = qz;
        qy = ty;
        qz = tz;
        sign = (REAL)-1;
    }
    REAL e = (qy - py) * (z - pz) - (qz - pz) * (y - py);
    if (e == (REAL)0)
        e = -(qz - pz) != (REAL)0 ? -(qz - pz) : (qy - py);
    e *= sign;
    return e > (REAL)0 ? 1 : e < (REAL)0 ? -1 : 0;
}

__kernel void cross_columns(__global const REAL *tris, uint first, uint n, __global const uint *offsets, uint total,
                            __global const uint *tri_volume, uint first_volume, __global const int *vol_box,
                            __global const uint *vol_marks, __global const REAL *box, __global const int *dims,
                            __global uint *marks)
{
    uint j = get_global_id(0);
    if (j >= total)
        return;
    grid_t g = load_grid(box, dims);
    uint i = segment_of(offsets, n, j);
    vec3 a, b, c;
    load_triangle(tris, first + i, &a, &b, &c);
    uint v = tri_volume[first + i] - first_volume;
    __global const int *vb = vol_box + 6 * v;
    int lo[2], hi[2];
    triangle_columns(&g, a, b, c, vb, lo, hi);
    uint k = j - offsets[i];
    uint sy = (uint)(hi[0] - lo[0] + 1);
    int y = lo[0] + (int)(k % sy);
    int z = lo[1] + (int)(k / sy);
    REAL py = g.origin.y + ((REAL)y + (REAL)0.5) * g.cell.y;
    REAL pz = g.origin.z + ((REAL)z + (REAL)0.5) * g.cell.z;
    int sab = edge_side(a.y, a.z, b.y, b.z, py, pz);
    int sbc = edge_side(b.y, b.z, c.y, c.z, py, pz);
    int sca = edge_side(c.y, c.z, a.y, a.z, py, pz);
    if (sab == 0 || sab != sbc || sbc != sca)
        return;
    /* where the line meets the triangle's plane, from the barycentric weights */
    REAL wa = (c.y - b.y) * (pz - b.z) - (c.z - b.z) * (py - b.y);
    REAL wb = (a.y - c.y) * (pz - c.z) - (a.z - c.z) * (py - c.y);
    REAL wc = (b.y - a.y) * (pz - a.z) - (b.z - a.z) * (py - a.y);
    REAL sum = wa + wb + wc;
    if (sum == (REAL)0)
        return;
    REAL x = (wa * a.x + wb * b.x + wc * c.x) / sum;
    /* the crossing lies to the +x side of the centres of cells 0 .. m */
    int m = (int)ceil((x - g.origin.x) / g.cell.x - (REAL)0.5) - 1;
    if (m < vb[0])
        return;
    m = PS_MIN(m, vb[0] + vb[3] - 1);
    atomic_xor(&marks[mark_index(vol_box, vol_marks, v, m, y, z)], PARITY);
}

/* One work-item per column of a volume's box: the parity markers summed from +x, and the
 * cells with an odd count that hold none of the volume's surface flagged as inside it. */
__kernel void resolve_columns(uint volumes, __global const uint *col_offsets, uint total, uint first_volume,
                              __global const int *vol_box, __global const uint *vol_marks, __global const int *dims,
                              __global const uint *marks, __global uint *flags)
{
    uint j = get_global_id(0);
    if (j >= total)
        return;
    uint v = segment_of(col_offsets, volumes, j);
    __global const int *vb = vol_box + 6 * v;
    uint k = j - col_offsets[v];
    int y = vb[1] + (int)(k % (uint)vb[4]);
    int z = vb[2] + (int)(k / (uint)vb[4]);
    uint inside_flag = first_volume + v == 0 ? IN_STOCK : IN_SUBTRACTION;
    uint nx = (uint)dims[0], ny = (uint)dims[1];
    uint parity = 0;
    for (int x = vb[0] + vb[3] - 1; x >= vb[0]; --x) {
        uint m = marks[mark_index(vol_box, vol_marks, v, x, y, z)];
        parity ^= m & PARITY;
        if (parity && !(m & ON_SURFACE))
            atomic_or(&flags[(uint)x + nx * ((uint)y + ny * (uint)z)], inside_flag);
    }
}

/* the pairs that stay: those in surface cells ------------------------------------------------ */
__kernel void keep_pairs(__global const uint *pair_cell, uint n, __global const uint *flags, __global uint *keep)
{
    uint i = get_global_id(0);
    if (i < n)
        keep[i] = (uint)is_surface(flags[pair_cell[i]]);
}

__kernel void compact_pairs(__global const uint *keep, __global const uint *positions, uint n,
                            __global const uint *cell, __global const uint *tri, __global const REAL *ref,
                            __global uint *cell_out, __global uint *tri_out, __global REAL *ref_out)
{
    uint i = get_global_id(0);
    if (i >= n || !keep[i])
        return;
    uint p = positions[i];
    cell_out[p] = cell[i];
    tri_out[p] = tri[i];
    for (int k = 0; k < 4; ++k)
        ref_out[4 * (size_t)p + k] = ref[4 * (size_t)i + k];
}

/* after the radix sort of the cells, whose values were the pairs' indices */
__kernel void gather_pairs(__global const uint *order, uint n, __global const uint *tri, __global const REAL *ref,
                           __global uint *tri_out, __global REAL *ref_out)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint s = order[i];
    tri_out[i] = tri[s];
    for (int k = 0; k < 4; ++k)
        ref_out[4 * (size_t)i + k] = ref[4 * (size_t)s + k];
}

/* Merge two lists of pairs sorted by cell; in a cell the older pairs come first, so that the
 * triangles of a volume stay together and in the order of the volumes. */
__kernel void merge_pairs(__global const uint *cell_a, __global const uint *tri_a, __global const REAL *ref_a, uint na,
                          __global const uint *cell_b, __global const uint *tri_b, __global const REAL *ref_b, uint nb,
                          __global uint *cell_out, __global uint *tri_out, __global REAL *ref_out)
{
    uint i = get_global_id(0);
    if (i >= na + nb)
        return;
    uint cell, tri, p;
    __global const REAL *ref;
    if (i < na) {
        cell = cell_a[i];
        tri = tri_a[i];
        ref = ref_a + 4 * (size_t)i;
        p = i + search_keys(cell_b, nb, cell, 0);
    } else {
        uint j = i - na;
        cell = cell_b[j];
        tri = tri_b[j];
        ref = ref_b + 4 * (size_t)j;
        p = j + search_keys(cell_a, na, cell, 1);
    }
    cell_out[p] = cell;
    tri_out[p] = tri;
    for (int k = 0; k < 4; ++k)
        ref_out[4 * (size_t)p + k] = ref[k];
}

/* how many pairs each cell holds; a scan of the counts gives where each cell's pairs begin */
__kernel void count_cells(__global const uint *pair_cell, uint n, __global uint *counts)
{
    uint i = get_global_id(0);
    if (i < n)
        atomic_inc(&counts[pair_cell[i]]);
}

/* Mark the first pair of each volume's run in its cell (bit 31 of pair_tri; triangles number
 * fewer than 2^31), so that casters find the runs without reading every triangle's volume. A
 * neighbour's mark may change while it is read: only its triangle bits are used. */
__kernel void mark_volumes(__global const uint *pair_cell, __global uint *pair_tri, uint n,
                           __global const uint *tri_volume)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint tri = pair_tri[i] & 0x7fffffffu;
    int first = i == 0 || pair_cell[i] != pair_cell[i - 1] ||
                tri_volume[tri] != tri_volume[pair_tri[i - 1] & 0x7fffffffu];
    pair_tri[i] = tri | (first ? 0x80000000u : 0u);
}
