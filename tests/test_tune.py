"""The tuner: strategies on objectives whose optimum is known, the measurement cache, the tuning
database and its fallbacks, dispatch honouring it, ``explain``, ``--write-defaults`` and the
command line's errors. Sizes and budgets are tiny: these tests check behaviour, not speed."""

from __future__ import annotations

import dataclasses
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

import parskel as ps
from parskel.algorithms import onesweep, registry, scans, sorts
from parskel.algorithms.registry import Param, Variant
from parskel.bench.store import Store
from parskel.cli import main
from parskel.tune import database, defaults, targets, tuner
from parskel.tune.database import Entry
from parskel.tune.explain import explain
from parskel.tune.space import Config, Space
from parskel.tune.strategies import STRATEGIES, Spent


def _pocl() -> ps.Device:
    try:
        return ps.runtime.find("pocl")
    except ps.errors.ParskelError as exc:
        pytest.skip(f"the PoCL device is not here: {exc}")


# strategies ---------------------------------------------------------------------------------


def _synthetic() -> tuple[Space, dict[Config, float]]:
    """Two variants over small grids; the time is a bowl in log2 of the parameters, the best
    point ``b X=16 Z=6`` (1.0) and the other variant's best 2.0; odd Y fails on variant a."""
    variants = [
        Variant("t", "a", "", "", lambda: 0, params=(Param("X", 1, (1, 2, 4, 8, 16, 32)), Param("Y", 1, (1, 2, 3, 4)))),
        Variant(
            "t", "b", "", "", lambda: 1, params=(Param("X", 1, (1, 2, 4, 8, 16, 32)), Param("Z", 3, tuple(range(1, 9))))
        ),
    ]
    space = Space.build(variants, lambda v, p: "too wide" if p["X"] == 32 and v.name == "a" else None)
    times = {}
    for c in space.points:
        p = c.values
        if c.variant == "a":
            times[c] = 2.0 + (math.log2(p["X"]) - 3) ** 2 + (p["Y"] - 2) ** 2
        else:
            times[c] = 1.0 + 0.3 * (math.log2(p["X"]) - 4) ** 2 + 0.2 * (p["Z"] - 6) ** 2
    return space, times


def test_space_refuses_and_neighbours_are_valid_points():
    space, _ = _synthetic()
    assert len(space) == 6 * 4 - 4 + 6 * 8 and len(space.refused) == 4
    assert all(why == "too wide" for _, why in space.refused)
    here = Config("a", (("X", 4), ("Y", 2)))
    near = space.neighbours(here)
    assert Config("a", (("X", 32), ("Y", 2))) not in near  # refused
    assert Config("b", (("X", 4), ("Z", 3))) in near  # the other variant, its default Z
    assert all(c in space and c != here for c in near)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_strategies_see_every_point_once_and_find_the_optimum(name):
    space, times = _synthetic()
    asked: list[Config] = []

    def evaluate(c: Config) -> float | None:
        asked.append(c)
        return None if c.variant == "a" and c.values["Y"] == 3 else times[c]

    start = space.points[0]
    STRATEGIES[name](space, evaluate, np.random.default_rng(1), start)
    assert asked[0] == start
    assert len(asked) == len(set(asked)) == len(space)
    assert min(times[c] for c in asked) == 1.0


@pytest.mark.parametrize("name", ["anneal", "bayes"])
def test_guided_strategies_find_the_optimum_early(name):
    """On a smooth objective the guided searches reach the exact optimum within a third of the
    points (seeded, so the run is the same every time)."""
    space, times = _synthetic()
    asked: list[Config] = []

    def evaluate(c: Config) -> float:
        if len(asked) >= len(space) // 3:
            raise Spent("evaluations")
        asked.append(c)
        return times[c]

    with pytest.raises(Spent):
        STRATEGIES[name](space, evaluate, np.random.default_rng(3), space.points[0])
    assert min(times[c] for c in asked) == 1.0


# the search with the store ------------------------------------------------------------------


def _scan_settings(**changes):
    base = {
        "strategy": "random",
        "budget": None,
        "evaluations": 4,
        "reps": 1,
        "variants": frozenset({"blelloch", "vector_blocks"}),
    }
    return tuner.Settings(**{**base, **changes})


def test_a_second_run_measures_nothing_and_replays_the_first():
    device = _pocl()
    target = targets.find("scan")
    with Store(tuner.store_path()) as store:
        (first,) = tuner.tune(target, device, [3000], _scan_settings(), store)
        (second,) = tuner.tune(target, device, [3000], _scan_settings(), store)
        (more,) = tuner.tune(target, device, [3000], _scan_settings(evaluations=6), store)
    assert first.new == 4 and second.new == 0
    assert [m.config for m in second.history] == [m.config for m in first.history]
    assert [m.seconds for m in second.history] == [m.seconds for m in first.history]
    assert more.new == 2 and len(more.history) == 6  # a larger allowance goes on from the cache
    assert all(m.result.status == "ok" and m.result.cost > 0 for m in first.history)


def test_points_that_fail_are_recorded_with_the_reason(monkeypatch):
    device = _pocl()
    target = targets.find("scan")

    def broken(*args, **kwargs):
        raise ps.errors.BuildError("scan/blelloch.cl", "error: the compiler said no", "")

    monkeypatch.setitem(scans._ENQUEUE, "blelloch", broken)
    settings = _scan_settings(strategy="brute", evaluations=None, only={"WG": (64, 128)})
    with Store(tuner.store_path()) as store:
        (outcome,) = tuner.tune(target, device, [3000], settings, store)
        stored = store.results(store.latest().id)
    failed = outcome.failures()
    assert {m.config.variant for m in failed} == {"blelloch"} and len(failed) == 2
    assert all(m.result.status == "skipped" and "could not build scan/blelloch.cl" in m.result.message for m in failed)
    assert [m.config.variant for m in outcome.best_by_variant()] == ["vector_blocks"]
    assert len(stored) == 4 and {r.status for r in stored} == {"ok", "skipped"}
    assert outcome.entry("test").order == ("vector_blocks",)


# the database -------------------------------------------------------------------------------


def _fake(vendor="NVIDIA Corporation", kind="gpu", name="NVIDIA H100", backend="opencl"):
    return SimpleNamespace(info=SimpleNamespace(vendor=vendor, type=kind, name=name, backend=backend))


def _entry(size=1 << 20, order=("x",), **key):
    return Entry(family="scan", size=size, order=order, params={order[0]: {"WG": 64}}, **key)


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    path = tmp_path / "defaults.json"
    monkeypatch.setattr(database, "shipped_path", lambda: path)
    database.reload()
    yield path
    monkeypatch.undo()  # the shipped defaults again, for the tests after this one
    database.reload()


def test_lookup_falls_back_device_vendor_type_default(shipped):
    database.write(
        shipped,
        [
            _entry(order=("default",)),
            _entry(order=("type",), type="gpu"),
            _entry(order=("vendor",), vendor="nvidia", type="gpu"),
            _entry(order=("device",), vendor="nvidia", type="gpu", device="NVIDIA H100", backend="opencl"),
        ],
    )
    database.reload()

    def found(device):
        hit = database.lookup("scan", device, 1 << 20)
        return (hit.entry.order[0], hit.level, hit.origin)

    assert found(_fake()) == ("device", "device", "shipped")
    assert found(_fake(name="NVIDIA H200")) == ("vendor", "vendor", "shipped")
    assert found(_fake(backend="cuda")) == ("vendor", "vendor", "shipped")  # the device entry is OpenCL's
    assert found(_fake(vendor="Advanced Micro Devices, Inc.")) == ("type", "type", "shipped")
    assert found(_fake(vendor="AuthenticAMD", kind="cpu", name="EPYC")) == ("default", "default", "shipped")
    assert database.lookup("sort", _fake(), 1 << 20) is None


def test_a_skeletons_work_group_ceiling_is_the_one_tuned_at_the_largest_size(shipped):
    from parskel.skeletons.program import tuned_group

    def ceiling(size, wg):
        return Entry(family="skeletons.reduce", size=size, order=("reduce",), params={"reduce": {"WG": wg}})

    database.write(shipped, [ceiling(1 << 20, 128), ceiling(1 << 26, 512), ceiling(1 << 12, 64)])
    database.reload()
    device = SimpleNamespace(info=_fake().info, type="gpu")
    assert tuned_group(device, "ps_reduce") == 512
    assert tuned_group(device, "ps_map") == 256  # nothing tuned: the untuned ceiling


def test_a_vendors_entry_holds_for_the_backend_it_was_tuned_through(shipped):
    """CUDA and NVIDIA's OpenCL rank one kernel's shapes differently: a vendor's entry written
    by a search through CUDA serves that vendor's GPUs through CUDA only, and at equal sizes
    an entry of the device's own backend comes before one of any backend."""
    vendor = {"vendor": "nvidia", "type": "gpu"}
    database.write(
        shipped,
        [
            _entry(order=("any",), **vendor),
            _entry(order=("cuda",), backend="cuda", **vendor),
            _entry(size=1 << 10, order=("opencl",), backend="opencl", **vendor),
        ],
    )
    database.reload()
    assert database.lookup("scan", _fake(backend="cuda"), 1 << 20).entry.order == ("cuda",)
    assert (
        "tuned for nvidia gpus through cuda at n=2^20"
        in database.lookup("scan", _fake(backend="cuda"), 1 << 20).describe()
    )
    assert database.lookup("scan", _fake(backend="opencl"), 1 << 20).entry.order == ("any",)
    assert database.lookup("scan", _fake(backend="opencl"), 1 << 10).entry.order == ("opencl",)
    written = database.for_device(
        SimpleNamespace(info=_fake(backend="cuda").info),
        "scan",
        1 << 20,
        "vendor",
        order=("x",),
        params={},
        seconds={},
        measured={},
    )
    assert (written.backend, written.device, written.level) == ("cuda", database.ANY, "vendor")


def test_lookup_takes_the_nearest_size_and_the_overlay_first(shipped):
    database.write(shipped, [_entry(size=1 << 10, order=("small",)), _entry(size=1 << 24, order=("large",))])
    database.reload()
    device = _fake()
    assert database.lookup("scan", device, 100).entry.order == ("small",)
    assert database.lookup("scan", device, 1 << 20).entry.order == ("large",)
    assert database.lookup("scan", device, 1 << 17).entry.order == ("large",)  # a tie goes to the larger
    database.store([_entry(size=1 << 20, order=("mine",))])  # the user's overlay, same level
    assert database.lookup("scan", device, 1 << 20).origin == "user"
    assert database.lookup("scan", device, 1 << 10).entry.order == ("small",)  # nearer in size wins
    with database.pinned(_entry(size=1 << 20, order=("pinned",))):
        assert database.lookup("scan", device, 1 << 10).entry.order == ("pinned",)
    assert database.lookup("scan", device, 1 << 10).entry.order == ("small",)


def test_overlay_replaces_entries_of_the_same_key(tuning_folder):
    first = _entry(order=("a",), vendor="nvidia", type="gpu")
    path = database.store([first, _entry(size=16, order=("b",))])
    assert path == tuning_folder / "tuning.json"
    database.store([_entry(size=(1 << 20) - 1, order=("c",), vendor="nvidia", type="gpu")])  # same class
    entries = database.read(path)
    assert sorted(e.order[0] for e in entries) == ["b", "c"]
    assert json.loads(path.read_text())["format"] == database.FORMAT
    assert database.read(path)[0] == entries[0]


def test_a_narrowed_search_keeps_the_variants_it_did_not_measure(tuning_folder):
    """``parskel tune --variants x`` replaces what it measured of an entry and keeps the rest,
    with where their figures came from; a variant it refused is dropped."""
    old = dataclasses.replace(
        _entry(order=("a", "b", "c")),
        params={"a": {"X": 1}, "b": {"Y": 2}, "c": {}},
        seconds={"a": 3.0, "b": 4.0, "c": 5.0},
        measured={"date": "d0", "command": "t0"},
    )
    path = database.store([old])
    narrowed = dataclasses.replace(
        _entry(order=("b",)), params={"b": {"Y": 7}}, seconds={"b": 1.0}, refused=("c",), measured={"date": "d1"}
    )
    database.store([narrowed])
    (entry,) = database.read(path)
    assert entry.order == ("b", "a")
    assert entry.params == {"a": {"X": 1}, "b": {"Y": 7}}
    assert entry.seconds == {"a": 3.0, "b": 1.0}
    assert entry.measured["date"] == "d1"
    assert entry.measured["carried"] == [{"variants": ["a"], "date": "d0", "command": "t0"}]


def test_a_broken_database_file_is_a_clear_error(tuning_folder):
    (tuning_folder / "tuning.json").write_text("[1, 2")
    with pytest.raises(database.TuningDataError, match="not a tuning database"):
        database.read(tuning_folder / "tuning.json")


def test_measured_variants_go_first_but_refused_ones_keep_their_places():
    assert database.ordered(["local", "a", "b", "c"], ["c", "b"]) == ["c", "b", "local", "a"]
    assert database.ordered(["local", "a", "b", "c"], ["c", "b"], ["local"]) == ["local", "c", "b", "a"]
    assert database.ordered(["a", "b"], ["z"]) == ["a", "b"]


def test_an_entry_tuned_at_large_sizes_keeps_the_small_input_sort_first():
    device = _pocl()
    with Store(tuner.store_path()) as store:
        settings = tuner.Settings(
            strategy="brute",
            budget=None,
            reps=1,
            variants=frozenset({"radix", "local_bitonic"}),
            only={"work_group": (64,), "keys_per_item": (8,)},
        )
        (outcome,) = tuner.tune(targets.find("sort"), device, [5000], settings, store)
    assert outcome.refused() == ("local_bitonic",)
    database.store([outcome.entry("test")])
    table = registry.table_order("sort", device)[0]
    refused_at = table.index("local_bitonic")  # refused at 5000: it keeps its place
    assert registry.preferred("sort", device, 5000).index("local_bitonic") == refused_at
    assert registry.preferred("sort", device, 5000)[0] == "radix"
    assert explain(targets.find("sort"), device, 5000).variant == "radix"


def test_sorts_with_values_are_tuned_apart_and_read_their_own_entries(monkeypatch, rng):
    """`parskel tune sort_pairs` times sorts of keys with values and writes entries of its own.
    A sort with values reads those where they are as near in size as the keys', else the keys';
    a sort of keys alone reads only the keys'."""
    device = _pocl()
    n = 5000
    with Store(tuner.store_path()) as store:
        settings = tuner.Settings(
            strategy="brute",
            budget=None,
            reps=1,
            variants=frozenset({"onesweep"}),
            only={"work_group": (256,), "keys_per_item": (8,), "progress": (0,)},
        )
        (outcome,) = tuner.tune(targets.find("sort_pairs"), device, [n], settings, store)
    pairs_entry = outcome.entry("test")
    assert pairs_entry.family == "sort_pairs" and pairs_entry.order == ("onesweep",)
    keys_entry = database.for_device(
        device,
        "sort",
        n,
        order=("onesweep",),
        params={"onesweep": {"work_group": 256, "keys_per_item": 12, "progress": 0}},
        seconds={"onesweep": 1e-3},
        measured={"date": "2025-01-01"},
    )
    database.store([keys_entry])
    tiles = []
    count_digits = onesweep.count_digits

    def spy(*args, **kwargs):
        tiles.append(kwargs["keys_per_item"])
        return count_digits(*args, **kwargs)

    monkeypatch.setattr(onesweep, "count_digits", spy)
    keys = rng.integers(0, 1 << 32, n, dtype=np.uint32)
    values = np.arange(n, dtype=np.uint32)
    order = np.argsort(keys, kind="stable")
    for tuned in (False, True):
        if tuned:
            database.store([pairs_entry])
        got_keys, got_values = ps.sort(keys, values, device=device)
        np.testing.assert_array_equal(got_keys, keys[order])
        np.testing.assert_array_equal(got_values, values[order])
        np.testing.assert_array_equal(ps.sort(keys, device=device), keys[order])
        told = explain(targets.find("sort_pairs"), device, n)  # what `parskel explain sort_pairs` says
        assert told.variant == "onesweep" and told.values["keys_per_item"] == (8 if tuned else 12)
    assert tiles == [12, 12, 8, 12]
    # the sort of device buffers reads them alike
    buffers = [device.to_device(keys), device.to_device(values), device.alloc(keys.nbytes), device.alloc(values.nbytes)]
    for with_values in (True, False):
        sorts.sort_words(
            device, buffers[0], buffers[1] if with_values else None, buffers[2], buffers[3] if with_values else None, n
        )
        got_keys, got_values = np.empty_like(keys), np.empty_like(values)
        device.download(buffers[2], got_keys)
        np.testing.assert_array_equal(got_keys, keys[order])
        if with_values:
            device.download(buffers[3], got_values)
            np.testing.assert_array_equal(got_values, values[order])
    assert tiles[-2:] == [8, 12]
    # pairs tuned at 5,000 only: at 2^16, where the keys were tuned, the keys' entry is nearer
    tile = {**keys_entry.params["onesweep"], "keys_per_item": 16}
    near = dataclasses.replace(keys_entry, size=1 << 16, params={"onesweep": tile})
    database.store([near])
    more = rng.integers(0, 1 << 32, 1 << 16, dtype=np.uint32)
    got_keys, got_values = ps.sort(more, np.arange(more.size, dtype=np.uint32), device=device)
    np.testing.assert_array_equal(got_values, np.argsort(more, kind="stable"))
    assert tiles[-1] == 16


# dispatch and explain -----------------------------------------------------------------------


def _tuned_scan(device, size=1 << 12):
    entry = database.for_device(
        device,
        "scan",
        size,
        order=("hillis_steele", "blelloch"),
        params={"hillis_steele": {"WG": 64}, "blelloch": {"WG": 128}},
        seconds={"hillis_steele": 1e-4, "blelloch": 2e-4},
        measured={"date": "2025-01-01"},
    )
    database.store([entry])


def test_dispatch_runs_the_tuned_variant_with_its_parameters(monkeypatch, rng):
    device = _pocl()
    _tuned_scan(device)
    calls = []
    original = scans._ENQUEUE["hillis_steele"]

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setitem(scans._ENQUEUE, "hillis_steele", spy)
    x = rng.integers(0, 100, 5000, dtype=np.int32)
    got = ps.scan(x, device=device)
    np.testing.assert_array_equal(got, np.concatenate([[0], np.cumsum(x[:-1])]).astype(np.int32))
    assert calls == [{"WG": 64}]
    ps.scan(x, device=device, WG=256)  # the caller's value comes first
    assert calls[-1] == {"WG": 256}
    assert registry.preferred("scan", device, 5000)[:2] == ["hillis_steele", "blelloch"]


def test_tuned_values_that_do_not_fit_give_way_to_fitted_ones():
    device = _pocl()
    variant = registry.get("scan", "vector_blocks")
    too_wide = {"WG": 1 << 20}
    assert registry.fit(variant, device, {}, too_wide, None) == variant.fitted(device, None)
    assert registry.fit(variant, device, {}, {"NOPE": 1}, None) == variant.fitted(device, None)


def test_tuned_values_the_device_refuses_at_launch_give_way_to_untuned_ones(shipped, monkeypatch):
    """A tuned work-group the requirements allow but the built kernel does not run (1024
    through CUDA, 256 on NVIDIA's OpenCL) gives way to the variant's own, named or not, and
    later calls take the variant's own at once; a call without tuned values raises as before."""
    from parskel.errors import LaunchError

    monkeypatch.setattr(registry, "_REFUSED", set())

    device = _pocl()
    default = registry.get("scan", "hillis_steele").fitted(device, None)["WG"]
    database.write(
        shipped,
        [
            database.for_device(
                device,
                "scan",
                1000,
                order=("hillis_steele",),
                params={"hillis_steele": {"WG": 64}},
                seconds={},
                measured={},
            )
        ],
    )
    database.reload()
    seen: list[int] = []

    def call(variant, values):
        seen.append(values["WG"])
        if values["WG"] == 64:
            raise LaunchError("a work-group of 64 work-items exceeds the limit for this kernel")
        return variant.name

    assert registry.dispatch("scan", device, "hillis_steele", {}, call, {"n": 1000}) == "hillis_steele"
    assert registry.dispatch("scan", device, None, {}, call, {"n": 1000}) == "hillis_steele"
    assert registry.dispatch("scan", device, None, {}, call, {"n": 1000}) == "hillis_steele"
    assert seen == [64, default, default, default]
    with pytest.raises(LaunchError):
        registry.dispatch("scan", device, "hillis_steele", {"WG": 64}, call, {"n": 1000})


def test_explain_names_the_tuned_choice_and_its_source(shipped):
    # shipped: no shipped entries, so that the untuned choice comes from preferred.json here too
    device = _pocl()
    target = targets.find("scan")
    before = explain(target, device, 1 << 12)
    assert "preferred.json" in before.order_source and before.variant == registry.preferred("scan", device)[0]
    _tuned_scan(device)
    after = explain(target, device, 1 << 12)
    assert (after.variant, after.values) == ("hillis_steele", {"WG": 64})
    assert "1st of the variants tuned on this device at n=2^12 (user overlay, 2025-01-01)" in after.text()
    assert "WG=64: tuned on this device" in after.text()
    assert after.as_dict()["params_source"].startswith("tuned on this device")


def test_explain_says_what_it_passed_over_and_what_was_fitted(monkeypatch):
    device = _pocl()
    table = json.loads(json.dumps(registry._preferences()))
    table[device.type]["sort"] = ["local_bitonic"] + [n for n in table[device.type]["sort"] if n != "local_bitonic"]
    monkeypatch.setattr(registry, "_preferences", lambda: table)  # the small-input sort first, as on GPUs
    monkeypatch.setattr(database, "lookup", lambda *_: None)  # and no tuned entry for the device
    monkeypatch.setattr(registry, "lookup", lambda *_: None)
    big = explain(targets.find("sort"), device, 1 << 24)
    assert big.variant != "local_bitonic"
    assert any(name == "local_bitonic" and "4096" in why for name, why in big.passed_over)
    small = explain(targets.find("sort"), device, 100)
    assert small.variant == "local_bitonic" and not small.passed_over
    assert small.values_source == "the variant's defaults"


# --write-defaults ---------------------------------------------------------------------------


def test_the_shipped_preferred_table_is_valid():
    assert defaults.problems(defaults.read_preferred()) == []
    assert database.read(database.shipped_path()) is not None


def test_write_defaults_writes_a_valid_table_and_both_entries(tmp_path, monkeypatch, shipped):
    device = _pocl()
    table_path = tmp_path / "preferred.json"
    table_path.write_text(defaults.preferred_path().read_text())
    monkeypatch.setattr(defaults, "preferred_path", lambda: table_path)
    with Store(tuner.store_path()) as store:
        outcomes = tuner.tune(
            targets.find("scan"), device, [3000], _scan_settings(evaluations=None, only={"WG": (64,)}), store
        )
    written = defaults.write_defaults(outcomes, "test")
    assert written == [shipped, table_path]
    table = json.loads(table_path.read_text())
    assert defaults.problems(table) == []
    measured = [m.config.variant for m in outcomes[0].best_by_variant()]
    cpu = table["cpu"]["scan"]
    assert sorted(cpu) == sorted(v.name for v in registry.variants("scan"))
    assert [n for n in cpu if n in measured] == measured
    assert "vendor:amd" not in table  # a CPU's vendor key would reach that vendor's GPUs too
    levels = sorted(e.level for e in database.read(shipped))
    assert levels == ["device", "vendor"]


def test_write_defaults_writes_one_entry_a_key_the_first_outcomes(tmp_path, monkeypatch, shipped):
    """Outcomes whose entries share a key (two searches of one device in one run) write one
    entry for it, the first outcome's, not one each."""
    device = _pocl()
    table_path = tmp_path / "preferred.json"
    table_path.write_text(defaults.preferred_path().read_text())
    monkeypatch.setattr(defaults, "preferred_path", lambda: table_path)
    with Store(tuner.store_path()) as store:
        first, second = (
            tuner.tune(
                targets.find("scan"), device, [3000], _scan_settings(evaluations=None, only={"WG": (wg,)}), store
            )[0]
            for wg in (64, 128)
        )
    defaults.write_defaults([first, second], "test")
    entries = database.read(shipped)
    assert sorted(e.level for e in entries) == ["device", "vendor"]
    assert all(e.params == first.entry("test", e.level).params for e in entries)


def test_write_defaults_of_a_skeleton_keeps_the_table_and_writes_its_entries(tmp_path, monkeypatch, shipped):
    # a skeleton's work-group has no variants to order: the table is left as it was
    device = _pocl()
    table_path = tmp_path / "preferred.json"
    table_path.write_text(defaults.preferred_path().read_text())
    monkeypatch.setattr(defaults, "preferred_path", lambda: table_path)
    before = table_path.read_text()
    settings = tuner.Settings(strategy="brute", budget=None, evaluations=2, reps=1, only={"WG": (32, 64)})
    with Store(tuner.store_path()) as store:
        outcomes = tuner.tune(targets.find("skeletons.map"), device, [4096], settings, store)
    assert defaults.write_defaults(outcomes, "test") == [shipped, table_path]
    assert table_path.read_text() == before
    assert sorted((e.family, e.level) for e in database.read(shipped)) == [
        ("skeletons.map", "device"),
        ("skeletons.map", "vendor"),
    ]


def test_a_search_of_small_sizes_leaves_the_table_to_the_larger_size_tuned_before(tmp_path, monkeypatch, shipped):
    """Entries for the small size are written, but the coarse table keeps the order that the
    device's larger size decided; without an entry at a larger size the small one decides."""
    device = _pocl()
    table_path = tmp_path / "preferred.json"
    table_path.write_text(defaults.preferred_path().read_text())
    monkeypatch.setattr(defaults, "preferred_path", lambda: table_path)
    only = {"WG": (64,)}
    with Store(tuner.store_path()) as store:  # each size measures another variant: their orders differ
        small = tuner.tune(targets.find("scan"), device, [300], _scan_settings(variants={"blelloch"}, only=only), store)
        large = tuner.tune(
            targets.find("scan"), device, [3000], _scan_settings(variants={"vector_blocks"}, only=only), store
        )
    assert not defaults.larger_known(shipped, small[0])
    defaults.write_defaults(large, "test")
    after_large = table_path.read_text()
    assert json.loads(after_large)["cpu"]["scan"][0] == "vector_blocks"
    assert defaults.larger_known(shipped, small[0]) and not defaults.larger_known(shipped, large[0])
    defaults.write_defaults(small, "test")
    assert table_path.read_text() == after_large
    assert sorted(e.size for e in database.read(shipped) if e.level == "device") == [300, 3000]


def test_the_objective_can_be_chosen_and_is_recorded(capsys, monkeypatch):
    device = _pocl()
    seen = []
    original = tuner.objective
    monkeypatch.setattr(tuner, "objective", lambda target, *a: seen.append(target.objective) or original(target, *a))
    args = ["tune", "scan", "--device", device.id, "--sizes", "1000", "--evaluations", "2", "--reps", "1"]
    assert main([*args, "--variants", "hillis_steele", "--objective", "kernel", "--json"]) == 0
    assert seen and set(seen) == {"kernel"}
    entry = database.lookup("scan", device, 1000)
    assert entry is not None and entry.entry.measured["objective"] == "kernel"
    assert main([*args, "--objective", "fastest"]) == 2
    assert "unknown objective 'fastest'" in capsys.readouterr().err


def test_algorithms_minimize_kernel_time_where_the_device_has_its_own_memory():
    result = SimpleNamespace(status="ok", kernel=0.001, e2e=0.010)
    scan = targets.find("scan")
    assert scan.objective == "device"
    gpu = SimpleNamespace(shares_host_memory=False)
    cpu = SimpleNamespace(shares_host_memory=True)
    assert tuner.objective(scan, result, gpu) == 0.001
    assert tuner.objective(scan, result, cpu) == 0.010


def test_invalid_tables_are_reported():
    assert defaults.problems({"cpu": {"scan": ["vector_blocks", "nope"]}}) == ["cpu/scan: unknown variants ['nope']"]
    assert defaults.problems({"gpu": {"nofamily": []}}) == ["gpu: unknown family 'nofamily'"]


# the command line ---------------------------------------------------------------------------


def test_tune_then_explain_then_the_call_uses_it(capsys, monkeypatch):
    device = _pocl()
    args = ["tune", "scan", "--device", device.id, "--sizes", "2^12", "--evaluations", "3", "--reps", "1"]
    args += ["--variants", "hillis_steele,blelloch", "--strategy", "anneal"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "3 of 10 points evaluated, 3 measured now" in first
    assert main(args) == 0
    assert "3 of 10 points evaluated, 0 measured now" in capsys.readouterr().out
    assert main(["explain", "scan", "--size", "2^12", "--device", device.id, "--json"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert said["variant_source"].startswith("1st of the variants tuned on this device")
    chosen, values = said["variant"], said["params"]
    seen = []
    original = scans._ENQUEUE[chosen]
    monkeypatch.setitem(scans._ENQUEUE, chosen, lambda *a, **k: seen.append(k) or original(*a, **k))
    x = np.arange(4096, dtype=np.int32) % 7
    np.testing.assert_array_equal(ps.scan(x, device=device), np.concatenate([[0], np.cumsum(x[:-1])]).astype(np.int32))
    assert seen == [values]


def test_a_study_kernel_is_tuned_through_the_same_interface(capsys):
    device = _pocl()
    assert main(["tune", "crc", "--device", device.id, "--sizes", "5000", "--evaluations", "3", "--reps", "1"]) == 0
    out = capsys.readouterr().out
    assert "crc at n=5000" in out and "3 of 198 points evaluated" in out  # the seed's 18 and combined's 180
    entry = database.lookup("study.crc", device, 5000)
    assert entry is not None and entry.entry.order[0] in {v.name for v in registry.variants("study.crc")}


@pytest.mark.parametrize(
    "args, message",
    [
        (["tune", "nosuch"], "nothing to tune named 'nosuch'"),
        (["tune", "scan", "--strategy", "genetic"], "unknown strategy 'genetic'"),
        (["tune", "scan", "--variants", "quick"], "scan has no variant quick"),
        (["tune", "scan", "--set", "WG=3"], "--set WG: [3] not among its values"),
        (["tune", "scan", "--set", "TILE=8"], "no chosen variant of scan has a parameter TILE"),
        (["tune", "scan", "--set", "WG"], "--set takes NAME=VALUE"),
        (["tune"], "name a family or kernel"),
        (["explain", "nosuch"], "nothing to tune named 'nosuch'"),
    ],
)
def test_mistakes_are_clean_errors(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("budget", ["-1", "0.5", "soon"])
def test_a_bad_budget_is_refused_before_anything_runs(capsys, budget):
    with pytest.raises(SystemExit) as stop:
        main(["tune", "scan", "--budget", budget])
    assert stop.value.code == 2
    assert "--budget" in capsys.readouterr().err


def test_a_skeleton_takes_its_tuned_work_group(capsys):
    device = _pocl()
    assert main(["explain", "skeletons.map", "--device", device.id]) == 0
    assert "WG=256: the skeletons' default" in capsys.readouterr().out
    args = ["tune", "skeletons.map", "--device", device.id, "--sizes", "4096", "--set", "WG=32,64", "--reps", "1"]
    assert main([*args, "--strategy", "brute"]) == 0
    best = database.lookup("skeletons.map", device).entry.params["map"]["WG"]
    assert best in (32, 64)
    square = ps.Map("float f(float x) { return x * x; }")
    with ps.using(device):
        x = np.arange(1000, dtype=np.float32)
        np.testing.assert_array_equal(square(ps.Vector(x)).numpy(), x * x)
        (plan,) = square._plans.values()
    assert plan.group == best


def test_a_study_kernel_runs_its_tuned_variant(monkeypatch):
    from parskel.study import STUDIES, crc

    device = _pocl()
    entry = database.for_device(
        device,
        "study.crc",
        5000,
        order=("unrolling",),
        params={"unrolling": {"UNROLL": 4}},
        seconds={"unrolling": 1e-3},
        measured={},
    )
    database.store([entry])
    seen = []
    original = crc.compute
    monkeypatch.setattr(crc, "compute", lambda *a, **k: seen.append(k) or original(*a, **k))
    data = np.random.default_rng(5).integers(0, 256, 5000, dtype=np.uint8)
    np.testing.assert_array_equal(STUDIES["crc"].run(device, data), crc.shares(data))
    assert seen == [{"unroll": 4}]
