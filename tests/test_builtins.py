"""OpenCL C's built-in constants and functions in user functions, on every device, against NumPy.

A user function written for OpenCL must build and give the same results on every backend: the
CUDA backend gets OpenCL's names from ``kernels/common/cuda_builtins.h``. Each group below is one
``Map`` whose user function writes one column per built-in; the columns are compared with
NumPy's (or Python's ``math``) results. The same sources are compiled with NVRTC where it is
installed, so the CUDA mapping is checked without a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import parskel as ps
from parskel.runtime import Device, DeviceInfo, Source
from parskel.runtime.cuda import _OPTIONS, cuda_source

Ref = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Case:
    expr: str  # C, of x and y (and i, the element index)
    ref: Ref
    rtol: float = 2e-6
    atol: float = 1e-6


def _v(f: Callable[..., float]) -> Callable[..., np.ndarray]:
    return np.vectorize(f, otypes=[np.float64])


def _round_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _fract(x: np.ndarray) -> np.ndarray:
    return np.minimum(x - np.floor(x), np.nextafter(np.float32(1), np.float32(0)))


def _smoothstep(e0: float, e1: float, x: np.ndarray) -> np.ndarray:
    t = np.clip((x - e0) / (e1 - e0), 0, 1)
    return t * t * (3 - 2 * t)


def _maxmag(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) > np.abs(y), x, np.where(np.abs(y) > np.abs(x), y, np.fmax(x, y)))


def _minmag(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) < np.abs(y), x, np.where(np.abs(y) < np.abs(x), y, np.fmin(x, y)))


# x in (0.05, 0.95), y in (0.5, 3): every function below is defined there
MATH = [
    Case("acos(x)", lambda x, y: np.arccos(x)),
    Case("acosh(1.0f + x)", lambda x, y: np.arccosh(1 + x)),
    Case("acospi(x)", lambda x, y: np.arccos(x) / np.pi),
    Case("asin(x)", lambda x, y: np.arcsin(x)),
    Case("asinh(x)", lambda x, y: np.arcsinh(x)),
    Case("asinpi(x)", lambda x, y: np.arcsin(x) / np.pi),
    Case("atan(y)", lambda x, y: np.arctan(y)),
    Case("atan2(x, y)", lambda x, y: np.arctan2(x, y)),
    Case("atanh(x)", lambda x, y: np.arctanh(x)),
    Case("atanpi(y)", lambda x, y: np.arctan(y) / np.pi),
    Case("atan2pi(x, y)", lambda x, y: np.arctan2(x, y) / np.pi),
    Case("cbrt(-y)", lambda x, y: np.cbrt(-y)),
    Case("ceil(4.0f * y)", lambda x, y: np.ceil(4 * y)),
    Case("copysign(y, -x)", lambda x, y: np.copysign(y, -x)),
    Case("cos(y)", lambda x, y: np.cos(y)),
    Case("cosh(y)", lambda x, y: np.cosh(y)),
    Case("cospi(x)", lambda x, y: np.cos(np.pi * x), atol=2e-6),
    Case("erf(x)", lambda x, y: _v(math.erf)(x)),
    Case("erfc(x)", lambda x, y: _v(math.erfc)(x)),
    Case("exp(y)", lambda x, y: np.exp(y)),
    Case("exp2(y)", lambda x, y: np.exp2(y)),
    Case("exp10(y)", lambda x, y: 10.0**y),
    Case("expm1(x)", lambda x, y: np.expm1(x)),
    Case("fabs(x - y)", lambda x, y: np.abs(x - y)),
    Case("fdim(y, x)", lambda x, y: np.maximum(y - x, 0)),
    Case("floor(4.0f * y)", lambda x, y: np.floor(4 * y)),
    Case("fma(x, y, 0.25f)", lambda x, y: x * y + 0.25, rtol=1e-6),
    Case("fmax(x, y)", lambda x, y: np.fmax(x, y)),
    Case("fmin(x, y)", lambda x, y: np.fmin(x, y)),
    Case("fmod(y, x)", lambda x, y: np.fmod(y, x), atol=1e-5),
    Case("hypot(x, y)", lambda x, y: np.hypot(x, y)),
    Case("lgamma(y)", lambda x, y: _v(math.lgamma)(y), atol=1e-5),
    Case("log(y)", lambda x, y: np.log(y)),
    Case("log2(y)", lambda x, y: np.log2(y)),
    Case("log10(y)", lambda x, y: np.log10(y)),
    Case("log1p(x)", lambda x, y: np.log1p(x)),
    Case("logb(8.0f * y)", lambda x, y: np.floor(np.log2(8 * y))),
    Case("mad(x, y, 0.5f)", lambda x, y: x * y + 0.5, rtol=1e-5),
    Case("maxmag(x, -y)", lambda x, y: _maxmag(x, -y)),
    Case("minmag(x, -y)", lambda x, y: _minmag(x, -y)),
    Case("nextafter(x, y)", lambda x, y: np.nextafter(x.astype(np.float32), y.astype(np.float32))),
    Case("pow(y, x)", lambda x, y: y**x),
    Case("pown(y, 3)", lambda x, y: y**3),
    Case("powr(y, x)", lambda x, y: y**x),
    Case("remainder(y, x)", lambda x, y: _v(math.remainder)(y, x), atol=1e-5),
    Case("rint(4.0f * y)", lambda x, y: np.rint(4 * y)),
    Case("rootn(-y, 3)", lambda x, y: -np.cbrt(y)),
    Case("rootn(y, 4)", lambda x, y: y**0.25),
    Case("round(4.0f * y)", lambda x, y: _round_away(4 * y)),
    Case("rsqrt(y)", lambda x, y: 1 / np.sqrt(y)),
    Case("sin(y)", lambda x, y: np.sin(y)),
    Case("sinh(y)", lambda x, y: np.sinh(y)),
    Case("sinpi(x)", lambda x, y: np.sin(np.pi * x), atol=2e-6),
    Case("sqrt(y)", lambda x, y: np.sqrt(y)),
    Case("tan(x)", lambda x, y: np.tan(x)),
    Case("tanh(y)", lambda x, y: np.tanh(y)),
    Case("tanpi(0.4f * x)", lambda x, y: np.tan(np.pi * 0.4 * x), rtol=1e-5),
    Case("tgamma(y)", lambda x, y: _v(math.gamma)(y), rtol=1e-5),
    Case("trunc(-4.0f * y)", lambda x, y: np.trunc(-4 * y)),
    Case("ldexp(y, 3)", lambda x, y: y * 8),
    Case("fract(4.0f * y, &whole) + whole", lambda x, y: _fract(4 * y) + np.floor(4 * y)),
    # the common functions
    Case("clamp(y, 1.0f, 2.0f)", lambda x, y: np.clip(y, 1, 2)),
    Case("mix(x, y, 0.25f)", lambda x, y: x + (y - x) * 0.25, rtol=1e-5),
    Case("step(1.5f, y)", lambda x, y: (y >= 1.5).astype(np.float64)),
    Case("smoothstep(1.0f, 2.0f, y)", lambda x, y: _smoothstep(1, 2, y), atol=2e-6),
    Case("sign(x - 0.5f)", lambda x, y: np.sign(x - 0.5)),
    Case("degrees(x)", lambda x, y: np.degrees(x)),
    Case("radians(y)", lambda x, y: np.radians(y)),
    Case("min(x, y) + max(x, y)", lambda x, y: x + y, rtol=1e-6),
    # relaxed precision: OpenCL leaves it to the device (half_: at least 11 bits)
    Case("native_sin(y) + native_cos(y)", lambda x, y: np.sin(y) + np.cos(y), rtol=2e-3, atol=2e-3),
    Case("native_exp(x) * native_log(y)", lambda x, y: np.exp(x) * np.log(y), rtol=2e-3, atol=2e-3),
    Case("native_sqrt(y) + native_rsqrt(y)", lambda x, y: np.sqrt(y) + 1 / np.sqrt(y), rtol=2e-3),
    Case("native_divide(x, y) + native_recip(y)", lambda x, y: x / y + 1 / y, rtol=2e-3),
    Case("native_powr(y, x) + native_exp2(x) + native_log2(y)", lambda x, y: y**x + 2**x + np.log2(y), rtol=2e-3),
    Case("native_tan(x) + native_exp10(x) + native_log10(y)", lambda x, y: np.tan(x) + 10**x + np.log10(y), rtol=2e-3),
    Case(
        "half_sin(y) + half_cos(y) + half_tan(x)", lambda x, y: np.sin(y) + np.cos(y) + np.tan(x), rtol=2e-3, atol=2e-3
    ),
    Case("half_exp(x) + half_exp2(x) + half_exp10(x)", lambda x, y: np.exp(x) + 2**x + 10**x, rtol=2e-3),
    Case(
        "half_log(y) + half_log2(y) + half_log10(y)",
        lambda x, y: np.log(y) * (1 + 1 / np.log(2) + 1 / np.log(10)),
        rtol=2e-3,
        atol=2e-3,
    ),
    Case("half_sqrt(y) + half_rsqrt(y) + half_recip(y)", lambda x, y: np.sqrt(y) + 1 / np.sqrt(y) + 1 / y, rtol=2e-3),
    Case("half_divide(x, y) + half_powr(y, x)", lambda x, y: x / y + y**x, rtol=2e-3),
]

# relational functions: 1/0 on scalars, -1/0 per lane on vectors; x and y hold NaN and infinities
RELATIONAL = [
    Case("isnan(x)", lambda x, y: np.isnan(x)),
    Case("isinf(x)", lambda x, y: np.isinf(x)),
    Case("isfinite(x)", lambda x, y: np.isfinite(x)),
    Case("isnormal(x)", lambda x, y: np.isfinite(x) & (np.abs(x) >= np.finfo(np.float32).tiny)),
    Case("signbit(x)", lambda x, y: np.signbit(x)),
    Case("isequal(x, y)", lambda x, y: x == y),
    Case("isnotequal(x, y)", lambda x, y: x != y),
    Case("isgreater(x, y)", lambda x, y: x > y),
    Case("isgreaterequal(x, y)", lambda x, y: x >= y),
    Case("isless(x, y)", lambda x, y: x < y),
    Case("islessequal(x, y)", lambda x, y: x <= y),
    Case("islessgreater(x, y)", lambda x, y: (x < y) | (x > y)),
    Case("isordered(x, y)", lambda x, y: ~(np.isnan(x) | np.isnan(y))),
    Case("isunordered(x, y)", lambda x, y: np.isnan(x) | np.isnan(y)),
    Case("select(1.0f, 2.0f, (int)isless(x, y))", lambda x, y: np.where(x < y, 2.0, 1.0)),
    Case("isnan((float4)(x, y, 0.0f, 1.0f)).s0", lambda x, y: -np.isnan(x).astype(np.int64)),
    Case(
        "isless((float4)(x, 1.0f, 2.0f, 3.0f), (float4)(y, 0.0f, 0.0f, 0.0f)).x", lambda x, y: -(x < y).astype(np.int64)
    ),
    Case(
        "select((float4)(1.0f), (float4)(2.0f), isless((float4)(x), (float4)(y))).s3",
        lambda x, y: np.where(x < y, 2.0, 1.0),
    ),
    Case("any((int4)(0, 0, isgreater(x, y) ? -1 : 0, 0))", lambda x, y: x > y),
    Case("all((int4)(-1, -1, isgreater(x, y) ? -1 : 0, -1))", lambda x, y: x > y),
    Case("as_uint(bitselect(x, y, as_float(0xffff0000u)))", lambda x, y: (_bits(x) & 0xFFFF) | (_bits(y) & 0xFFFF0000)),
]

# integer functions on int x, y (any values)
INTEGER = [
    Case("abs(x)", lambda x, y: np.abs(x.astype(np.int64))),
    Case("abs_diff(x, y)", lambda x, y: np.abs(x.astype(np.int64) - y)),
    Case("add_sat(x, y)", lambda x, y: np.clip(x.astype(np.int64) + y, -(2**31), 2**31 - 1)),
    Case("sub_sat(x, y)", lambda x, y: np.clip(x.astype(np.int64) - y, -(2**31), 2**31 - 1)),
    Case(
        "add_sat((uint)x, (uint)y)",
        lambda x, y: np.minimum(x.view(np.uint32).astype(np.int64) + y.view(np.uint32), 2**32 - 1),
    ),
    Case(
        "sub_sat((uint)x, (uint)y)", lambda x, y: np.maximum(x.view(np.uint32).astype(np.int64) - y.view(np.uint32), 0)
    ),
    Case("hadd(x, y)", lambda x, y: (x.astype(np.int64) + y) >> 1),
    Case("rhadd(x, y)", lambda x, y: (x.astype(np.int64) + y + 1) >> 1),
    Case("mad24(x & 0x7fff, y & 0xffff, 7)", lambda x, y: (x & 0x7FFF) * (y & 0xFFFF) + 7),
    Case("mul24(x & 0x7ff, y & 0x7ff)", lambda x, y: (x & 0x7FF) * (y & 0x7FF)),
    Case("mul_hi(x, y)", lambda x, y: (x.astype(np.int64) * y) >> 32),
    Case(
        "mul_hi((uint)x, (uint)y)",
        lambda x, y: (x.view(np.uint32).astype(np.uint64) * y.view(np.uint32)) >> np.uint64(32),
    ),
    Case("mad_hi(x, y, 3)", lambda x, y: ((x.astype(np.int64) * y) >> 32) + 3),
    Case("rotate((uint)x, (uint)(y & 31))", lambda x, y: _rotate(x.view(np.uint32), y & 31)),
    Case("clz((uint)x)", lambda x, y: _clz(x.view(np.uint32))),
    Case("popcount((uint)x)", lambda x, y: np.array([bin(int(v)).count("1") for v in x.view(np.uint32)])),
    Case("clamp(x, -1000, 1000)", lambda x, y: np.clip(x, -1000, 1000)),
    Case("min(x, y) + (long)max(x, y)", lambda x, y: x.astype(np.int64) + y),
    Case("popcount((uint4)((uint)x, 1u, 3u, 7u)).w", lambda x, y: np.full(x.shape, 3)),
]

# geometric functions and vector literals
GEOMETRIC = [
    Case("dot((float4)(x, y, 1.0f, 2.0f), (float4)(y, x, 3.0f, 0.5f))", lambda x, y: 2 * x * y + 4, rtol=1e-5),
    Case("length((float3)(x, y, 2.0f))", lambda x, y: np.sqrt(x * x + y * y + 4), rtol=1e-5),
    Case("fast_length((float2)(x, y))", lambda x, y: np.hypot(x, y), rtol=2e-3),
    Case(
        "distance((float4)(x, y, 0.0f, 0.0f), (float4)(0.0f, 0.0f, 1.0f, 1.0f))",
        lambda x, y: np.sqrt(x * x + y * y + 2),
        rtol=1e-5,
    ),
    Case("normalize((float4)(x, y, 1.0f, 2.0f)).y", lambda x, y: y / np.sqrt(x * x + y * y + 5), rtol=1e-5),
    Case("cross((float3)(x, y, 1.0f), (float3)(y, 1.0f, x)).z", lambda x, y: x * 1 - y * y, rtol=1e-5, atol=1e-5),
    Case(
        "cross((float4)(x, y, 1.0f, 0.0f), (float4)(y, 1.0f, x, 0.0f)).x", lambda x, y: y * x - 1, rtol=1e-5, atol=1e-5
    ),
    Case("fmax((float2)(x, 0.5f), y).x + fmin((float4)(x), (float4)(y)).w", lambda x, y: np.fmax(x, y) + np.fmin(x, y)),
    Case(
        "clamp((float4)(y), 1.0f, 2.0f).z + mix((float2)(x), (float2)(y), 0.5f).y",
        lambda x, y: np.clip(y, 1, 2) + (x + y) / 2,
        rtol=1e-5,
    ),
    Case("sqrt((float8)(y)).s7 + exp((float16)(x)).sf", lambda x, y: np.sqrt(y) + np.exp(x), rtol=1e-5),
    Case(
        "pown((float4)(y), (int4)(2)).w + rootn((float2)(y), (int2)(2)).y", lambda x, y: y * y + np.sqrt(y), rtol=1e-5
    ),
]

# constants: float ones as doubles, integer ones as longs
CONSTANTS = [
    ("isinf(INFINITY) && INFINITY > 0", 1.0),
    ("isinf(-INFINITY) && -INFINITY < 0", 1.0),
    ("isnan(NAN)", 1.0),
    ("HUGE_VALF == INFINITY", 1.0),
    ("MAXFLOAT", float(np.finfo(np.float32).max)),
    ("FLT_MAX", float(np.finfo(np.float32).max)),
    ("FLT_MIN", float(np.finfo(np.float32).tiny)),
    ("FLT_EPSILON", float(np.finfo(np.float32).eps)),
    ("FLT_DIG + FLT_MANT_DIG + FLT_RADIX", 6 + 24 + 2),
    ("FLT_MAX_EXP + FLT_MIN_EXP + FLT_MAX_10_EXP + FLT_MIN_10_EXP", 128 - 125 + 38 - 37),
    ("M_PI_F", float(np.float32(np.pi))),
    (
        "M_E_F + M_LOG2E_F + M_LOG10E_F + M_LN2_F + M_LN10_F",
        float(
            np.float32(np.e)
            + np.float32(np.log2(np.e))
            + np.float32(np.log10(np.e))
            + np.float32(np.log(2))
            + np.float32(np.log(10))
        ),
    ),
    (
        "M_PI_2_F + M_PI_4_F + M_1_PI_F + M_2_PI_F + M_2_SQRTPI_F + M_SQRT2_F + M_SQRT1_2_F",
        float(
            np.float32(np.pi / 2)
            + np.float32(np.pi / 4)
            + np.float32(1 / np.pi)
            + np.float32(2 / np.pi)
            + np.float32(2 / np.sqrt(np.pi))
            + np.float32(np.sqrt(2))
            + np.float32(np.sqrt(0.5))
        ),
    ),
    ("CHAR_BIT + CHAR_MAX + CHAR_MIN + SCHAR_MAX + SCHAR_MIN + UCHAR_MAX", 8 + 127 - 128 + 127 - 128 + 255),
    ("SHRT_MAX + SHRT_MIN + USHRT_MAX", 32767 - 32768 + 65535),
    ("(long)INT_MAX + INT_MIN + (long)UINT_MAX", 2**31 - 1 - 2**31 + 2**32 - 1),
    ("LONG_MAX + LONG_MIN", -1),
    ("ULONG_MAX == 0xffffffffffffffffUL", 1),
]

DOUBLE_CONSTANTS = [
    ("DBL_MAX", float(np.finfo(np.float64).max)),
    ("DBL_MIN", float(np.finfo(np.float64).tiny)),
    ("DBL_EPSILON", float(np.finfo(np.float64).eps)),
    (
        "DBL_DIG + DBL_MANT_DIG + DBL_MAX_EXP + DBL_MIN_EXP + DBL_MAX_10_EXP + DBL_MIN_10_EXP",
        15 + 53 + 1024 - 1021 + 308 - 307,
    ),
    ("isinf(HUGE_VAL)", 1.0),
    ("M_PI", math.pi),
    (
        "M_E + M_LOG2E + M_LOG10E + M_LN2 + M_LN10",
        math.e + math.log2(math.e) + math.log10(math.e) + math.log(2) + math.log(10),
    ),
    (
        "M_PI_2 + M_PI_4 + M_1_PI + M_2_PI + M_2_SQRTPI + M_SQRT2 + M_SQRT1_2",
        math.pi / 2 + math.pi / 4 + 1 / math.pi + 2 / math.pi + 2 / math.sqrt(math.pi) + math.sqrt(2) + math.sqrt(0.5),
    ),
]


def _bits(x: np.ndarray) -> np.ndarray:
    """The bits of float32 values (the references get them as float64, exactly)."""
    return x.astype(np.float32).view(np.uint32).astype(np.int64)


def _rotate(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    x64, k64 = x.astype(np.uint64), k.astype(np.uint64)
    return ((x64 << k64) | (x64 >> ((32 - k64) % 32))) & 0xFFFFFFFF


def _clz(x: np.ndarray) -> np.ndarray:
    return np.array([32 - int(v).bit_length() for v in x])


def _function(cases: list[str], element: str, result: str) -> str:
    """One user function writing ``cases[k]`` of element i into out[i * K + k]."""
    lines = [f"    out[i * {len(cases)} + {k}] = ({result})({expr});" for k, expr in enumerate(cases)]
    body = "\n".join(lines)
    return (
        f"void f({element} x, {element} y, ps_index i, __global {result} *out)\n{{\n"
        f"    {element} whole;\n{body}\n    (void)whole;\n}}\n"
    )


def _inputs(group: str, n: int = 61) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    if group == "integer":
        x = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
        y = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
        x[:4], y[:4] = [2**31 - 1, -(2**31), 0, 5], [1, -1, 0, 2**31 - 1]
        return x, y
    if group == "relational":
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 1.0, -2.5], np.float32)
        x = np.concatenate([specials, rng.normal(size=n - 8).astype(np.float32)])
        y = np.concatenate([specials[::-1], rng.normal(size=n - 8).astype(np.float32)])
        y[20:30] = x[20:30]
        return x, y
    x = rng.uniform(0.05, 0.95, n).astype(np.float32)
    y = rng.uniform(0.5, 3.0, n).astype(np.float32)
    return x, y


GROUPS: dict[str, tuple[list[Case], str, str]] = {
    "math": (MATH, "float", "double"),
    "relational": (RELATIONAL, "float", "long"),
    "integer": (INTEGER, "int", "long"),
    "geometric": (GEOMETRIC, "float", "double"),
}


def _run(device: Device, cases: list[str], element: str, result: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = ps.Vector(size=x.size * len(cases), dtype=np.dtype(result.replace("long", "int64")), device=device)
    ps.Zip(_function(cases, element, result))(ps.Vector(x, device=device), ps.Vector(y, device=device), out)
    return out.numpy().reshape(x.size, len(cases))


def _needs_fp64(device: Device) -> None:
    if not device.info.fp64:
        pytest.skip(f"{device.id} has no double precision: the results are written as doubles")


@pytest.mark.parametrize("group", list(GROUPS))
def test_builtins_match_numpy(device, group):
    cases, element, result = GROUPS[group]
    if result == "double":
        _needs_fp64(device)
    x, y = _inputs(group)
    got = _run(device, [c.expr for c in cases], element, result, x, y)
    wrong = []
    with np.errstate(all="ignore"):
        for k, case in enumerate(cases):
            wide = (x.astype(np.float64), y.astype(np.float64)) if element == "float" else (x, y)
            want = np.broadcast_to(np.asarray(case.ref(*wide), dtype=np.float64), x.shape)
            column = got[:, k].astype(np.float64)
            if result == "long":
                ok = column == want
            else:
                ok = np.isclose(column, want, rtol=case.rtol, atol=case.atol, equal_nan=True)
            if not ok.all():
                i = int(np.flatnonzero(~ok)[0])
                wrong.append(f"{case.expr}: element {i} (x={x[i]!r}, y={y[i]!r}) gave {column[i]!r}, want {want[i]!r}")
    assert not wrong, "\n".join(wrong)


def test_constants_match(device):
    _needs_fp64(device)
    exprs = [expr for expr, _ in CONSTANTS] + ([expr for expr, _ in DOUBLE_CONSTANTS])
    got = _run(device, exprs, "float", "double", np.zeros(1, np.float32), np.zeros(1, np.float32))[0]
    want = [value for _, value in CONSTANTS] + [value for _, value in DOUBLE_CONSTANTS]
    for expr, g, w in zip(exprs, got, want):
        assert g == pytest.approx(w, rel=1e-15), expr


def test_constants_as_neutral_elements(device):
    """The defect that started this: ``-INFINITY`` as an identity built on OpenCL only."""
    x = np.array([-np.inf, -3.0, -7.5], np.float32)
    top = ps.Reduce("float top(float a, float b) { return fmax(a, b); }", identity="-INFINITY")
    assert top(ps.Vector(x, device=device)) == -3.0
    assert top(ps.Vector(x[:0], device=device)) == -np.inf
    low = ps.Reduce("int low(int a, int b) { return min(a, b); }", identity="INT_MAX")
    assert low(ps.Vector(np.array([5, -2, 9], np.int32), device=device)) == -2
    assert low(ps.Vector(np.zeros(0, np.int32), device=device)) == np.iinfo(np.int32).max


# NVRTC: the same sources compile for CUDA, without a GPU ----------------------------------------


def _nvrtc():
    try:
        import cupy_backends.cuda.libs.nvrtc as nvrtc

        nvrtc.getVersion()
    except Exception as exc:
        return None, f"NVRTC unavailable: {type(exc).__name__}: {exc}"
    return nvrtc, ""


NVRTC, NVRTC_WHY = _nvrtc()


class _Captured(Exception):
    def __init__(self, source: Source) -> None:
        self.source = source


class _Capture(Device):
    """A device that only records what a skeleton would build (as a CUDA device would)."""

    def __init__(self) -> None:
        fields = {f: 0 for f in ("compute_units", "clock_mhz", "local_mem_bytes")}
        info = DeviceInfo(
            id="capture:0",
            backend="cuda",
            name="capture",
            vendor="NVIDIA Corporation",
            type="gpu",
            platform="CUDA",
            platform_version="",
            version="",
            driver_version="",
            global_mem_bytes=1 << 30,
            max_alloc_bytes=1 << 30,
            max_work_group_size=1024,
            max_work_item_sizes=(1024, 1024, 64),
            preferred_vector_widths={},
            fp64=True,
            **fields,
        )
        super().__init__(info)

    def build(self, source, defines=None):
        raise _Captured(source)

    def _alloc(self, nbytes):  # the skeletons build before they allocate
        raise AssertionError("not reached")

    upload = download = copy = fill = upload_padded = download_trimmed = launch = finish = _alloc


def _nvrtc_compile(source: Source) -> None:
    text = cuda_source(source)
    program = NVRTC.createProgram(text.text, "kernel.cu", [], [])
    try:
        NVRTC.compileProgram(program, [*_OPTIONS, "-arch=compute_90"])
    except NVRTC.NVRTCError:
        pytest.fail(str(text.build_error(NVRTC.getProgramLog(program))))


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
@pytest.mark.parametrize("group", [*GROUPS, "constants"])
def test_builtins_compile_with_nvrtc(group):
    dev = _Capture()
    if group == "constants":
        cases, element, result = [e for e, _ in CONSTANTS + DOUBLE_CONSTANTS], "float", "double"
    else:
        cases, element, result = [c.expr for c in GROUPS[group][0]], *GROUPS[group][1:]
    x = ps.Vector(np.zeros(2, np.dtype(element.replace("int", "int32").replace("float", "float32"))), device=dev)
    out = ps.Vector(np.zeros(2 * len(cases), np.dtype(result.replace("long", "int64"))), device=dev)
    with pytest.raises(_Captured) as captured:
        ps.Zip(_function(cases, element, result))(x, x, out)
    _nvrtc_compile(captured.value.source)
