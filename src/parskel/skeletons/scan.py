"""Scan: prefix combinations, inclusive or exclusive, with the total (seed 004, section 2.4.1).
Any size, in one launch on GPUs (kernel template ``kernels/skeletons/scan.cl``). On CPUs
(``kernels/skeletons/scan_cpu.cl``): in one launch of a work-item per core taking tiles in order
where the device has few cores, in two over long contiguous runs where it has many."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..containers.base import Container
from ..errors import ShapeError, boolean
from ..runtime import Buffer, Device, Kernel
from ..runtime.traits import aligned, cpu_runs, lookback_defines, one_pass, register_bound
from . import pipelined
from .arguments import bind_extras, mark_written
from .base import Skeleton
from .identity import identity_buffer, identity_glue
from .program import build, build_grouped, build_warped, check_size
from .reduce import adds, chains, extra_args, load_shape, operator
from .userfn import UserSource

TEMPLATE = "skeletons/scan.cl"
CPU_TEMPLATE = "skeletons/scan_cpu.cl"
RUNS_PER_UNIT = 4  # CPU runs per compute unit, so that uneven cores still share the work
#: Bytes of the vectors in which a CPU scans a sum of integers (see :meth:`Scan.lanes`): an
#: AVX-512 register. An exclusive int32 Scan of 2^20 on 2 cores (AMD Zen 5, PoCL 3.1) took
#: 0.275 ms of kernel an element at a time.
LANE_BYTES = 64
#: Bytes of a tile of the chained CPU scan, which devices of few cores (``traits.one_pass``) run:
#: a core's cache holds a tile while it is combined, then scanned, or it is scanned in one pass
#: where the tile before it has published its prefix. An exclusive int32 Scan of
#: 2^20, NumPy to NumPy on 2 cores (AMD Zen 5, PoCL 3.1), took 0.35-0.37 ms as two launches over
#: 8 runs and 0.29-0.30 ms chained; on 16 cores (a Xeon, PoCL 5.0) chained scans of 2^24 and 2^26
#: took 25-50 % longer than the runs, so devices of many cores keep the runs.
CPU_TILE_BYTES = 128 << 10
# GPU tiles: 128 bytes of elements per work-item (at most 32), staged through local memory for
# scalars. On an H100, int32 at 2^28 took 1.05-1.28 ms with 32 per work-item staged, against
# 1.3-1.8 ms with 16 read as vectors (parskel.scan's sweeps, docs/benchmarks.md).
TILE_ITEM_BYTES = 128
#: On NVIDIA's GPUs, the work-items an SM must hold at once for staged tiles of 4-byte elements,
#: which bounds the registers (``MIN_GROUPS`` of ``scan/single_pass.h`` on CUDA, ``.maxnreg`` in
#: the PTX on NVIDIA's OpenCL): an int32 or float32 ``Scan`` of 2^28 on an H100 took
#: 0.907-0.948 ms so, 0.960-1.000 with the compiler's 64 registers (four groups of 256 an SM),
#: 0.98-1.04 bounded to 1,536
BOUNDED_ITEMS = 1280
#: ``HINTS`` of ``scan/single_pass.h`` for staged tiles: their vectors read and written with the
#: streaming cache operator where PTX can be written (CUDA, NVIDIA's OpenCL), as the scan tuned
#: on an H200 does (1-2 % faster there at 2^27 and 2^28)
HINTS = 3


@dataclass(frozen=True)
class _Plan:
    kernel: Kernel | None  # one launch: the single-pass scan (GPUs), or the chained one (CPUs)
    chained: bool  # kernel is the CPUs' chained scan: tiles taken in order by a work-item per core
    runs: tuple[Kernel, Kernel] | None  # the runs' totals, then the runs' scans (CPUs of many cores)
    group: int
    items: int
    identity: Buffer


class Scan(Skeleton):
    """``Scan(op, identity, inclusive=False)(a, *extra) -> (Vector, total)``.

    Element i of the result combines elements 0..i-1 (exclusive) or 0..i (inclusive) in index
    order, so ``op`` must be associative but need not be commutative. ``total`` is the
    combination of all elements, a NumPy scalar (or record). One launch: each work-group scans
    a tile and finds its offset by a decoupled look-back (``kernels/scan/single_pass.h``).

    >>> prefix = ps.Scan(lambda a, b: a + b, identity=0)
    >>> positions, count = prefix(ps.Vector(np.array([1, 0, 1, 1], np.int32)))
    >>> positions.numpy(), count
    (array([0, 1, 1, 2], dtype=int32), np.int32(3))
    >>> ps.Scan("int add(int a, int b) { return a + b; }", identity=0, inclusive=True)(
    ...     ps.Vector(np.array([1, 0, 1, 1], np.int32)))[0].numpy()
    array([1, 1, 2, 3], dtype=int32)
    """

    name = "Scan"

    def __init__(self, source: UserSource, identity: Any = 0, *, inclusive: bool = False) -> None:
        super().__init__()
        self.op, self.dtype = operator(source, self.name)
        self.identity = identity
        self.inclusive = boolean(inclusive, "Scan: inclusive")

    def lanes(self) -> int:
        """The lanes of a vector in which a CPU scans, where the operator is a sum of 4- or 8-byte
        integers from 0 (exact in any order, as ``parskel.scan``'s CPU scans take it); else 0,
        and the CPU scans an element at a time.

        >>> ps.Scan("long f(long a, long b) { return a + b; }", identity=0).lanes()
        8
        >>> ps.Scan("int f(int a, int b) { return max(a, b); }", identity=0).lanes()
        0
        """
        ident = self.identity
        zero = isinstance(ident, (int, np.integer)) and not isinstance(ident, (bool, np.bool_)) and ident == 0
        whole = self.dtype.kind in "iu" and self.dtype.itemsize in (4, 8)
        return LANE_BYTES // self.dtype.itemsize if zero and whole and adds(self.op) else 0

    def _build(self, dev: Device, vec_ok: bool) -> _Plan:
        op = self.op
        if dev.type == "cpu":
            lanes = self.lanes()
            glue = (
                f"#define PS_T {op.return_type}\n#define PS_OP(a, b) {op.call(['(a)', '(b)'], [], 'ps_x')}\n"
                f"#define PS_EXTRA_PARAMS {op.extra_params('ps_x')}\n#define INCLUSIVE {int(self.inclusive)}\n"
                f"#define PS_CHAINS {chains(dev, self.dtype)}\n"
                + identity_glue(self.identity)
                + (f"#define PS_LANES {lanes}\n" if lanes else "")
            )
            program = build(dev, self.name, CPU_TEMPLATE, [op], [self.dtype], glue)
            ident = identity_buffer(self.identity, self.dtype, dev, program, "Scan identity")
            if one_pass(dev):
                return _Plan(program.kernel("ps_chained_scan"), True, None, 1, 1, ident)
            return _Plan(None, False, (program.kernel("ps_run_totals"), program.kernel("ps_run_scan")), 1, 1, ident)
        _, vec = load_shape(self.dtype, vec_ok)
        items = max(1, min(32, TILE_ITEM_BYTES // self.dtype.itemsize))
        staged = self.dtype.names is None  # records stay in registers: their stage would be large
        bounded = staged and self.dtype.itemsize == 4  # MIN_GROUPS: see BOUNDED_ITEMS
        glue = (
            f"#define PS_T {op.return_type}\n#define PS_VT {op.return_type}{vec}\n#define STAGE {int(staged)}\n"
            f"#define PS_OP(a, b) {op.call(['(a)', '(b)'], [], 'ps_x')}\n"
            f"#define PS_EXTRA_PARAMS {op.extra_params('ps_x')}\n#define PS_EXTRA_ARGS {extra_args(op, 'ps_x')}\n"
            f"#define ITEMS {items}\n#define VEC {vec}\n#define INCLUSIVE {int(self.inclusive)}\n"
            + (f"#define MIN_GROUPS ({BOUNDED_ITEMS} / PS_WG)\n" if bounded else "")
            + f"#define HINTS {HINTS}\n"
            + "".join(f"#define {k} {v}\n" for k, v in lookback_defines(dev, 0, self.dtype.itemsize).items())
            + identity_glue(self.identity)
        )

        def bound(L: int) -> dict[str, int]:
            # NVIDIA's OpenCL takes no launch bounds: MIN_GROUPS as a bound in the PTX there
            return register_bound(dev, L, BOUNDED_ITEMS) if bounded else {}

        program, group = build_grouped(
            dev,
            lambda L: build_warped(
                dev,
                lambda g: build(dev, self.name, TEMPLATE, [op], [self.dtype], g, defines=bound(L)),
                glue + f"#define PS_WG {L}\n",
            ),
            ("ps_scan",),
        )
        ident = identity_buffer(self.identity, self.dtype, dev, program, "Scan identity")
        return _Plan(program.kernel("ps_scan"), False, None, group, items, ident)

    def __call__(self, a: Container | np.ndarray, *extra: Any, out: Any = None) -> tuple[Container | np.ndarray, Any]:
        if isinstance(a, np.ndarray):  # a host array, in chunks where that pays
            return pipelined.scan(self, a, extra, out)
        result, total, offset = self.enqueue(a, extra, out)
        return result, self.total(result.device, total, offset)

    def total(self, device: Device, buffer: Buffer, offset: int) -> Any:
        """The total that :meth:`enqueue` left at byte ``offset`` of ``buffer``, read (waits)."""
        host = np.empty(1, dtype=self.dtype)
        device.download(buffer, host, offset=offset)
        return host[0]

    def _run_host(self, dev: Device, x: np.ndarray, extra: tuple[Any, ...], target: np.ndarray) -> Any | None:
        """The scan of the host array ``x`` into ``target`` (its shape, and no partial overlap),
        through buffers over the arrays, and its total; None, with nothing run, where no scan
        of these types has been planned yet (the first goes through containers, which check
        the types and build the kernels)."""
        if x.dtype != self.dtype:
            return None
        src, dst = dev.host_buffer(x), dev.host_buffer(target, upload=False)
        plan = self._plans.get((dev, aligned(src, 16) and aligned(dst, 16)))
        if plan is None:
            return None
        check_size(x.size, self.name)
        total, offset = self._scan(dev, plan, src, dst, x.size, bind_extras(self.op, extra, dev)[0])
        dev.download(dst, target)
        return self.total(dev, total, offset)

    def enqueue(self, a: Container, extra: tuple[Any, ...] = (), out: Any = None) -> tuple[Container, Buffer, int]:
        """The scan of a container, enqueued: the result, and the buffer and byte offset of the
        total, not yet read (a distributed scan reads every part's once all are enqueued)."""
        (a,) = self._inputs([a], ["the input"])
        if a.c_type != self.op.return_type:
            raise ShapeError(f"Scan: the operator works on {self.op.return_type!r}, the input holds {a.c_type!r}")
        dev = a.device
        check_size(a.size, self.name)
        args, written = bind_extras(self.op, extra, dev)
        if any(a is w for w in written):
            raise ShapeError("Scan: a container passed for writing must not also be the input")
        result = self._output(out, a, a.shape, self.dtype, [a], may_alias=True)
        src = a.to_device()
        dst = result.writable_buffer() if out is not None else result.output_buffer()
        vec_ok = aligned(src, 16) and aligned(dst, 16)
        plan = self._plan((dev, vec_ok), lambda: self._build(dev, vec_ok))
        total, offset = self._scan(dev, plan, src, dst, a.size, args)
        result.mark_device_written()
        mark_written(written)
        return result, total, offset

    def _scan(self, dev: Device, plan: _Plan, src: Buffer, dst: Buffer, n: int, args: list[Any]) -> tuple[Buffer, int]:
        """Scan ``n`` elements of ``src`` into ``dst``; returns the buffer that holds their total
        and the total's byte offset in it."""
        if n == 0:
            return plan.identity, 0
        item = self.dtype.itemsize
        if plan.runs is not None:
            totals_kernel, scan_kernel = plan.runs
            runs, chunk = cpu_runs(dev, n, RUNS_PER_UNIT, 4096)
            totals = dev.alloc((runs + 1) * item)
            dev.launch(totals_kernel, runs, 1, src, totals, plan.identity, np.uint32(n), np.uint32(chunk), *args)
            dev.launch(scan_kernel, runs, 1, src, dst, totals, plan.identity, np.uint32(n), np.uint32(chunk), *args)
            return totals, runs * item
        assert plan.kernel is not None
        if plan.chained:
            tile = max(1, CPU_TILE_BYTES // item)
            tiles = -(-n // tile)
            # the ticket counter and the tiles' flags, zeroed: in host memory where the device
            # works there, so that no command has to clear them
            if dev.shares_host_memory:
                state = dev.host_buffer(np.zeros(tiles + 1, np.uint32))
            else:
                state = dev.alloc((tiles + 1) * 4)
                dev.fill(state, np.uint32(0))
            values = dev.alloc((2 * tiles + 1) * item)
            sizes = (np.uint32(n), np.uint32(tile), np.uint32(tiles))
            groups = min(tiles, dev.info.compute_units)
            dev.launch(plan.kernel, groups, 1, src, dst, state, values, plan.identity, *sizes, *args)
            return values, 2 * tiles * item  # the total, which the last tile leaves there
        L = plan.group
        tiles = -(-n // (L * plan.items))
        state = dev.alloc((tiles + 1) * 4)
        dev.fill(state, np.uint32(0))
        values = dev.alloc((2 * tiles + 1) * item)
        if lookback_defines(dev, 0, self.dtype.itemsize)["PACKED"]:  # the tiles' status words start empty
            dev.fill(values, np.uint32(0))
        dev.launch(
            plan.kernel, tiles * L, L, src, dst, state, values, plan.identity, np.uint32(n), np.uint32(tiles), *args
        )
        return values, 2 * tiles * item  # the total, which the last tile leaves there
