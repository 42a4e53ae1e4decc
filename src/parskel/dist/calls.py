"""Skeleton calls on distributed containers: the call runs on every part at once (each part on its
device's queue, enqueued from the calling thread where the part's work only enqueues, else from a
thread of its own; see :func:`each`), and the parts' results are combined.

- Map, Zip, MapArray, Generate, Gather: each part alone; a user function's ``ps_index`` gets
  the element's index in the whole container (a wrapper adds the part's first index).
- Scatter: each part applies the user function to its values and sends them with their
  positions to the parts of the result that own those positions, which scatter them.
- Reduce, MapReduce: each part reduces its rows; the partial results, in part order, are
  reduced again with the same operator (over MPI, gathered from every rank first).
- Scan: each part scans its rows; an exclusive Scan of the parts' totals gives each part the
  combination of all parts before it, which a Map puts in front of its elements.
- MapOverlap: each part with ``radius`` rows of its neighbours (the halo an ``overlap``
  distribution keeps, or rows fetched for the call); the boundary applies at the container's
  ends only.
- AllPairs: each part's rows of A with the whole of B.

Mixing distributions: containers among the inputs that are placed otherwise on the same
devices, or on one device, are redistributed like the first distributed input for the call
(temporary copies; the caller's containers keep their placement); containers given as extra
arguments are made whole on every device. Containers on other devices than the first input's
raise :class:`ShapeError`. A container a user function writes through an extra argument must be
a ``copy`` over the same devices: with a split input its copies are written differently and
are merged by the distribution's ``combine`` when next read, or refused without one.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

import numpy as np

from ..containers import Container, Vector
from ..errors import DTypeError, ShapeError, UserFunctionError
from ..skeletons import AllPairs, Gather, Generate, Map, MapArray, MapOverlap, MapReduce, Reduce, Scan, Scatter, Zip
from ..skeletons.base import Skeleton
from ..skeletons.userfn import Param, UserFunction
from .container import Distributed
from .distribution import Distribution
from .moves import extended

T = TypeVar("T")
_POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="parskel-part")


def each(dist: Distribution, work: Callable[[int], T], *, waits: bool = True) -> dict[int, T]:
    """``work(k)`` for every local part ``k`` at once (one thread each); every process learns
    whether any failed before it goes on (see :meth:`Comm.agree`).

    ``waits=False`` says that the work only enqueues commands (an element-wise call): the parts
    are then enqueued one after the other from the calling thread, which costs far less than
    handing them to threads, and their devices still run at once."""
    local = dist.local()
    error: BaseException | None = None
    results: dict[int, T] = {}

    def on_part(k: int) -> T:
        device = dist.devices[k]
        assert device is not None  # a part this process holds has its device here
        with device.current():  # new device arrays of the part's work go to its GPU
            return work(k)

    if len(local) == 1 or not waits:
        for k in local:
            try:
                results[k] = on_part(k)
            except Exception as exc:
                error = exc
                break
    else:
        futures = {k: _POOL.submit(on_part, k) for k in local}
        for k, future in futures.items():
            try:
                results[k] = future.result()
            except Exception as exc:
                error = error or exc
    dist.comm.agree(error)
    return results


def run(sk: Skeleton, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run skeleton ``sk``'s ``call`` on distributed arguments (see the module's description)."""
    for kind, handler in _HANDLERS:
        if isinstance(sk, kind):
            return handler(sk, call, args, kwargs)
    raise ShapeError(f"{sk.name} does not take distributed containers")


# arguments ---------------------------------------------------------------------------------


def _distributed(values: Any) -> Distributed | None:
    return next((v for v in values if isinstance(v, Distributed)), None)


def aligned(value: Any, dist: Distribution, what: str) -> Distributed:
    """``value`` placed as ``dist``: itself, or a temporary redistributed copy."""
    if isinstance(value, Distributed):
        if value.distribution.same_as(dist):
            return value
        if not value.distribution.same_places(dist):
            raise ShapeError(
                f"{what} is distributed over {value.distribution}, the first input over {dist}; "
                "redistribute one of them onto the other's devices"
            )
        return value.redistributed(dist)
    if isinstance(value, Container):
        return cast(Distributed, type(value)(value.numpy(), distribution=dist))
    raise TypeError(f"{what} must be a ps.Vector or ps.Matrix, not {type(value).__name__}")


def _written(functions: list[UserFunction | None]) -> list[bool]:
    """For each extra argument of the functions (in order), whether it is written."""
    found: list[bool] = []
    for fn in functions:
        if fn is not None:
            found += [p.pointer and not p.const for p in fn.extras]
    return found


class _Extras:
    """Extra arguments per part: containers made whole on each part's device."""

    def __init__(self, sk: Skeleton, values: tuple[Any, ...], dist: Distribution, functions: list[Any]) -> None:
        written = _written(functions) + [False] * len(values)
        self.values = list(values)
        self.whole: dict[int, Distributed] = {}
        self.diverging: list[Distributed] = []
        for i, value in enumerate(values):
            if not isinstance(value, Container):
                continue
            what = f"{sk.name}: extra argument {i + 1}"
            if written[i]:
                if not (
                    isinstance(value, Distributed)
                    and value.distribution.kind == "copy"
                    and value.distribution.same_places(dist)
                ):
                    raise ShapeError(
                        f"{what} is written by the user function: give a container distributed as "
                        f"ps.dist.copy over the input's devices ({dist}), so that each part writes its own copy"
                    )
                if dist.kind not in ("copy", "single"):
                    if value.distribution.combine is None:
                        raise ShapeError(
                            f"{what}: its copies would be written differently by the parts of {dist}; "
                            "give ps.dist.copy(devices, combine=...) to merge them, or a copy-distributed input"
                        )
                    self.diverging.append(value)
                self.whole[i] = value
            else:
                self.whole[i] = aligned(value, dist.with_kind("copy"), what)

    def part(self, k: int) -> list[Any]:
        return [self.whole[i]._parts[k] if i in self.whole else v for i, v in enumerate(self.values)]

    def done(self) -> None:
        for value in self.diverging:
            value._wrote_copies()


# user functions that see the whole container's indices ------------------------------------------


def _declare(p: Param) -> str:
    if not p.pointer:
        return f"{p.type} {p.name}"
    return f"{'__global ' if p.is_global else ''}{'const ' if p.const else ''}{p.type} *{p.name}"


def shifted_source(fn: UserFunction) -> str:
    """``fn`` with one more extra parameter, the index of the part's first element (or row),
    added to its first ``ps_index`` parameter."""
    params = fn.signature.params
    names, first = [], True
    for p in params:
        if p.is_index and first:
            names.append(f"{p.name} + parskel_first")
            first = False
        else:
            names.append(p.name)
    declared = ", ".join([*map(_declare, params), "uint parskel_first"])
    body = f"{'' if fn.return_type == 'void' else 'return '}{fn.signature.name}({', '.join(names)});"
    return f"{fn.source}\n{fn.return_type} parskel_part_entry({declared}) {{ {body} }}\n"


_derived: weakref.WeakKeyDictionary[Skeleton, dict[str, Any]] = weakref.WeakKeyDictionary()


def derived(sk: Skeleton, name: str, make: Callable[[], T]) -> T:
    """A skeleton made from ``sk``'s user functions for its distributed calls, kept with ``sk``."""
    found = _derived.setdefault(sk, {})
    if name not in found:
        found[name] = make()
    return cast(T, found[name])


def _shifted(sk: Any, fn: UserFunction | None) -> tuple[Any, bool]:
    """The skeleton to run on parts, and whether it takes the first index as one more extra."""
    if fn is None or not fn.index_positions:
        return sk, False

    def make() -> Any:
        source = shifted_source(fn)
        if isinstance(sk, MapOverlap):
            return MapOverlap(source, sk.radius, sk.boundary, sk.neutral)
        if isinstance(sk, Zip):
            return Zip(source, sk.inputs)
        if isinstance(sk, MapReduce):
            return MapReduce(source, sk.op.source, sk.identity)
        if isinstance(sk, AllPairs):
            return AllPairs(source, sk.op.source, sk.identity)
        return type(sk)(source)

    return derived(sk, "shifted", make), True


def _first_index(fn: UserFunction | None, start_row: int, shape: tuple[int, ...]) -> np.uint32:
    """What the shifted function adds: the first row (two indices) or the first element; modulo
    2^32, as the kernel adds it (a wrapped halo starts before row 0, and its rows are dropped)."""
    if fn is not None and len(fn.index_positions) < 2 and len(shape) == 2:
        return np.uint32(start_row * shape[1] % 2**32)
    return np.uint32(start_row % 2**32)


# element-wise --------------------------------------------------------------------------------


def _elementwise(sk: Any, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    count = sk.inputs
    if isinstance(sk, Generate):
        return _generate(sk, call, args, kwargs)
    inputs, extras = args[:count], args[count:]
    out = kwargs.get("out")
    lead = _distributed([*inputs, out])
    if lead is None:
        raise ShapeError(
            f"{sk.name}: an extra argument is distributed but the inputs are not; "
            "distribute the inputs, or pass a container on the inputs' device"
        )
    dist = lead.distribution
    names = [f"input {k}" for k in range(count)]
    for value, name in zip(inputs, names):
        if isinstance(value, Container) and value.shape != lead.shape:
            raise ShapeError(f"{sk.name}: {name} has shape {value.shape}, the distributed input {lead.shape}")
    ins = [aligned(v, dist, f"{sk.name}: {n}") for v, n in zip(inputs, names)]
    if out is not None and not (isinstance(out, Distributed) and out.distribution.same_as(dist)):
        raise ShapeError(f"{sk.name}: out must be distributed like the input ({dist})")
    part_sk, shift = _shifted(sk, sk.fn)
    more = _Extras(sk, extras, dist, [sk.fn])
    stored = dist.stored(lead.shape[0])

    def work(k: int) -> Any:
        tail = [_first_index(sk.fn, stored[k][0], lead.shape)] if shift else []
        given = {"out": out._parts[k]} if out is not None else {}
        return call(part_sk, *[c._parts[k] for c in ins], *more.part(k), *tail, **given)

    parts = each(dist, work, waits=False)
    more.done()
    if sk._void:
        return None
    halo_ok = all(c.halo_valid for c in ins)
    if out is not None:
        out._halo_ok = halo_ok
        return out
    dtype = sk._out_dtype
    return Distributed.from_parts(type(lead), lead.shape, dtype, dist, parts, halo_ok=halo_ok)


def _generate(sk: Any, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    out = kwargs.get("out")
    if not isinstance(out, Distributed):
        raise ShapeError("Generate: an extra argument is distributed; give out= a distributed container to fill")
    dist = out.distribution
    shape, extras = args[0], args[1:]
    wanted = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if wanted != out.shape:
        raise ShapeError(f"Generate: shape {shape!r} differs from out's {out.shape}")
    part_sk, shift = _shifted(sk, sk.fn)
    more = _Extras(sk, extras, dist, [sk.fn])
    stored = dist.stored(out.shape[0])

    def work(k: int) -> Any:
        part = out._parts[k]
        tail = [_first_index(sk.fn, stored[k][0], out.shape)] if shift else []
        return call(part_sk, part.shape if part.ndim == 2 else part.shape[0], *more.part(k), *tail, out=part)

    each(dist, work, waits=False)
    more.done()
    out._halo_ok = True
    return out


def _gather(sk: Any, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if isinstance(sk, Scatter):
        return _scatter(sk, args, kwargs)
    values, positions, extras = args[0], args[1], args[2:]
    out = kwargs.get("out")
    lead = positions if isinstance(positions, Distributed) else None
    if lead is None:
        raise ShapeError(
            "Gather: distribute the positions (each part gathers its own); the values go whole to every part"
        )
    dist = lead.distribution
    whole = aligned(values, dist.with_kind("copy"), "Gather: values")
    if out is not None and not (isinstance(out, Distributed) and out.distribution.same_as(dist)):
        raise ShapeError(f"Gather: out must be distributed like the positions ({dist})")
    part_sk, shift = _shifted(sk, sk.fn)
    more = _Extras(sk, extras, dist, [sk.fn])
    stored = dist.stored(lead.shape[0])

    def work(k: int) -> Any:
        tail = [np.uint32(stored[k][0])] if shift else []
        given = {"out": out._parts[k]} if out is not None else {}
        return call(part_sk, whole._parts[k], lead._parts[k], *more.part(k), *tail, **given)

    parts = each(dist, work, waits=False)
    more.done()
    if out is not None:
        return out
    dtype = next(iter(parts.values())).dtype if parts else whole.dtype
    return Distributed.from_parts(Vector, lead.shape, dtype, dist, parts, halo_ok=lead.halo_valid)


def _scatter(sk: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Each part applies the user function to its values, sends each value with its position to
    the part of the result that owns the position, and every part scatters what it received."""
    values, positions, extras = args[0], args[1], args[2:]
    out = kwargs.get("out")
    lead = next((c for c in (values, positions) if isinstance(c, Distributed)), None)
    if lead is None:
        raise ShapeError("Scatter: an extra argument is distributed but the values and positions are not")
    if lead.ndim != 1 or not isinstance(values, Container) or not isinstance(positions, Container):
        raise ShapeError("Scatter: values and positions must be Vectors")
    if positions.dtype.kind not in "iu":
        raise DTypeError(f"Scatter: positions must be integers, not {positions.dtype}")
    if len(positions) != len(values):
        raise ShapeError(f"Scatter: each value needs one position; got {len(values)} values and {len(positions)}")
    dist = _blocks_only(lead).distribution
    vals, pos = aligned(values, dist, "Scatter: values"), aligned(positions, dist, "Scatter: positions")
    mapped: Distributed = vals
    if sk.fn is not None:
        apply = derived(sk, "apply", lambda: Map(sk.fn.source))
        mapped = cast(Distributed, apply(vals, *extras))
    elif extras:
        raise UserFunctionError("Scatter without a user function takes no extra arguments")
    if out is not None:
        if (
            not isinstance(out, Distributed)
            or out.distribution.kind == "copy"
            or out.distribution.comm is not dist.comm
        ):
            raise ShapeError("Scatter: out must be distributed in blocks (or single) among the same processes")
        result = out
    else:
        size = kwargs.get("size")
        size = len(values) if size is None else size
        result = type(lead)(size=size, dtype=mapped.dtype, distribution=dist.with_kind("block"))
    target = result.distribution
    rows = result.shape[0]
    owned, held = target.ranges(rows), target.stored(rows)
    starts = np.array([lo for lo, _ in owned])
    senders = [0] if dist.kind == "copy" else list(range(dist.parts))

    def cut(k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        if k not in senders:
            return [(np.empty(0, np.uint32), np.empty(0, mapped.dtype))] * target.parts
        where = pos._parts[k].numpy().astype(np.int64)
        if where.size and (where.min() < 0 or where.max() >= rows):
            raise ShapeError(f"Scatter: a position lies outside 0..{rows - 1}")
        owner = np.searchsorted(starts, where, side="right") - 1
        order = np.argsort(owner, kind="stable")
        bounds = np.searchsorted(owner[order], np.arange(target.parts + 1))
        given = mapped._parts[k].numpy()
        return [
            (
                (where[order[bounds[j] : bounds[j + 1]]] - held[j][0]).astype(np.uint32),
                given[order[bounds[j] : bounds[j + 1]]],
            )
            for j in range(target.parts)
        ]

    pieces = each(dist, cut)
    received = _deliver(dist, target, pieces, mapped.dtype)
    plain = derived(sk, "plain", Scatter)

    def place(j: int) -> None:
        where, given = received[j]
        if where.size:
            part = result._parts[j]
            plain(Vector(given, device=part.device), Vector(where, device=part.device), out=cast(Vector, part))

    each(target, place)
    result._halo_ok = target.kind != "overlap"
    return result


def _deliver(
    source: Distribution, target: Distribution, pieces: dict[int, list[tuple[np.ndarray, np.ndarray]]], dtype: np.dtype
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Piece j of every source part to target part j: (positions, values), in source part order."""
    comm = source.comm
    mine = target.local()
    if comm.size == 1:
        return {
            j: (
                np.concatenate([pieces[k][j][0] for k in sorted(pieces)]),
                np.concatenate([pieces[k][j][1] for k in sorted(pieces)]),
            )
            for j in mine
        }
    outgoing: list[list[np.ndarray]] = [[] for _ in range(comm.size)]
    counts = {}
    for k in sorted(pieces):
        for j in range(target.parts):
            where, given = pieces[k][j]
            counts[(k, j)] = len(where)
            outgoing[target.owners[j]] += [where.view(np.uint8), np.ascontiguousarray(given).view(np.uint8)]
    every: dict[tuple[int, int], int] = {}
    for found in comm.allgather(counts):
        every.update(found)
    arrived = comm.alltoall([np.concatenate(o) if o else np.empty(0, np.uint8) for o in outgoing])
    result: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {j: ([], []) for j in mine}
    for rank in range(comm.size):
        data, at = arrived[rank], 0
        for k in (k for k in range(source.parts) if source.owners[k] == rank):
            for j in range(target.parts):
                if target.owners[j] != comm.rank:
                    continue
                n = every.get((k, j), 0)
                result[j][0].append(data[at : at + 4 * n].view(np.uint32))
                at += 4 * n
                result[j][1].append(data[at : at + n * dtype.itemsize].view(dtype))
                at += n * dtype.itemsize
    return {j: (np.concatenate(w), np.concatenate(g)) for j, (w, g) in result.items()}


# reductions and scans ------------------------------------------------------------------------


def _blocks_only(a: Distributed) -> Distributed:
    """``a`` without halo rows: an overlap distribution becomes a block one on the same devices."""
    if a.distribution.kind != "overlap":
        return a
    return a.redistributed(a.distribution.with_kind("block"))


def _combine(sk: Any, partials: list[Any], extras: list[Any], device: Any, out: Any) -> Any:
    """The parts' partial results reduced in part order with ``sk``'s operator."""
    combiner = derived(sk, "combiner", lambda: Reduce(sk.op.source, sk.identity))
    values = np.empty(len(partials), dtype=sk.dtype)
    for k, p in enumerate(partials):
        values[k] = p
    target = out.device if out is not None else device
    return combiner(Vector(values, device=target), *extras, out=out)


def _reduce(sk: Any, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a, extras = args[0], args[1:]
    out = kwargs.get("out")
    if not isinstance(a, Distributed):
        raise ShapeError(f"{sk.name}: an extra argument is distributed but the input is not; distribute the input")
    if isinstance(out, Distributed):
        raise ShapeError(f"{sk.name}: out is one element on one device, not a distributed container")
    a = _blocks_only(a)
    dist = a.distribution
    mapper = getattr(sk, "mapper", None)
    part_sk, shift = _shifted(sk, mapper)
    more = _Extras(sk, extras, dist, [mapper, sk.op])
    held = len(mapper.extras) if mapper is not None else 0
    ranges = dist.ranges(a.shape[0])
    mine = dist.local()[:1] if dist.kind == "copy" else dist.local()

    def work(k: int) -> Any:
        if k not in mine:
            return None
        given = more.part(k)
        tail = [_first_index(mapper, ranges[k][0], a.shape)] if shift else []
        part = a._parts[k]
        # into one element on the part's device: the parts only enqueue, and run at once
        partial = Vector.empty(1, sk.dtype, device=part.device)
        return call(part_sk, part, *given[:held], *tail, *given[held:], out=partial)

    on_devices = each(dist, work, waits=False)
    partials = {k: p.numpy()[0] if p is not None else None for k, p in on_devices.items()}
    more.done()
    if dist.kind == "copy":
        result = partials[mine[0]]
        if out is None:
            return result
        return _combine(sk, [result], list(extras[held:]), a.device, out)
    found: dict[int, Any] = {}
    for gathered in dist.comm.allgather({k: partials[k] for k in mine}):
        found.update(gathered)
    ordered = [found[k] for k in range(dist.parts)]
    return _combine(sk, ordered, list(extras[held:]), a._parts[mine[0]].device, out)


def _carry_source(op: UserFunction) -> str:
    t = op.return_type
    extras = "".join(f", {_declare(p)}" for p in op.extras)
    names = "".join(f", {p.name}" for p in op.extras)
    call = f"{op.signature.name}(parskel_before, x{names})"
    return f"{op.source}\n{t} parskel_carry({t} x, {t} parskel_before{extras}) {{ return {call}; }}\n"


def _scan(sk: Any, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a, extras = args[0], args[1:]
    if kwargs.get("out") is not None:
        raise ShapeError("Scan: out= is for containers on one device; a distributed scan returns a new container")
    if not isinstance(a, Distributed):
        raise ShapeError("Scan: an extra argument is distributed but the input is not; distribute the input")
    a = _blocks_only(a)
    dist = a.distribution
    more = _Extras(sk, extras, dist, [sk.op])

    def work(k: int) -> Any:
        return sk.enqueue(a._parts[k], tuple(more.part(k)))

    enqueued = each(dist, work, waits=False)  # the parts run at once; then their totals are read
    scanned = {k: (result, sk.total(result.device, buffer, offset)) for k, (result, buffer, offset) in enqueued.items()}
    more.done()
    parts = {k: result for k, (result, _) in scanned.items()}
    if dist.kind in ("copy", "single"):
        total = next(iter(scanned.values()))[1]
        return Distributed.from_parts(type(a), a.shape, sk.dtype, dist, parts), total
    found: dict[int, Any] = {}
    for gathered in dist.comm.allgather({k: total for k, (_, total) in scanned.items()}):
        found.update(gathered)
    totals = np.empty(dist.parts, dtype=sk.dtype)
    for k in range(dist.parts):
        totals[k] = found[k]
    first = a._parts[dist.local()[0]].device
    before_all = derived(sk, "carries", lambda: Scan(sk.op.source, sk.identity))
    carries, total = before_all(Vector(totals, device=first), *more.part(dist.local()[0]))
    before = np.asarray(carries)
    carry = derived(sk, "carry", lambda: Map(_carry_source(sk.op)))

    def shift(k: int) -> None:
        if k > 0 and parts[k].size:
            carry(parts[k], before[k], *more.part(k), out=parts[k])

    each(dist, shift, waits=False)
    return Distributed.from_parts(type(a), a.shape, sk.dtype, dist, parts), total


# neighbourhoods and pairs --------------------------------------------------------------------


def _map_overlap(sk: Any, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a, extras = args[0], args[1:]
    if kwargs.get("out") is not None:
        raise ShapeError("MapOverlap: out= is for containers on one device; a distributed call returns a new container")
    if not isinstance(a, Distributed):
        raise ShapeError("MapOverlap: an extra argument is distributed but the input is not; distribute the input")
    dist = a.distribution
    part_sk, shift = _shifted(sk, sk.fn)
    more = _Extras(sk, extras, dist, [sk.fn])
    rows = a.shape[0]
    if dist.kind in ("copy", "single") or (
        dist.kind == "overlap" and dist.halo >= sk.radii(a.ndim)[0] and sk.boundary != "wrap"
    ):
        a.refresh_halos()
        stored = dist.stored(rows)

        def work(k: int) -> Any:
            tail = [_first_index(sk.fn, stored[k][0], a.shape)] if shift else []
            return call(part_sk, a._parts[k], *more.part(k), *tail)

        parts = each(dist, work, waits=False)
        more.done()
        return Distributed.from_parts(type(a), a.shape, sk._out_dtype, dist, parts, halo_ok=dist.kind != "overlap")
    wide = extended(a, sk.radii(a.ndim)[0], sk.boundary == "wrap")
    ranges = dist.ranges(rows)
    target = dist.with_kind("block")

    def work_wide(k: int) -> Any:
        part, first = wide[k]
        tail = [_first_index(sk.fn, first, a.shape)] if shift else []
        result = call(part_sk, part, *more.part(k), *tail)
        lo, hi = ranges[k]
        if result.shape[0] == hi - lo:
            return result
        kept = type(result).empty((hi - lo, *a.shape[1:]), result.dtype, device=result.device)
        row = result.nbytes // max(result.shape[0], 1)
        result.device.copy(kept.output_buffer(), result.to_device(), kept.nbytes, src_offset=(lo - first) * row)
        kept.mark_device_written()
        return kept

    parts = each(dist, work_wide, waits=False)
    more.done()
    return Distributed.from_parts(type(a), a.shape, sk._out_dtype, target, parts)


def _all_pairs(sk: Any, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    a, b, extras = args[0], args[1], args[2:]
    if kwargs.get("out") is not None:
        raise ShapeError("AllPairs: out= is for matrices on one device; a distributed call returns a new Matrix")
    if not isinstance(a, Distributed):
        if not isinstance(b, Distributed):
            raise ShapeError("AllPairs: an extra argument is distributed but A and B are not; distribute A")
        a = aligned(a, b.distribution.with_kind("block"), "AllPairs: A")
    a = _blocks_only(a)
    dist = a.distribution
    if not isinstance(b, Container) or b.ndim != 2 or a.ndim != 2 or a.shape[1] != b.shape[0]:
        shapes = (a.shape, getattr(b, "shape", None))
        raise ShapeError(f"AllPairs: A {shapes[0]} and B {shapes[1]} must be matrices with A's columns == B's rows")
    whole = aligned(b, dist.with_kind("copy"), "AllPairs: B")
    part_sk, shift = _shifted(sk, sk.zip)
    more = _Extras(sk, extras, dist, [sk.zip, sk.op])
    held = len(sk.zip.extras)
    ranges = dist.ranges(a.shape[0])

    def work(k: int) -> Any:
        given = more.part(k)
        tail = [np.uint32(ranges[k][0])] if shift else []
        return call(part_sk, a._parts[k], whole._parts[k], *given[:held], *tail, *given[held:])

    parts = each(dist, work, waits=False)
    more.done()
    return Distributed.from_parts(type(a), (a.shape[0], b.shape[1]), sk.dtype, dist, parts)


_HANDLERS: list[tuple[type, Callable[..., Any]]] = [
    (MapOverlap, _map_overlap),
    (MapArray, _elementwise),
    (Generate, _elementwise),
    (Zip, _elementwise),
    (Map, _elementwise),
    (MapReduce, _reduce),
    (Reduce, _reduce),
    (Scan, _scan),
    (AllPairs, _all_pairs),
    (Gather, _gather),
    (Scatter, _gather),
]


def merge_copies(container: Distributed) -> dict[int, Container]:
    """One copy made of all of ``container``'s copies, combined in part order with the
    distribution's ``combine``, on every device."""
    dist = container.distribution
    combine = derived_combine(dist.combine)
    local = dist.local()
    first = container._parts[local[0]]
    copies: list[np.ndarray] = []
    for gathered in dist.comm.allgather([container._parts[k].numpy() for k in local]):
        copies += gathered
    plain = type(first)
    merged: Container = plain(copies[0], device=first.device)
    for other in copies[1:]:
        result = combine(merged, plain(other, device=first.device))
        assert isinstance(result, Container)
        merged = result
    whole = merged.numpy()
    return {k: plain(whole, device=container._parts[k].device) for k in local}


_combines: dict[Any, Zip] = {}


def derived_combine(source: Any) -> Zip:
    if source is None:
        raise UserFunctionError("a copy distribution merges written copies with its combine function; none was given")
    found = _combines.get(source)
    if found is None:
        found = _combines[source] = Zip(source)
    return found
