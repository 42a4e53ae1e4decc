"""What the single-pass GPU variants (onesweep sort, single-pass scan) need to know of a device.

- Forward progress between work-groups. A decoupled look-back waits for earlier work-groups
  to publish. That is safe where a started work-group keeps running however long others poll:
  CUDA, and NVIDIA's OpenCL driver on the same GPUs. Everywhere else (PoCL, whose work-groups
  may run one after another on a thread; other OpenCL drivers, which promise nothing) the
  kernels are built with the decoupled fallback: a group that has polled a silent predecessor
  long enough computes that predecessor's contribution itself. ``progress`` (a variant
  parameter) overrides the choice: 0 decides by device, 1 polls forever, 2 falls back.
- Warp operations: CUDA has the intrinsics; NVIDIA's OpenCL gets them as inline PTX
  (``PS_PTX``, see ``kernels/common/subgroup.h``); other devices use local memory.
- Alignment: vector loads need buffers aligned to the vector; a device array borrowed from CuPy
  or PyTorch may start anywhere (a slice), and is then read element by element.
"""

from __future__ import annotations

from typing import Any

from ..errors import BuildError
from ..runtime import Buffer, Device, Program
from ..runtime.sources import Defines
from .registry import Param

PROGRESS = Param(
    "progress",
    0,
    (0, 1, 2),
    "look-back waits: 0 by device, 1 poll until published (needs forward progress), 2 decoupled fallback",
)

#: polls of a silent predecessor before the decoupled fallback computes its part itself
SPINS = 64

_NO_PTX: set[str] = set()


def is_nvidia(device: Device) -> bool:
    return "nvidia" in device.info.vendor.lower() and device.type == "gpu"


def forward_progress(device: Device) -> bool:
    """Whether a work-group of ``device`` may wait for an earlier one to publish (see above)."""
    return device.backend == "cuda" or is_nvidia(device)


def lookback_defines(device: Device, progress: int) -> dict[str, int]:
    """``FALLBACK`` and ``SPINS`` for a look-back kernel on ``device``."""
    spin = forward_progress(device) if progress == 0 else progress == 1
    return {"FALLBACK": int(not spin), "SPINS": SPINS}


def build_with_warp_ops(device: Device, path: str, defines: Defines) -> Program:
    """Build ``path`` with warp operations where the device has them (inline PTX on NVIDIA's
    OpenCL); a driver that refuses the PTX gets the local-memory build instead."""
    if device.backend == "opencl" and is_nvidia(device) and device.id not in _NO_PTX:
        try:
            return device.program(path, {**defines, "PS_PTX": 1})
        except BuildError:
            _NO_PTX.add(device.id)
    return device.program(path, defines)


def aligned(buffer: Buffer, nbytes: int) -> bool:
    """Whether ``buffer`` starts at a multiple of ``nbytes`` (buffers parskel allocates do;
    OpenCL buffers are always aligned to the device's base address alignment)."""
    pointer: Any = getattr(buffer.handle, "ptr", 0)
    return int(pointer) % nbytes == 0
