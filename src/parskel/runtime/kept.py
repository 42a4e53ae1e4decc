"""Scratch buffers that a GPU's calls keep zeroed between them, instead of allocating and
zeroing one before their first kernel: the host's time before a launch shows in a call, and a
zeroing enqueued behind a call's kernels (or done by its kernels) costs none of it.

A call on a GPU's own queue (whose commands run in order) takes a kept buffer, enqueues its
work, leaves the buffer zeroed again by then (a fill enqueued behind its kernels, or kernels
that clear what they used) and gives it back. The next call's commands run after those, so
they find it zeroed. Calls on other queues, and CPU devices, allocate and zero as before.
"""

from __future__ import annotations

import threading
import weakref

from .base import Buffer, Device


def keeps(device: Device) -> bool:
    """Whether calls on ``device`` keep zeroed buffers now: GPUs, on their own queue."""
    return device.type == "gpu" and device.on_own_queue


class KeptZeroed:
    """Buffers kept zeroed between calls, per device: at most ``most`` a device, the largest.

    >>> kept = KeptZeroed(most=2)
    >>> kept.take(ps.device(), 64) is None  # none kept yet
    True
    """

    def __init__(self, most: int) -> None:
        self.most = most
        self._kept: dict[Device, list[Buffer]] = {}
        self._lock = threading.Lock()
        _EVERY.add(self)

    def take(self, device: Device, nbytes: int) -> Buffer | None:
        """The smallest kept buffer of at least ``nbytes`` on ``device``, taken out of the kept
        ones (all zeros by the time the next command runs); else None."""
        with self._lock:
            kept = self._kept.get(device)
            if not kept:
                return None
            found = None
            for buffer in kept:  # largest first: the last that fits is the smallest
                if buffer.nbytes < nbytes:
                    break
                found = buffer
            if found is not None:
                kept.remove(found)
            return found

    def give(self, device: Device, buffer: Buffer) -> None:
        """Give ``buffer`` back, its zeroing enqueued; the largest :attr:`most` are kept."""
        with self._lock:
            kept = self._kept.setdefault(device, [])
            kept.append(buffer)
            kept.sort(key=lambda b: -b.nbytes)
            del kept[self.most :]

    def held(self, device: Device) -> list[Buffer]:
        """The buffers kept for ``device`` now."""
        with self._lock:
            return list(self._kept.get(device, ()))

    def free(self, device: Device | None = None) -> int:
        """Drop the buffers kept for ``device`` (None: every device); the bytes dropped."""
        with self._lock:
            dropped = [self._kept.pop(dev, []) for dev in ([device] if device is not None else list(self._kept))]
        return sum(b.nbytes for buffers in dropped for b in buffers)


_EVERY: weakref.WeakSet[KeptZeroed] = weakref.WeakSet()


def free_kept(device: Device | None = None) -> int:
    """Free the zeroed buffers that every algorithm keeps for ``device`` (None: every device);
    the bytes freed.

    >>> free_kept() >= 0
    True
    """
    return sum(kept.free(device) for kept in list(_EVERY))
