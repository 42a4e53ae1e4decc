"""Instruction throughput after seed 003: a chain of operations per work-item, dependent or in
independent chains, unrolled fully or by 64 (``kernels/probe/instructions.cl``).

Throughput is work-items x chains x steps x operations per step / time. A dependent chain
issues one operation per latency of the operation; independent chains let a core overlap their
operations until its pipelines are full, which is where the figure stops growing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ..runtime import Buffer, Device
from .figures import Figure, Step
from .timing import Settings, grown, median_kernel_seconds

PATH = "probe/instructions.cl"
STEPS = 1024  # chain length: seed 003's N, a multiple of 64
CHAINS = (1, 2, 4, 8)
UNROLLS = (0, 64)  # 0: fully


@dataclass(frozen=True)
class Operation:
    """One operation a chain repeats: its kernel code (``OP``), element type, and how it counts.

    ``per_step`` is 2 for integer chains (two values feeding each other); ``flops`` is the
    floating-point operations per operation (2 for fma) or 0 for operations counted in Gop/s.
    ``start``, ``a``, ``b`` are the kernel's inputs while timing: they keep every value finite
    and normal, so no operation takes a slow path.
    """

    name: str
    code: int
    ctype: str
    per_step: int
    flops: int
    peak: str
    start: float
    a: float
    b: float

    @property
    def dtype(self) -> np.dtype:
        return np.dtype({"float": np.float32, "double": np.float64, "uint": np.uint32}[self.ctype])

    @property
    def unit(self) -> str:
        return "GFLOP/s" if self.flops else "Gop/s"

    def defines(self, chains: int, unroll: int, steps: int = STEPS) -> dict[str, int | str]:
        return {"OP": self.code, "T": self.ctype, "STEPS": steps, "CHAINS": chains, "UNROLL": unroll}

    def args(self, out: Buffer, flag: int) -> tuple:
        t = self.dtype.type
        return (out, t(self.start), t(self.a), t(self.b), np.int32(flag))


#: The operations a probe times, by name (``"fp32 fma"``, ``"int32 add"``, ...).
OPERATIONS: dict[str, Operation] = {
    op.name: op
    for op in (
        Operation("fp32 add", 0, "float", 1, 1, "", 1.0, 1e-4, 0.0),
        Operation("fp32 mul", 1, "float", 1, 1, "", 1.0, 0.9999, 0.0),
        Operation("fp32 fma", 2, "float", 1, 2, "fp32", 1.0, 0.9999, 1e-4),
        Operation("fp64 fma", 2, "double", 1, 2, "fp64", 1.0, 0.9999, 1e-4),
        Operation("fp32 rsqrt", 3, "float", 1, 0, "", 4.0, 0.0, 0.0),
        Operation("int32 add", 4, "uint", 2, 0, "", 1.0, 0.0, 3.0),
        Operation("int32 mul", 5, "uint", 2, 0, "", 1.0, 0.0, 3.0),
    )
}


def plan(device: Device, quick: bool) -> list[tuple[Operation, int, int]]:
    """(operation, chains, unroll) to measure: every combination, or in a quick probe the fp32
    fma sweep in full and the other operations as a dependent chain and 8 chains, fully unrolled."""
    chosen = []
    for op in OPERATIONS.values():
        if op.ctype == "double" and not device.info.fp64:
            continue
        full = not quick or op.name == "fp32 fma"
        for unroll in UNROLLS if full else (0,):
            for chains in CHAINS if full else (1, 8):
                chosen.append((op, chains, unroll))
    return chosen


def measure_chain(device: Device, settings: Settings, op: Operation, chains: int, unroll: int) -> list[Figure]:
    """One operation at one number of chains and unrolling, grown to the target time."""
    kernel = device.program(PATH, op.defines(chains, unroll)).kernel("chain")
    local = min(256, kernel.max_work_group_size, device.info.max_work_group_size)
    outs: dict[int, Buffer] = {}

    def args(items: int) -> tuple:
        if items not in outs:
            outs.clear()
            outs[items] = device.alloc(items * op.dtype.itemsize)
        return op.args(outs[items], 0)

    items = grown(
        device,
        kernel,
        local,
        args,
        start=device.info.compute_units * local * 4,
        most=1 << 26,
        target=settings.target,
    )
    seconds = median_kernel_seconds(device, kernel, items, local, args(items), settings.reps)
    operations = float(items) * chains * STEPS * op.per_step
    value = operations * max(op.flops, 1) / seconds / 1e9
    params = {"chains": chains, "unroll": "full" if unroll == 0 else str(unroll), "work-items": items}
    return [Figure("instructions", op.name, value, op.unit, seconds, params, op.peak)]


def steps(device: Device, settings: Settings) -> list[Step]:
    return [
        Step(
            "instructions",
            f"{op.name}, {chains} chain{'s' if chains > 1 else ''}, unroll {'full' if unroll == 0 else unroll}",
            partial(measure_chain, device, settings, op, chains, unroll),
        )
        for op, chains, unroll in plan(device, settings.quick)
    ]
