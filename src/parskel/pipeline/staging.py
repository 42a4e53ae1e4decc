"""Pinned staging: host arrays reach a device through a small ring of page-locked buffers.

A copy from pageable memory runs at a fraction of the link's speed (the driver stages it
itself, one piece at a time); from page-locked memory the device reads and writes at the link's
speed. So an upload copies its host data into a free pinned slot (on several threads, see
:mod:`.copies`) and has the device copy the slot, on a stream of its own; while the device
copies one slot the host fills the next. A download runs the other way, and the copy out of a
slot into the caller's array happens when the slot is needed again (or at :meth:`Staging.flush`),
so the host copies of one chunk overlap the device's work on the next.

Host arrays that are page-locked already (the device's :meth:`~parskel.runtime.Device.is_pinned`:
a result a staged operation returned on CUDA, :meth:`~parskel.runtime.Device.host_result`, or
the caller's own pinned memory) skip the slots: the device copies to and from them where they
are, with no copy on the host.

Each device has one :class:`Staging` (``SLOTS`` slots of ``SLOT_BYTES`` each way), made on
first use and kept: the host memory staging ever holds is bounded by ``2 * SLOTS * SLOT_BYTES``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..runtime import Buffer, Device, Marker
from ..runtime.arrays import host_memory_bytes
from . import copies

#: Slots each way. Two, not more: on the H200's host (a 300 MiB last-level cache), with 64 MiB
#: slots, a `Reduce` of 2^28 floats from NumPy ran at 30-31 GB/s through two slots each way and
#: 27-28 through four, `Map` at 25 against 21-22 GB/s each way: a smaller ring of slots is more
#: often still in the cache when the copy threads write a slot and the device reads it.
SLOTS = 2


def slot_bytes(host_bytes: int) -> int:
    """Bytes of one pinned slot on a host of ``host_bytes`` of memory: 1/512 of it, as a power
    of two from 8 to 64 MiB. A slot is filled by all the copy threads at once
    (:mod:`.copies`), each taking 1/16 of it: on the H200's host, parts of 512 KiB copied
    11 GB/s and parts of 4 MiB 33 GB/s, so a Map of 2^26 floats from NumPy took 41 ms with
    8 MiB slots and 16.5 ms with 64 MiB ones. The slots of both ways then hold 1/128 of the
    host's memory at most (256 MiB).

    >>> [slot_bytes(g << 30) >> 20 for g in (2, 16, 24, 128)]
    [8, 32, 32, 64]
    """
    share = max(host_bytes // 512, 8 << 20)
    return min(1 << (share.bit_length() - 1), 64 << 20)


#: Bytes of one pinned slot here (see :func:`slot_bytes`; a host that does not say its memory
#: gets the smallest).
SLOT_BYTES = slot_bytes(host_memory_bytes())


@dataclass
class _Slot:
    array: np.ndarray  # uint8, page-locked
    marker: Marker | None = None  # the device's last copy out of or into the slot
    pending: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)  # (target, slot part) to copy out
    add: bool = False


class Staging:
    """The pinned slots and the two transfer streams of one device."""

    def __init__(self, device: Device, slot_bytes: int = SLOT_BYTES, slots: int = SLOTS) -> None:
        self.device = device
        self.slot_bytes = slot_bytes
        self.up = device.stream()
        self.down = device.stream()
        self._in = [_Slot(device.empty_pinned(slot_bytes, np.uint8)) for _ in range(slots)]
        self._out = [_Slot(device.empty_pinned(slot_bytes, np.uint8)) for _ in range(slots)]
        self._next_in = 0
        self._next_out = 0
        # one operation at a time goes through the slots (calls from several threads take turns)
        self.lock = threading.RLock()
        self.copy_seconds = 0.0  # host time spent copying into and out of the slots, in all

    @property
    def host_bytes(self) -> int:
        """The page-locked host memory this staging holds."""
        return sum(s.array.nbytes for s in self._in + self._out)

    def upload(self, pieces: Sequence[np.ndarray], buffer: Buffer, offset: int = 0) -> Marker | None:
        """Enqueue the copy of ``pieces`` (one after another, in C order) into ``buffer`` from
        byte ``offset`` on, on the upload stream; the marker of its end (None if empty).

        The host copies are done when this returns, so the caller may change pageable pieces
        then; a page-locked piece is read by the device where it is, until the marker.
        """
        dev = self.device
        with dev.on(self.up):
            for direct, run in _runs(dev, pieces, add=False):
                if direct:
                    dev.upload(buffer, run[0], offset=offset, wait=False)
                    offset += run[0].nbytes
                    continue
                for used, placed in _packs(run, self.slot_bytes):
                    slot = self._in[self._next_in]
                    self._next_in = (self._next_in + 1) % len(self._in)
                    if slot.marker is not None:
                        slot.marker.wait()  # the device has read what the slot held before
                    self._copy([(_region(slot.array, at, piece), piece) for at, piece in placed])
                    dev.upload(buffer, slot.array[:used], offset=offset, wait=False)
                    offset += used
                    slot.marker = dev.mark()
            return dev.mark() if any(p.nbytes for p in pieces) else None

    def download(
        self, buffer: Buffer, offset: int, targets: Sequence[np.ndarray], after: Marker | None, *, add: bool = False
    ) -> Marker | None:
        """Enqueue the copy of ``buffer`` from byte ``offset`` on into ``targets`` (one after
        another, in C order) on the download stream, after ``after``; the marker of its end.

        The copies into ``targets`` (or additions to them, with ``add``) happen when their
        slots are needed again or at :meth:`flush`; read the targets after :meth:`flush`.
        """
        dev = self.device
        with dev.on(self.down):
            if after is not None:
                dev.wait_for(after)
            for direct, run in _runs(dev, targets, add=add):
                if direct:  # a page-locked target: the device writes it where it is
                    dev.download(buffer, run[0], offset=offset, wait=False)
                    offset += run[0].nbytes
                    continue
                for used, placed in _packs(run, self.slot_bytes):
                    slot = self._out[self._next_out]
                    self._next_out = (self._next_out + 1) % len(self._out)
                    self._complete(slot)
                    dev.download(buffer, slot.array[:used], offset=offset, wait=False)
                    offset += used
                    slot.marker = dev.mark()
                    slot.pending = [(target, _region(slot.array, at, target)) for at, target in placed]
                    slot.add = add
            return dev.mark() if any(t.nbytes for t in targets) else None

    def flush(self) -> None:
        """Finish every download: wait for the device, copy the slots out, oldest first."""
        for k in range(len(self._out)):
            self._complete(self._out[(self._next_out + k) % len(self._out)])

    def abandon(self) -> None:
        """After a failed operation: wait for the device's copies, and drop the copies out of the
        slots into arrays that nobody will read."""
        for slot in self._in + self._out:
            if slot.marker is not None:
                with contextlib.suppress(Exception):  # the failure may be the device's own
                    slot.marker.wait()
            slot.pending = []

    def _complete(self, slot: _Slot) -> None:
        if slot.pending:
            assert slot.marker is not None
            slot.marker.wait()
            self._copy(slot.pending, add=slot.add)
            slot.pending = []

    def _copy(self, pairs: list[tuple[np.ndarray, np.ndarray]], *, add: bool = False) -> None:
        start = time.perf_counter()
        copies.copy(pairs, add=add)
        self.copy_seconds += time.perf_counter() - start


_staging: dict[tuple[int, int], Staging] = {}


def staging_for(device: Device) -> Staging:
    """The device's staging (made on first use, with the current :data:`SLOT_BYTES`)."""
    key = (id(device), SLOT_BYTES)
    found = _staging.get(key)
    if found is None:
        found = _staging[key] = Staging(device, SLOT_BYTES, SLOTS)
    return found


def page_locked(device: Device, arrays: Sequence[np.ndarray]) -> bool:
    """Whether every one of ``arrays`` (a call's host arrays) lies in ``device``'s page-locked
    memory, so that none goes through the slots: such work is cut finer
    (:func:`~parskel.pipeline.chunk_length`'s ``pinned``).

    >>> page_locked(ps.device(), [np.zeros(4)])
    False
    """
    return all(device.is_pinned(a) for a in arrays)


def _runs(device: Device, arrays: Sequence[np.ndarray], *, add: bool) -> Iterator[tuple[bool, list[np.ndarray]]]:
    """``arrays`` in order as runs to copy the same way: ``(True, [a])`` for one the device
    copies where it is (page-locked, contiguous, not added to), ``(False, [...])`` for
    consecutive ones that go through the slots."""
    staged: list[np.ndarray] = []
    for array in arrays:
        if array.nbytes and not add and array.flags.c_contiguous and device.is_pinned(array):
            if staged:
                yield False, staged
                staged = []
            yield True, [array]
        else:
            staged.append(array)
    if staged:
        yield False, staged


def segments(array: np.ndarray, most: int) -> Iterator[np.ndarray]:
    """``array`` as views of at most ``most`` bytes (at least one element each) that follow each
    other in C order: a C-contiguous array in runs of elements, a 2D array with contiguous rows
    (a block of a matrix) in blocks of rows, or runs of one row where a row is larger.

    >>> [s.shape for s in segments(np.zeros((6, 10), np.float32)[:, :4], 40)]
    [(2, 4), (2, 4), (2, 4)]
    """
    if array.size == 0:
        return
    item = array.dtype.itemsize
    per = max(most // item, 1)
    if array.flags.c_contiguous:
        flat = array.reshape(-1)
        for start in range(0, flat.size, per):
            yield flat[start : start + per]
        return
    if array.ndim != 2 or array.strides[1] != item:
        raise ValueError(f"cannot stage an array of shape {array.shape} and strides {array.strides}")
    rows = per // array.shape[1]
    if rows:
        for start in range(0, array.shape[0], rows):
            yield array[start : start + rows]
        return
    for row in array:
        yield from segments(row, most)


def _packs(arrays: Sequence[np.ndarray], slot_bytes: int) -> Iterator[tuple[int, list[tuple[int, np.ndarray]]]]:
    """The segments of ``arrays`` packed into slots: per slot, the bytes used and where each
    segment goes. Consecutive segments share a slot while they fit."""
    used, placed = 0, list[tuple[int, np.ndarray]]()
    for array in arrays:
        for segment in segments(array, slot_bytes):
            if used + segment.nbytes > slot_bytes:
                yield used, placed
                used, placed = 0, list[tuple[int, np.ndarray]]()
            placed.append((used, segment))
            used += segment.nbytes
    if placed:
        yield used, placed


def _region(slot: np.ndarray, at: int, like: np.ndarray) -> np.ndarray:
    """The bytes of ``slot`` from ``at`` on as an array of ``like``'s dtype and shape."""
    return slot[at : at + like.nbytes].view(like.dtype).reshape(like.shape)
