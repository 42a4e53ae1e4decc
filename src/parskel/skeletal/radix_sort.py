"""Seed 004's radix sort, built from skeletons only, as the sort variants ``skeleton_skelcl`` and
``skeleton_skepu``.

Keys are grouped in blocks of R (a struct of R uints, the element type of every step), and each
pass sorts by one digit of ``digit_bits`` bits, least significant first, as AMD's OpenCL sample
that the seed rebuilt:

1. **histogram**: a Map over the key blocks gives each block's digit counts (a struct of 2^bits
   counts);
2. **position table**: an exclusive Scan of the histograms with element-wise addition gives, for
   each block and digit, how many keys of that digit lie in earlier blocks; a Map over a
   one-element Vector turns the last scanned and last raw histogram into the digits' starts
   (the seed's ``summaryBuffer`` and ``Scan1D``); a Map adds those starts to every row
   (``fixOffset``);
3. **permutation**: SkelCL style, a Zip of key blocks and position rows writes every key to its
   place through the output Vector passed as an extra argument; SkePU style, a Zip computes each
   key's target position, a Map inverts targets into source positions, and a MapArray gathers
   every output block from the keys (the seed's 3-step workaround, since SkePU's user functions
   could not write into a free container).

Keys within a block are placed in input order and blocks in block order, so both variants are
stable, and they move 4-byte ``values`` along with the keys. int32 and float32 keys are encoded
to uint32 by a Map first and decoded by a Map last, in the order of
:mod:`parskel.algorithms.keys`; the last block is padded with the largest key of that order,
which a stable sort keeps behind every real key.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ..algorithms.keys import KEY_KINDS, check_keys
from ..algorithms.registry import Param, Requirement, Variant, register
from ..containers import Container, Vector, struct
from ..runtime import Device
from ..skeletons import Map, MapArray, Scan, Zip

#: Padding per key kind, before encoding: what encodes to the largest key of the sort's order.
_PAD = {0: 0xFFFFFFFF, 1: 0x7FFFFFFF, 2: 0x7FC00000}
_ENCODE = {
    1: "x ^ 0x80000000u",
    2: "(x & 0x80000000u) ? ~x : (x ^ 0x80000000u)",
}
_DECODE = {
    1: "x ^ 0x80000000u",
    2: "(x & 0x80000000u) ? (x ^ 0x80000000u) : ~x",
}
_CANONICAL_NAN = "if ((x & 0x7fffffffu) > 0x7f800000u) x = 0x7fc00000u;\n"


@dataclass(frozen=True)
class _Steps:
    """The skeletons of one (R, digit bits) configuration; each caches its kernels per device."""

    keys: np.dtype  # struct of R uints
    counts: np.dtype  # struct of 2^bits uints
    histogram: Map
    scan: Scan
    starts: Map
    fix: Map
    permute: Zip  # SkelCL: keys only
    permute_values: Zip  # SkelCL: keys and values
    targets: Zip  # SkePU step A
    sources: Map  # SkePU step B
    gather: MapArray  # SkePU step C


@cache
def _block_types(block: int, buckets: int) -> tuple[np.dtype, np.dtype]:
    keys = struct(f"radix_keys{block}", [("k", np.uint32, (block,))])
    counts = struct(f"radix_counts{buckets}", [("c", np.uint32, (buckets,))])
    return keys, counts


@cache
def _steps(block: int, bits: int) -> _Steps:
    buckets = 1 << bits
    keys, counts = _block_types(block, buckets)
    K, C, R, B, M = f"radix_keys{block}", f"radix_counts{buckets}", block, buckets, buckets - 1
    digit = f"((x >> shift) & {M}u)"
    return _Steps(
        keys=keys,
        counts=counts,
        histogram=Map(
            f"{C} histogram({K} b, uint shift) {{\n"
            f"    {C} h;\n    for (int d = 0; d < {B}; ++d) h.c[d] = 0;\n"
            f"    for (int j = 0; j < {R}; ++j) {{ uint x = b.k[j]; h.c[{digit}] += 1; }}\n"
            "    return h;\n}"
        ),
        scan=Scan(
            f"{C} add({C} a, {C} b) {{\n    for (int d = 0; d < {B}; ++d) a.c[d] += b.c[d];\n    return a;\n}}",
            identity=np.zeros(1, counts)[0],
        ),
        starts=Map(
            f"{C} starts(uint last, __global const {C} *scanned, __global const {C} *raw) {{\n"
            f"    {C} s;\n    uint run = 0;\n"
            f"    for (int d = 0; d < {B}; ++d) {{ s.c[d] = run; run += scanned[last].c[d] + raw[last].c[d]; }}\n"
            "    return s;\n}"
        ),
        fix=Map(
            f"{C} fix({C} row, __global const {C} *starts) {{\n"
            f"    for (int d = 0; d < {B}; ++d) row.c[d] += starts[0].c[d];\n    return row;\n}}"
        ),
        permute=Zip(
            f"void permute({K} b, {C} pos, __global {K} *out, uint shift) {{\n"
            f"    for (int j = 0; j < {R}; ++j) {{\n"
            f"        uint x = b.k[j];\n        uint p = pos.c[{digit}]++;\n"
            f"        out[p / {R}u].k[p % {R}u] = x;\n    }}\n}}"
        ),
        permute_values=Zip(
            f"void permute({K} b, {K} v, {C} pos, __global {K} *out, __global {K} *out_values, uint shift) {{\n"
            f"    for (int j = 0; j < {R}; ++j) {{\n"
            f"        uint x = b.k[j];\n        uint p = pos.c[{digit}]++;\n"
            f"        out[p / {R}u].k[p % {R}u] = x;\n        out_values[p / {R}u].k[p % {R}u] = v.k[j];\n    }}\n}}",
            inputs=3,
        ),
        targets=Zip(
            f"{K} targets({K} b, {C} pos, uint shift) {{\n    {K} t;\n"
            f"    for (int j = 0; j < {R}; ++j) {{ uint x = b.k[j]; t.k[j] = pos.c[{digit}]++; }}\n"
            "    return t;\n}"
        ),
        sources=Map(
            f"void sources({K} t, ps_index i, __global {K} *src) {{\n"
            f"    for (uint j = 0; j < {R}u; ++j) {{ uint p = t.k[j]; src[p / {R}u].k[p % {R}u] = i * {R}u + j; }}\n"
            "}"
        ),
        gather=MapArray(
            f"{K} gather({K} s, __global const {K} *from) {{\n    {K} o;\n"
            f"    for (int j = 0; j < {R}; ++j) {{ uint p = s.k[j]; o.k[j] = from[p / {R}u].k[p % {R}u]; }}\n"
            "    return o;\n}"
        ),
    )


@cache
def _coder(block: int, kind: int, decode: bool) -> Map:
    """The Map that encodes (or decodes) every key of a block for the key kind."""
    K = f"radix_keys{block}"
    body = ("" if decode or kind != 2 else _CANONICAL_NAN) + f"b.k[j] = {(_DECODE if decode else _ENCODE)[kind]};"
    loop = f"for (int j = 0; j < {block}; ++j) {{ uint x = b.k[j]; {body} }}"
    return Map(f"{K} code({K} b) {{\n    {loop}\n    return b;\n}}")


def _made(result: Any) -> Container:
    assert isinstance(result, Container)  # a user function that returns a value, on a container
    return result


def _blocks(device: Device, array: Any, n: int, blocks: int, dtype: np.dtype, pad: int) -> Container:
    """A Vector of ``blocks`` key blocks holding ``array``'s 4-byte elements and then ``pad``."""
    if isinstance(array, np.ndarray):
        flat = np.full(blocks * dtype.itemsize // 4, pad, dtype=np.uint32)
        flat[:n] = array.view(np.uint32)
        return Vector(flat.view(dtype), device=device, copy=False)
    out = Vector.empty(blocks, dtype, device=device)
    buffer = out.output_buffer()
    device.copy(buffer, device.wrap(array)[0], n * 4)
    device.fill(buffer, np.uint32(pad), buffer.nbytes - n * 4, offset=n * 4)
    out.mark_device_written()
    return out


def _unblocked(device: Device, blocks: Container, like: Any) -> Any:
    """The first ``like.size`` elements of ``blocks`` as a new array of ``like``'s kind and dtype."""
    n = like.size
    if isinstance(like, np.ndarray):
        return blocks.numpy().view(np.uint32)[:n].view(like.dtype).copy()
    words = blocks.size * blocks.dtype.itemsize // 4
    return device.view(blocks.to_device(), (words,), np.uint32)[:n].view(like.dtype).copy()


def _sort(style: str) -> Any:
    def run(device: Device, keys: Any, values: Any, *, block: int, digit_bits: int) -> Any:
        check_keys(keys)
        n = keys.size
        if n == 0:
            return keys.copy() if values is None else (keys.copy(), values.copy())
        steps = _steps(block, digit_bits)
        kind = KEY_KINDS[np.dtype(keys.dtype)]
        count = -(-n // block)
        data: Container = _blocks(device, keys, n, count, steps.keys, _PAD[kind])
        if kind:
            data = _made(_coder(block, kind, decode=False)(data))
        other: Container = Vector.empty(count, steps.keys, device=device)
        moved = None if values is None else [_blocks(device, values, n, count, steps.keys, 0)]
        if moved is not None:
            moved.append(Vector.empty(count, steps.keys, device=device))
        last = Vector(np.array([count - 1], np.uint32), device=device)
        sources = Vector.empty(count, steps.keys, device=device) if style == "skepu" else None
        for shift in range(0, 32, digit_bits):
            bits = np.uint32(shift)
            raw = _made(steps.histogram(data, bits))
            scanned, _ = steps.scan(raw)
            starts = _made(steps.starts(last, scanned, raw))
            positions = _made(steps.fix(scanned, starts))
            if style == "skelcl":
                if moved is None:
                    steps.permute(data, positions, other, bits)
                else:
                    steps.permute_values(data, moved[0], positions, other, moved[1], bits)
            else:
                assert sources is not None
                targets = _made(steps.targets(data, positions, bits))
                steps.sources(targets, sources)
                steps.gather(sources, data, out=other)
                if moved is not None:
                    steps.gather(sources, moved[0], out=moved[1])
            data, other = other, data
            if moved is not None:
                moved.reverse()
        if kind:
            data = _made(_coder(block, kind, decode=True)(data))
        out = _unblocked(device, data, keys)
        return out if moved is None else (out, _unblocked(device, moved[0], values))

    return run


def _fits_private() -> Requirement:
    # a work-item holds a block and a histogram in private memory, which a GPU spills to slow
    # memory beyond about 1 KiB (the seed's GPU froze with R = 256)
    return Requirement(
        "on a GPU, a block and a histogram in 1 KiB of private memory",
        lambda dev, p: dev.type != "gpu" or 4 * (p["block"] + (1 << p["digit_bits"])) <= 1024,
    )


_PARAMS = (
    Param("block", 8, (2, 4, 8, 16, 32, 64, 128, 256), "keys per block (R), each one work-item's"),
    Param("digit_bits", 3, (1, 2, 3, 4, 5, 6, 7), "bits per digit: 2^bits buckets, 32/bits passes"),
)

register(
    Variant(
        family="sort",
        name="skeleton_skelcl",
        seed="004 §4.2",
        summary="radix sort from skeletons, SkelCL style: Map, Scan, Map, and a Zip that writes "
        "through an extra argument; stable",
        run=_sort("skelcl"),
        params=_PARAMS,
        requires=(_fits_private(),),
        tags=frozenset({"stable", "skeletons"}),
    )
)
register(
    Variant(
        family="sort",
        name="skeleton_skepu",
        seed="004 §4.3",
        summary="radix sort from skeletons, SkePU style: the permutation as targets, their "
        "inversion and a MapArray gather; stable",
        run=_sort("skepu"),
        params=_PARAMS,
        requires=(_fits_private(),),
        tags=frozenset({"stable", "skeletons"}),
    )
)
