"""What kernels that go beyond the portable subset need to know of a device.

- Forward progress between work-groups. A decoupled look-back waits for earlier work-groups
  to publish. That is safe where a started work-group keeps running however long others poll:
  CUDA, and NVIDIA's OpenCL driver on the same GPUs. Everywhere else (PoCL, whose work-groups
  may run one after another on a thread; other OpenCL drivers, which promise nothing) kernels
  are built with the decoupled fallback: a group that has polled a silent predecessor ``SPINS``
  times computes that predecessor's contribution itself (``FALLBACK 1``).
- Warp operations: CUDA has the intrinsics; NVIDIA's OpenCL gets them as inline PTX
  (``PS_PTX``, see ``kernels/common/subgroup.h``); other devices use local memory.
- Alignment: vector loads need buffers aligned to the vector; a device array borrowed from CuPy
  or PyTorch may start anywhere (a slice), and is then read element by element.
- Occupancy: how many work-groups to launch so that every compute unit is busy, and how a
  grid-stride loop is laid out.
- A kernel's own work-group limit, known once it is built: a work-group size tuned through one
  compiler (CUDA's 1024) may exceed what another builds the kernel for (NVIDIA's OpenCL: 256).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import BuildError
from .base import Buffer, Device, Kernel, Program
from .geometry import round_down_to_power_of_two
from .sources import MAX_REGISTERS

#: polls of a silent predecessor before the decoupled fallback computes its part itself
SPINS = 64
#: work-items a GPU compute unit keeps resident (NVIDIA: 2048 threads per SM)
RESIDENT_ITEMS = 2048
#: 32-bit registers of an NVIDIA SM (every generation since Kepler)
REGISTERS_PER_UNIT = 1 << 16
#: work-groups per compute unit on CPUs (PoCL runs a work-group at a time per thread)
CPU_GROUPS_PER_UNIT = 4

_NO_PTX: set[str] = set()


def is_nvidia_gpu(device: Device) -> bool:
    return "nvidia" in device.info.vendor.lower() and device.type == "gpu"


def forward_progress(device: Device) -> bool:
    """Whether a work-group of ``device`` may wait for an earlier one to publish (see above)."""
    return device.backend == "cuda" or is_nvidia_gpu(device)


def lookback_defines(device: Device, progress: int = 0, itemsize: int = 0) -> dict[str, int]:
    """``FALLBACK`` and ``SPINS`` for a look-back kernel: ``progress`` 0 decides by device,
    1 polls until published, 2 takes the decoupled fallback. And ``PACKED``: where the
    look-back polls, 1 (2) where a scan's tiles may keep their status and 4-byte (8-byte) value
    in one word of 8 (16) bytes (the kernel does so where the device has warps too, see
    ``scan/single_pass.h``), whose buffer must then start zeroed. And ``ORDERED``: 1 where the
    look-back polls on a device that starts work-groups in the order of their numbers (NVIDIA's
    GPUs; CUB's scan takes its tiles the same way), so that a tile may be the group's number
    rather than the next count of an atomic counter. A device told to poll without that promise
    (``progress=1`` on PoCL) keeps the counter: its tiles then start in order whatever order its
    work-groups run in."""
    spin = forward_progress(device) if progress == 0 else progress == 1
    ordered = spin and forward_progress(device)
    packed = {4: 1, 8: 2}.get(itemsize, 0) if spin else 0
    return {"FALLBACK": int(not spin), "SPINS": SPINS, "PACKED": packed, "ORDERED": int(ordered)}


def register_bound(device: Device, work_group: int, resident: int) -> dict[str, int]:
    """The define that lets ``resident`` work-items of a kernel in groups of ``work_group`` share
    an SM by their registers (64K an SM, in steps of 8 a work-item; at most
    :data:`RESIDENT_ITEMS` work-items, all an SM holds), on NVIDIA's OpenCL, which takes no
    launch bounds (see :data:`~.sources.MAX_REGISTERS`); empty elsewhere.

    >>> from types import SimpleNamespace as NS
    >>> nvidia = NS(backend="opencl", type="gpu", info=NS(vendor="NVIDIA Corporation"))
    >>> register_bound(nvidia, 256, 768), register_bound(NS(backend="cuda"), 256, 768)
    ({'PS_MAX_REGISTERS': 80}, {})
    >>> register_bound(nvidia, 512, 5 * 512)
    {'PS_MAX_REGISTERS': 32}
    """
    if not (device.backend == "opencl" and is_nvidia_gpu(device)):
        return {}
    groups = max(min(resident, RESIDENT_ITEMS) // work_group, 1)
    return {MAX_REGISTERS: min(255, REGISTERS_PER_UNIT // (groups * work_group) // 8 * 8)}


def has_warp_ops(device: Device) -> bool:
    """Whether ``device``'s kernels get warp operations (``PS_WARP_OPS`` in ``common/subgroup.h``):
    CUDA, and NVIDIA's OpenCL through inline PTX unless its driver has refused it."""
    return device.backend == "cuda" or _takes_ptx(device)


def _takes_ptx(device: Device) -> bool:
    return device.backend == "opencl" and is_nvidia_gpu(device) and device.id not in _NO_PTX


def with_warp_ops(device: Device, build: Callable[[dict[str, int]], Program]) -> Program:
    """``build(defines)`` with warp operations where the device has them: ``{"PS_PTX": 1}`` on
    NVIDIA's OpenCL (a driver that refuses the PTX gets the local-memory build instead)."""
    if _takes_ptx(device):
        try:
            return build({"PS_PTX": 1})
        except BuildError:
            _NO_PTX.add(device.id)
    return build({})


def aligned(buffer: Buffer, nbytes: int) -> bool:
    """Whether ``buffer`` starts at a multiple of ``nbytes``: a host array's memory (a CPU
    device's buffer) or a CUDA pointer may start anywhere; buffers an OpenCL device allocates
    are aligned to its base address alignment."""
    if buffer.host is not None:
        return int(buffer.host.ctypes.data) % nbytes == 0
    pointer: Any = getattr(buffer.handle, "ptr", 0)
    return int(pointer) % nbytes == 0


def groups_per_unit(device: Device, group: int) -> int:
    """Work-groups of ``group`` work-items to launch per compute unit to keep it busy."""
    if device.type == "cpu":
        return CPU_GROUPS_PER_UNIT
    return max(1, RESIDENT_ITEMS // group)


def grid_stride_groups(device: Device, n: int, group: int) -> int:
    """Work-groups for a grid-stride loop over ``n`` elements: enough to fill a GPU, whose
    work-items then take several elements each; one element per work-item on a CPU, where
    PoCL runs each work-item's whole loop before the next one's, so strides would cost the
    locality and the vectorisation across work-items."""
    groups = -(-n // group)
    if device.type == "cpu":
        return groups
    return min(groups, device.info.compute_units * groups_per_unit(device, group))


#: Chained scans on CPUs (``chained_cpu``, and the Scan skeleton's) scan a tile in one pass where
#: the tile before it has published its prefix, on devices of at most this many compute units. A
#: tile scanned so publishes its prefix only once it is scanned, so the work-items after it wait
#: longer: on 2 cores (AMD Zen 5, PoCL 3.1) an exclusive scan of 2^22 int32 took 0.87 ms in one
#: pass against 1.24-1.32 ms in two, on 16 cores (PoCL 5.0) 2^24 and 2^26 took 4-9 % longer in
#: one pass (2026-11-26).
ONE_PASS_UNITS = 4


def one_pass(device: Device) -> bool:
    """Whether a chained scan on ``device`` scans a tile in one pass where its prefix is known
    when the tile is taken (see :data:`ONE_PASS_UNITS`).

    >>> class Info: compute_units = 2
    >>> class Dev: info = Info()
    >>> one_pass(Dev())
    True
    """
    return device.info.compute_units <= ONE_PASS_UNITS


def stream_stores(device: Device, nbytes: int) -> bool:
    """Whether a kernel shaped for CPUs that reads ``nbytes`` and writes as many should write
    past the cache (non-temporal stores): on a CPU device whose last-level cache the two do not
    fit together. The output's lines are then not read in before they are written. On 2 cores
    (AMD Zen 5, 32 MiB of L3, PoCL 3.1) ``chained_cpu`` scanned 2^24 int32 in 3.2-3.6 ms so
    against 3.9-4.5 ms, and 2^26 in 12.7-13.0 against 15.2-16.1 ms, into results from the host
    pool whose pages were mapped before (2026-11-26).

    >>> class Info: cache_bytes = 32 << 20
    >>> class Dev: type = "cpu"; info = Info()
    >>> stream_stores(Dev(), 4 << 20), stream_stores(Dev(), 16 << 20)
    (False, True)
    """
    cache = device.info.cache_bytes
    return device.type == "cpu" and cache > 0 and 2 * nbytes >= cache


def cpu_runs(device: Device, n: int, groups_per_cu: int, min_run: int, multiple: int = 1) -> tuple[int, int]:
    """For work shaped for CPUs (a few work-groups of one work-item, each walking a contiguous
    run front to back): the number of work-groups for ``n`` elements (``n`` >= 1) on ``device``,
    ``groups_per_cu`` per compute unit but runs of at least ``min_run``, and the elements each
    one owns: a multiple of ``multiple``; the last run is shorter.

    >>> class Info: compute_units = 2
    >>> class Dev: info = Info()
    >>> cpu_runs(Dev(), 100_000, 4, 4096, 16)    # 8 runs of 12512 (the last 12416)
    (8, 12512)
    >>> cpu_runs(Dev(), 5000, 4, 4096, 16)       # too short for 8 runs of 4096
    (2, 2512)
    """
    groups = max(1, min(device.info.compute_units * groups_per_cu, -(-n // min_run)))
    per_group = -(-n // groups)
    chunk = -(-per_group // multiple) * multiple
    return -(-n // chunk), chunk


def group_within(group: int, *kernels: Kernel) -> int:
    """``group`` work-items, or the largest power of two that every one of ``kernels`` runs,
    if that is fewer: for kernels whose work-group size is a launch choice only.

    >>> class K: max_work_group_size = 256
    >>> group_within(1024, K()), group_within(128, K())
    (256, 128)
    """
    return min(group, round_down_to_power_of_two(min(k.max_work_group_size for k in kernels)))


def built_within(group: int, build: Callable[[int], Kernel], least: int = 64) -> tuple[int, Kernel]:
    """The kernel ``build(group)`` makes for work-groups of ``group``, built again for half as
    many while it runs fewer (but not below ``least``): for kernels whose work-group size is
    built in (local arrays, tiles of the group's size). The size and the kernel.

    >>> class K:
    ...     def __init__(self, group): self.max_work_group_size = 256
    >>> group, kernel = built_within(1024, K)
    >>> group
    256
    """
    kernel = build(group)
    while kernel.max_work_group_size < group and group > least:
        group //= 2
        kernel = build(group)
    return group, kernel
