"""The chunk pipeline: an operation cut into chunks, each loaded onto the device, computed there
and stored back, with the transfers of neighbouring chunks overlapping the kernels.

A driver gives :meth:`Pipeline.run` an iterable of chunks. Taking one from it (the code of a
generator up to its ``yield``) allocates the chunk's device buffers and registers its host
inputs with :meth:`Pipeline.load`; the value it yields computes the chunk, enqueueing kernels on
the device's own queue and registering results with :meth:`Pipeline.store`. Staged, the loads
go through pinned memory on an upload stream and the stores on a download stream, ordered with
the kernels by markers, so that while chunk i computes, chunk i + 1 is uploaded and chunk i - 1
downloaded; at most :data:`~parskel.pipeline.budget.IN_FLIGHT` chunks hold device memory.
Direct, every copy is a plain one on the device's own queue (a CPU device, whose buffers are
host memory, copies nothing more than it must).
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..runtime import Buffer, Device, Marker
from .budget import IN_FLIGHT
from .staging import Staging, staging_for

Compute = Callable[[], None]


@dataclass(frozen=True)
class Run:
    """What one pipelined operation did: its name, ``"staged"`` or ``"direct"``, the chunks it
    went through, the elements of the longest one, and the host's seconds copying into and out
    of pinned memory (staged), which device events do not see."""

    operation: str
    mode: str
    chunks: int
    longest: int
    host_copies: float = 0.0


_watchers: list[list[Run]] = []


@contextlib.contextmanager
def watch() -> Iterator[list[Run]]:
    """Collect a :class:`Run` for every pipelined operation in the block.

    >>> from parskel.pipeline import watch
    >>> with watch() as runs, ps.max_device_memory("64KiB"):
    ...     _ = ps.scan(np.ones(50_000, np.int32))
    >>> runs[0].operation, runs[0].chunks > 1
    ('scan', True)
    """
    found: list[Run] = []
    _watchers.append(found)
    try:
        yield found
    finally:
        _watchers.remove(found)


@dataclass
class _Load:
    pieces: Sequence[np.ndarray]
    buffer: Buffer
    offset: int


@dataclass
class _Store:
    buffer: Buffer
    offset: int
    targets: Sequence[np.ndarray]
    add: bool


@dataclass
class _Chunk:
    compute: Compute
    stores: list[_Store] = field(default_factory=list)
    done: Marker | None = None


class Pipeline:
    """One operation's chunks through ``device``, ``staged`` (pinned memory, streams) or direct."""

    def __init__(self, device: Device, operation: str, *, staged: bool) -> None:
        self.device = device
        self.operation = operation
        self.staging: Staging | None = staging_for(device) if staged else None
        self._loads: list[_Load] = []
        self._stores: list[_Store] = []
        self._chunks = 0
        self._longest = 0

    @property
    def staged(self) -> bool:
        return self.staging is not None

    def load(self, pieces: Sequence[np.ndarray], buffer: Buffer, offset: int = 0, elements: int = 0) -> None:
        """Copy ``pieces`` (host arrays, one after another) into ``buffer`` from byte ``offset``
        on before the chunk computes; ``elements`` counts toward the chunk's length."""
        self._loads.append(_Load(pieces, buffer, offset))
        self._longest = max(self._longest, elements)

    def store(self, buffer: Buffer, offset: int, targets: Sequence[np.ndarray], *, add: bool = False) -> None:
        """Copy ``buffer`` from byte ``offset`` on into ``targets`` (added to them with ``add``)
        once the chunk's kernels are done; all targets are written when :meth:`run` returns."""
        self._stores.append(_Store(buffer, offset, targets, add))

    def count(self, elements: int) -> None:
        """Note a chunk's length where it has no loads (its inputs are in host memory)."""
        self._longest = max(self._longest, elements)

    def run(self, chunks: Iterable[Compute]) -> None:
        """Take, load, compute and store every chunk; returns when all stores are written."""
        copied = self.staging.copy_seconds if self.staging is not None else 0.0
        try:
            if self.staging is None:
                self._direct(iter(chunks))
            else:
                with self.staging.lock:
                    try:
                        self._staged(iter(chunks), self.staging)
                    except BaseException:
                        self.staging.abandon()
                        raise
        finally:
            self._loads, self._stores = [], []
        host = self.staging.copy_seconds - copied if self.staging is not None else 0.0
        for found in _watchers:
            found.append(Run(self.operation, "staged" if self.staged else "direct", self._chunks, self._longest, host))

    # direct ---------------------------------------------------------------------------------
    def _direct(self, chunks: Iterator[Compute]) -> None:
        dev = self.device
        for compute in chunks:
            self._chunks += 1
            for load in self._loads:
                offset = load.offset
                for piece in load.pieces:
                    dev.upload(load.buffer, np.ascontiguousarray(piece), offset=offset)
                    offset += piece.nbytes
            self._loads = []
            self._stores = []
            compute()
            for store in self._stores:
                offset = store.offset
                for target in store.targets:
                    _download_into(dev, store.buffer, offset, target, store.add)
                    offset += target.nbytes

    # staged ---------------------------------------------------------------------------------
    def _staged(self, chunks: Iterator[Compute], staging: Staging) -> None:
        dev = self.device
        window: deque[_Chunk] = deque()
        upcoming = self._prepare(chunks, staging)
        while upcoming is not None:
            chunk, loaded = upcoming
            if loaded is not None:
                dev.wait_for(loaded)
            self._stores = []
            chunk.compute()
            chunk.stores = self._stores
            computed = dev.mark()
            chunk.done = computed
            for store in chunk.stores:
                stored = staging.download(store.buffer, store.offset, store.targets, computed, add=store.add)
                chunk.done = stored or chunk.done
            window.append(chunk)
            while len(window) >= IN_FLIGHT:  # the oldest chunk's device memory goes before the next is taken
                _retire(window.popleft())
            upcoming = self._prepare(chunks, staging)
        while window:
            _retire(window.popleft())
        staging.flush()

    def _prepare(self, chunks: Iterator[Compute], staging: Staging) -> tuple[_Chunk, Marker | None] | None:
        """The next chunk, its buffers allocated for the upload stream and its loads enqueued there."""
        self._loads = []
        with self.device.on(staging.up):
            compute = next(chunks, None)
        if compute is None:
            return None
        self._chunks += 1
        loaded = None
        for load in self._loads:
            loaded = staging.upload(load.pieces, load.buffer, load.offset) or loaded
        self._loads = []
        return _Chunk(compute), loaded


def _retire(chunk: _Chunk) -> None:
    """Wait until the device is done with ``chunk``; its buffers may then be freed and reused."""
    if chunk.done is not None:
        chunk.done.wait()
    chunk.stores.clear()


def _download_into(device: Device, buffer: Buffer, offset: int, target: np.ndarray, add: bool) -> None:
    if target.flags.c_contiguous and not add:
        device.download(buffer, target, offset=offset)
        return
    part = np.empty(target.shape, target.dtype)
    device.download(buffer, part, offset=offset)
    if add:
        target += part
    else:
        target[...] = part
