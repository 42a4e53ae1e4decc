"""What a probe measures: one :class:`Figure` per characteristic and setting, and the sections
they belong to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

# the sections of a profile, in the order they are measured and shown
SECTIONS: dict[str, str] = {
    "instructions": "instruction throughput: dependent and independent chains (seed 003)",
    "global": "global-memory bandwidth: copy, read, write with seed 003's mappings",
    "stride": "global-memory bandwidth against the distance between neighbouring work-items",
    "local": "local-memory bandwidth, with and without bank conflicts",
    "launch": "the cost of launching an empty kernel",
    "work-group": "one kernel's time against its work-group size",
    "transfers": "host-device transfers, pageable and pinned memory",
}


# params that are sizes rather than settings
SIZES = ("bytes", "work-items", "launches")


def number(value: float) -> str:
    """A figure with four significant digits, large ones whole and without an exponent.

    >>> number(66908.16), number(4.5678), number(0.0123456)
    ('66908', '4.568', '0.01235')
    """
    return f"{value:.0f}" if abs(value) >= 1e4 else f"{value:.4g}"


@dataclass(frozen=True)
class Figure:
    """One measured figure: ``value`` in ``unit`` (GFLOP/s, Gop/s, GB/s, us), from the median
    ``seconds`` of the timed command; ``params`` say what was varied; ``peak`` names the peak
    it is compared with ("fp32", "fp64", "bandwidth") or is empty."""

    section: str
    name: str
    value: float
    unit: str
    seconds: float
    params: dict[str, Any] = field(default_factory=dict)
    peak: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Figure:
        return cls(**data)

    def setting(self) -> str:
        """The params as ``key value`` pairs for tables, without the sizes (the same across a
        section, and chosen to make the kernel long enough to time).

        >>> Figure("instructions", "fp32 fma", 1.0, "GFLOP/s", 1.0, {"chains": 4, "work-items": 64}).setting()
        'chains 4'
        """
        return ", ".join(f"{k} {v}" for k, v in self.params.items() if k not in SIZES)

    def text(self) -> str:
        """The figure with its unit, for tables."""
        return f"{number(self.value)} {self.unit}"


@dataclass(frozen=True)
class Step:
    """One unit of a probe's work, for the progress display: ``run()`` measures and returns
    its figures (building its kernels first)."""

    section: str
    label: str
    run: Callable[[], list[Figure]]
