"""Moving a distributed container's rows into new parts, moving only what must move: rows a
device already holds are copied on that device, rows from another device of this process go
through host memory (only those rows are read back), and rows from another MPI rank arrive in
one all-to-all exchange.

Every process plans the same segments from the layouts, so each knows what it sends and what it
receives without asking: :func:`moved` for a change of distribution, :func:`extended` for the
halo rows a ``MapOverlap`` reads beyond a part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..containers import Container, Matrix, Vector
from ..runtime import Device
from .distribution import Distribution

if TYPE_CHECKING:
    from .container import Distributed

# source part, target part, first row, end row (global), first row in the target part
Segment = tuple[int, int, int, int, int]


def _covered(source: Distribution, rows: int, lo: int, hi: int, j: int, halo_ok: bool) -> bool:
    a, b = (source.stored(rows) if halo_ok else source.ranges(rows))[j]
    return a <= lo and hi <= b


def _sources(source: Distribution, rows: int, k_owner: int, device: Device | None, lo: int, hi: int, halo_ok: bool):
    """Segments (source part, first row, end row) that hold rows ``lo:hi``: one part on the
    same device if it holds them all, any copy in the same process, or the owners' rows."""
    for j in range(source.parts):
        same = source.owners[j] == k_owner and source.devices[j] is device
        if same and _covered(source, rows, lo, hi, j, halo_ok):
            return [(j, lo, hi)]
    if source.kind == "copy":
        mine = [j for j in range(source.parts) if source.owners[j] == k_owner]
        return [((mine or [0])[0], lo, hi)]
    found = []
    for j, (a, b) in enumerate(source.ranges(rows)):
        a, b = max(a, lo), min(b, hi)
        if a < b:
            found.append((j, a, b))
    return found


def moved(container: Distributed, target: Distribution) -> dict[int, Container]:
    """The local parts of ``target`` holding ``container``'s rows."""
    source = container.distribution
    rows = container.shape[0]
    segments: list[Segment] = []
    sizes = []
    for k, (lo, hi) in enumerate(target.stored(rows)):
        sizes.append(hi - lo)
        owner = target.owners[k]
        for j, a, b in _sources(source, rows, owner, target.devices[k], lo, hi, container.halo_valid):
            segments.append((j, k, a, b, a - lo))
    return _fill(container, target, segments, sizes)


def extended(container: Distributed, radius: int, wrap: bool) -> dict[int, tuple[Container, int]]:
    """Each local part's owned rows with ``radius`` rows of its neighbours on each side (from
    the other end of the container if ``wrap``, else only rows that exist), and the global row
    of its first row."""
    dist = container.distribution
    rows = container.shape[0]
    segments: list[Segment] = []
    sizes, firsts = [], []
    for k, (lo, hi) in enumerate(dist.ranges(rows)):
        if wrap and hi > lo:
            wanted = [(lo - radius, lo), (lo, hi), (hi, hi + radius)]
            first = lo - radius
        else:
            wanted = [(max(0, lo - radius), lo), (lo, hi), (hi, min(rows, hi + radius))]
            first = wanted[0][0] if hi > lo else lo
        at = 0
        for a, b in wanted:
            for piece_lo, piece_hi in _modulo(a, b, rows) if hi > lo else []:
                for j, c, d in _sources(dist, rows, dist.owners[k], dist.devices[k], piece_lo, piece_hi, False):
                    segments.append((j, k, c, d, at + (c - piece_lo)))
                at += piece_hi - piece_lo
        sizes.append(at)
        firsts.append(first)
    parts = _fill(container, dist, segments, sizes)
    return {k: (part, firsts[k]) for k, part in parts.items()}


def _modulo(a: int, b: int, rows: int) -> list[tuple[int, int]]:
    """Rows ``a:b`` taken modulo ``rows``, as ranges within ``0:rows`` in order."""
    found = []
    while a < b:
        start = a % rows
        end = min(rows, start + (b - a))
        found.append((start, end))
        a += end - start
    return found


def _fill(
    container: Distributed, target: Distribution, segments: list[Segment], sizes: list[int]
) -> dict[int, Container]:
    """New local parts of ``sizes`` rows on ``target``'s devices, filled by ``segments``."""
    source = container.distribution
    comm = source.comm
    me = comm.rank
    rest = container.shape[1:]
    src_start = [lo for lo, _ in source.stored(container.shape[0])]
    parts = container._parts

    arrived: list[np.ndarray] = []
    if comm.size > 1:
        outgoing: list[list[np.ndarray]] = [[] for _ in range(comm.size)]
        for j, k, lo, hi, _ in segments:
            if source.owners[j] == me and target.owners[k] != me:
                rows = parts[j].read_rows(lo - src_start[j], hi - src_start[j])
                outgoing[target.owners[k]].append(rows.reshape(-1).view(np.uint8))
        sent = [np.concatenate(chunks) if chunks else np.empty(0, np.uint8) for chunks in outgoing]
        arrived = comm.alltoall(sent)
    offsets = [0] * comm.size

    plain = Matrix if isinstance(container, Matrix) else Vector
    row_bytes = int(np.prod(rest, dtype=np.int64)) * container.dtype.itemsize
    result: dict[int, Container] = {}
    for k, size in enumerate(sizes):
        if target.owners[k] != me:
            continue
        device = target.devices[k]
        assert device is not None
        part = result[k] = plain.empty((size, *rest), container.dtype, device=device)
        if part.size == 0:
            continue
        buffer = part.output_buffer()
        for j, kk, lo, hi, at in segments:
            if kk != k:
                continue
            nbytes, where = (hi - lo) * row_bytes, at * row_bytes
            owner = source.owners[j]
            if owner != me:
                chunk = arrived[owner][offsets[owner] : offsets[owner] + nbytes]
                offsets[owner] += nbytes
                device.upload(buffer, np.ascontiguousarray(chunk), offset=where)
            elif source.devices[j] is device:
                start = (lo - src_start[j]) * row_bytes
                device.copy(buffer, parts[j].to_device(), nbytes, src_offset=start, dst_offset=where)
            else:
                device.upload(buffer, parts[j].read_rows(lo - src_start[j], hi - src_start[j]), offset=where)
        part.mark_device_written()
    return result
