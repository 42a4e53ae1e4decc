"""User functions written in Python: translated to C, run on every device, compared with the same
function run by Python on NumPy scalars (the reference: NumPy's own type rules and arithmetic),
with the same function written in C, and with NumPy's array operations.

Errors are checked for the construct they name and the file and line they point at.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import parskel as ps
from parskel.errors import DTypeError, UserFunctionError
from parskel.skeletons.pyfunc.types import Pointer
from test_cuda import NVRTC, NVRTC_WHY, captured_builds, nvrtc_build  # the NVRTC library, where it can be loaded

HERE = __file__
AFFINE = ps.struct("affine", [("a", np.float32), ("b", np.float32)])
RADIUS = 2
SCALE = np.float32(0.25)
TABLE_NOT_CONSTANT = [1, 2, 3]


def reference(fn, *columns, extras=(), index=None):
    """``fn`` run by Python on NumPy scalars, element by element (index by keyword if named)."""
    with np.errstate(all="ignore"):
        rows = []
        for k in range(len(columns[0])):
            kwargs = {index: np.uint32(k)} if index else {}
            rows.append(fn(*(c[k] for c in columns), *extras, **kwargs))
    return np.array(rows)


def sample(dtype, n, rng, low=-50, high=50):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 10).astype(dtype)
    if dtype.kind == "u":
        low = 0
    info = np.iinfo(dtype)
    return rng.integers(max(low, info.min), min(high, info.max), n, endpoint=True).astype(dtype)


# -- the examples --------------------------------------------------------------------


def test_map_reduce_and_zip_take_python_functions(device, rng):
    x = rng.standard_normal(1001).astype(np.float32)
    y = rng.standard_normal(1001).astype(np.float32)
    a, b = ps.Vector(x, device=device), ps.Vector(y, device=device)

    square = ps.Map(lambda x: x * x)
    assert isinstance(square, ps.Map)
    np.testing.assert_array_equal(square(a).numpy(), x * x)

    largest = ps.Reduce(lambda a, b: max(a, b), identity=-np.inf)
    assert largest(a) == x.max() and largest(a).dtype == np.float32

    def f(a, b):
        return a - b if a > b else b - a

    got = ps.Zip(f)(a, b)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.numpy(), np.abs(x - y))


# -- a broad set of translated functions against Python on NumPy scalars -----------------------


def poly(x):
    s = 0
    for k in range(4):
        s = s * x + (k + 1)
    return s


def branches(x):
    if x > 10:
        y = x - 10
    elif x < -10:
        y = -x
    else:
        y = x * 0.5
    return y


def counting(n):
    steps = 0
    while n != 1 and steps < 200:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def skipping(x):
    total = x
    for k in range(10, 0, -3):
        if k == 7:
            continue
        if total > 1000:
            break
        total += k * x
    return total


def last_value(x):
    for k in range(x):  # noqa: B007 (k is read after the loop)
        pass
    return k if x > 0 else -1


def clipped(x):
    return np.clip(x, -1.5, 2.0) + np.where(x > 0, x, 0) + np.maximum(x, 0.5) + np.minimum(x, -0.5)


def rounding(x):
    return np.floor(x) + np.ceil(x) * 2 + np.trunc(x) * 3 + np.rint(x) * 5 + np.fabs(x)


def transcendental(x):
    return np.sqrt(np.abs(x)) + np.exp(x / 20) + np.log1p(np.abs(x)) + np.sin(x) * np.cos(x) + np.tanh(x)


def powers(x):
    return x**2 + np.abs(x) ** 0.5 + x**1 + x**0 - 1 / (x + 100) + np.abs(x) ** 1.5


def int_ops(a, b):
    return (a // (b | 1)) + (a % 7) - (b % -5) + (a << 2) + (a >> 1) + (a & b) - (a ^ b) + abs(b)


def mixed(a, b):
    return a * b + a / (b + 0.5) - min(a, b, 3) + max(a, 2)


def compares(a, b):
    return np.int32(1 if a < b <= 3 else 0) + np.int32(a == b) * 2 + np.int32(not a > 0) * 4


def float_mod(a, b):
    return (a % 3.5) + (a // -2.5) * 10 + b % a


CASES = [
    ("poly", poly, [np.float32], ()),
    ("branches", branches, [np.float32], ()),
    ("counting", counting, [np.int64], ()),
    ("skipping", skipping, [np.float32], ()),
    ("last value", last_value, [np.int32], ()),
    ("clip where maximum", clipped, [np.float32], ()),
    ("rounding", rounding, [np.float64], ()),
    ("transcendental", transcendental, [np.float32], ()),
    ("powers", powers, [np.float64], ()),
    ("int ops", int_ops, [np.int32, np.int32], ()),
    ("int8 wraps", lambda a, b: a * b + a - b, [np.int8, np.int8], ()),
    ("uint16 and int16", lambda a, b: a - b, [np.uint16, np.int16], ()),
    ("mixed ints and floats", mixed, [np.int32, np.float32], ()),
    ("compares", compares, [np.int32, np.int32], ()),
    ("float mod", float_mod, [np.float32, np.float32], ()),
    ("scalar extras", lambda x, s, t: x * s + t, [np.float32], (2.5, 3)),
    ("strong scalar extra", lambda x, s: x * s, [np.float32], (np.float64(1.5),)),
    ("int32 + Python float", lambda x: x + 1.5, [np.int32], ()),
    ("constants", lambda x: x * SCALE + RADIUS * math.pi, [np.float32], ()),
    ("conversions", lambda x: np.float32(x) / 3 + int(x) + float(x > 0), [np.int16], ()),
    ("unsigned wrap", lambda x: x - 1, [np.uint32], ()),
]


@pytest.mark.parametrize("fn, dtypes, extras", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_translated_functions_match_python_on_numpy_scalars(device, rng, fn, dtypes, extras):
    if not device.info.fp64:
        pytest.skip("the reference computes some results in float64")
    columns = [sample(t, 257, rng) for t in dtypes]
    if fn is counting:
        columns = [np.abs(columns[0]) + 1]
    want = reference(fn, *columns, extras=extras)
    skeleton = ps.Map(fn) if len(dtypes) == 1 else ps.Zip(fn)
    got = skeleton(*[ps.Vector(c, device=device) for c in columns], *extras)
    assert got.dtype == want.dtype
    if want.dtype.kind == "f":
        rtol = 1e-5 if want.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got.numpy(), want)


# -- the same function in C and in Python ---------------------------------------------------------


SAXPY_C = "float saxpy(float x, float y, float a) { return a * x + y; }"
SMOOTH_C = """float smooth(float x) {
    float s = 0.0f;
    for (int k = 1; k <= 8; ++k) {
        s = s * 0.5f + x / k;
    }
    return s > 1.0f ? 1.0f : s;
}"""


def smooth(x):
    s = np.float32(0)
    for k in range(1, 9):
        s = s * 0.5 + x / np.float32(k)
    return 1.0 if s > 1 else s


def test_python_and_c_versions_give_identical_results(device, rng):
    x = rng.standard_normal(4099).astype(np.float32)
    y = rng.standard_normal(4099).astype(np.float32)
    a, b = ps.Vector(x, device=device), ps.Vector(y, device=device)
    c_version = ps.Zip(SAXPY_C)(a, b, np.float32(2.5))
    python_version = ps.Zip(lambda x, y, a: a * x + y)(a, b, 2.5)
    assert python_version.dtype == c_version.dtype
    np.testing.assert_array_equal(python_version.numpy(), c_version.numpy())
    np.testing.assert_array_equal(ps.Map(smooth)(a).numpy(), ps.Map(SMOOTH_C)(a).numpy())
    c_sum = ps.Reduce("float add(float a, float b) { return a + b; }", identity=0)(a)
    assert ps.Reduce(lambda a, b: a + b, identity=0)(a) == c_sum


# -- types ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtypes, fn",
    [
        ([np.int32], lambda x: x + 1.5),  # int32 and a Python float: float64 (NEP 50)
        ([np.float32], lambda x: x + 1.5),  # float32 and a Python float: float32
        ([np.int8], lambda x: x + 1),  # a Python int takes the array's type
        ([np.int32, np.int64], lambda a, b: a + b),
        ([np.int32, np.uint32], lambda a, b: a + b),  # int64
        ([np.int32, np.float32], lambda a, b: a * b),  # float64
        ([np.int16, np.int16], lambda a, b: a / b),  # true division: float64
        ([np.int16], lambda x: np.sqrt(x)),  # float32
        ([np.float64], lambda x: x * np.float32(2)),
        ([np.uint8, np.uint8], lambda a, b: a * b),
        ([np.int32], lambda x: x // 2 + x % 3),
    ],
)
def test_result_types_follow_numpy(dtypes, fn):
    types = [np.dtype(t) for t in dtypes]
    want = reference(fn, *[np.ones(1, t) for t in types]).dtype
    done = ps.function(fn).translation(tuple(ps.skeletons.pyfunc.types.element(t) for t in types))
    assert done.returns.dtype == want


def test_float64_containers_and_promotion_on_the_device(device, rng):
    if not device.info.fp64:
        pytest.skip("needs fp64")
    x = rng.standard_normal(100)
    n = rng.integers(-5, 5, 100, dtype=np.int64)
    got = ps.Zip(lambda x, n: x * n + 0.5)(ps.Vector(x, device=device), ps.Vector(n, device=device))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), x * n + 0.5, rtol=1e-15)


def test_a_python_int_that_does_not_fit_is_refused_like_numpy(device):
    v = ps.Vector(np.arange(4, dtype=np.int8), device=device)
    with pytest.raises(UserFunctionError, match="300 does not fit in int8"):
        ps.Map(lambda x: x + 300)(v)
    with pytest.raises(OverflowError):
        np.int8(1) + 300  # what NumPy does with the same expression


def test_variables_widen_to_every_value_they_hold(device):
    def widen(x):
        s = 0
        for _ in range(3):
            s = s + x * 0.5
        t = 1
        t = t / 2
        return s + t

    done = ps.function(widen).translation((ps.skeletons.pyfunc.types.element(np.dtype(np.int32)),))
    assert done.returns.dtype == np.float64
    assert "double s;" in done.text and "double t;" in done.text
    v = ps.Vector(np.arange(5, dtype=np.int32), device=device)
    if device.info.fp64:
        np.testing.assert_array_equal(ps.Map(widen)(v).numpy(), np.arange(5) * 1.5 + 0.5)


# -- structs and tuples -----------------------------------------------------------------------


def compose(f, g):
    return g.a * f.a, g.a * f.b + g.b


def test_tuples_become_structs_and_fields_are_read(device, rng):
    x = rng.standard_normal(50).astype(np.float32)
    pairs = ps.Map(lambda x: (x, x * 2, np.int32(1)))(ps.Vector(x, device=device)).numpy()
    assert pairs.dtype.names == ("f0", "f1", "f2")
    np.testing.assert_array_equal(pairs["f1"], x * 2)
    assert (pairs["f2"] == 1).all()

    maps = np.zeros(300, AFFINE)
    maps["a"], maps["b"] = rng.uniform(0.9, 1.1, 300), rng.uniform(-1, 1, 300)
    prefix, total = ps.Scan(compose, identity=np.array((1.0, 0.0), AFFINE)[()], inclusive=True)(
        ps.Vector(maps, device=device)
    )
    want = ps.Scan(
        "affine then(affine f, affine g) { affine r; r.a = g.a * f.a; r.b = g.a * f.b + g.b; return r; }",
        identity=np.array((1.0, 0.0), AFFINE)[()],
        inclusive=True,
    )(ps.Vector(maps, device=device))[0]
    assert prefix.dtype == AFFINE
    np.testing.assert_array_equal(prefix.numpy(), want.numpy())
    c_total = ps.Reduce(
        "affine then(affine f, affine g) { affine r; r.a = g.a * f.a; r.b = g.a * f.b + g.b; return r; }",
        identity=np.array((1.0, 0.0), AFFINE)[()],
    )(ps.Vector(maps, device=device))
    np.testing.assert_allclose([total["a"], total["b"]], [c_total["a"], c_total["b"]], rtol=1e-5)


def test_struct_extras_fields_and_unpacking(device):
    def apply(x, m):
        a, b = m.a, m.b
        p = (a, b)
        q, r = p
        return q * x + r

    v = ps.Vector(np.arange(4, dtype=np.float32), device=device)
    got = ps.Map(apply)(v, np.array((2.0, 1.0), AFFINE)[()])
    np.testing.assert_array_equal(got.numpy(), [1, 3, 5, 7])

    def swap(x):
        a, b = x, x + 1
        a, b = b, a
        return a - b

    np.testing.assert_array_equal(ps.Map(swap)(v).numpy(), np.ones(4))


# -- index and extra arguments ---------------------------------------------------------------


def test_index_parameters_keyword_only_or_annotated(device):
    v = ps.Vector(np.ones(6, dtype=np.float32), device=device)
    np.testing.assert_array_equal(ps.Map(lambda x, *, i: x + i)(v).numpy(), 1 + np.arange(6))

    def at(x, i: ps.Index, step):
        return x + i * step

    np.testing.assert_array_equal(ps.Map(at)(v, np.float32(0.5)).numpy(), 1 + 0.5 * np.arange(6, dtype=np.float32))
    m = ps.Matrix(np.zeros((3, 4), np.int32), device=device)
    np.testing.assert_array_equal(
        ps.Map(lambda x, *, r, c: x + 10 * r + c)(m).numpy(), 10 * np.arange(3)[:, None] + np.arange(4)
    )
    ramp = ps.Generate(lambda *, i: np.float32(i) * 0.5)
    np.testing.assert_array_equal(ramp(5, device=device).numpy(), 0.5 * np.arange(5, dtype=np.float32))


def test_containers_as_extra_arguments_read_and_written(device):
    values = ps.Vector(np.array([10, 20, 30, 40], dtype=np.int32), device=device)
    positions = ps.Vector(np.array([2, 0, 3, 1], dtype=np.uint32), device=device)
    target = ps.Vector(np.zeros(4, np.int32), device=device)

    def permute(x, p, out):
        out[p] = x

    assert ps.Zip(permute)(values, positions, target) is None
    assert target.numpy().tolist() == [20, 40, 10, 30]
    lookup = ps.MapArray(lambda p, table, add: table[p] + add)
    assert lookup(positions, values, 1).numpy().tolist() == [31, 11, 41, 21]
    assert "__global const int *table" in ps.function(lookup._functions["source"].py).source(np.uint32, values, int)
    assert "__global int *out" in ps.function(permute).source(np.int32, np.uint32, target)


def test_map_overlap_map_reduce_and_all_pairs_with_python(device, rng):
    x = rng.standard_normal(300).astype(np.float32)
    v = ps.Vector(x, device=device)

    def weighted(w, s):
        t = 0
        for k in range(-RADIUS, RADIUS + 1):
            t += w[k] * (k + 3)
        return t * s

    got = ps.MapOverlap(weighted, radius=RADIUS, boundary="clamp")(v, 2.0).numpy()
    p = np.pad(x, RADIUS, mode="edge")
    want = sum(p[RADIUS + k : RADIUS + k + 300] * (k + 3) for k in range(-RADIUS, RADIUS + 1)) * 2
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    m = rng.standard_normal((9, 7)).astype(np.float32)
    lap = ps.MapOverlap(lambda w: w[-1, 0] + w[1, 0] + w[0, -1] + w[0, 1] - 4 * w[0, 0], boundary="wrap")
    q = np.pad(m, 1, mode="wrap")
    want2 = q[:-2, 1:-1] + q[2:, 1:-1] + q[1:-1, :-2] + q[1:-1, 2:] - 4 * m
    np.testing.assert_allclose(lap(ps.Matrix(m, device=device)).numpy(), want2, rtol=1e-5, atol=1e-5)

    dot = ps.MapReduce(lambda x, y, *, i: x * y[i], lambda a, b: a + b, identity=0)
    assert dot(v, v) == pytest.approx(float(np.dot(x, x)), rel=1e-4)

    b = rng.standard_normal((7, 5)).astype(np.float32)
    product = ps.AllPairs(lambda a, b: a * b, lambda s, t: s + t, identity=0)
    got3 = product(ps.Matrix(m, device=device), ps.Matrix(b, device=device)).numpy()
    np.testing.assert_allclose(got3, m @ b, rtol=1e-4, atol=1e-5)


# -- helpers ---------------------------------------------------------------------------------


@ps.function
def square(x):
    return x * x


@ps.function
def norm(a, b):
    return np.sqrt(square(a) + square(b))


@ps.function
def store(out, i, value):
    out[i] = value


def test_helpers_are_translated_per_type_and_shared(device, rng):
    x = rng.standard_normal(64).astype(np.float32)
    y = rng.standard_normal(64)
    v, w = ps.Vector(x, device=device), ps.Vector(y.astype(np.float32), device=device)
    np.testing.assert_allclose(ps.Zip(norm)(v, w).numpy(), np.hypot(x, y.astype(np.float32)), rtol=1e-6)
    source = norm.source(np.float32, np.float64)
    assert source.count("float ps_square(float x)") == 1 and "double ps_square_2(double x)" in source
    assert norm(3.0, 4.0) == 5.0  # still a Python function

    out = ps.Vector(np.zeros(64, np.float32), device=device)
    assert ps.Map(lambda x, out, *, i: store(out, i, square(x)))(v, out) is None
    np.testing.assert_array_equal(out.numpy(), x * x)
    both = ps.MapReduce(lambda x: square(x), lambda a, b: a + square(0) + b, identity=0)
    assert both(v) == pytest.approx(float((x.astype(np.float64) ** 2).sum()), rel=1e-4)


# -- names, constants, annotations --------------------------------------------------------------


def c_words(x):
    T = x  # a macro of parskel's headers
    local = T * 2  # a qualifier in OpenCL, respelled for CUDA
    kernel = local + 1
    ps_value = kernel  # parskel's prefix
    float4 = ps_value  # an OpenCL type
    M_PI = float4 - 1  # a macro of OpenCL C (and of parskel's CUDA header)
    return M_PI + 1


@given(st.lists(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}", fullmatch=True), max_size=30))
def test_c_names_are_unique_valid_and_never_reserved(names):
    from parskel.skeletons.pyfunc.ctext import Names, reserved

    table = Names()
    given = [table(n) for n in names]
    assert len(set(given)) == len(set(names))
    for name, c in zip(names, given):
        assert c == table(name) and not reserved(c)
        assert c.isidentifier() and c.isascii()


def test_python_names_that_are_c_words(device):
    v = ps.Vector(np.arange(5, dtype=np.int32), device=device)
    assert ps.Map(c_words)(v).numpy().tolist() == [c_words(x) for x in range(5)]


def make_scaler(k):
    return lambda x: x * k


def typed(x: Any, s: np.float32) -> np.float32:
    y: Any = x * s
    z: np.float64 = y
    return z


def test_closures_annotations_and_devices_without_double(device):
    v = ps.Vector(np.arange(4, dtype=np.float32), device=device)
    assert ps.Map(make_scaler(3))(v).numpy().tolist() == [0, 3, 6, 9]
    if device.info.fp64:
        assert ps.Map(make_scaler(np.float64(0.5)))(v).dtype == np.float64  # a NumPy scalar is strong
    got = ps.Map(typed)(v, 1.5)
    assert got.dtype == np.float32 and got.numpy().tolist() == [0, 1.5, 3, 4.5]
    # on a device without double precision a Python float is a float32
    source = ps.function(lambda x, s: x * s).source(np.float32, float, fp64=False)
    assert "float s" in source and "double" not in source


def postponed_annotation(x: not_a_type):  # noqa: F821
    return x


def test_postponed_annotations_keep_their_line():
    with pytest.raises(UserFunctionError) as info:
        ps.Map(postponed_annotation)
    assert _line(postponed_annotation) in str(info.value) and "not_a_type" in str(info.value)


# -- caching and the generated source ---------------------------------------------------------------


def test_translations_are_cached_per_types_and_skeletons_per_call_types(device):
    fn = ps.function(poly)
    f32 = fn.translation((ps.skeletons.pyfunc.types.element(np.dtype(np.float32)),))
    assert fn.translation((ps.skeletons.pyfunc.types.element(np.dtype(np.float32)),)) is f32
    assert fn.source(np.float64) != fn.source(np.float32)
    square_map = ps.Map(poly)
    for t in (np.float32, np.int32, np.float32):
        square_map(ps.Vector(np.arange(3, dtype=t), device=device))
    assert len(square_map._built) == 2


def test_lambdas_on_one_line_are_told_apart(device):
    v = ps.Vector(np.arange(10, dtype=np.int32), device=device)
    fused = ps.MapReduce(lambda x: x * 3, lambda a, b: a + b, identity=0)  # two lambdas, one line
    assert fused(v) == 3 * 45
    first, second = (lambda x: x + 1), (lambda x: x - 1)
    assert "x + 1" in ps.function(first).source(np.int32)
    assert "x - 1" in ps.function(second).source(np.int32)


# -- errors: the construct, the file and the line ----------------------------------------------


def _line(fn, offset=0):
    code = (fn.py if isinstance(fn, ps.PyFunction) else fn).__code__
    return f"{HERE}, line {code.co_firstlineno + offset}"


def uses_try(x):
    try:
        return x
    except ValueError:
        return 0


def may_not_return(x):
    if x > 0:
        return x


@ps.function
def recurse(x):
    return recursive(x - 1)


@ps.function
def recursive(x):
    return recurse(x) if x > 0 else x


def reads_later(x):
    y = z + x  # noqa: F821
    z = 1  # noqa: F841
    return y


def helper_error(x):
    return broken(x)


@ps.function
def broken(x):
    return [x]


# (function, where the error points: None for the function itself or a helper, line offset, message)
ERRORS = [
    (lambda x: [x, x], 0, "a list"),
    (lambda x: {"k": x}, 0, "a dict"),
    (lambda x: print(x), 0, "print is a function user functions cannot call"),
    (lambda x: x + TABLE_NOT_CONSTANT[0], 0, "'TABLE_NOT_CONSTANT' is a list"),
    (lambda x: poly(x), 0, "not a @ps.function"),
    (lambda x, y=2: x, 0, "default parameter values"),
    (lambda x: x is None, 0, "'is' operator"),
    (lambda x: x + nowhere, 0, "name 'nowhere' is not defined"),  # noqa: F821
    (lambda x: x.field, 0, "has no attribute 'field'"),
    (lambda x: x and 1, 0, "'and'/'or' of numbers"),
    (lambda x: np.sqrt(np.int8(x)), 0, "float16"),
    (lambda x: [k for k in range(3)], 0, "a list comprehension"),
    (lambda x: np.linalg.norm(x), 0, "numpy.linalg.norm is a function user functions cannot call"),
    (uses_try, 1, "try is not supported"),
    (may_not_return, 0, "can reach its end without returning"),
    (recurse, (recursive, 2), "recursion is not supported"),
    (reads_later, 1, "'z' is used before it is assigned"),
    (helper_error, (broken, 2), "a list"),
]


@pytest.mark.parametrize("fn, offset, message", ERRORS, ids=[str(k) for k in range(len(ERRORS))])
def test_errors_name_the_construct_and_the_line(device, fn, offset, message):
    v = ps.Vector(np.arange(4, dtype=np.float32), device=device)
    with pytest.raises(UserFunctionError) as info:
        ps.Map(fn)(v)
    text = str(info.value)
    assert message in text
    where, offset = offset if isinstance(offset, tuple) else (fn, offset)
    assert _line(where, offset) in text


def test_errors_before_anything_is_built_and_at_construction(device):
    with device.record() as rec:
        with pytest.raises(UserFunctionError, match="a list"):
            ps.Map(lambda x: [x])  # refused when the skeleton is made
        with pytest.raises(UserFunctionError, match="takes 2 argument"):
            ps.Map(lambda x, s: x * s)(ps.Vector(np.ones(3, np.float32), device=device))
        with pytest.raises(DTypeError, match="bool"):
            ps.Map(lambda x, s: x * s)(ps.Vector(np.ones(3, np.float32), device=device), True)
    assert rec.timing.launches == 0


def test_functions_without_source_get_a_clear_error():
    scope: dict = {}
    exec("f = lambda x: x + 1", scope)  # no file to read the source from
    with pytest.raises(UserFunctionError, match=r"source of the Python function <lambda> .* is not available"):
        ps.Map(scope["f"])
    with pytest.raises(UserFunctionError, match="wrap them"):
        ps.Map(np.sqrt)


def test_a_file_read_through_linecache_works(tmp_path, device):
    path = tmp_path / "user_module.py"
    path.write_text(
        textwrap.dedent(
            """
            import numpy as np
            K = 3

            def f(x):
                return x * K
            g = lambda x: x - K
            """
        )
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("user_module", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    v = ps.Vector(np.arange(4, dtype=np.int32), device=device)
    assert ps.Map(module.f)(v).numpy().tolist() == [0, 3, 6, 9]
    assert ps.Map(module.g)(v).numpy().tolist() == [-3, -2, -1, 0]


def test_a_def_in_a_file_that_is_not_python_as_a_whole(tmp_path, device):
    """Code run from a text document (a tutorial's code block, run at its own line numbers):
    the file does not parse, so the block at the ``def`` is read."""
    page = tmp_path / "tutorial.md"
    page.write_text("# A tutorial\n\nSome prose.\n\n```python\ndef triple(x):\n    return 3 * x\n```\n")
    scope: dict = {}
    exec(compile("\n" * 5 + "def triple(x):\n    return 3 * x\n", str(page), "exec"), scope)
    v = ps.Vector(np.arange(4, dtype=np.int32), device=device)
    assert ps.Map(scope["triple"])(v).numpy().tolist() == [0, 3, 6, 9]
    assert f"/* triple: {page}, line 6 */" in ps.function(scope["triple"]).source(np.int32)


# -- properties: random expressions against NumPy ------------------------------------------------

_OPS = ["+", "-", "*", "//", "%", "min", "max", "abs", "where"]
_TYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.int64, np.float32, np.float64]


def _expression(draw, depth):
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(["a", "b", "a", "b", "2", "3", "1.5", "np.int8(3)"]))
    op = draw(st.sampled_from(_OPS))
    left, right = _expression(draw, depth - 1), _expression(draw, depth - 1)
    if op in ("min", "max"):  # NumPy's: Python's returns one operand with its own type
        return f"np.{op}imum({left}, {right})"
    if op == "abs":
        return f"abs({left})"
    if op == "where":
        return f"np.where({left} > {right}, {left}, {right})"
    if op in ("//", "%"):
        return f"({left} {op} (abs({right}) + 1))"
    return f"({left} {op} {right})"


@st.composite
def programs(draw):
    a, b = draw(st.sampled_from(_TYPES)), draw(st.sampled_from(_TYPES))
    bodies = [_expression(draw, 3) for _ in range(4)]
    return a, b, bodies


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(program=programs())
def test_random_expressions_match_numpy(device, rng, tmp_path_factory, program):
    a_type, b_type, bodies = program
    if not device.info.fp64:
        pytest.skip("the expressions may compute in float64")
    x, y = sample(a_type, 64, rng, -20, 20), sample(b_type, 64, rng, -20, 20)
    wanted = {}
    for body in bodies:
        try:
            want = reference(eval(f"lambda a, b: {body}", {"np": np}), x, y)
        except (OverflowError, TypeError):
            continue  # NumPy refuses this combination (the translation's refusal is tested apart)
        if want.dtype.kind in "iuf":
            wanted[body] = want
    if not wanted:
        return
    # one program computes every expression: a lambda returning a tuple, from a file
    path = tmp_path_factory.mktemp("generated") / "expressions.py"
    path.write_text(f"import numpy as np\n\nf = lambda a, b: ({', '.join(wanted)},)\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("expressions", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    got = ps.Zip(module.f)(ps.Vector(x, device=device), ps.Vector(y, device=device)).numpy()
    for k, (body, want) in enumerate(wanted.items()):
        field = got[f"f{k}"]
        assert field.dtype == want.dtype, body
        if want.dtype.kind == "f":  # the device may contract a * b + c into one rounding
            # (NaN and infinities, where NumPy gives them, must match exactly; they set no scale)
            scale = 1e-5 * (np.abs(want[np.isfinite(want)]).max(initial=0) + 1)
            np.testing.assert_allclose(field, want, rtol=1e-5, atol=scale, err_msg=body)
        else:
            np.testing.assert_array_equal(field, want, err_msg=body)


# -- CUDA: generated programs compile with NVRTC ---------------------------------------------------


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_generated_programs_compile_with_nvrtc(monkeypatch):
    """Whole programs (template, glue and translated functions) as the CUDA backend compiles them."""
    dev, captured = captured_builds(monkeypatch)
    v = ps.Vector(np.arange(9, dtype=np.float32), device=dev)
    i = ps.Vector(np.arange(9, dtype=np.int32), device=dev)
    maps = np.zeros(9, AFFINE)
    ps.Map(transcendental)(v)
    ps.Map(lambda x: (x, x * 2))(v)
    ps.Zip(int_ops)(i, i)
    ps.Zip(float_mod)(v, v)
    ps.Map(clipped)(v)
    ps.Map(powers)(v)
    ps.Map(lambda x: x * np.inf + np.nan)(v)
    ps.Scan(compose, identity=np.array((1.0, 0.0), AFFINE)[()])(ps.Vector(maps, device=dev))
    ps.MapReduce(lambda x: square(x), lambda a, b: max(a, b), identity=0)(v)
    ps.MapOverlap(lambda w: w[-1] + w[1], radius=1)(v)
    m = ps.Matrix(np.ones((3, 3), np.float32), device=dev)
    ps.MapOverlap(lambda w: w[-1, 0] - 4 * w[0, 0] + w[0, 1], radius=1, boundary="mirror")(m)
    ps.AllPairs(lambda a, b, *, r, c: a * b + r - c, lambda s, t: s + t, identity=0)(m, m)
    ps.Generate(lambda *, r, c: np.int32(r * 10 + c))((2, 3), device=dev)
    ps.Map(skipping)(v)
    ps.Map(lambda x, out, *, i: store(out, i, x))(v, ps.Vector(np.zeros(9, np.float32), device=dev))
    assert len(captured) >= 15
    for source in captured:
        log, ptx = nvrtc_build(source)
        assert "function.cl" not in log, log  # no warning in translated code (templates may warn)
        assert ".entry" in ptx


def test_the_window_type_is_available_for_inspection():
    source = ps.function(lambda w: w[-1] + w[1]).source(Pointer(np.dtype(np.float32), "window", 1))
    assert "const float *w" in source


def test_where_of_two_python_numbers_is_an_int64_array_as_in_numpy(device):
    """np.where(c, 2, 3) is int64 whatever c is, so int8 + it promotes to int64 (found by the
    random expressions on a GPU run)."""
    a = np.arange(-5, 5, dtype=np.int8)
    got = ps.Map(lambda a: a + (np.where(a > 0, 2, 3) + (a + a)))(ps.Vector(a, device=device)).numpy()
    want = a + (np.where(a > 0, 2, 3) + (a + a))
    assert got.dtype == want.dtype == np.int64
    np.testing.assert_array_equal(got, want)
