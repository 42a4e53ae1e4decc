/* bfs, the frontier breadth-first search of seed 002 §6.5, one level per pair of launches.
 *
 *   bfs_expand  each work-item takes COARSEN adjacent nodes; a node in the frontier leaves it
 *               and gives every unvisited neighbour its own cost plus one, marking it for the
 *               next frontier (neighbours reached twice get the same cost, so the race is
 *               benign). UNROLL 2 walks the edge list two edges at a time.
 *   bfs_mark    the marked nodes become the frontier and visited; `more` tells the host that
 *               there is another level.
 *
 * The graph is in compressed rows: node v's neighbours are edges[starts[v] ... starts[v] +
 * degrees[v] - 1]. */
#include "common/parskel.h"

#ifndef COARSEN
#define COARSEN 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#define VISIT(id)                                                                   \
    {                                                                              \
        int to = (id);                                                             \
        if (!visited[to]) {                                                        \
            cost[to] = level;                                                      \
            next[to] = 1;                                                          \
        }                                                                          \
    }

__kernel void bfs_expand(__global const int *starts, __global const int *degrees, __global const int *edges,
                         __global uchar *frontier, __global uchar *next, __global const uchar *visited,
                         __global int *cost, uint nodes)
{
    for (uint k = 0; k < COARSEN; ++k) {
        uint v = (uint)get_global_id(0) * COARSEN + k;
        if (v < nodes && frontier[v]) {
            frontier[v] = 0;
            int level = cost[v] + 1;
            int e = starts[v], last = e + degrees[v];
#if UNROLL == 2
            for (; e + 1 < last; e += 2) {
                VISIT(edges[e])
                VISIT(edges[e + 1])
            }
            if (e < last)
                VISIT(edges[e])
#else
            for (; e < last; ++e)
                VISIT(edges[e])
#endif
        }
    }
}

__kernel void bfs_mark(__global uchar *frontier, __global uchar *next, __global uchar *visited, __global int *more,
                       uint nodes)
{
    uint v = get_global_id(0);
    if (v < nodes && next[v]) {
        frontier[v] = 1;
        visited[v] = 1;
        next[v] = 0;
        *more = 1;
    }
}
