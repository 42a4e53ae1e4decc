"""Theoretical peaks of a device, derived from what it reports, and published figures of a few
devices that report too little.

A peak is derived only from reported quantities: compute units x clock x lanes x 2 for fused
multiply-adds, and 2 x memory clock x bus width for memory (double data rate). Where the device
does not report enough, the peak says why instead of guessing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..runtime import DeviceInfo
from .figures import number

KINDS = {"fp32": "GFLOP/s", "fp64": "GFLOP/s", "bandwidth": "GB/s"}

# Results per clock per multiprocessor of 32- and 64-bit floating-point add, multiply and
# multiply-add, by compute capability: the arithmetic-instruction throughput table of NVIDIA's
# CUDA C++ Programming Guide.
NVIDIA_LANES: dict[str, tuple[int, int]] = {
    "6.0": (64, 32),
    "6.1": (128, 4),
    "7.0": (64, 32),
    "7.5": (64, 2),
    "8.0": (64, 32),
    "8.6": (128, 2),
    "8.9": (128, 2),
    "9.0": (128, 64),
}

# Published peaks (non-tensor FP32 and FP64, memory bandwidth) of devices whose OpenCL driver
# does not report enough to derive them: NVIDIA's data sheets, by the exact device name.
PUBLISHED: dict[str, dict[str, float]] = {
    "NVIDIA H200": {"fp32": 67_000.0, "fp64": 34_000.0, "bandwidth": 4_800.0},
    "NVIDIA H100 80GB HBM3": {"fp32": 67_000.0, "fp64": 34_000.0, "bandwidth": 3_350.0},
    "NVIDIA H100 PCIe": {"fp32": 51_000.0, "fp64": 26_000.0, "bandwidth": 2_000.0},
}
PUBLISHED_SOURCE = "published: the data sheet's figure, from parskel.probe.peaks.PUBLISHED"


@dataclass(frozen=True)
class Peak:
    """The theoretical peak of one ``kind`` ("fp32", "fp64", "bandwidth") in GFLOP/s or GB/s.

    ``derived`` is computed from what the device reports (``basis`` says how, or why it could
    not be); ``published`` is the data sheet's figure where parskel knows the device.
    """

    kind: str
    derived: float | None
    basis: str
    published: float | None = None

    @property
    def unit(self) -> str:
        return KINDS[self.kind]

    @property
    def value(self) -> float | None:
        """The peak that fractions are taken of: the derived one, else the published one."""
        return self.derived if self.derived is not None else self.published

    def short(self) -> str:
        """The peak in a table cell: derived, published (marked), or unknown.

        >>> Peak("fp32", None, "not reported", 67000.0).short(), Peak("fp64", None, "no fp64").short()
        ('67000 GFLOP/s (published)', 'unknown')
        """
        if self.derived is not None:
            return f"{number(self.derived)} {self.unit}"
        if self.published is not None:
            return f"{number(self.published)} {self.unit} (published)"
        return "unknown"

    def describe(self) -> str:
        """The peak in words, with its origin.

        >>> Peak("bandwidth", None, "not reported", 4800.0).describe()
        "4800 GB/s (published: the data sheet's figure, from parskel.probe.peaks.PUBLISHED; not derived: not reported)"
        """
        if self.derived is not None:
            text = f"{number(self.derived)} {self.unit} ({self.basis})"
            if self.published is not None:
                text += f"; published {number(self.published)} {self.unit}"
            return text
        if self.published is not None:
            return f"{number(self.published)} {self.unit} ({PUBLISHED_SOURCE}; not derived: {self.basis})"
        return f"unknown: {self.basis}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def peaks(info: DeviceInfo) -> dict[str, Peak]:
    """The fp32 and fp64 multiply-add peaks and the memory bandwidth peak of a device.

    >>> from parskel.runtime import DeviceInfo
    >>> h200 = DeviceInfo("cuda:0", "cuda", "NVIDIA H200", "NVIDIA", "gpu", "CUDA", "", "", "", 132, 1980,
    ...                   0, 0, 0, 1024, (1024,), {}, True, compute_capability="9.0",
    ...                   memory_clock_mhz=3201, memory_bus_bits=6144)
    >>> round(peaks(h200)["fp32"].derived), round(peaks(h200)["bandwidth"].derived)
    (66908, 4917)
    """
    known = PUBLISHED.get(info.name.strip(), {})
    fp32, fp64 = _flops(info)
    return {
        "fp32": Peak("fp32", *fp32, published=known.get("fp32")),
        "fp64": Peak("fp64", *fp64, published=known.get("fp64")),
        "bandwidth": Peak("bandwidth", *_bandwidth(info), published=known.get("bandwidth")),
    }


Derived = tuple[float | None, str]  # a derived peak, or None, and how (or why not)


def _flops(info: DeviceInfo) -> tuple[Derived, Derived]:
    """(derived, basis) for fp32 and fp64 multiply-adds."""
    units, mhz = info.compute_units, info.clock_mhz
    if not (units and mhz):
        why = "the device reports no clock" if not mhz else "the device reports no compute units"
        return (None, why), (None, why)
    if info.compute_capability:
        lanes = NVIDIA_LANES.get(info.compute_capability)
        if lanes is None:
            why = f"lanes per multiprocessor unknown to parskel for compute capability {info.compute_capability}"
            return (None, why), (None, why)
        out: list[Derived] = []
        for width, name in zip(lanes, ("FP32", "FP64")):
            basis = f"{units} multiprocessors x {mhz} MHz x {width} {name} lanes x 2 (fma)"
            out.append((units * mhz * 1e-3 * width * 2.0, basis))
        return out[0], out[1]
    if info.type == "cpu":
        found: list[Derived] = []
        for ctype in ("float", "double"):
            width = info.preferred_vector_widths.get(ctype, 0)
            if not width:
                found.append((None, f"the device reports no {ctype} vector width"))
                continue
            basis = (
                f"{units} compute units x {mhz} MHz x {width} {ctype} lanes x 2 (fma), assuming one "
                "vector fma unit per compute unit: a CPU reports neither its fma units per core nor "
                "whether its compute units are hardware threads"
            )
            found.append((units * mhz * 1e-3 * width * 2.0, basis))
        return found[0], found[1]
    why = "the device does not report its lanes per compute unit"
    if info.type == "gpu" and info.vendor.upper().startswith("NVIDIA"):
        why = "the driver does not report the compute capability (cl_nv_device_attribute_query)"
    fp64: Derived = (None, why if info.fp64 else "the device has no fp64")
    return (None, why), fp64


def _bandwidth(info: DeviceInfo) -> Derived:
    if info.memory_clock_mhz and info.memory_bus_bits:
        basis = f"2 x {info.memory_clock_mhz} MHz memory clock x {info.memory_bus_bits}-bit bus (double data rate)"
        return 2.0 * info.memory_clock_mhz * 1e6 * info.memory_bus_bits / 8 / 1e9, basis
    if info.backend == "opencl":
        return None, "OpenCL reports neither the memory clock nor the bus width"
    return None, f"the {info.backend} backend reports no memory clock or bus width"
