"""Distributions over MPI ranks (mpi4py; ``pip install 'parskel[mpi]'`` brings MPICH too).

Each rank holds one part on its own device, and the same skeletons run on them: Map and Zip
locally; Reduce as a local reduction whose partial results every rank gathers and reduces with
the user's operator (an allreduce with any associative operator, in rank order); Scan as local
scans plus the exclusive scan of the ranks' totals (an exscan with the user's operator);
MapOverlap with halo rows exchanged between neighbours; ``ps.sort`` as a sample sort (splitters
from gathered samples, one all-to-all exchange, local sorts). Device data is staged through host
memory. Run a program on every rank, e.g. ``mpiexec -n 4 python examples/mpi_sort.py``.

Every rank makes the same calls in the same order. A rank whose part fails raises its error
and every other rank raises :class:`ParskelError` naming it, instead of waiting for it.

In a program that every rank runs::

    from parskel.dist import mpi
    mine = np.random.default_rng(mpi.world().rank).integers(0, 99, 1000, np.uint32)
    ordered = ps.sort(mpi.vector(mine))   # a Vector with a part on each rank
    mpi.local(ordered)                    # this rank's keys, all after the previous rank's
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..containers import Container, Vector
from ..errors import BackendUnavailableError, ParskelError, ShapeError
from ..runtime import Device
from ..runtime import device as select_device
from .comm import Comm
from .container import Distributed
from .distribution import Distribution, Kind, speed


def _mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise BackendUnavailableError(
            f"MPI distributions need mpi4py and an MPI library: pip install 'parskel[mpi]' ({exc})"
        ) from None
    return MPI


class MPIComm(Comm):
    """The ranks of an MPI communicator."""

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def allgather(self, value: Any) -> list[Any]:
        return list(self.comm.allgather(value))

    def alltoall(self, outgoing: list[np.ndarray]) -> list[np.ndarray]:
        MPI = _mpi()
        sent = np.array([len(a) for a in outgoing], dtype=np.int64)
        counts = np.empty(self.size, dtype=np.int64)
        self.comm.Alltoall(sent, counts)
        send = np.concatenate(outgoing) if outgoing else np.empty(0, np.uint8)
        received = np.empty(int(counts.sum()), dtype=np.uint8)
        send_at = np.concatenate([[0], np.cumsum(sent)[:-1]])
        recv_at = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.comm.Alltoallv([send, sent, send_at, MPI.BYTE], [received, counts, recv_at, MPI.BYTE])
        return [received[recv_at[r] : recv_at[r] + counts[r]] for r in range(self.size)]

    def agree(self, error: BaseException | None) -> None:
        said = self.allgather(None if error is None else f"{type(error).__name__}: {error}")
        if error is not None:
            error.agreed = True  # type: ignore[attr-defined]
            raise error
        failed = [(rank, text) for rank, text in enumerate(said) if text is not None]
        if failed:
            rank, text = failed[0]
            other = ParskelError(f"MPI rank {rank} of {self.size} failed: {text}")
            other.agreed = True  # type: ignore[attr-defined]
            raise other

    def __repr__(self) -> str:
        return f"MPI ranks 0..{self.size - 1}"


_worlds: dict[int, MPIComm] = {}


def world(comm: Any = None) -> MPIComm:
    """The :class:`MPIComm` of ``comm`` (default: ``MPI.COMM_WORLD``), the same object each time."""
    if comm is None:
        comm = _mpi().COMM_WORLD
    key = id(comm)
    if key not in _worlds:
        _worlds[key] = MPIComm(comm)
    return _worlds[key]


def _places(comm: Any, device: Device | str | None) -> tuple[MPIComm, tuple[Device | None, ...], tuple[int, ...]]:
    ranks = world(comm)
    mine = select_device(device)
    devices = tuple(mine if r == ranks.rank else None for r in range(ranks.size))
    return ranks, devices, tuple(range(ranks.size))


def _weights(ranks: MPIComm, weights: str | Sequence[float], device: Device) -> tuple[float, ...]:
    if isinstance(weights, str):
        if weights == "even":
            return tuple(1.0 for _ in range(ranks.size))
        if weights == "speed":
            return tuple(ranks.allgather(speed(device)))
        raise ShapeError(f"weights are 'even', 'speed' or one number per rank, not {weights!r}")
    found = tuple(float(w) for w in weights)
    if len(found) != ranks.size or any(not w >= 0 for w in found) or not sum(found) > 0:
        raise ShapeError(f"give one non-negative weight per rank ({ranks.size}), not all zero: {weights!r}")
    return found


def _distribution(kind: Kind, comm: Any, device: Any, weights: Any = "even", halo: int = 0, combine: Any = None):
    ranks, devices, owners = _places(comm, device)
    mine = devices[ranks.rank]
    assert mine is not None
    return Distribution(kind, devices, owners, ranks, _weights(ranks, weights, mine), halo, combine)


def block(
    comm: Any = None, device: Device | str | None = None, weights: str | Sequence[float] = "even"
) -> Distribution:
    """One contiguous part per rank, on ``device`` (this rank's choice; default device)."""
    return _distribution("block", comm, device, weights)


def overlap(
    halo: int, comm: Any = None, device: Device | str | None = None, weights: str | Sequence[float] = "even"
) -> Distribution:
    """One part per rank with ``halo`` rows of its neighbours' (for MapOverlap)."""
    if not isinstance(halo, int) or isinstance(halo, bool) or halo < 0:
        raise ShapeError(f"overlap: halo is a non-negative number of elements, got {halo!r}")
    return _distribution("overlap", comm, device, weights, halo)


def copy(comm: Any = None, device: Device | str | None = None, combine: Any = None) -> Distribution:
    """The whole container on every rank; ``combine`` merges copies written differently."""
    return _distribution("copy", comm, device, combine=combine)


def vector(local: Any, comm: Any = None, device: Device | str | None = None) -> Distributed:
    """A block-distributed Vector whose part on this rank is ``local`` (a 1D array of this
    rank's elements; ranks may hold different numbers of them)."""
    array = np.ascontiguousarray(local.numpy() if isinstance(local, Container) else local)
    if array.ndim != 1:
        raise ShapeError(f"mpi.vector takes this rank's 1D array, got shape {array.shape}")
    ranks = world(comm)
    sizes = ranks.allgather((len(array), array.dtype.str))
    if len({dt for _, dt in sizes}) != 1:
        raise ShapeError(f"every rank must give the same dtype, got {sorted({dt for _, dt in sizes})}")
    ranks_, devices, owners = _places(comm, device)
    dist = Distribution("block", devices, owners, ranks_, tuple(float(n) for n, _ in sizes))
    mine = devices[ranks.rank]
    part = Vector(array, device=mine)
    return Distributed.from_parts(Vector, (sum(n for n, _ in sizes),), array.dtype, dist, {ranks.rank: part})


def local(x: Distributed) -> np.ndarray:
    """This rank's own elements (rows) of ``x``, without its halo."""
    dist = x.distribution
    k = dist.local()[0]
    lo, hi = dist.ranges(x.shape[0])[k]
    start = dist.stored(x.shape[0])[k][0]
    return x.parts[k].read_rows(lo - start, hi - start)
