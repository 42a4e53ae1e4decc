"""Run under ``mpiexec -n N python tests/mpi_check.py``: every distributed skeleton, sort and
scan over MPI ranks against NumPy on the whole data, and a failure on one rank raised on all.
Prints ``rank R: N checks passed`` on each rank; exits non-zero on a failed check."""

from __future__ import annotations

import numpy as np

import parskel as ps
from parskel.dist import mpi
from parskel.errors import DTypeError, ParskelError

ranks = mpi.world()
rng = np.random.default_rng(7)  # the same data on every rank
checks = 0


def check(got, want, what: str) -> None:
    global checks
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=f"rank {ranks.rank}: {what}")
    checks += 1


for n in (0, 1, 5, 1001):
    x = rng.integers(-5, 6, n).astype(np.int32)
    for dist in (mpi.block(), mpi.block(weights=[1 + r for r in range(ranks.size)]), mpi.overlap(2), mpi.copy()):
        v = ps.Vector(x, distribution=dist)
        check(v.numpy(), x, f"gathered {dist}")
        check(ps.Map("int f(int a, ps_index i) { return a * 10 + (int)i; }")(v).numpy(), x * 10 + np.arange(n), "Map")
        check(ps.Zip(lambda a, b: a - b)(v, ps.Vector(x)).numpy(), np.zeros(n), "Zip")
        check(ps.Reduce(lambda a, b: a + b, identity=0)(v), x.sum(), "Reduce")
        later = "int later(int a, int b) { return b != 0 ? b : a; }"
        check(ps.Reduce(later, identity=0)(v), x[x != 0][-1] if (x != 0).any() else 0, "Reduce, non-commutative")
        scanned, total = ps.Scan(lambda a, b: a + b, identity=0, inclusive=True)(v)
        check(scanned.numpy(), np.cumsum(x), "Scan")
        check(total, x.sum(), "Scan total")
        for boundary in ("neutral", "wrap", "mirror"):
            stencil = ps.MapOverlap(lambda w: w[-1] * 100 + w[0] * 10 + w[1], radius=1, boundary=boundary)
            check(stencil(v).numpy(), stencil(ps.Vector(x)).numpy(), f"MapOverlap {boundary}")
        keys = rng.integers(0, 30, n).astype(np.float32)
        keys_d, index_d = ps.sort(
            ps.Vector(keys, distribution=dist), ps.Vector(np.arange(n, dtype=np.int32), distribution=dist)
        )
        check(keys_d.numpy(), np.sort(keys), "sort")
        check(index_d.numpy(), np.argsort(keys, kind="stable"), "sort values, stably")
        check(ps.scan(v).numpy(), np.cumsum(x) - x, "ps.scan")
        order = rng.permutation(n).astype(np.uint32)
        scattered = ps.Scatter(lambda a: a * 2)(v, ps.Vector(order, distribution=dist))
        want = np.zeros(n, np.int32)
        want[order] = x * 2
        check(scattered.numpy(), want, "Scatter")

m = rng.integers(0, 9, (9, 4)).astype(np.int32)
matrix = ps.Matrix(m, distribution=mpi.block())
laplace = ps.MapOverlap(lambda w: w[-1, 0] + w[1, 0] - w[0, -1], radius=1, boundary="clamp")
check(laplace(matrix).numpy(), laplace(ps.Matrix(m)).numpy(), "MapOverlap 2D")
pairs = ps.AllPairs(lambda a, b: a * b, lambda s, t: s + t, identity=0)
check(pairs(matrix, ps.Matrix(m.T.copy())).numpy(), m @ m.T, "AllPairs")

mine = rng.integers(0, 2**32, 1000 + 100 * ranks.rank, dtype=np.uint32)  # this rank's own keys
local_keys = mpi.vector(mine)
whole = np.concatenate(ranks.allgather(mine))
check(ps.sort(local_keys).numpy(), np.sort(whole), "sort of ranks' own keys")

# a failure on one rank is raised on every rank, and the ranks go on together
if ranks.size > 1:
    scale = ps.Map("int f(int x, int s) { return x * s; }")
    try:
        scale(ps.Vector(np.arange(10, dtype=np.int32), distribution=mpi.block()), 3 if ranks.rank != 1 else 2.5)
    except (DTypeError, ParskelError) as exc:
        expected = DTypeError if ranks.rank == 1 else ParskelError
        assert type(exc) is expected, (ranks.rank, type(exc), exc)
        assert ranks.rank == 1 or "rank 1" in str(exc)
        checks += 1
    else:
        raise AssertionError("the failure on rank 1 was not raised here")
check(ps.Reduce(lambda a, b: a + b, identity=0)(ps.Vector(np.ones(8, np.int32), distribution=mpi.block())), 8, "after")
print(f"rank {ranks.rank}: {checks} checks passed", flush=True)
