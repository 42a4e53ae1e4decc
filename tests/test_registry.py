"""The variant registry: enumeration, preferences as data, and dispatch with fallback."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

import parskel as ps
from parskel.algorithms import registry
from parskel.errors import LaunchError, VariantError


def _described(base: ps.Device, **changes: object) -> SimpleNamespace:
    """A device description alone: choices are made from it before anything runs."""
    info = replace(base.info, **changes)
    return SimpleNamespace(info=info, id=info.id, type=info.type)


def test_every_family_lists_its_seed_variants_first():
    names = {family: [v.name for v in registry.variants(family)] for family in ("matmul", "scan", "sort")}
    # the seed's variants first, in its order; variants beyond the seed follow them
    assert names["matmul"][:4] == ["naive", "tiles", "blocks", "blocks_tiles"]
    assert names["scan"][:4] == ["hillis_steele", "blelloch", "recursive_blocks", "vector_blocks"]
    assert names["sort"][:5] == ["bitonic", "bitonic_fused", "radix", "radix_local", "radix_local_vec"]
    seed_count = {"matmul": 4, "scan": 4, "sort": 5}
    for family in names:
        for k, variant in enumerate(registry.variants(family)):
            # seed 004 rebuilt the radix sort from skeletons
            later = ("beyond 000", "004 §")
            assert variant.seed.startswith("000 §" if k < seed_count[family] else later) and variant.summary
            described = variant.describe()
            assert described["family"] == family and described["params"] is not None


def test_unknown_family_and_variant_are_named():
    with pytest.raises(VariantError, match="families"):
        registry.variants("fft")
    with pytest.raises(VariantError, match="bitonic"):
        registry.get("sort", "quick")


def test_parameters_are_checked():
    blocks = registry.get("matmul", "blocks")
    assert blocks.resolve({"WIDTH": 8})["WIDTH"] == 8
    with pytest.raises(VariantError, match="not one of"):
        blocks.resolve({"WIDTH": 3})
    with pytest.raises(VariantError, match="no parameter"):
        blocks.resolve({"TILE": 16})


@pytest.mark.parametrize("bad", [8.0, np.int64(8)])
def test_a_value_equal_to_a_valid_one_is_still_refused(device, bad):
    """Values are remembered per call's parameters, and 8.0 and np.int64(8) hash and compare
    equal to the 8 a call gave before them: they must still be refused."""
    blocks = registry.get("matmul", "blocks")
    assert blocks.resolve({"WIDTH": 8})["WIDTH"] == 8
    with pytest.raises(VariantError, match="takes an int"):
        blocks.resolve({"WIDTH": bad})
    a = np.ones((8, 8), dtype=np.float32)
    ps.matmul(a, a, variant="blocks", WIDTH=8, device=device)
    with pytest.raises(VariantError, match="takes an int"):
        ps.matmul(a, a, variant="blocks", WIDTH=bad, device=device)


def test_preferences_follow_vendor_then_type_then_default():
    base = ps.device("pocl")
    nvidia = _described(base, vendor="NVIDIA Corporation", type="gpu")
    other_gpu = _described(base, vendor="Advanced Micro Devices, Inc.", type="gpu")
    # a CPU the tuning database knows neither by name nor by vendor: the type's order
    other_cpu = _described(base, name="an untuned CPU", vendor="A CPU maker", type="cpu")
    table = registry._preferences()
    assert registry.preferred("sort", nvidia)[0] == table["vendor:nvidia"]["sort"][0]
    assert registry.preferred("sort", other_gpu)[0] == table["gpu"]["sort"][0]
    assert registry.preferred("sort", other_cpu)[0] == table["cpu"]["sort"][0]
    for dev in (nvidia, other_gpu, other_cpu, base):  # every variant is still reachable, once
        order = registry.preferred("sort", dev)
        assert sorted(order) == sorted(v.name for v in registry.variants("sort"))


def test_dispatch_falls_back_when_the_preferred_variant_cannot_run(monkeypatch):
    monkeypatch.setattr(registry, "_REFUSED", set())
    dev = ps.device("pocl")
    first, second = registry.preferred("scan", dev)[:2]
    tried = []

    def call(variant, params):
        tried.append(variant.name)
        if variant.name == first:
            raise LaunchError("refused")
        return variant.name

    assert registry.dispatch("scan", dev, None, {}, call) == second
    # the first once, or twice where it was tuned (the retry with its untuned values), then the second
    assert tried in ([first, second], [first, first, second])


def test_dispatch_runs_a_named_variant_or_raises():
    dev = ps.device("pocl")

    def refuse(variant, params):
        raise LaunchError("refused")

    with pytest.raises(LaunchError):
        registry.dispatch("scan", dev, "blelloch", {}, refuse)
    tiny = _described(dev, max_work_group_size=8, max_work_item_sizes=(8, 8, 8))
    with pytest.raises(VariantError, match="cannot run"):
        registry.dispatch("matmul", tiny, "tiles", {}, lambda v, p: None)
