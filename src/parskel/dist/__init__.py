"""Containers distributed over several devices, and over MPI ranks (seed 004's distributions).

>>> halves = ps.dist.block(ps.device().partition(2))
>>> v = ps.Vector(np.arange(10, dtype=np.int32), distribution=halves)
>>> ps.Scan(lambda a, b: a + b, identity=0)(v)[0].numpy()
array([ 0,  0,  1,  3,  6, 10, 15, 21, 28, 36], dtype=int32)

Distributions: :func:`single`, :func:`copy`, :func:`block`, :func:`overlap` over the devices of
this process (several GPUs, a GPU and a CPU, or sub-devices of one device from
``Device.partition``), and :mod:`parskel.dist.mpi` over MPI ranks. Skeletons, ``ps.sort`` and
``ps.scan`` take distributed containers and run on every part at once.
"""

from .container import DistMatrix, Distributed, DistVector
from .distribution import Distribution, block, copy, overlap, single, speed

__all__ = ["DistMatrix", "DistVector", "Distributed", "Distribution", "block", "copy", "overlap", "single", "speed"]
