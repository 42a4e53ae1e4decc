"""The conclusions of a run: per family, device and size, parskel's default variant (what
``parskel.sort`` and the others run there) and its best variant, against the others.

The CPU baseline of a size is the fastest compiled seed baseline measured there; the best peer
is the fastest peer of the same run (NumPy, PyOpenCL, CuPy, PyTorch) on any device. A row whose
figures include an unstable measurement (see :data:`parskel.bench.harness.UNSTABLE`) says so.
Where the device has a profile (``parskel probe``), the best variant's figure is also a
fraction of the device's measured peak, end to end and for its kernels alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..probe import Profile
from .harness import Result
from .roofline import of_peak


@dataclass(frozen=True)
class Row:
    """The best parskel variant of ``family`` on ``device`` at ``size``, against the others."""

    family: str
    device: str
    size: int
    best: str
    seconds: float
    figure: float | None
    metric: str
    baseline: str | None
    baseline_seconds: float | None
    peer: str | None
    peer_seconds: float | None
    default: str | None = None
    default_seconds: float | None = None
    unstable: bool = False
    of_peak: float | None = None  # end to end, a fraction of the measured peak
    kernel_of_peak: float | None = None  # the kernels alone

    @property
    def vs_baseline(self) -> float | None:
        """How many times faster than the CPU baseline (above 1: parskel wins)."""
        return self.baseline_seconds / self.seconds if self.baseline_seconds else None

    @property
    def vs_peer(self) -> float | None:
        """How many times faster than the best peer (above 1: parskel wins)."""
        return self.peer_seconds / self.seconds if self.peer_seconds else None

    @property
    def default_vs_peer(self) -> float | None:
        """How many times faster the default variant is than the best peer."""
        return self.peer_seconds / self.default_seconds if self.peer_seconds and self.default_seconds else None

    def as_dict(self) -> dict[str, Any]:
        return dict(
            asdict(self), vs_baseline=self.vs_baseline, vs_peer=self.vs_peer, default_vs_peer=self.default_vs_peer
        )


def fastest(results: Iterable[Result]) -> Result | None:
    """The fastest successful result, or None."""
    ok = [r for r in results if r.status == "ok" and r.e2e is not None]
    return min(ok, key=lambda r: r.e2e or 0.0) if ok else None


def speedup_over_baseline(result: Result, results: Sequence[Result]) -> float | None:
    """The CPU baseline's time at ``result``'s size over ``result``'s time."""
    base = fastest(r for r in results if r.kind == "baseline" and r.family == result.family and r.size == result.size)
    if base is None or not result.e2e:
        return None
    return (base.e2e or 0.0) / result.e2e


def summarize(results: Sequence[Result], profiles: Mapping[str, Profile] | None = None) -> list[Row]:
    """One row per family, device and size at which some parskel variant succeeded; with the
    devices' ``profiles`` (by device id), the fractions of their measured peaks."""
    rows: list[Row] = []
    keys = dict.fromkeys((r.family, r.where, r.size) for r in results if r.kind == "variant")
    for family, device, size in keys:
        here = [r for r in results if r.family == family and r.size == size]
        best = fastest(r for r in here if r.kind == "variant" and r.where == device)
        if best is None:
            continue
        base = fastest(r for r in here if r.kind == "baseline")
        peer = fastest(r for r in here if r.kind == "peer")
        default = fastest(r for r in here if r.kind == "variant" and r.where == device and r.default)
        profile = (profiles or {}).get(device)
        rows.append(
            Row(
                family=family,
                device=device,
                size=size,
                best=best.subject,
                seconds=best.e2e or 0.0,
                figure=best.figure,
                metric=best.metric,
                baseline=base.subject if base else None,
                baseline_seconds=base.e2e if base else None,
                peer=f"{peer.subject}@{peer.where}" if peer else None,
                peer_seconds=peer.e2e if peer else None,
                default=default.subject if default else None,
                default_seconds=default.e2e if default else None,
                unstable=any(r is not None and r.unstable for r in (best, base, peer, default)),
                of_peak=of_peak(family, size, best.e2e, profile),
                kernel_of_peak=of_peak(family, size, best.kernel, profile),
            )
        )
    return rows


def failures(results: Sequence[Result]) -> list[Result]:
    """Results that were wrong or raised."""
    return [r for r in results if r.status in ("wrong", "error")]
