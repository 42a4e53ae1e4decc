"""Sorting (seed 000, chapter 5): every variant against NumPy, key-value stability, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import parskel as ps
from parskel.errors import DTypeError, ShapeError, VariantError

VARIANTS = [v.name for v in ps.algorithms.variants("sort")]
RADIX = [name for name in VARIANTS if name.startswith("radix")]
STABLE = [v.name for v in ps.algorithms.variants("sort") if "stable" in v.tags]
SEED = ["bitonic", "bitonic_fused", "radix", "radix_local", "radix_local_vec"]
SEED_RADIX = [name for name in SEED if name.startswith("radix")]
#: The CPU-shaped variants, also run with many short runs (min_run) so that small inputs cross
#: the boundaries between work-groups.
CPU = [name for name in VARIANTS if name.endswith("_cpu")]
MANY_RUNS = {"groups_per_cu": 8, "min_run": 16}


def with_many_runs(names: list[str]) -> list:
    """``names`` with their defaults, and the CPU-shaped ones also split into many runs."""
    cases = [pytest.param(name, {}, id=name) for name in names]
    return cases + [pytest.param(name, MANY_RUNS, id=f"{name}-many_runs") for name in names if name in CPU]


def fits(device, variant: str, n: int) -> bool:
    """Whether ``variant`` takes ``n`` keys on ``device`` (the single work-group sort takes few)."""
    return not ps.algorithms.get("sort", variant).unmet(device, None, {"n": n})


KEY_DTYPES = [np.uint32, np.int32, np.float32]
SIZES = [0, 1, 2, 3, 5, 16, 17, 255, 256, 257, 1000, 4097]


def random_keys(rng: np.random.Generator, dtype, n: int) -> np.ndarray:
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(n) * 1e3).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def as_bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint32)


def test_the_seed_variants_are_registered() -> None:
    assert [name for name in VARIANTS if name in SEED] == SEED
    for variant in ps.algorithms.variants("sort"):
        if variant.name in SEED:
            assert variant.seed.startswith("000 §5.2")
            assert "work_group" in {p.name for p in variant.params}
    assert set(RADIX) <= set(STABLE)
    assert "radix8_cpu" in CPU
    for name in CPU:
        assert ps.algorithms.get("sort", name).seed.startswith("beyond 000 §5.2")


def test_a_variant_refuses_more_keys_than_it_takes(device) -> None:
    keys = np.arange(5000, dtype=np.uint32)[::-1].copy()
    with pytest.raises(VariantError, match="at most 4096"):
        ps.sort(keys, variant="local_bitonic", device=device)
    np.testing.assert_array_equal(ps.sort(keys, device=device), np.sort(keys))  # the default moves on


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("variant, params", with_many_runs(VARIANTS))
def test_every_size(device, rng, variant, params, dtype) -> None:
    sizes = SIZES + [int(s) for s in rng.integers(6, 3000, 3)]
    for n in (n for n in sizes if fits(device, variant, n)):
        keys = random_keys(rng, dtype, n)
        original = keys.copy()
        out = ps.sort(keys, variant=variant, device=device, **params)
        assert out.dtype == keys.dtype and out.shape == keys.shape
        np.testing.assert_array_equal(out, np.sort(keys), err_msg=f"n={n}")
        np.testing.assert_array_equal(keys, original)


DISTRIBUTIONS = {
    "random": lambda rng, k: k,
    "duplicates": lambda rng, k: rng.choice(k[:7], k.size),
    "sorted": lambda rng, k: np.sort(k),
    "reversed": lambda rng, k: np.sort(k)[::-1],
    "all_equal": lambda rng, k: np.full_like(k, k[0]),
}


@pytest.mark.parametrize("variant, params", with_many_runs(VARIANTS))
def test_key_distributions(device, rng, variant, params) -> None:
    for dtype in KEY_DTYPES:
        for name, shape in DISTRIBUTIONS.items():
            keys = shape(rng, random_keys(rng, dtype, 3001))
            out = ps.sort(keys, variant=variant, device=device, **params)
            np.testing.assert_array_equal(out, np.sort(keys), err_msg=f"{name} {np.dtype(dtype)}")


def extreme_keys(dtype, rng: np.random.Generator) -> np.ndarray:
    if np.dtype(dtype) == np.float32:
        negative_nan = np.array([0xFFC00001], dtype=np.uint32).view(np.float32)[0]
        special = [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            negative_nan,
            1e-45,
            -1e-45,
            np.finfo(np.float32).max,
            np.finfo(np.float32).min,
            1.0,
            -1.0,
        ]
    else:
        info = np.iinfo(dtype)
        special = [0, 1, info.max, info.min, info.max - 1, info.min + 1, 7]
        special += [-1, -2] if info.min < 0 else []
    return rng.permutation(np.repeat(np.array(special, dtype=dtype), 23))


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("variant, params", with_many_runs(VARIANTS))
def test_extreme_values(device, rng, variant, params, dtype) -> None:
    keys = extreme_keys(dtype, rng)
    out = ps.sort(keys, variant=variant, device=device, **params)
    np.testing.assert_array_equal(out, np.sort(keys))
    if np.dtype(dtype) == np.float32:
        nans = np.isnan(out)
        assert nans[-np.isnan(keys).sum() :].all(), "NaNs sort last"
        assert (as_bits(out[nans]) == 0x7FC00000).all(), "NaNs come back canonical"
        zeros = out[out == 0]
        signs = np.signbit(zeros)
        assert signs.sum() == np.signbit(keys[keys == 0]).sum()
        assert (np.diff(signs.astype(int)) <= 0).all(), "-0.0 sorts before +0.0"


VALUE_DTYPES = [np.int32, np.uint32, np.float32]


@pytest.mark.parametrize("variant, params", with_many_runs(STABLE))
def test_key_value_sort_is_stable(device, rng, variant, params) -> None:
    sizes = [0, 1, 2, 17, 257, 4096, 4097, int(rng.integers(100, 3000))]
    for n in (n for n in sizes if fits(device, variant, n)):
        for dtype, value_dtype in zip(KEY_DTYPES, VALUE_DTYPES):
            keys = rng.choice(random_keys(rng, dtype, 6), n)
            if dtype == np.float32 and n > 2:
                keys[rng.integers(0, n, 3)] = np.nan
            values = rng.permutation(n).astype(value_dtype)
            original = (keys.copy(), values.copy())
            out_keys, out_values = ps.sort(keys, values, variant=variant, device=device, **params)
            order = np.argsort(keys, kind="stable")
            np.testing.assert_array_equal(out_keys, keys[order], err_msg=f"n={n}")
            assert out_values.dtype == values.dtype
            np.testing.assert_array_equal(out_values, values[order], err_msg=f"n={n}")
            np.testing.assert_array_equal(keys, original[0])
            np.testing.assert_array_equal(values, original[1])


@pytest.mark.parametrize("variant", SEED_RADIX)
def test_tunables(device, rng, variant) -> None:
    keys = random_keys(rng, np.uint32, 5000)
    values = np.arange(5000, dtype=np.int32)
    for params in ({"work_group": 32, "keys_per_item": 16}, {"work_group": 64, "keys_per_item": 64}):
        out_keys, out_values = ps.sort(keys, values, variant=variant, device=device, **params)
        order = np.argsort(keys, kind="stable")
        np.testing.assert_array_equal(out_keys, keys[order])
        np.testing.assert_array_equal(out_values, values[order])


@pytest.mark.parametrize("variant", CPU)
def test_cpu_runs(device, rng, variant) -> None:
    """One run, four, and 63 short ones, with values: few distinct keys, so that equal keys
    cross the runs' boundaries and stability across work-groups is checked."""
    n = 1000
    keys = rng.integers(0, 5, n).astype(np.uint32) * np.uint32(0x01010101)
    values = np.arange(n, dtype=np.float32)
    order = np.argsort(keys, kind="stable")
    for params in ({"groups_per_cu": 1}, {"groups_per_cu": 2, "min_run": 256}, {"groups_per_cu": 32, "min_run": 1}):
        out_keys, out_values = ps.sort(keys, values, variant=variant, device=device, **params)
        np.testing.assert_array_equal(out_keys, keys[order], err_msg=str(params))
        np.testing.assert_array_equal(out_values, values[order], err_msg=str(params))


@pytest.mark.parametrize("fuse", [2, 4, 8])
def test_bitonic_fused_levels(device, rng, fuse) -> None:
    keys = random_keys(rng, np.int32, 3000)
    out = ps.sort(keys, variant="bitonic_fused", device=device, fuse=fuse, work_group=32)
    np.testing.assert_array_equal(out, np.sort(keys))


@pytest.mark.parametrize("variant", ["bitonic", "bitonic_fused"])
def test_bitonic_takes_no_values(device, variant) -> None:
    keys = np.arange(10, dtype=np.uint32)
    with pytest.raises(VariantError, match="keys only"):
        ps.sort(keys, keys, variant=variant, device=device)


def test_default_sorts_values_and_records_transfers(device, rng) -> None:
    keys = random_keys(rng, np.float32, 1234)
    values = np.arange(1234, dtype=np.float32)
    with device.record() as rec:
        out_keys, out_values = ps.sort(keys, values, device=device)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(out_keys, keys[order])
    np.testing.assert_array_equal(out_values, values[order])
    timing = rec.timing
    assert timing.launches > 0
    if device.shares_host_memory:  # the kernels read the keys and write the results in host memory
        assert timing.upload == 0
    else:
        assert timing.upload > 0 and timing.download > 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.sampled_from(KEY_DTYPES).flatmap(lambda dt: arrays(dt, st.integers(0, 600))))
def test_any_keys_sort_stably(device, keys) -> None:
    values = np.arange(keys.size, dtype=np.int32)
    out_keys, out_values = ps.sort(keys, values, device=device)
    np.testing.assert_array_equal(out_keys, np.sort(keys))
    np.testing.assert_array_equal(keys[out_values], out_keys)
    # Equal keys (NaNs alike; -0.0 before +0.0) in input order.
    same = out_keys[1:] == out_keys[:-1]
    if keys.dtype.kind == "f":
        same |= np.isnan(out_keys[1:]) & np.isnan(out_keys[:-1])
        same &= np.signbit(out_keys[1:]) == np.signbit(out_keys[:-1])
    assert (out_values[1:][same] > out_values[:-1][same]).all()


def test_ten_million_keys(device, rng) -> None:
    keys = rng.integers(0, 2**32, 10**7, dtype=np.uint32)
    np.testing.assert_array_equal(ps.sort(keys, device=device), np.sort(keys))


def test_bad_input(device) -> None:
    keys = np.arange(6, dtype=np.uint32)
    with pytest.raises(ShapeError, match="out of bounds"):
        ps.sort(keys, axis=1, device=device)
    with pytest.raises(ShapeError, match="at most"):
        ps.sort(np.broadcast_to(np.uint32(0), (2**31 + 1,)), device=device)
    with pytest.raises(DTypeError, match="float64"):
        ps.sort(keys.astype(np.complex64), device=device)
    with pytest.raises(ShapeError):
        ps.sort(keys, keys[:5], device=device)
    with pytest.raises(ShapeError):
        ps.sort(keys, keys.reshape(2, 3), device=device)
    with pytest.raises(DTypeError):
        ps.sort(keys, keys.astype(object), device=device)
    with pytest.raises(VariantError, match="no variant"):
        ps.sort(keys, variant="quick", device=device)
    with pytest.raises(VariantError, match="no parameter"):
        ps.sort(keys, variant="radix", device=device, tile=4)
    with pytest.raises(VariantError, match="not one of"):
        ps.sort(keys, variant="radix_local_vec", device=device, keys_per_item=24)


def test_bitonic_fits_a_tuned_work_group_to_the_kernel(device, rng, monkeypatch) -> None:
    """A work-group tuned elsewhere (1024 through CUDA) that the built kernel cannot run (256
    on NVIDIA's OpenCL) is narrowed: here the kernel is made to report 64."""
    kernel = device.program("sort/bitonic.cl").kernel("bitonic_step")
    monkeypatch.setattr(type(kernel), "max_work_group_size", property(lambda self: 64))
    keys = rng.integers(0, 1000, 3000, dtype=np.uint32)
    np.testing.assert_array_equal(ps.sort(keys, variant="bitonic", work_group=256, device=device), np.sort(keys))
    fused = device.program("sort/bitonic_fused.cl").kernel("bitonic_fused2")
    monkeypatch.setattr(type(fused), "max_work_group_size", property(lambda self: 64))
    got = ps.sort(keys, variant="bitonic_fused", work_group=256, device=device)
    np.testing.assert_array_equal(got, np.sort(keys))


@pytest.mark.parametrize("variant", CPU)
@pytest.mark.parametrize("with_values", [False, True])
def test_a_cpu_radix_sort_of_one_run_is_one_launch(device, rng, variant, with_values):
    """Where one work-group owns every key, a CPU radix sort makes all its passes in one launch
    (two launches a pass otherwise), stable, with its values."""
    for n, one_run in ((1000, True), (9000, False)):  # runs of at least 4,096 keys
        keys = random_keys(rng, np.int32, n)
        keys[: n // 3] = keys[0]
        values = np.arange(n, dtype=np.uint32)
        with device.record() as rec:
            sorted_by = {"variant": variant, "device": device, "min_run": 4096}
            got = ps.sort(keys, values, **sorted_by) if with_values else ps.sort(keys, **sorted_by)
        order = np.argsort(keys, kind="stable")
        if with_values:
            np.testing.assert_array_equal(got[0], keys[order])
            np.testing.assert_array_equal(got[1], values[order])
        else:
            np.testing.assert_array_equal(got, keys[order])
        kernels = [e.label for e in rec.events if e.kind == "kernel"]
        assert (kernels == ["radix_cpu_one"]) == one_run, kernels
