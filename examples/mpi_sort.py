"""Sort 10^7 random keys spread over MPI ranks, each rank sorting on its own device.

    mpiexec -n 4 python examples/mpi_sort.py            # 10^7 uint32 keys over 4 ranks
    mpiexec -n 2 python examples/mpi_sort.py --keys 1e6

Every rank makes its share of the keys; ``ps.sort`` of the distributed Vector is a sample sort
(local sorts, splitters, one all-to-all exchange, local sorts). Rank 0 checks the result
against NumPy's sort of all keys.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import parskel as ps
from parskel.dist import mpi

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--keys", type=float, default=1e7, help="how many keys in all (default 1e7)")
count = int(parser.parse_args().keys)

ranks = mpi.world()
share = count // ranks.size + (ranks.rank < count % ranks.size)
mine = np.random.default_rng(ranks.rank).integers(0, 2**32, share, dtype=np.uint32)
keys = mpi.vector(mine)  # block-distributed: this rank's part is its own keys

ranks.comm.Barrier()
start = time.perf_counter()
ordered = ps.sort(keys)
ranks.comm.Barrier()
seconds = time.perf_counter() - start

part = mpi.local(ordered)  # this rank's slice of the sorted whole
sizes = ranks.allgather(len(part))
everything = ranks.comm.gather(mine, root=0)
result = ranks.comm.gather(part, root=0)
if ranks.rank == 0:
    assert everything is not None and result is not None
    np.testing.assert_array_equal(np.concatenate(result), np.sort(np.concatenate(everything)))
    print(f"sorted {count:,} keys on {ranks.size} ranks in {seconds:.2f} s ({count / seconds / 1e6:.1f} Mkeys/s)")
    print(f"keys per rank after the sort: {sizes}")
