"""``parskel.sort``, ``scan`` and ``matmul`` of NumPy arrays through a device in chunks
(:mod:`parskel.pipeline`): on a GPU from a few MiB on, with pinned staging and transfers
overlapped with the kernels, and on any device for work larger than its memory or the cap.
Each function returns None where the call should run as before, in one piece.

Device memory of one call in one piece (what decides whether it is cut):

- scan of ``n`` elements of ``s`` bytes: the input and the result (``2 n s``), block totals
  (under 1 %) and a fixed part. A chunk is scanned in place: ``(m + 1) s`` and its block totals.
- sort of ``n`` keys (4 bytes): at most :data:`SORT_KEY_BYTES` bytes a key (a copy of the keys
  padded to the variant's tile or to a power of two, the buffer each pass writes, the digit
  counts of the radix variants and the result), and :data:`SORT_VALUE_BYTES` a value.
- matmul of ``m x k`` by ``k x n``: the operands and the result as given, and each padded to
  a multiple of :data:`MATMUL_TILE` on every side (the variants' padded copies).

Out of core, a sort sorts runs of the input on the device, sends each run's pieces to their
buckets (consecutive key ranges, each small enough for the device) in the result, then sorts
each bucket on the device (see :func:`sort`); a scan carries each chunk's total into the next on
the device; a matmul computes tiles of the result from panels of the operands (adding the
partial products of the shared dimension on the host when even one panel pair does not fit).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import VariantError
from ..pipeline import Budget, Need, Pipeline, Route, chunk_length, page_locked, route
from ..pipeline.budget import IN_FLIGHT, TARGET_CHUNKS
from ..runtime import Buffer, Device, hostpool
from . import registry
from .keys import KEY_KINDS
from .matmuls import dispatch_context
from .onesweep import sort_buffers
from .scans import scan_buffer, scans_buffers

Compute = Callable[[], None]
Sorted = np.ndarray | tuple[np.ndarray, np.ndarray]

SCAN_FIXED = 16 << 10
SORT_KEY_BYTES = 20
SORT_VALUE_BYTES = 16
SORT_FIXED = 16 << 10
MATMUL_TILE = 64

#: Keys a host pass of the out-of-core sort (a histogram, bucket counts) takes at once.
HOST_BLOCK = 1 << 20
#: Bins of the top 16 bits whose low 16 bits one host pass counts (64 * 2^16 counters, 32 MiB).
REFINED_BINS = 64
#: The fewest keys a bucket of the out-of-core sort may take, whatever the cap.
LEAST_BUCKET = 1 << 10


# scan -----------------------------------------------------------------------------------------


def scan(
    dev: Device, x: np.ndarray, inclusive: bool, variant: str | None, params: dict[str, Any], given: Any
) -> np.ndarray | None:
    """The scan of ``x`` in chunks, or None to run it in one piece.

    Chunk ``[lo, hi)`` is scanned inclusively, in place, behind one element holding the total
    of the chunks before it (copied on the device from the previous chunk's last element), so
    ``[carry, x_lo, ..., x_hi-1]`` becomes the exclusive results of the chunk followed by its
    total: the exclusive scan reads from the first element, the inclusive from the second.
    """
    n, item = x.size, x.itemsize
    way = route(dev, n, Need(2.02 * item, item, SCAN_FIXED), x.nbytes, given)
    if way is None:
        return None
    chosen = variant if variant is not None else _scan_variant(dev)
    if not scans_buffers(chosen):
        if way.whole:  # an array-only variant (one a user registered): in one piece
            return None
        raise VariantError(
            f"scan variant {chosen!r} scans arrays only, and {n} elements do not fit the device at once; "
            "scan them with a built-in variant, which goes through the device in chunks"
        )
    out = dev.host_result(x.shape, x.dtype) if way.staged else hostpool.empty(x.shape, x.dtype)
    pipe = Pipeline(dev, "scan", staged=way.staged)
    need = Need(1.02 * item, item, SCAN_FIXED)
    m = chunk_length(n, need, way.within, overlap=way.staged, least=2, pinned=page_locked(dev, [x, out]))
    carry = dev.alloc(item)
    zero = x.dtype.type(0)

    def scanned(buffer: Buffer, count: int) -> None:
        scan_buffer(dev, buffer, buffer, count, x.dtype, inclusive=True, variant=chosen, **params)

    def chunks() -> Iterator[Compute]:
        for lo in range(0, n, m):
            hi = min(lo + m, n)
            buffer = dev.alloc((hi - lo + 1) * item)
            pipe.load([x[lo:hi]], buffer, item, elements=hi - lo)

            def compute(buffer: Buffer = buffer, lo: int = lo, hi: int = hi) -> None:
                if lo:
                    dev.copy(buffer, carry, item)
                else:
                    dev.fill(buffer, zero, item)
                scanned(buffer, hi - lo + 1)
                dev.copy(carry, buffer, item, src_offset=(hi - lo) * item)
                pipe.store(buffer, item if inclusive else 0, [out[lo:hi]])

            yield compute

    pipe.run(chunks())
    return out


def _scan_variant(dev: Device) -> str:
    """The device's preferred scan that scans buffers and whose defaults it can run."""
    for name in registry.preferred("scan", dev):
        if scans_buffers(name) and not registry.get("scan", name).unmet(dev):
            return name
    return "vector_blocks"


# sort -----------------------------------------------------------------------------------------


def sort(
    dev: Device,
    keys: np.ndarray,
    values: np.ndarray | None,
    variant: str | None,
    params: dict[str, int],
    given: Any,
) -> Sorted | None:
    """The sort of ``keys`` (and ``values``) through the device in pieces, or None to run it
    in one piece.

    Where it fits, a GPU gets the keys through pinned staging, sorts them in one piece and sends
    them back the same way. Where it does not, the result is cut into buckets of
    consecutive key ranges, each small enough for the device, by a histogram of the keys' top 16
    bits (refined by the next 16 where one bin alone is too large). Then, in two passes through
    the device:

    1. runs: each chunk of the input is sorted on the device and its sorted pieces go straight
       to their buckets' places in the result, after the pieces of the chunks before it;
    2. merges: each bucket, a concatenation of sorted pieces (one from each run), is sorted on
       the device in place. A bucket of one key value, or whose keys all came from one run, is
       already in order, however large.

    Both sorts are stable, so equal keys keep the input order. The host only counts and copies;
    it never sorts or scatters keys.
    """
    n = keys.size
    need = Need(
        SORT_KEY_BYTES + (SORT_VALUE_BYTES if values is not None else 0),
        8 + (4 if values is not None else 0),
        SORT_FIXED,
    )
    host_bytes = keys.nbytes + (values.nbytes if values is not None else 0)
    way = route(dev, n, need, host_bytes, given)
    if way is None:
        return None
    mode = _sort_mode(dev, way, variant, params)
    if way.whole and mode == "host":
        return None
    on_device = mode != "host"
    result = dev.host_result if on_device else np.empty
    out = result(keys.shape, keys.dtype)
    out_values = None if values is None else result(values.shape, values.dtype)
    pipe = Pipeline(dev, "sort", staged=on_device)
    run = _sorter(dev, pipe, mode, variant, params)
    if way.whole:

        def whole() -> Iterator[Compute]:
            yield run(keys, values, [out], None if out_values is None else [out_values])

        pipe.run(whole())
        return out if out_values is None else (out, out_values)
    capacity = chunk_length(n, need, way.within, overlap=on_device, least=LEAST_BUCKET)
    buckets = _buckets(keys, capacity)
    locate = _locator(buckets)
    cursor = np.array([b.start for b in buckets], np.int64)
    pieces = np.zeros(len(buckets), np.int64)  # how many runs each bucket took keys from

    def runs() -> Iterator[Compute]:
        for lo in range(0, n, capacity):
            hi = min(lo + capacity, n)
            counts = sum(
                (np.bincount(locate(_codes(keys[a:b])), minlength=len(buckets)) for a, b in _blocks(lo, hi)),
                np.zeros(len(buckets), np.int64),
            )
            used = np.flatnonzero(counts)
            places = [(int(cursor[b]), int(cursor[b] + counts[b])) for b in used]
            cursor[used] += counts[used]
            pieces[used] += 1
            value_parts = None if out_values is None else [out_values[a:b] for a, b in places]
            part = None if values is None else values[lo:hi]
            yield run(keys[lo:hi], part, [out[a:b] for a, b in places], value_parts)

    def merges(run: Callable[..., Compute]) -> Iterator[Compute]:
        for bucket, taken in zip(buckets, pieces):
            if bucket.single or taken < 2:
                continue
            lo, hi = bucket.start, bucket.start + bucket.count
            part = None if out_values is None else out_values[lo:hi]
            yield run(out[lo:hi], part, [out[lo:hi]], None if part is None else [part])

    pipe.run(runs())  # every piece is in the result before the merges read it
    merge = Pipeline(dev, "sort merges", staged=on_device)
    merge.run(merges(_sorter(dev, merge, mode, variant, params)))
    return out if out_values is None else (out, out_values)


Targets = list[np.ndarray]


def _sort_mode(dev: Device, way: Route, variant: str | None, params: dict[str, int]) -> str:
    """How chunks are sorted: ``"views"`` (a CUDA device's buffers as CuPy arrays, any variant),
    ``"buffers"`` (a staged device's buffers by the one-sweep radix sort, where it runs there),
    or ``"host"`` (the variant takes host arrays and makes its own copies)."""
    if not way.staged:
        return "host"
    if dev.backend == "cuda":
        return "views"
    onesweep = registry.get("sort", "onesweep")
    if variant in (None, onesweep.name) and not onesweep.unmet(dev, onesweep.fitted(dev, params)):
        return "buffers"
    return "host"


def _sorter(
    dev: Device, pipe: Pipeline, mode: str, variant: str | None, params: dict[str, int]
) -> Callable[[np.ndarray, np.ndarray | None, Targets, Targets | None], Compute]:
    """A chunk that sorts ``keys`` (and ``values``) into ``targets`` (and ``value_targets``),
    host arrays that take the sorted result one after another, the way ``mode`` says (see
    :func:`_sort_mode`): staged into device buffers and sorted there, or handed to the variant
    as host arrays."""

    def sorted_by_variant(k: Any, v: Any) -> Any:
        call = lambda chosen, p: chosen.run(dev, k, v, **p)
        return registry.dispatch("sort", dev, variant, params, call, {"n": k.size})

    def run(keys: np.ndarray, values: np.ndarray | None, targets: Targets, value_targets: Targets | None) -> Compute:
        outputs = [targets] if value_targets is None else [targets, value_targets]
        if mode == "host":
            pipe.count(keys.size)

            def on_host() -> None:
                result = sorted_by_variant(keys, values)
                for array, parts in zip(result if isinstance(result, tuple) else (result,), outputs):
                    at = 0
                    for part in parts:
                        part[...] = array[at : at + part.size]
                        at += part.size

            return on_host
        key_buffer = dev.alloc(keys.nbytes)
        pipe.load([keys], key_buffer, elements=keys.size)
        value_buffer = None
        if values is not None:
            value_buffer = dev.alloc(values.nbytes)
            pipe.load([values], value_buffer)

        def on_device() -> None:
            if mode == "buffers":  # in place, then read back from where they were loaded
                fitted = registry.get("sort", "onesweep").fitted(dev, params)
                sort_buffers(dev, key_buffer, key_buffer, keys.size, keys.dtype, value_buffer, value_buffer, **fitted)
                sorted_buffers = [key_buffer] if value_buffer is None else [key_buffer, value_buffer]
            else:
                k = dev.view(key_buffer, keys.shape, keys.dtype)
                v = (
                    None
                    if value_buffer is None or values is None
                    else dev.view(value_buffer, values.shape, values.dtype)
                )
                result = sorted_by_variant(k, v)
                sorted_buffers = [dev.wrap(a)[0] for a in (result if isinstance(result, tuple) else (result,))]
            for buffer, parts in zip(sorted_buffers, outputs):
                pipe.store(buffer, 0, parts)

        return on_device

    return run


@dataclass(frozen=True)
class _Bucket:
    """Keys whose codes are ``low .. high`` (see :func:`_codes`): ``count`` of them, from
    ``start`` in the result; ``single`` when they are all one code."""

    low: int
    high: int
    count: int
    start: int
    single: bool


def _codes(keys: np.ndarray) -> np.ndarray:
    """The keys as the device sorts them: uint32 codes in the same order (``kernels/sort/keys.h``).

    >>> _codes(np.array([-1.0, -0.0, 0.0, np.inf, np.nan], np.float32)).tolist()
    [1082130431, 2147483647, 2147483648, 4286578688, 4290772992]
    """
    kind = KEY_KINDS[keys.dtype]
    bits = keys.view(np.uint32)
    if kind == 0:
        return bits
    if kind == 1:
        return bits ^ np.uint32(0x80000000)
    bits = np.where((bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000), np.uint32(0x7FC00000), bits)
    negative = (bits & np.uint32(0x80000000)) != 0
    return bits ^ np.where(negative, np.uint32(0xFFFFFFFF), np.uint32(0x80000000))


def _blocks(start: int, stop: int) -> Iterator[tuple[int, int]]:
    """``start .. stop`` in blocks of :data:`HOST_BLOCK`, for host passes of bounded memory."""
    for lo in range(start, stop, HOST_BLOCK):
        yield lo, min(lo + HOST_BLOCK, stop)


def _buckets(keys: np.ndarray, capacity: int) -> list[_Bucket]:
    """Consecutive code ranges of at most ``capacity`` keys each, or of one code each."""
    n = keys.size
    top = np.zeros(1 << 16, np.int64)
    for lo, hi in _blocks(0, n):
        top += np.bincount(_codes(keys[lo:hi]) >> np.uint32(16), minlength=1 << 16)
    large = np.flatnonzero(top > capacity)
    # atoms, in code order: whole bins of the top 16 bits, and single codes of bins too large alone
    kept = np.flatnonzero((top > 0) & (top <= capacity))
    lows, highs, counts = [kept << 16], [(kept << 16) | 0xFFFF], [top[kept]]
    for batch in range(0, large.size, REFINED_BINS):  # one more pass a batch of large bins
        bins = large[batch : batch + REFINED_BINS]
        slot = np.full(1 << 16, -1, np.int64)
        slot[bins] = np.arange(bins.size)
        fine = np.zeros(bins.size << 16, np.int64)
        for lo, hi in _blocks(0, n):
            codes = _codes(keys[lo:hi])
            where = slot[codes >> np.uint32(16)]
            chosen = where >= 0
            fine += np.bincount((where[chosen] << 16) + (codes[chosen] & np.uint32(0xFFFF)), minlength=fine.size)
        cells = np.flatnonzero(fine)
        codes_found = (bins[cells >> 16] << 16) | (cells & 0xFFFF)
        lows.append(codes_found)
        highs.append(codes_found)
        counts.append(fine[cells])
    low, high, count = (np.concatenate(parts) for parts in (lows, highs, counts))
    order = np.argsort(low, kind="stable")
    low, high, count = low[order], high[order], count[order]
    ends = np.concatenate([[0], np.cumsum(count)])  # atom k's keys are ends[k] .. ends[k + 1] - 1
    buckets: list[_Bucket] = []
    k = 0
    while k < low.size:  # greedily, as many consecutive atoms as fit (one, if it alone does not)
        j = max(int(np.searchsorted(ends, ends[k] + capacity, side="right")) - 1, k + 1)
        first, last = int(low[k]), int(high[j - 1])
        buckets.append(_Bucket(first, last, int(ends[j] - ends[k]), int(ends[k]), first == last))
        k = j
    return buckets


def _locator(buckets: list[_Bucket]) -> Callable[[np.ndarray], np.ndarray]:
    """The function from codes to their buckets' indices: a table by the top 16 bits, where a
    bin lies in one bucket, and a search among the buckets' ends where it was cut into several."""
    highs = np.array([b.high for b in buckets], np.uint32)
    bins = np.arange(1 << 16, dtype=np.uint32)
    first = np.searchsorted(highs, bins << np.uint32(16), side="left")
    last = np.searchsorted(highs, (bins << np.uint32(16)) | np.uint32(0xFFFF), side="left")
    table = np.where(first == last, first, -1).astype(np.int64)

    def locate(codes: np.ndarray) -> np.ndarray:
        found = table[codes >> np.uint32(16)]
        cut = found < 0
        if cut.any():
            found[cut] = np.searchsorted(highs, codes[cut], side="left")
        return found

    return locate


# matmul ---------------------------------------------------------------------------------------


def matmul(
    dev: Device, a: np.ndarray, b: np.ndarray, variant: str | None, params: dict[str, int], given: Any
) -> np.ndarray | None:
    """``a @ b`` in tiles of the result, or None to run it in one piece.

    Tiles of ``tm x tn`` are computed from a ``tm x tk`` panel of ``a`` and a ``tk x tn``
    panel of ``b``; a panel of ``b`` is uploaded once for all the tiles of its column, and
    where ``tk < k`` each further product is added to the tile on the host. On a CUDA device the
    panels go through pinned staging as row panels of ``a`` follow each other, overlapping
    the uploads, the products and the downloads; elsewhere the variant takes host panels.
    """
    (m, k), n = a.shape, b.shape[1]
    item = a.itemsize
    if 0 in (m, k, n):
        return None
    total, largest = _product_bytes(m, k, n, item)
    way = route(dev, m, Need(total / m, largest / m), a.nbytes + b.nbytes, given)
    if way is None:
        return None
    on_device = dev.backend == "cuda" and way.staged
    if way.whole and (not on_device or a.nbytes + b.nbytes < MATMUL_STAGING_MIN):
        return None
    tm, tn, tk = _tiles(m, k, n, item, way, on_device, _least_rows(dev, n) if on_device else 0)
    out = dev.host_result((m, n), a.dtype) if on_device else hostpool.empty((m, n), a.dtype)
    pipe = Pipeline(dev, "matmul", staged=on_device)

    def product(x: Any, y: Any) -> Any:
        call = lambda chosen, p: chosen.run(dev, x, y, **p)
        # tuned for the tile's shape, as a call of that shape is
        return registry.dispatch("matmul", dev, variant, params, call, dispatch_context(x, y))

    def chunks() -> Iterator[Compute]:
        for c0 in range(0, n, tn):
            c1 = min(c0 + tn, n)
            for k0 in range(0, k, tk):
                k1 = min(k0 + tk, k)
                panel = b[k0:k1, c0:c1]
                b_buffer = None
                for r0 in range(0, m, tm):
                    r1 = min(r0 + tm, m)
                    target, rows = out[r0:r1, c0:c1], a[r0:r1, k0:k1]
                    if not on_device:
                        pipe.count(r1 - r0)

                        def host_tile(
                            target: np.ndarray = target,
                            rows: np.ndarray = rows,
                            panel: np.ndarray = panel,
                            add: bool = k0 > 0,
                        ) -> None:
                            result = product(np.ascontiguousarray(rows), np.ascontiguousarray(panel))
                            if add:
                                target += result
                            else:
                                target[...] = result

                        yield host_tile
                        continue
                    if b_buffer is None:
                        b_buffer = dev.alloc(panel.size * item)
                        pipe.load([panel], b_buffer)
                    a_buffer = dev.alloc(rows.size * item)
                    pipe.load([rows], a_buffer, elements=r1 - r0)

                    def device_tile(
                        target: np.ndarray = target,
                        rows: np.ndarray = rows,
                        panel: np.ndarray = panel,
                        a_buffer: Buffer = a_buffer,
                        b_buffer: Buffer = b_buffer,
                        add: bool = k0 > 0,
                    ) -> None:
                        x = dev.view(a_buffer, rows.shape, rows.dtype)
                        y = dev.view(b_buffer, panel.shape, panel.dtype)
                        pipe.store(dev.wrap(product(x, y))[0], 0, [target], add=add)

                    yield device_tile

    pipe.run(chunks())
    return out


#: The operands' bytes from which a product that fits the device goes through pinned staging:
#: below, one panel with nothing to overlap, the staging's own work costs more than pageable
#: copies (on an H100, from NumPy to NumPy: 1024 x 1024 staged 2.4-2.8 ms, direct 1.6-1.7;
#: 2048 x 2048 staged 5.1-5.5, direct 7.1-8.5)
MATMUL_STAGING_MIN = 16 << 20

#: Waves of 128 x 128 output tiles over every compute unit that one product of a panel launches
#: at least, where the rows are cut into panels to overlap: a product of fewer tiles leaves
#: compute units idle (on an H100, 2048 x 2048 in 8 panels of 256 rows took 1.2 ms of kernels,
#: in one 0.42 ms; end to end, 4096 x 4096 took 14-16 ms in 8 panels, 9.2-10 ms in 2, 11 in 4)
MATMUL_WAVES = 2
#: The edge of the output tiles the GPU matmul kernels take at large sizes (xgemm's MWG, NWG)
PANEL_TILE = 128


def _least_rows(device: Device, n: int) -> int:
    """The fewest rows of a panel of ``n`` columns whose product fills ``device``
    :data:`MATMUL_WAVES` times over."""
    return math.ceil(MATMUL_WAVES * device.info.compute_units * PANEL_TILE * PANEL_TILE / max(n, 1))


def _panel_rows(m: int, least: int) -> int:
    """The rows of an overlapped product's panels: ``m`` halved while a half keeps at least 256
    and ``least`` rows, into at most :data:`TARGET_CHUNKS` panels, rounded up to a multiple of
    :data:`PANEL_TILE` (the kernels' tiles: no padding).

    >>> _panel_rows(8192, 528), _panel_rows(4096, 1056), _panel_rows(2048, 2112), _panel_rows(3000, 0)
    (1024, 2048, 2048, 384)
    """
    rows = m
    for _ in range(TARGET_CHUNKS.bit_length() - 1):
        half = -(-rows // 2)
        if half < max(256, least):
            break
        rows = half
    return m if rows == m else min(m, -(-rows // PANEL_TILE) * PANEL_TILE)


def _tiles(m: int, k: int, n: int, item: int, way: Route, overlap: bool, least: int = 0) -> tuple[int, int, int]:
    """Tile sides ``(tm, tn, tk)`` whose products fit the budget, :data:`IN_FLIGHT` at once when
    overlapped; halving the longest side first. Overlapped, the rows are first cut into panels
    (:func:`_panel_rows`, at least ``least`` rows each, see :func:`_least_rows`), so that there
    is something to overlap and each product still fills the device."""
    copies = IN_FLIGHT if overlap else 1
    within: Budget = way.within

    def fits(tm: int, tn: int, tk: int) -> bool:
        total, largest = _product_bytes(tm, tk, tn, item)
        return total * copies <= within.total and largest <= within.largest

    tm = _panel_rows(m, least) if overlap else m
    tn, tk = n, k
    while not fits(tm, tn, tk) and max(tm, tn, tk) > 1:
        if tm >= tn and tm >= tk:
            tm = math.ceil(tm / 2)
        elif tn >= tk:
            tn = math.ceil(tn / 2)
        else:
            tk = math.ceil(tk / 2)
    return tm, tn, tk


def _product_bytes(m: int, k: int, n: int, item: int) -> tuple[int, int]:
    """The device memory of one product in one piece, in all and in its largest buffer: the
    operands and the result as given, and each padded to :data:`MATMUL_TILE` on every side."""
    padded = [math.ceil(d / MATMUL_TILE) * MATMUL_TILE for d in (m, k, n)]
    sides = [(m * k, padded[0] * padded[1]), (k * n, padded[1] * padded[2]), (m * n, padded[0] * padded[2])]
    return item * sum(plain + pad for plain, pad in sides), item * max(pad for _, pad in sides)
