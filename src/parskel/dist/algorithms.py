"""``ps.sort`` and ``ps.scan`` of distributed containers, staged through host memory.

Sorting is a sample sort: every part sorts its keys on its device (``ps.sort``, stable); each
part offers evenly spaced samples of its sorted keys, and the P - 1 splitters are taken evenly
from all samples sorted; every part cuts its sorted keys at the splitters and sends piece j to
part j (over MPI one all-to-all exchange); every part sorts what it received, in part order, so
equal keys keep their input order. The result is block-distributed on the same devices with the
parts' new sizes (uneven where the keys are). Keys equal to a splitter all go to one part, so
many equal keys make that part large.

A prefix sum scans every part on its device (``ps.scan``), and adds to each part the sum of the
parts before it, in the input's dtype (integers wrap around as in ``ps.scan``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..algorithms import scan as scan_array
from ..algorithms import sort as sort_array
from ..errors import ShapeError
from .calls import aligned, each
from .container import Distributed
from .distribution import Distribution

#: Samples per part per part: enough that the parts come out within a few percent of even.
OVERSAMPLING = 64


def _blocks(x: Distributed) -> Distributed:
    if x.distribution.kind == "overlap":
        return x.redistributed(x.distribution.with_kind("block"))
    return x


def _result(like: Distributed, rows: int, dist: Distribution, parts: dict[int, np.ndarray]) -> Distributed:
    """A distributed Vector of ``rows`` elements over ``parts`` (host arrays, uploaded)."""
    plain = type(next(iter(like._parts.values())))
    made = {k: plain(array, device=dist.devices[k]) for k, array in parts.items()}
    return Distributed.from_parts(type(like), (rows,), next(iter(parts.values())).dtype, dist, made)


def _sizes(dist: Distribution, parts: dict[int, np.ndarray]) -> list[int]:
    found: dict[int, int] = {}
    for gathered in dist.comm.allgather({k: len(a) for k, a in parts.items()}):
        found.update(gathered)
    return [found[k] for k in range(dist.parts)]


def sort(
    keys: Distributed,
    values: Any = None,
    *,
    variant: str | None = None,
    device: Any = None,
    max_device_memory: int | str | None = None,
    **params: int,
) -> Any:
    """Sort distributed ``keys`` (and ``values`` like them) across their parts; see the module."""
    if device is not None:
        raise ShapeError("sort: distributed keys are sorted on their own devices; give no device")
    if keys.ndim != 1:
        raise ShapeError(f"sort takes a 1D array of keys, got shape {keys.shape}")
    keys = _blocks(keys)
    dist = keys.distribution
    if values is not None:
        if values.shape != keys.shape:
            raise ShapeError(f"values must be a 1D array of the {keys.size} keys' length, got shape {values.shape}")
        values = aligned(values, dist, "sort: values")

    def local(k: int) -> Any:
        mine = keys._parts[k].numpy()
        found = sort_array(
            mine,
            None if values is None else values._parts[k].numpy(),
            kind="stable",
            variant=variant,
            device=dist.devices[k],
            max_device_memory=max_device_memory,
            **params,
        )
        return found if values is not None else (found, None)

    ordered = each(dist, local)
    if dist.kind in ("single", "copy"):
        return _pair(keys, dist, ordered, values is not None)
    parts = dist.parts
    samples = {}
    for k, (mine, _) in ordered.items():
        at = (np.arange(1, OVERSAMPLING * parts) * len(mine)) // (OVERSAMPLING * parts)
        samples[k] = mine[at] if len(mine) else mine[:0]
    pooled = np.sort(np.concatenate([s for gathered in dist.comm.allgather(samples) for s in gathered.values()]))
    splitters = pooled[(np.arange(1, parts) * len(pooled)) // parts] if len(pooled) else pooled
    pieces: dict[int, list[np.ndarray]] = {}
    for k, (mine, moved_values) in ordered.items():
        cuts = np.searchsorted(mine, splitters, side="right") if len(splitters) else np.full(parts - 1, len(mine))
        bounds = [0, *cuts.tolist(), len(mine)]
        pieces[k] = [mine[bounds[j] : bounds[j + 1]] for j in range(parts)]
        if moved_values is not None:
            pieces[k] += [moved_values[bounds[j] : bounds[j + 1]] for j in range(parts)]
    received = _exchange(
        dist, pieces, 2 if values is not None else 1, keys.dtype, values.dtype if values is not None else None
    )

    def merge(j: int) -> Any:
        got_keys, got_values = received[j]
        if not len(got_keys):
            return (got_keys, got_values) if got_values is not None else got_keys
        device = dist.devices[j]
        return sort_array(
            got_keys,
            got_values,
            kind="stable",
            variant=variant,
            device=device,
            max_device_memory=max_device_memory,
            **params,
        )

    merged = each(dist, merge)
    sizes = _sizes(dist, {j: (m[0] if values is not None else m) for j, m in merged.items()})
    target = Distribution("block", dist.devices, dist.owners, dist.comm, tuple(float(s) for s in sizes))
    if values is None:
        return _result(keys, keys.size, target, merged)
    return (
        _result(keys, keys.size, target, {j: m[0] for j, m in merged.items()}),
        _result(values, keys.size, target, {j: m[1] for j, m in merged.items()}),
    )


def _pair(keys: Distributed, dist: Distribution, ordered: dict[int, Any], with_values: bool) -> Any:
    found_keys = _result(keys, keys.size, dist, {k: pair[0] for k, pair in ordered.items()})
    if not with_values:
        return found_keys
    return found_keys, _result(keys, keys.size, dist, {k: pair[1] for k, pair in ordered.items()})


def _exchange(
    dist: Distribution, pieces: dict[int, list[np.ndarray]], kinds: int, key_dtype: np.dtype, value_dtype: Any
) -> dict[int, tuple[np.ndarray, np.ndarray | None]]:
    """Piece j of every part (keys, then values) to part j, concatenated in part order."""
    parts = dist.parts
    comm = dist.comm
    if comm.size == 1:
        return {
            j: (
                np.concatenate([pieces[k][j] for k in range(parts)]),
                np.concatenate([pieces[k][parts + j] for k in range(parts)]) if kinds == 2 else None,
            )
            for j in dist.local()
        }
    # one part per rank: part k is rank k's
    (k,) = dist.local()
    counts = [len(pieces[k][j]) for j in range(parts)]
    all_counts = comm.allgather(counts)
    outgoing = [
        np.concatenate([pieces[k][j].view(np.uint8)] + ([pieces[k][parts + j].view(np.uint8)] if kinds == 2 else []))
        for j in range(parts)
    ]
    arrived = comm.alltoall(outgoing)
    got_keys, got_values = [], []
    for r in range(parts):
        n = all_counts[r][k]
        data = arrived[r]
        got_keys.append(data[: n * key_dtype.itemsize].view(key_dtype))
        if kinds == 2:
            got_values.append(data[n * key_dtype.itemsize :].view(value_dtype))
    return {k: (np.concatenate(got_keys), np.concatenate(got_values) if kinds == 2 else None)}


def scan(
    x: Distributed,
    *,
    inclusive: bool = False,
    variant: str | None = None,
    device: Any = None,
    max_device_memory: int | str | None = None,
    **params: int,
) -> Distributed:
    """Prefix sums of distributed ``x``, distributed like it (blocks for an overlap); see the module."""
    if device is not None:
        raise ShapeError("scan: a distributed array is scanned on its own devices; give no device")
    if x.ndim != 1:
        raise ShapeError(f"scan takes a 1D array, got shape {x.shape}")
    x = _blocks(x)
    dist = x.distribution

    def local(k: int) -> tuple[np.ndarray, Any]:
        mine = x._parts[k].numpy()
        result = scan_array(
            mine,
            dtype=None,
            inclusive=inclusive,
            variant=variant,
            device=dist.devices[k],
            max_device_memory=max_device_memory,
            **params,
        )
        with np.errstate(over="ignore"):
            total = (result[-1] if inclusive else result[-1] + mine[-1]) if len(mine) else x.dtype.type(0)
        return result, total

    scanned = each(dist, local)
    if dist.kind not in ("single", "copy"):
        found: dict[int, Any] = {}
        for gathered in dist.comm.allgather({k: total for k, (_, total) in scanned.items()}):
            found.update(gathered)
        totals = np.array([found[k] for k in range(dist.parts)], dtype=x.dtype)
        before = np.zeros_like(totals)
        with np.errstate(over="ignore"):
            np.cumsum(totals[:-1], out=before[1:])
            scanned = {k: (result + before[k], total) for k, (result, total) in scanned.items()}
    return _result(x, x.size, dist, {k: result for k, (result, _) in scanned.items()})
