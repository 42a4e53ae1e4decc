/* Enlight's test casters (seed 001 part 2, sections 4.2 and 4.3). */
#include "cell_casting.h"

/* section 4.2: no geometry; u and v run from 0 to 1 across the image and down it */
__kernel void test_gradient(uint width, uint height, OUTPUT)
{
    uint i = get_global_id(0), j = get_global_id(1);
    if (i >= width || j >= height)
        return;
    size_t pixel = (size_t)j * width + i;
    out_tri[pixel] = 0;
    out_depth[pixel] = (REAL)1;
    out_u[pixel] = ((REAL)i + (REAL)0.5) / (REAL)width;
    out_v[pixel] = ((REAL)j + (REAL)0.5) / (REAL)height;
}

/* the corners of the cube [-1/2, 1/2]^3: bit 0 of the index sets x, bit 1 y, bit 2 z */
inline vec3 cube_corner(int i)
{
    return mk3((i & 1) ? (REAL)0.5 : (REAL)-0.5, (i & 2) ? (REAL)0.5 : (REAL)-0.5, (i & 4) ? (REAL)0.5 : (REAL)-0.5);
}

/* section 4.3: the camera's rays against the 12 triangles of a unit cube at the origin, the
 * nearest hit kept; triangle ids 0-11 as in parskel.enlight.casters.CUBE */
__kernel void test_camera(__global const REAL *cam, uint width, uint height, OUTPUT)
{
    uint i = get_global_id(0), j = get_global_id(1);
    if (i >= width || j >= height)
        return;
    size_t pixel = (size_t)j * width + i;
    /* two triangles per face, counter-clockwise seen from outside */
    const int corners[36] = {0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4,
                             2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5};
    vec3 o = load3(cam);
    vec3 d = pixel_ray(cam, i, j, width, height);
    REAL best = FAR, bu = (REAL)0, bv = (REAL)0;
    int best_tri = -1;
    for (int f = 0; f < 12; ++f) {
        REAL t, u, v, det;
        if (intersect(o, d, cube_corner(corners[3 * f]), cube_corner(corners[3 * f + 1]),
                      cube_corner(corners[3 * f + 2]), &t, &u, &v, &det) &&
            t > (REAL)0 && t < best) {
            best = t;
            bu = u;
            bv = v;
            best_tri = f;
        }
    }
    if (best_tri >= 0) {
        out_tri[pixel] = best_tri;
        out_depth[pixel] = best;
        out_u[pixel] = bu;
        out_v[pixel] = bv;
    }
}
