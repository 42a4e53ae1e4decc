"""The subjects of the ``e2e`` group of ``parskel bench`` (its cases are in :mod:`.cases`): from
NumPy array to NumPy array, the way most users call.

parskel's public calls on NumPy arrays (``Map`` and ``Reduce`` skeletons, ``parskel.sort``,
``scan``, ``matmul``), which on a GPU go through pinned staging with transfers overlapped with
the kernels (:mod:`parskel.pipeline`), are timed against the same operation in NumPy, in CuPy
(``cupy.asarray``, the operation, ``cupy.asnumpy``) and in PyTorch (``torch.from_numpy(x).cuda()``,
the operation, ``.cpu().numpy()``). parskel's time is split by device events into uploads,
kernels and downloads; where they overlap, the wall time is below their sum.

The link between host and device is measured in the same run by ``parskel probe``'s transfer
step (pageable and pinned memory, each way), and :func:`conclusions` puts each parskel result
against it and against its peers.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..pipeline import watch
from ..probe.timing import Settings
from ..probe.transfers import measure_transfers
from ..runtime import Device, Timing
from . import peers as peer_lib
from .cases import CASES, Inputs, Subject
from .subjects import unrecorded

if TYPE_CHECKING:
    from .harness import Result

#: The family whose peers an e2e family borrows.
PEER_FAMILIES = {
    "e2e.map": "skeletons.map",
    "e2e.reduce": "reduce",
    "e2e.sort": "sort",
    "e2e.scan": "scan",
    "e2e.matmul": "matmul",
}
#: Families whose figure is the input streamed through the link, compared with pinned copies:
#: Map's input goes up while its result comes down (both directions at once), Reduce's goes up.
STREAMED = {"e2e.map": ("upload", "download"), "e2e.reduce": ("upload",)}

_SQUARE = "float f(float x) { return x * x; }"
_ADD = "float add(float a, float b) { return a + b; }"

# the link of each device measured in this process: figure name ("upload, pinned") -> GB/s
_links: dict[str, dict[str, float]] = {}
# the host's seconds copying into and out of pinned memory in each parskel call, by (family,
# subject, device, size): device events do not see them
_host_copies: dict[tuple[str, str, str, int], list[float]] = {}


def subjects(family: str, devices: Sequence[Device], chosen: set[str], notes: list[str]) -> list[Subject]:
    """parskel's call on each device (for the streamed families on a device that does not share
    host memory, also from a page-locked copy of the input), then NumPy's, CuPy's and PyTorch's;
    the link of each device (not sharing host memory) is measured first, into ``notes``."""
    for device in devices:
        _measure_link(device, notes)
    found = [_parskel(family, device) for device in devices]
    found += [_parskel(family, device, locked=True) for device in devices if _locks(family, device)]
    base = PEER_FAMILIES[family]
    peers = peer_lib.host_subjects(base, chosen & {"numpy"}, notes)
    peers += peer_lib.gpu_peers(base, chosen & {"cupy", "torch"}, notes)
    return found + [dataclasses.replace(peer, family=family) for peer in peers]


#: The subject that calls on a page-locked copy of the input (see :func:`_parskel`).
LOCKED = "parskel_page_locked"


def _locks(family: str, device: Device) -> bool:
    """Whether ``family`` on ``device`` is also timed from page-locked memory: a streamed
    family (`Map`, `Reduce`) on a device that copies host arrays over a link."""
    return family in STREAMED and not device.shares_host_memory


def _parskel(family: str, device: Device, *, locked: bool = False) -> Subject:
    """The public call, its time split by the device's events. With ``locked``, the same call on
    a copy of the input in the device's page-locked memory (``Device.empty_pinned``), made once
    per input outside the timing: what the call reaches when the host copies nothing."""
    import parskel as ps

    square, total = ps.Map(_SQUARE), ps.Reduce(_ADD, identity=0)
    calls: dict[str, Callable[[Inputs], Any]] = {
        "e2e.map": lambda i: square(i[0]),
        "e2e.reduce": lambda i: total(i[0]),
        "e2e.sort": lambda i: ps.sort(i[0]),
        "e2e.scan": lambda i: ps.scan(i[0]),
        "e2e.matmul": lambda i: ps.matmul(i[0], i[1]),
    }
    call = calls[family]
    name = LOCKED if locked else "parskel"
    if locked:
        call = _on_page_locked(device, call)

    def run(inputs: Inputs) -> tuple[Any, Timing]:
        with ps.using(device), watch() as runs, device.record() as rec:
            result = call(inputs)
        key = (family, name, device.id, int(inputs[0].shape[0]))
        _host_copies.setdefault(key, []).append(sum(r.host_copies for r in runs))
        return result, rec.timing

    plain = unrecorded(device, call)
    if locked:
        return Subject(family, name, "variant", device.id, run, params="input in page-locked memory", plain=plain)
    return Subject(family, name, "variant", device.id, run, default_at=lambda size: True, plain=plain)


def _on_page_locked(device: Device, call: Callable[[Inputs], Any]) -> Callable[[Inputs], Any]:
    """``call`` on a page-locked copy of its first input, made when a new input comes (the last
    one is kept, with the input it copies)."""
    kept: list[Any] = [None, None]  # the input, its page-locked copy

    def on_copy(inputs: Inputs) -> Any:
        if kept[0] is not inputs[0]:
            kept[:] = [None, None]  # the old copy goes before the new one is made
            copy = device.empty_pinned(inputs[0].shape, inputs[0].dtype)
            copy[...] = inputs[0]
            kept[:] = [inputs[0], copy]
        return call((kept[1], *inputs[1:]))

    return on_copy


def _measure_link(device: Device, notes: list[str]) -> None:
    if device.id in _links or device.shares_host_memory:
        return
    settings = Settings.preset(quick=False)
    figures = measure_transfers(device, settings, "pageable") + measure_transfers(device, settings, "pinned")
    _links[device.id] = {f.name: f.value for f in figures}
    shown = ", ".join(f"{f.name} {f.value:.1f} GB/s" for f in figures)
    size = figures[0].params["bytes"] >> 20 if figures else 0
    notes.append(f"link of {device.id} ({size} MiB blocking copies, parskel probe's transfer step): {shown}")


def conclusions(results: Sequence[Result]) -> list[str]:
    """One line per parskel e2e result: the time split and whether it overlapped, the input's
    rate against the pinned link (Map, Reduce), and the ratio to CuPy and PyTorch."""
    lines = []
    for r in results:
        if not (r.family.startswith("e2e.") and r.kind == "variant" and r.status == "ok" and r.e2e):
            continue
        case = CASES[r.family]
        label = f"{r.size}" if case.size_label != "elements" else f"2^{r.size.bit_length() - 1}"
        source = ", from page-locked memory" if r.subject == LOCKED else ""
        text = f"{r.family} {label} on {r.where}{source}: {r.e2e * 1e3:.2f} ms end to end"
        if r.upload is not None and r.kernel is not None and r.download is not None:
            copied = statistics.median(_host_copies.get((r.family, r.subject, r.where, r.size)) or [0.0])
            parts = [("upload", r.upload), ("kernels", r.kernel), ("download", r.download)]
            if copied:
                parts.append(("host copies to and from pinned memory", copied))
            busy = sum(seconds for _, seconds in parts)
            how = "overlapped: the wall time is below" if r.e2e < busy else "not overlapped: the wall time is over"
            shown = " + ".join(f"{name} {seconds * 1e3:.2f}" for name, seconds in parts)
            text += f" ({shown} = {busy * 1e3:.2f} ms; {how} the sum)"
        link = _links.get(r.where, {})
        pinned = [link.get(f"{direction}, pinned") for direction in STREAMED.get(r.family, ())]
        if pinned and all(pinned):
            rate = 4.0 * r.size / r.e2e / 1e9
            text += f"; input at {rate:.1f} GB/s, {rate / min(p for p in pinned if p):.0%} of the pinned link"
        lines.append(text + against_gpu_peers(r, results, 2))
    return lines


def against_gpu_peers(result: Result, results: Sequence[Result], decimals: int) -> str:
    """``"; 1.09x cupy_sort (6.757 ms); ..."``: ``result``'s call against the first CuPy and
    PyTorch results of its family and size that ran, milliseconds to ``decimals`` places."""
    text = ""
    for peer in ("cupy", "torch"):
        theirs = [p for p in results if (p.family, p.size) == (result.family, result.size) and p.where.startswith(peer)]
        if theirs and theirs[0].status == "ok" and theirs[0].e2e and result.e2e:
            text += f"; {theirs[0].e2e / result.e2e:.2f}x {theirs[0].subject} ({theirs[0].e2e * 1e3:.{decimals}f} ms)"
    return text
