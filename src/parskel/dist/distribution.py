"""How a container is placed on a set of devices (seed 004, SkelCL's distributions).

- ``single(device)``: all of it on one device;
- ``copy(devices, combine=None)``: every device holds all of it. Skeletons run on every copy
  alike; a copy that a skeleton writes through an extra argument while the other input is split
  is merged with the others by ``combine`` (a binary user function, element by element) when the
  container is next read, or refused without one;
- ``block(devices, weights="even")``: contiguous parts (rows of a Matrix), sized evenly, by the
  devices' measured speed (``"speed"``), or by given weights;
- ``overlap(devices, halo, weights="even")``: blocks that also hold ``halo`` elements (rows) of
  their neighbours, so that ``MapOverlap`` with a radius up to ``halo`` runs without exchanging
  them first.

A distribution spans the devices of this process, or MPI ranks (:mod:`parskel.dist.mpi`), one
part per rank. Part ``k`` lives on ``devices[k]`` in process ``owners[k]``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import numpy as np

from ..errors import ShapeError
from ..runtime import Device
from ..runtime import device as select_device
from .comm import LOCAL, Comm

Kind = Literal["single", "copy", "block", "overlap"]
Weights = str | Sequence[float]


@dataclass(frozen=True, eq=False)
class Distribution:
    """A placement of containers on parts; make one with :func:`single`, :func:`copy`,
    :func:`block` or :func:`overlap` (or their MPI forms in :mod:`parskel.dist.mpi`)."""

    kind: Kind
    devices: tuple[Device | None, ...]  # per part; None for a part in another process
    owners: tuple[int, ...]  # the rank of the process that holds each part
    comm: Comm = LOCAL
    weights: tuple[float, ...] | None = None  # block and overlap: relative part sizes
    halo: int = 0
    combine: Any = None  # copy: the user function that merges written copies

    # layout ------------------------------------------------------------------------------
    @property
    def parts(self) -> int:
        return len(self.devices)

    def local(self) -> list[int]:
        """The parts this process holds."""
        return [k for k, owner in enumerate(self.owners) if owner == self.comm.rank]

    def ranges(self, rows: int) -> list[tuple[int, int]]:
        """The rows each part owns: disjoint blocks, or everything for every copy."""
        if self.kind in ("single", "copy"):
            return [(0, rows)] * self.parts
        assert self.weights is not None
        total = sum(self.weights)
        bounds, run = [0], 0.0
        for w in self.weights:
            run += w
            bounds.append(min(rows, round(rows * run / total)) if total else rows)
        bounds[-1] = rows
        return [(bounds[k], bounds[k + 1]) for k in range(self.parts)]

    def stored(self, rows: int) -> list[tuple[int, int]]:
        """The rows each part holds: its own, and ``halo`` more on each side within the container."""
        h = self.halo
        return [(max(0, lo - h), min(rows, hi + h)) for lo, hi in self.ranges(rows)]

    def same_as(self, other: Distribution) -> bool:
        """Whether containers of the two distributions are split alike on the same devices."""
        return (
            self.kind == other.kind
            and self.owners == other.owners
            and self.comm is other.comm
            and all(a is b for a, b in zip(self.devices, other.devices))
            and self.weights == other.weights
            and self.halo == other.halo
        )

    def same_places(self, other: Distribution) -> bool:
        return (
            self.comm is other.comm
            and self.owners == other.owners
            and all(a is b for a, b in zip(self.devices, other.devices))
        )

    def with_kind(self, kind: Kind, *, halo: int = 0, weights: tuple[float, ...] | None = None) -> Distribution:
        """This distribution's places with another kind (block weights kept unless given)."""
        even = tuple(1.0 for _ in self.devices)
        if weights is None:
            weights = self.weights if kind in ("block", "overlap") and self.kind in ("block", "overlap") else even
        combine = self.combine if kind == "copy" else None
        return Distribution(kind, self.devices, self.owners, self.comm, weights or even, halo, combine)

    # what the rest of parskel asks of a distribution --------------------------------------
    def container_class(self, cls: type) -> type:
        """The distributed kind of container class ``cls`` (Vector or Matrix)."""
        from .container import distributed_class

        return distributed_class(cls)

    def run(self, skeleton: Any, call: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run a skeleton call whose arguments include a container of this distribution."""
        from .calls import run

        return self._agreed(lambda: run(skeleton, call, args, kwargs))

    def sort(self, keys: Any, values: Any = None, **options: Any) -> Any:
        """``ps.sort`` of keys of this distribution (:mod:`parskel.dist.algorithms`)."""
        from .algorithms import sort

        return self._agreed(lambda: sort(keys, values, **options))

    def scan(self, x: Any, **options: Any) -> Any:
        """``ps.scan`` of an array of this distribution (:mod:`parskel.dist.algorithms`)."""
        from .algorithms import scan

        return self._agreed(lambda: scan(x, **options))

    def _agreed(self, work: Any) -> Any:
        """``work()``; over several processes, an error that only this one met is made known to
        the others (which raise too) instead of leaving them waiting in a collective."""
        if self.comm.size == 1:
            return work()
        try:
            return work()
        except Exception as exc:
            if getattr(exc, "agreed", False):
                raise
            self.comm.agree(exc)
            raise

    def __repr__(self) -> str:
        where = ", ".join(d.id if d is not None else f"rank {r}" for d, r in zip(self.devices, self.owners))
        extra = f", halo={self.halo}" if self.kind == "overlap" else ""
        if self.kind in ("block", "overlap") and self.weights and len(set(self.weights)) > 1:
            extra += f", weights={[round(w, 3) for w in self.weights]}"
        return f"ps.{self.kind}([{where}]{extra})"


def _devices(devices: Sequence[Device | str] | Device | str | None) -> tuple[Device, ...]:
    if devices is None or isinstance(devices, (Device, str)):
        return (select_device(devices),)
    found = tuple(select_device(d) for d in devices)
    if not found:
        raise ShapeError("a distribution needs at least one device")
    if len({id(d) for d in found}) != len(found):
        raise ShapeError(f"a distribution names each device once, got {[d.id for d in found]}")
    return found


def weights_of(weights: Weights, devices: Sequence[Device]) -> tuple[float, ...]:
    """Relative part sizes: even, by measured speed, or as given (non-negative, not all zero)."""
    if isinstance(weights, str):
        if weights == "even":
            return tuple(1.0 for _ in devices)
        if weights == "speed":
            return tuple(speed(d) for d in devices)
        raise ShapeError(f"weights are 'even', 'speed' or one number per device, not {weights!r}")
    found = tuple(float(w) for w in weights)
    if len(found) != len(devices) or any(not w >= 0 for w in found) or not sum(found) > 0:
        raise ShapeError(f"give one non-negative weight per device ({len(devices)}), not all zero: {weights!r}")
    return found


def single(device: Device | str | None = None) -> Distribution:
    """All of a container on one device (the default device if none is named).

    >>> ps.dist.single().kind
    'single'
    """
    devs = _devices(device)
    return Distribution("single", devs, (0,), LOCAL, (1.0,))


def copy(devices: Sequence[Device | str], combine: Any = None) -> Distribution:
    """A whole copy on every device; ``combine`` (``T f(T a, T b)``, C or Python) merges copies
    that skeletons wrote differently, element by element, when the container is next read."""
    devs = _devices(devices)
    return Distribution("copy", devs, tuple(0 for _ in devs), LOCAL, tuple(1.0 for _ in devs), 0, combine)


def block(devices: Sequence[Device | str], weights: Weights = "even") -> Distribution:
    """Contiguous parts in device order: even, by measured speed (``"speed"``), or by weights.

    >>> halves = ps.dist.block(ps.device().partition(2))
    >>> halves.ranges(10)
    [(0, 5), (5, 10)]
    """
    devs = _devices(devices)
    return Distribution("block", devs, tuple(0 for _ in devs), LOCAL, weights_of(weights, devs))


def overlap(devices: Sequence[Device | str], halo: int, weights: Weights = "even") -> Distribution:
    """Blocks that also hold ``halo`` elements (Matrix rows) of each neighbour, for ``MapOverlap``."""
    if not isinstance(halo, int) or isinstance(halo, bool) or halo < 0:
        raise ShapeError(f"overlap: halo is a non-negative number of elements, got {halo!r}")
    devs = _devices(devices)
    return Distribution("overlap", devs, tuple(0 for _ in devs), LOCAL, weights_of(weights, devs), halo)


@cache
def speed(device: Device) -> float:
    """A device's relative speed: the elements per second of a Map over 2^22 floats on it,
    measured once per process (after a warm-up)."""
    from ..containers import Vector
    from ..skeletons import Map

    double = Map("float twice(float x) { return 2.0f * x; }")
    v = Vector(np.ones(1 << 22, np.float32), device=device)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        result = double(v)
        assert isinstance(result, Vector)
        result.numpy()
        best = min(best, time.perf_counter() - start)
    return float(v.size / best)
