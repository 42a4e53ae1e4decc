"""How much device memory one operation may hold, how long its chunks are, and when host arrays
go through pinned staging instead of being copied directly.

The cap comes from, in order: the call's ``max_device_memory=`` argument, the innermost
``with parskel.max_device_memory(...)`` block, the ``PARSKEL_MAX_DEVICE_MEMORY`` environment
variable, else :data:`DEFAULT_FRACTION` of the device's global memory. A cap is a number of
bytes or a text such as ``"64MiB"``, ``"256 KiB"``, ``"1.5GB"`` or ``"2^20"``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import ArgumentError, BackendUnavailableError
from ..runtime import Device
from . import staging

ENV_VAR = "PARSKEL_MAX_DEVICE_MEMORY"

#: Without a cap, an operation may hold this fraction of the device's global memory: the rest
#: is left to the driver, the CUDA context and whatever else runs on the device.
DEFAULT_FRACTION = 0.75

#: The smallest cap: below it the fixed parts of an operation (identities, carries, partial
#: results, a few KiB) would be most of the memory.
MIN_CAP = 64 << 10

#: Host arrays smaller than this are copied directly from pageable memory, as before staging
#: existed: a staged copy costs a host copy into pinned memory, a thread hand-off and an event or
#: two (about 50 to 100 us together) and saves ``n / pageable - n / min(pinned, host copy)``
#: seconds. With the H200's figures (pageable 5.1 GB/s up and 3.9 down, pinned 55 GB/s both ways,
#: a threaded host copy at 20 GB/s or more) the saving is 0.15 ns a byte, so staging pays from
#: about 0.7 MB on; below 1 MiB the difference is at most tens of microseconds either way.
STAGING_MIN = 1 << 20

#: Staged work is cut into about this many chunks, so that the upload of one, the kernels of the
#: next and the download of the one before overlap; but a chunk fills at least one pinned slot
#: (:data:`.staging.SLOT_BYTES`, read when a call is cut): the copy threads then share a slot in
#: parts of 4 MiB, not 2. On the H200's host, a `Reduce` of 2^26 floats from NumPy (8 chunks of
#: 32 MiB, 64 MiB slots) ran at 14-17 GB/s, at 22 GB/s in 4 chunks of 64 MiB; `Map` went from
#: 14-15 to 19 GB/s each way.
TARGET_CHUNKS = 8

#: Chunks a staged pipeline holds on the device at once: one being uploaded, one computed, one
#: downloaded.
IN_FLIGHT = 3

#: Work whose host arrays are all page-locked already fills no slot: the device copies them where
#: they are, and a chunk costs the host only its enqueueing. Work with results to download (a
#: `Map`, a scan) is then cut into about this many chunks, of at least
#: :data:`PINNED_CHUNK_BYTES` each (of its largest buffer), so that the first upload and the
#: last download, which nothing overlaps, are short. On an H100 (2026-11-28), a `Map` of 2^26
#: floats from and into page-locked memory took 5.87-5.95 ms in 16 chunks against 6.64-6.88 in
#: 4, with 4.91-5.09 ms for its input alone to cross the link, and a scan of 2^26 int32 6.16-6.19
#: against 7.07-7.15 ms; a `Reduce`, which downloads nothing, gained nothing and keeps its chunks.
#: Chunks of 4 MiB were too small: a `Map` of 2^24 took 3.09 ms in 16 of them, each chunk's
#: enqueueing outlasting its copy, and 2.02 ms in 4 chunks of 16 MiB (on an H200).
PINNED_CHUNKS = 16
PINNED_CHUNK_BYTES = 16 << 20

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:\^\s*(\d+))?\s*([a-z]*)\s*$", re.I)

_OUTSIDE = -1  # no block sets the cap
_scoped: contextvars.ContextVar[int | None] = contextvars.ContextVar("parskel_max_device_memory", default=_OUTSIDE)


def parse_bytes(value: int | str, what: str = "max_device_memory") -> int:
    """A number of bytes from an int or a text with a unit (KB = 1000 B, KiB = 1024 B).

    >>> parse_bytes("64MiB"), parse_bytes("1.5 GB"), parse_bytes("2^20"), parse_bytes(1 << 20)
    (67108864, 1500000000, 1048576, 1048576)
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ArgumentError(f"{what}: give a number of bytes or a text such as '64MiB', not {value!r}")
    if isinstance(value, int):
        nbytes = value
    else:
        found = _SIZE.match(value)
        unit = found.group(3).lower() if found else ""
        if found is None or unit not in _UNITS or (found.group(2) and (unit or "." in found.group(1))):
            raise ArgumentError(f"{what}: cannot read {value!r}; write e.g. 67108864, '64MiB', '1.5GB' or '2^26'")
        base = float(found.group(1))
        nbytes = int(base ** int(found.group(2))) if found.group(2) else int(base * _UNITS[unit])
    if nbytes < MIN_CAP:
        raise ArgumentError(f"{what}: {nbytes} bytes is below the smallest cap, {MIN_CAP} bytes (64 KiB)")
    return nbytes


@contextlib.contextmanager
def max_device_memory(limit: int | str | None) -> Iterator[None]:
    """Cap the device memory of the parskel calls in the block (``None`` lifts an outer cap).

    Inputs whose work does not fit are processed in chunks, through the device, with results
    equal to an uncapped call:

    >>> x = (np.arange(1 << 16) % 7).astype(np.float32)  # sums exact in float32 in any order
    >>> with ps.max_device_memory("256KiB"):
    ...     total = ps.Reduce("float add(float a, float b) { return a + b; }")(x)
    >>> float(total) == float(x.sum(dtype=np.float64))
    True
    """
    token = _scoped.set(None if limit is None else parse_bytes(limit))
    try:
        yield
    finally:
        _scoped.reset(token)


def cap(given: int | str | None = None) -> int | None:
    """The cap in force: ``given``, else the innermost block's, else the environment's, else None."""
    if given is not None:
        return parse_bytes(given)
    scoped = _scoped.get()
    if scoped != _OUTSIDE:
        return scoped
    text = os.environ.get(ENV_VAR, "").strip()
    return parse_bytes(text, ENV_VAR) if text else None


@dataclass(frozen=True)
class Budget:
    """What one operation may hold on a device: ``total`` bytes, in buffers of at most
    ``largest`` bytes each; ``explicit`` when a cap set it."""

    total: int
    largest: int
    explicit: bool


def budget(device: Device, given: int | str | None = None) -> Budget:
    """The budget of an operation on ``device`` under the cap in force (see :func:`cap`)."""
    return _budget(device, cap(given))


@functools.lru_cache(maxsize=256)
def _budget(device: Device, limit: int | None) -> Budget:
    """:func:`budget` under ``limit``, made once per device and cap (every call on host arrays
    asks for one)."""
    whole = int(device.info.global_mem_bytes * DEFAULT_FRACTION)
    if limit is None:
        return Budget(whole, device.info.max_alloc_bytes, False)
    return Budget(min(limit, whole), min(limit, device.info.max_alloc_bytes), True)


@dataclass(frozen=True)
class Need:
    """The device memory of one call of a primitive on ``n`` elements: ``per_element * n +
    fixed`` bytes in all, the largest buffer ``largest_per_element * n`` bytes."""

    per_element: float
    largest_per_element: float
    fixed: int = 0

    def total(self, n: int) -> int:
        return math.ceil(self.per_element * n) + self.fixed

    def fits(self, n: int, within: Budget, copies: int = 1) -> bool:
        """Whether ``copies`` calls on ``n`` elements at once fit ``within``."""
        return copies * self.total(n) <= within.total and math.ceil(self.largest_per_element * n) <= within.largest


def chunk_length(n: int, need: Need, within: Budget, *, overlap: bool, least: int = 1, pinned: bool = False) -> int:
    """How many elements a chunk takes: as many as :data:`IN_FLIGHT` chunks (one, without
    overlap) fit in the budget, no more than ``n``, and for an overlapped (staged) run no more
    than an eighth of ``n`` unless that is under a pinned slot; at least ``least``. With
    ``pinned`` (every host array of the work is page-locked already, so none goes through the
    slots) an overlapped run takes about a :data:`PINNED_CHUNKS`-th of ``n`` instead, but
    :data:`PINNED_CHUNK_BYTES` at least.

    >>> need = Need(per_element=8, largest_per_element=4)
    >>> chunk_length(10**6, need, Budget(1 << 20, 1 << 20, True), overlap=True)
    43690
    >>> roomy = Budget(1 << 34, 1 << 34, False)
    >>> n = 1 << 26
    >>> chunk_length(n, need, roomy, overlap=True) >= n // 8, chunk_length(n, need, roomy, overlap=True, pinned=True)
    (True, 4194304)
    """
    copies = IN_FLIGHT if overlap else 1
    room = max(within.total // copies - need.fixed, 0)
    by_total = int(room // max(need.per_element, 1e-9))
    length = min(n, by_total, int(within.largest // max(need.largest_per_element, 1e-9)))
    if overlap:
        if pinned:
            step, least_bytes = PINNED_CHUNKS, PINNED_CHUNK_BYTES
        else:
            step, least_bytes = TARGET_CHUNKS, staging.SLOT_BYTES
        length = min(length, max(-(-n // step), int(least_bytes // max(need.largest_per_element, 1))))
    return max(length, least, 1)


@dataclass(frozen=True)
class Route:
    """How a call on host arrays runs when it does not run as before: ``staged`` (pinned
    memory and streams) or with direct copies, within ``within``; ``whole`` when the whole call
    would fit at once."""

    staged: bool
    within: Budget
    whole: bool


def route(device: Device, n: int, need: Need, host_bytes: int, given: int | str | None = None) -> Route | None:
    """None where a call on ``n`` elements (``host_bytes`` of host arrays) runs as before: in
    one piece with direct copies, because it fits and either the device works in host memory or
    the arrays are too small for staging to pay (:data:`STAGING_MIN`). Otherwise its route."""
    within = budget(device, given)
    whole = need.fits(n, within)
    shared = device.shares_host_memory
    if whole and (shared or host_bytes < STAGING_MIN):
        return None
    return Route(staged=not shared and can_stage(device), within=within, whole=whole)


def can_stage(device: Device) -> bool:
    """Whether ``device`` has page-locked host memory and queues beside its own."""
    try:
        staging.staging_for(device)
    except BackendUnavailableError:
        return False
    return True
