"""Distributed Vector and Matrix: a container whose parts are ordinary containers, one per part
of its distribution, each on its own device.

``ps.Vector(data, distribution=ps.dist.block(devices))`` makes one; it is still a ``ps.Vector``
(its ``shape``, ``dtype``, ``numpy()``), and skeletons given one run on every part at once. Its
``device`` is the first part's device. Reading it on the host gathers the parts; over MPI every
rank gets the whole. ``redistribute`` changes the distribution in place and moves only what must
move: rows that stay on a device are copied there, the others go through host memory.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from numpy.typing import DTypeLike

from ..containers import Container, Matrix, Vector
from ..containers.base import copied_rows
from ..containers.structs import element_c_type
from ..errors import ShapeError
from ..runtime import hostpool
from ..runtime.arrays import host_copy, is_device_array
from .distribution import Distribution
from .moves import moved


class Distributed(Container):
    """What a distributed Vector and Matrix share; see the module's description."""

    __slots__ = ("_dist", "_diverged", "_halo_ok", "_parts")
    _dist: Distribution
    _parts: dict[int, Container]
    _halo_ok: bool  # overlap: whether every part's halo rows equal their owners' rows
    _diverged: bool  # copy: whether skeletons wrote the copies differently

    def __init__(
        self,
        data: Any = None,
        *,
        dtype: DTypeLike | None = None,
        size: int | None = None,
        shape: tuple[int, ...] | None = None,
        device: Any = None,
        copy: bool = True,
        distribution: Distribution,
    ) -> None:
        if device is not None:
            raise ShapeError("a distributed container takes its devices from its distribution; give no device")
        if size is not None:
            shape = (size,)
        if data is None:
            if shape is None or dtype is None:
                raise ShapeError(f"{type(self).__name__} needs data, or a shape and a dtype")
            host = np.zeros(self._checked_shape(shape), dtype=dtype)
        else:
            if is_device_array(data):
                data = host_copy(data)
            elif isinstance(data, Container):
                data = data.numpy()
            host = np.array(data, dtype=dtype, copy=copy, order="C")
            self._checked_shape(host.shape)
        self._describe(host.shape, host.dtype, distribution)
        for k, (lo, hi) in self._stored().items():
            self._parts[k] = self._plain()(host[lo:hi], device=distribution.devices[k], copy=copy)

    # made from parts ---------------------------------------------------------------------
    def _describe(self, shape: tuple[int, ...], dtype: np.dtype, distribution: Distribution) -> None:
        self._shape = tuple(shape)
        self._size = int(np.prod(shape, dtype=np.int64))
        self._dtype = np.dtype(dtype)
        self._dist = distribution
        first = next((d for d in distribution.devices if d is not None), None)
        assert first is not None  # every process holds a part
        self._device = first
        self._c_type = element_c_type(self._dtype, first)
        self._parts = {}
        self._halo_ok = True
        self._diverged = False
        self._host = None
        self._buffer = None
        self._host_valid = self._device_valid = self._borrowed = False

    @classmethod
    def from_parts(
        cls,
        like: type,
        shape: tuple[int, ...],
        dtype: np.dtype,
        distribution: Distribution,
        parts: dict[int, Container],
        *,
        halo_ok: bool = True,
    ) -> Distributed:
        """A distributed container over ``parts`` (the local parts, as stored)."""
        self = cast(Distributed, object.__new__(distributed_class(like)))
        self._describe(shape, dtype, distribution)
        self._parts = dict(parts)
        self._halo_ok = halo_ok
        return self

    def _plain(self) -> type:
        return Matrix if isinstance(self, Matrix) else Vector

    def _stored(self) -> dict[int, tuple[int, int]]:
        rows = self._shape[0]
        stored = self._dist.stored(rows)
        return {k: stored[k] for k in self._dist.local()}

    # description -------------------------------------------------------------------------
    @property
    def distribution(self) -> Distribution:
        return self._dist

    @property
    def parts(self) -> dict[int, Container]:
        """The parts this process holds, by part number: ordinary single-device containers
        (with an overlap distribution, each holds its halo rows too)."""
        self._merge()
        return dict(self._parts)

    @property
    def halo_valid(self) -> bool:
        return self._halo_ok

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self._shape}, dtype={self._dtype}, distribution={self._dist})"

    # coherence ---------------------------------------------------------------------------
    def to_host(self) -> np.ndarray:
        """The whole container gathered from its parts, read-only. Where a part here holds all
        of it (a copy distribution, whose copies agree once merged, or a single part in one
        process), that part's own host copy, as a plain container gives (on a CPU device, its
        memory itself); else a new array, into which each part's rows are read once (over MPI
        every process takes part in the gathering)."""
        self._merge()
        dist = self._dist
        if dist.kind == "copy" or (dist.comm.size == 1 and dist.parts == 1):
            return self._parts[dist.local()[0]].to_host().reshape(self._shape)
        rows = self._shape[0]
        ranges = dist.ranges(rows)
        stored = dist.stored(rows)
        whole = hostpool.empty(self._shape, self._dtype)
        mine = {}
        for k, part in self._parts.items():
            lo, hi = ranges[k]
            mine[k] = part.read_rows(lo - stored[k][0], hi - stored[k][0], out=whole[lo:hi])
        for gathered in dist.comm.allgather(mine):  # the other processes' rows (MPI)
            for k, piece in gathered.items():
                if k not in mine:
                    lo, hi = ranges[k]
                    whole[lo:hi] = piece
        whole.flags.writeable = False
        return whole

    def numpy(self, *, writable: bool = False) -> np.ndarray:
        """The whole container gathered from its parts; ``writable=True`` gives a copy, whose
        changes stay in it (assign elements with ``[]`` to change the container)."""
        view = self.to_host()
        return view.copy() if writable else view

    def read_rows(self, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
        return copied_rows(self.to_host()[start:stop], out)

    def __setitem__(self, key: Any, value: Any) -> None:
        host = self.numpy(writable=True)
        host[key] = value
        fresh = type(self)(host, distribution=self._dist)
        self._parts, self._halo_ok, self._diverged = fresh._parts, True, False

    def _single(self, what: str) -> ShapeError:
        return ShapeError(
            f"{what}: this {type(self).__name__} is distributed over {self._dist.parts} parts "
            f"({self._dist}); use its parts, or redistribute it to ps.dist.single(device)"
        )

    def to_device(self) -> Any:
        raise self._single("no single device buffer")

    def output_buffer(self) -> Any:
        raise self._single("no single device buffer")

    def writable_buffer(self) -> Any:
        raise self._single("no single device buffer")

    def mark_device_written(self) -> None:
        raise self._single("no single device buffer")

    def mark_device_modified(self) -> None:
        raise self._single("no single device buffer")

    def mark_host_modified(self) -> None:
        raise self._single("no host copy of its own (assign elements with [] instead)")

    # distribution ------------------------------------------------------------------------
    def redistribute(self, distribution: Distribution) -> None:
        """Place the container as ``distribution`` says, moving only what must move (SkelCL's
        ``setDistribution``). The devices may differ from the present ones."""
        self._merge()
        if distribution.comm is not self._dist.comm:
            raise ShapeError("a container cannot move between a process's devices and MPI ranks")
        if distribution.same_as(self._dist) and self._halo_ok:
            return
        self._parts = moved(self, distribution)
        self._dist = distribution
        first = next(d for d in distribution.devices if d is not None)
        self._device, self._c_type = first, element_c_type(self._dtype, first)
        self._halo_ok = True

    def redistributed(self, distribution: Distribution) -> Distributed:
        """A new container holding this one's elements placed as ``distribution`` says (this
        one is left as it is)."""
        self._merge()
        if distribution.same_as(self._dist) and self._halo_ok:
            return self
        return Distributed.from_parts(type(self), self._shape, self._dtype, distribution, moved(self, distribution))

    def refresh_halos(self) -> None:
        """Copy every part's halo rows from the parts that own them (after skeletons wrote the
        owned rows, a MapOverlap result's halos are stale)."""
        if not self._halo_ok:
            self._parts = moved(self, self._dist)
            self._halo_ok = True

    def _wrote_copies(self) -> None:
        self._diverged = True

    def _merge(self) -> None:
        """Merge copies that skeletons wrote differently, with the distribution's combine."""
        if not self._diverged:
            return
        from .calls import merge_copies

        self._parts = merge_copies(self)
        self._diverged = False


class DistVector(Distributed, Vector):
    """A Vector distributed over several devices (see :mod:`parskel.dist.container`).

    >>> halves = ps.dist.block(ps.device().partition(2))
    >>> v = ps.Vector(np.arange(6, dtype=np.int32), distribution=halves)
    >>> [part.numpy().tolist() for part in v.parts.values()]
    [[0, 1, 2], [3, 4, 5]]
    >>> ps.Reduce(lambda a, b: a + b, identity=0)(ps.Map(lambda x: x * x)(v))
    np.int32(55)
    """

    __slots__ = ()


class DistMatrix(Distributed, Matrix):
    """A Matrix distributed over several devices by rows (see :mod:`parskel.dist.container`)."""

    __slots__ = ()


def distributed_class(cls: type) -> type:
    if issubclass(cls, Distributed):
        return cls
    if issubclass(cls, Matrix):
        return DistMatrix
    if issubclass(cls, Vector):
        return DistVector
    raise ShapeError(f"{cls.__name__} cannot be distributed; use ps.Vector or ps.Matrix")
