"""The processes a distribution spans, and what they exchange.

A distribution over the devices of one process uses :data:`LOCAL`, whose collectives are
trivial; one over MPI ranks uses :class:`parskel.dist.mpi.MPIComm`. The parts' code is written
once against this interface: every collective is called by every process, in the same order.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Comm:
    """One process: collectives return what they are given."""

    rank = 0
    size = 1

    def allgather(self, value: Any) -> list[Any]:
        """Every process's ``value``, in rank order."""
        return [value]

    def alltoall(self, outgoing: list[np.ndarray]) -> list[np.ndarray]:
        """Send ``outgoing[r]`` (a 1D byte array) to rank ``r``; what each rank sent here, by rank."""
        return list(outgoing)

    def agree(self, error: BaseException | None) -> None:
        """Raise ``error`` here, or an error on every process if any process had one, so that no
        process waits in a collective for one that has failed."""
        if error is not None:
            raise error

    def __repr__(self) -> str:
        return "this process"


LOCAL = Comm()
