"""Seed 004's radix sort from skeletons (``sort/skeleton_skelcl``, ``sort/skeleton_skepu``):
every block size and digit width against NumPy's stable sort, and its programs under NVRTC.

The sort family's own tests (test_sort.py) run both variants at every size, key dtype and key
distribution with their default parameters."""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.algorithms import registry
from parskel.errors import VariantError
from parskel.skeletal import radix_sort
from test_cuda import NVRTC, NVRTC_WHY, captured_builds, nvrtc_build

STYLES = ["skeleton_skelcl", "skeleton_skepu"]


@pytest.mark.parametrize("variant", STYLES)
@pytest.mark.parametrize(("block", "bits"), [(2, 1), (4, 7), (16, 5), (256, 4)])
def test_block_sizes_and_digit_widths(device, rng, variant, block, bits) -> None:
    unmet = registry.get("sort", variant).unmet(device, {"block": block, "digit_bits": bits})
    if unmet:
        pytest.skip(f"{device.id} refuses {variant} with block={block}, digit_bits={bits}: {'; '.join(unmet)}")
    for n in (1, block - 1, block + 1, 1001):
        keys = rng.integers(-50, 50, n, dtype=np.int32)  # many equal keys: stability shows
        values = rng.permutation(n).astype(np.float32)
        out_keys, out_values = ps.sort(keys, values, variant=variant, device=device, block=block, digit_bits=bits)
        order = np.argsort(keys, kind="stable")
        np.testing.assert_array_equal(out_keys, keys[order], err_msg=f"n={n}")
        np.testing.assert_array_equal(out_values, values[order], err_msg=f"n={n}")


@pytest.mark.parametrize("variant", STYLES)
def test_many_blocks_of_keys(device, rng, variant) -> None:
    """2^16 keys in blocks of 8: many whole work-groups of records. On PoCL, Maps over
    records in work-groups of 1,024 overflowed the worker threads' stacks here."""
    keys = rng.integers(0, 2**32, 1 << 16, dtype=np.uint32)
    np.testing.assert_array_equal(ps.sort(keys, variant=variant, device=device), np.sort(keys))


def test_the_parameters_are_checked(device) -> None:
    keys = np.arange(10, dtype=np.uint32)
    with pytest.raises(VariantError, match="not one of"):
        ps.sort(keys, variant="skeleton_skelcl", device=device, block=6)
    with pytest.raises(VariantError, match="not one of"):
        ps.sort(keys, variant="skeleton_skepu", device=device, digit_bits=9)


def test_the_variants_are_stable_and_built_from_skeletons() -> None:
    for name in STYLES:
        variant = ps.algorithms.get("sort", name)
        assert {"stable", "skeletons"} <= variant.tags and variant.seed.startswith("004 §")
        assert {p.name: p.default for p in variant.params} == {"block": 8, "digit_bits": 3}  # the seed's best


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_the_sorts_programs_compile_with_nvrtc(monkeypatch) -> None:
    dev, captured = captured_builds(monkeypatch)
    radix_sort._steps.cache_clear()  # new skeletons: their programs are built again, and seen
    radix_sort._coder.cache_clear()
    keys = np.array([2.5, -1.0, np.nan, 0.0], np.float32)
    for variant in STYLES:
        out, _ = ps.sort(keys, np.arange(4, dtype=np.int32), variant=variant, device=dev)
        np.testing.assert_array_equal(out, np.sort(keys))
    assert len(captured) >= 9
    for source in captured:
        log, ptx = nvrtc_build(source)
        assert ".entry" in ptx, log
