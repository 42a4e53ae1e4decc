"""Building a skeleton's program (types, user functions, glue and template in one source)
and choosing its launch geometry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..containers.structs import struct_definitions, structs_named_in
from ..errors import BuildError, ShapeError
from ..runtime import Device, Program, Source, round_down_to_power_of_two
from ..runtime.sources import Defines, read_kernel_file
from ..runtime.traits import with_warp_ops
from ..tune.database import lookup
from .userfn import INDEX_TYPE, UserFunction


def header(dtypes: Sequence[np.dtype], functions: Sequence[UserFunction]) -> str:
    """Common definitions before the user functions: the index type, the complex types and
    every struct used."""
    used = list(dtypes)
    for fn in functions:
        used += structs_named_in(fn.source)
    return (
        f'#include "common/parskel.h"\n#include "common/complex.h"\ntypedef uint {INDEX_TYPE};\n'
        f"{struct_definitions(used)}"
    )


def build(
    device: Device,
    skeleton: str,
    template: str,
    functions: Sequence[UserFunction],
    dtypes: Sequence[np.dtype],
    glue: str,
    prelude: str = "",
    defines: Defines | None = None,
) -> Program:
    """Compose header (+ ``prelude``, which user functions see), user functions (renamed),
    glue macros and the template, and build it (with ``defines``: those the device's build
    reads too, such as a register bound on NVIDIA's OpenCL)."""
    parts: list[tuple[str, str]] = [(f"{skeleton}_types.h", header(dtypes, functions) + prelude)]
    for fn in functions:
        parts.append((f"{skeleton}_{fn.role}_rename.h", f"#define {fn.signature.name} {fn.name}\n"))
        parts.append(fn.part())
        parts.append((f"{skeleton}_{fn.role}_unrename.h", f"#undef {fn.signature.name}\n"))
    parts.append((f"{skeleton}_glue.h", glue))
    parts.append((template, read_kernel_file(template)))
    source = Source.compose(parts, name=f"{skeleton} kernel")
    try:
        return device.build(source, defines)
    except BuildError as exc:
        names = " and ".join(repr(fn.signature.name) for fn in functions) or "(none)"
        raise BuildError(f"{skeleton} with user function {names}", exc.log, exc.excerpt) from None


def check_size(n: int, what: str) -> None:
    if n >= 2**31:
        raise ShapeError(f"{what}: {n} elements exceed the skeletons' limit of 2**31 - 1")


#: The work-group ceiling of a skeleton's kernels where the tuning database has none.
GROUP = 256
#: The size a skeleton's work-group ceiling is looked up at (see :func:`tuned_group`).
LARGEST = 1 << 31


def tuned_group(device: Device, kernel: str, cpu: int | None = None) -> int:
    """The work-group ceiling for the skeleton kernel ``kernel`` (``ps_map``) on ``device``: the
    ``WG`` the tuning database holds for ``skeletons.map`` (``parskel tune skeletons.map``), else
    ``cpu`` on a CPU device where the kernel has a CPU shape of its own, else :data:`GROUP`.
    A skeleton builds its kernel once for every size, so where the database holds the ceiling at
    several sizes, the largest size's is taken: the size where the kernel's time counts most."""
    found = lookup(f"skeletons.{kernel.removeprefix('ps_')}", device, LARGEST)
    tuned = next(iter(found.entry.params.values()), {}) if found is not None else {}
    untuned = cpu if cpu is not None and device.type == "cpu" else GROUP
    return int(tuned.get("WG", untuned))


def group_size(kernel: Any, device: Device, most: int | None = None) -> int:
    """The largest power of two <= ``most`` (by default the tuned ceiling, :func:`tuned_group`)
    this kernel can run as a work-group here."""
    most = tuned_group(device, kernel.name) if most is None else most
    return round_down_to_power_of_two(min(most, kernel.max_work_group_size, device.info.max_work_group_size))


def build_grouped(
    device: Device, build_at: Callable[[int], Program], kernels: Sequence[str], most: int | None = None
) -> tuple[Program, int]:
    """Build a program whose local arrays are sized by its work-group size (``PS_WG``).

    ``build_at(L)`` builds for groups of ``L``: the largest power of two <= ``most`` (by default
    the first kernel's tuned ceiling) the device allows, halved while a kernel cannot run that
    many work-items (too many registers) or its local arrays do not fit the device's local
    memory (large elements: a record of many fields in every work-item's slot).
    """
    most = tuned_group(device, kernels[0]) if most is None else most
    size = round_down_to_power_of_two(min(most, device.info.max_work_group_size))
    while True:
        try:
            program = build_at(size)
        except BuildError as exc:  # CUDA: the local arrays exceed the static shared memory
            if size == 1 or "shared data" not in f"{exc} {exc.log}":
                raise
            size //= 2
            continue
        fits = min(program.kernel(name).max_work_group_size for name in kernels)
        local = max(program.kernel(name).local_mem_bytes for name in kernels)
        if (fits >= size and local <= device.info.local_mem_bytes) or size == 1:
            return program, size
        size = round_down_to_power_of_two(fits) if fits < size else size // 2


def build_warped(device: Device, build_glued: Callable[[str], Program], glue: str) -> Program:
    """``build_glued(glue)`` with warp operations where the device has them (see
    :func:`parskel.runtime.traits.with_warp_ops`), defined in front of ``glue``."""
    return with_warp_ops(
        device, lambda defines: build_glued("".join(f"#define {k} {v}\n" for k, v in defines.items()) + glue)
    )
