"""The benchmark harness on tiny sizes, its failure records, the results store and the command."""

from __future__ import annotations

import argparse
import dataclasses
import json
import weakref

import numpy as np
import pytest

from parskel.bench import Store, default_settings
from parskel.bench import peers_pyopencl as opencl_peers
from parskel.bench.cases import CASES, GROUPS, POLYNOMIAL, Subject, horner
from parskel.bench.harness import Result, measure, measure_together, sweep
from parskel.bench.peers import select
from parskel.bench.subjects import _POLYNOMIAL, _polynomial
from parskel.bench.summary import summarize
from parskel.cli import main
from parskel.cli.common import parse_sizes as _sizes
from parskel.runtime import Timing

SKELETON_FAMILIES = GROUPS["skeletons"]


def _tiny(groups, sizes, **kw):
    return default_settings(groups, sizes=sizes, reps=2, warmup=1, budget=0, **kw)


@pytest.mark.parametrize("family", ["matmul", "scan", "sort"])
def test_sweep_times_and_checks_every_variant(device, family):
    sizes = {"matmul": (1, 17), "scan": (1, 1000), "sort": (2, 1000)}[family]
    notes: list[str] = []
    results = sweep([device], _tiny([family], {family: sizes}, peers=frozenset({"cpu", "numpy"})), notes)
    variants = [r for r in results if r.kind == "variant"]
    assert variants, notes
    assert {r.size for r in results} == set(sizes)
    for r in results:
        assert r.status == "ok", (r.subject, r.size, r.message)
        assert r.e2e_min <= r.e2e <= r.e2e_max
        assert r.compile >= 0 and r.reps == 2 and len(r.samples) == 2
        assert r.figure > 0 and r.metric == CASES[family].metric
    for r in variants:
        assert r.where == device.id
        assert r.kernel is not None and r.upload is not None and r.download is not None
    kinds = {r.kind for r in results}
    assert "peer" in kinds  # NumPy at least


def test_sweep_of_skeletons_records_every_case(device):
    notes: list[str] = []
    settings = _tiny(
        ["reduce", "skeletons"],
        {f: (1, 300) for f in ("reduce", *SKELETON_FAMILIES)},
        peers=frozenset({"numpy"}),
    )
    results = sweep([device], settings, notes)
    families = {r.family for r in results}
    assert families == {"reduce", *SKELETON_FAMILIES}
    # each skeleton with C user functions and with the same ones in Python, both checked
    measured = {(r.family, r.subject) for r in results if r.kind == "variant" and r.status == "ok"}
    named = {"reduce": "reduce", "skeletons.map": "map", "skeletons.zip": "zip", "skeletons.scan": "scan"}
    named["skeletons.polynomial"] = "map"
    for family, name in named.items():
        assert {(family, f"skeleton_{name}"), (family, f"skeleton_{name}_python")} <= measured
    for r in results:
        if r.kind == "peer":
            assert r.status == "ok"
        assert r.status in ("ok", "wrong", "error")
        assert (r.e2e is None) == (r.status != "ok")


def test_the_polynomial_is_the_same_in_c_python_and_numpy():
    # the benchmark's polynomial is written three times: as C, as Python for the translator, and
    # as the coefficients NumPy's Horner evaluation takes
    x = np.linspace(-1.5, 1.5, 101)
    expected = sum(c * x ** (len(POLYNOMIAL) - 1 - k) for k, c in enumerate(POLYNOMIAL))
    np.testing.assert_allclose(horner(x), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_polynomial(x), expected, rtol=1e-12, atol=1e-12)
    for c in POLYNOMIAL:
        assert f"{c!r}f" in _POLYNOMIAL


def _case_subject(call):
    return Subject("scan", "fake", "variant", "nowhere", call)


def test_wrong_result_is_a_failure_not_a_time():
    case = CASES["scan"]
    inputs = case.make(50, np.random.default_rng(1))
    expected = case.reference(inputs)
    result = measure(case, _case_subject(lambda i: (expected + 1, None)), inputs, expected, 3, 1)
    assert result.status == "wrong" and result.e2e is None and "wrong elements" in result.message


def test_together_interleaves_calls_and_checks_each_new_result():
    """Subjects measured together take turns; a result equal to one that passed is not checked
    again, a different one is, and a wrong one fails only its own subject."""
    checked: list[str] = []
    base = CASES["scan"]
    case = dataclasses.replace(base, check=lambda got, want: checked.append("check") or base.check(got, want))
    inputs = case.make(50, np.random.default_rng(1))
    expected = case.reference(inputs)
    order: list[str] = []

    def subject(name, answers):
        answers = iter(answers)

        def call(_inputs):
            order.append(name)
            return next(answers).copy(), Timing(wall=1.0, kernel=0.5)

        return Subject("scan", name, "variant", "nowhere", call)

    steady = subject("steady", [expected] * 4)
    turning = subject("turning", [expected] * 3 + [expected + 1])
    results = measure_together(case, [steady, turning], inputs, expected, reps=3, warmup=1)
    # each round starts one subject later, so neither always follows the other's check
    assert order == ["steady", "turning", "turning", "steady"] * 2
    assert results[0].status == "ok" and results[0].kernel == 0.5 and results[0].reps == 3
    assert results[1].status == "wrong" and "wrong elements" in results[1].message
    assert len(checked) == 3  # each subject's first result, and the turning one's last


def test_a_measured_run_takes_the_unrecorded_call_s_time_and_the_recorded_split():
    """A subject with an unrecorded call (as a user makes it) is timed by that call; the split
    of its time comes from a recorded call beside it; warm-ups use the recorded call."""
    case = CASES["scan"]
    inputs = case.make(50, np.random.default_rng(1))
    expected = case.reference(inputs)
    calls: list[str] = []
    made: list[weakref.ref] = []

    def call(_inputs):
        # the unrecorded call's result is checked and dropped before the recorded call runs
        calls.append("recorded" if all(r() is None for r in made) else "recorded beside a result")
        return expected.copy(), Timing(wall=5.0, kernel=0.5)

    def plain(_inputs):
        calls.append("plain")
        result = expected.copy()
        made.append(weakref.ref(result))
        return result, 2.0

    subject = Subject("scan", "s", "variant", "nowhere", call, plain=plain)
    (result,) = measure_together(case, [subject], inputs, expected, reps=3, warmup=1)
    assert result.status == "ok" and result.e2e == 2.0 and result.kernel == 0.5
    assert calls == ["recorded"] + ["plain", "recorded"] * 3
    wrong = Subject("scan", "s", "variant", "nowhere", call, plain=lambda i: (expected + 1, 2.0))
    (result,) = measure_together(case, [wrong], inputs, expected, reps=3, warmup=1)
    assert result.status == "wrong"  # the unrecorded call's result is checked too


def test_exception_is_a_failure_with_its_reason():
    case = CASES["sort"]
    inputs = case.make(10, np.random.default_rng(1))

    def broken(_inputs):
        raise RuntimeError("the device caught fire")

    result = measure(case, _case_subject(broken), inputs, case.reference(inputs), 3, 1)
    assert result.status == "error" and "the device caught fire" in result.message


def test_compile_time_is_the_first_calls_excess():
    case = CASES["scan"]
    inputs = case.make(20, np.random.default_rng(1))
    expected = case.reference(inputs)
    calls = iter([(expected, Timing(wall=5.0))] + [(expected, Timing(wall=1.0, kernel=0.5))] * 3)
    result = measure(case, _case_subject(lambda i: next(calls)), inputs, expected, 3, 1)
    assert result.status == "ok"
    assert result.e2e == 1.0 and result.compile == pytest.approx(4.0) and result.kernel == 0.5


def test_budget_stops_slow_subjects_before_larger_sizes(monkeypatch):
    from parskel.bench import harness

    case = CASES["scan"]
    slow = Subject("scan", "slow", "baseline", "host", lambda i: (case.reference(i), Timing(wall=1.0)))
    monkeypatch.setattr(harness, "subjects_for", lambda *args: [slow])
    settings = default_settings(["scan"], sizes={"scan": (10, 20, 40)}, reps=1, warmup=1, budget=3.0)
    results = sweep([], settings, [])
    assert [r.status for r in results] == ["ok", "skipped", "skipped"]
    assert "3 s" in results[1].message


def test_inputs_beyond_the_host_s_memory_skip_that_size_and_larger_with_a_note(monkeypatch):
    """A size whose inputs the host cannot hold is skipped, with the larger ones, and said so;
    the smaller sizes are measured as usual."""
    from parskel.bench import harness

    case = CASES["scan"]
    made = case.make

    def make(n, rng):
        if n >= 40:
            raise MemoryError(f"Unable to allocate {n} TiB")
        return made(n, rng)

    monkeypatch.setitem(CASES, "scan", dataclasses.replace(case, make=make))
    steady = Subject("scan", "steady", "baseline", "host", lambda i: (case.reference(i), Timing(wall=1e-3)))
    monkeypatch.setattr(harness, "subjects_for", lambda *args: [steady])
    heard = []
    settings = default_settings(["scan"], sizes={"scan": (10, 20, 40, 80)}, reps=1, warmup=1, budget=0)
    results = sweep([], settings, [], lambda event, payload: heard.append((event, payload)))
    assert [r.status for r in results] == ["ok", "ok", "skipped", "skipped"]
    assert "no host memory for the inputs at n=40: Unable to allocate 40 TiB" in results[3].message
    why = "no host memory for the inputs at n=40: Unable to allocate 40 TiB"
    assert [p for e, p in heard if e == "note"] == [f"scan: {why}; this size and the larger ones are skipped"]


def test_store_round_trip(tmp_path, device):
    results = [
        Result(
            "scan",
            "blelloch",
            "variant",
            device.id,
            1024,
            "ok",
            reps=3,
            e2e=0.5,
            e2e_min=0.4,
            e2e_max=0.6,
            kernel=0.1,
            upload=0.2,
            download=0.2,
            compile=0.01,
            figure=1.5,
            metric="GB/s",
            samples=[0.4, 0.5, 0.6],
        ),
        Result("scan", "naive", "variant", device.id, 1024, "wrong", metric="GB/s", message="off by one"),
    ]
    with Store(tmp_path / "r.sqlite") as store:
        run_id = store.begin("parskel bench scan", {"reps": 3}, [device])
        store.add(run_id, results)
        store.finish(run_id, ["a note"])
    with Store(tmp_path / "r.sqlite") as store:
        run = store.latest()
        assert run is not None and run.id == run_id
        assert run.command == "parskel bench scan" and run.notes == ["a note"]
        assert run.devices[0]["id"] == device.id and run.devices[0]["driver"] == device.info.driver_version
        assert "numpy" in run.versions and run.finished
        assert store.results(run_id) == results
        second = store.begin("again", {}, [device])
        assert [r.id for r in store.runs()] == [run_id, second]


def test_sizes_option():
    assert _sizes("64..512") == (64, 128, 256, 512)
    assert _sizes("2^10..2^16:4") == (1024, 4096, 16384, 65536)
    assert _sizes("5, 3,2^3") == (3, 5, 8)
    assert _sizes("2^48") == (1 << 48,)
    with pytest.raises(argparse.ArgumentTypeError):
        _sizes("ten")
    with pytest.raises(argparse.ArgumentTypeError, match="at most 2"):
        _sizes("2^20,2^99")


def test_peer_selection():
    assert select(None) == select("all") == {"cpu", "numpy", "pyopencl", "cupy", "torch", "cub"}
    assert select("none") == set()
    assert select("numpy,cpu") == {"numpy", "cpu"}
    with pytest.raises(ValueError):
        select("matlab")


@pytest.mark.parametrize("size", [0, 1, 1000])
def test_pyopencl_peers_are_right(device, rng, size):
    ok, why = opencl_peers.available()
    if not ok or not opencl_peers.supports(device):
        pytest.skip(why or "not an OpenCL device")
    x = rng.integers(0, 10, size, dtype=np.int32)
    got, timing = opencl_peers.scan(device, x, inclusive=True)
    np.testing.assert_array_equal(got, np.cumsum(x, dtype=np.int32))
    assert timing.wall >= timing.kernel >= 0
    keys = rng.integers(0, 1 << 32, size, dtype=np.uint32)
    np.testing.assert_array_equal(opencl_peers.radix_sort(device, keys)[0], np.sort(keys))
    floats = rng.random(size, dtype=np.float32)
    assert opencl_peers.reduce_sum(device, floats)[0] == pytest.approx(floats.sum(dtype=np.float64), rel=1e-5)


def test_bench_command_stores_reports_and_prints_json(tmp_path, capsys, device):
    code = main(
        [
            "bench",
            "scan",
            "sort",
            "--device",
            device.id,
            "--sizes",
            "scan=1000",
            "--sizes",
            "64",
            "--variants",
            "blelloch,radix",
            "--peers",
            "numpy",
            "--reps",
            "1",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    variants = {(r["family"], r["subject"], r["size"]) for r in data["results"] if r["kind"] == "variant"}
    assert variants == {("scan", "blelloch", 1000), ("sort", "radix", 64)}
    assert {r["family"] for r in data["results"] if r["kind"] == "peer"} == {"scan", "sort"}
    assert all(r["status"] == "ok" for r in data["results"])
    assert {row["family"] for row in data["summary"]} == {"scan", "sort"}
    assert (tmp_path / "results.sqlite").exists()
    assert (tmp_path / "report" / "index.html").exists()


def test_bench_rejects_unknown_families(tmp_path, capsys):
    assert main(["bench", "fft", "--out", str(tmp_path)]) == 2
    assert "unknown family" in capsys.readouterr().err


def _scripted(walls):
    """A subject whose successive calls report the given wall times (and a right answer)."""
    times = iter(walls)

    def call(inputs):
        return np.sort(inputs[0]), Timing(kernel=0.0, wall=next(times))

    return Subject("sort", "scripted", "variant", "test", call)


def test_a_steady_measurement_is_not_remeasured():
    keys = np.arange(8, dtype=np.uint32)[::-1].copy()
    result = measure(CASES["sort"], _scripted([9.0, 1.0, 1.1, 1.05]), (keys,), np.sort(keys), reps=3, warmup=1)
    assert result.status == "ok" and result.reps == 3 and not result.unstable
    assert result.e2e == pytest.approx(1.05) and result.message == ""


def test_a_disturbed_measurement_is_measured_again_and_settles():
    keys = np.arange(8, dtype=np.uint32)
    walls = [9.0, 1.0, 2.0, 2.0] + [1.0] * 6  # one busy moment, then quiet
    result = measure(CASES["sort"], _scripted(walls), (keys,), keys, reps=3, warmup=1)
    assert result.reps == 9 and result.e2e == pytest.approx(1.0) and not result.unstable


def test_a_measurement_that_stays_disturbed_is_marked():
    keys = np.arange(8, dtype=np.uint32)
    walls = [9.0] + [1.0, 2.0, 2.0] * 3
    result = measure(CASES["sort"], _scripted(walls), (keys,), keys, reps=3, warmup=1)
    assert result.status == "ok" and result.unstable and "unstable" in result.message
    row = summarize([result])[0]
    assert row.unstable


def test_unstable_and_default_survive_the_store(tmp_path, device):
    result = Result(
        "sort",
        "radix",
        "variant",
        device.id,
        16,
        "ok",
        reps=3,
        e2e=1.0,
        e2e_min=0.5,
        e2e_max=1.0,
        metric="Mkeys/s",
        spread=1.0,
        default=True,
    )
    with Store(tmp_path / "r.sqlite") as store:
        run = store.begin("test", {}, [device])
        store.add(run, [result])
        (back,) = store.results(run)
    assert back.unstable and back.default and back.spread == pytest.approx(1.0)


def test_the_summary_puts_the_default_against_the_peer(device):
    def r(name, kind, seconds, default=False):
        return Result(
            "sort",
            name,
            kind,
            device.id if kind == "variant" else "host",
            1024,
            "ok",
            reps=3,
            e2e=seconds,
            e2e_min=seconds,
            e2e_max=seconds,
            metric="Mkeys/s",
            default=default,
        )

    (row,) = summarize(
        [r("radix", "variant", 2.0, default=True), r("bitonic", "variant", 1.0), r("numpy_sort", "peer", 4.0)]
    )
    assert (row.best, row.default) == ("bitonic", "radix")
    assert row.vs_peer == pytest.approx(4.0) and row.default_vs_peer == pytest.approx(2.0)


def test_the_sweep_marks_the_default_variant(device):
    from parskel.algorithms import registry

    sizes = (64, 5000)  # the single work-group sort takes the first only
    results = sweep([device], _tiny(["sort"], {"sort": sizes}, peers=frozenset()), [])
    for size in sizes:
        defaults = [r.subject for r in results if r.default and r.size == size]
        runnable = [v.name for v in registry.variants("sort") if not v.unmet(device, None, {"n": size})]
        # the database's order at that size, as parskel.sort dispatches
        assert defaults == [next(n for n in registry.preferred("sort", device, size) if n in runnable)]
    (large,) = [r for r in results if r.subject == "local_bitonic" and r.size == 5000]
    assert large.status == "skipped" and "at most" in large.message


def test_the_default_follows_the_tuning_database_at_each_size(tmp_path, monkeypatch, device):
    """Tuned at two sizes with opposite orders, the bench marks as default what parskel.scan
    dispatches to at each size, not one order for all sizes."""
    from parskel.bench.subjects import variant_subjects
    from parskel.tune import database

    first, second = "two_level_cpu", "chained_cpu"
    entries = [
        database.for_device(device, "scan", size, order=order, params={}, seconds={}, measured={"command": "a test"})
        for size, order in ((1000, (first, second)), (1 << 20, (second, first)))
    ]
    path = tmp_path / "defaults.json"
    database.write(path, entries)
    monkeypatch.setattr(database, "shipped_path", lambda: path)
    monkeypatch.setattr(database, "overlay_path", lambda: tmp_path / "none.json")
    database.reload()
    try:
        subjects = {s.name: s for s in variant_subjects("scan", device, {first, second}, [])}
        assert subjects[first].default_at(1000) and not subjects[second].default_at(1000)
        assert subjects[second].default_at(1 << 20) and not subjects[first].default_at(1 << 20)
    finally:
        monkeypatch.undo()
        database.reload()


def test_progress_is_a_line_per_measurement_in_a_log(tmp_path, device):
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "parskel",
            "bench",
            "sort",
            "--device",
            device.id,
            "--sizes",
            "64",
            "--variants",
            "radix",
            "--peers",
            "numpy",
            "--reps",
            "1",
            "--out",
            str(tmp_path),
            "--no-report",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "sort radix on" in out.stderr and "n=64" in out.stderr and "sort numpy n=64" in out.stderr


def test_the_overhead_group_times_public_calls_against_numpy(device, monkeypatch):
    from parskel.bench import overhead

    monkeypatch.setattr(overhead, "CALLS", 3)
    families = [f for f in CASES if f.startswith("overhead.")]
    settings = default_settings(["overhead"], reps=1, warmup=1, peers=frozenset({"numpy"}))
    results = sweep([device], settings, [])
    measured = set(families) - (set() if device.backend == "cuda" else {"overhead.scan_gpu"})  # data on a GPU
    assert {r.family for r in results} == measured
    for r in results:
        assert r.status == "ok", (r.family, r.subject, r.message)
        assert r.metric == "calls/s" and r.e2e > 0
    assert {r.family for r in results if r.subject == "parskel"} == measured


def test_warm_ups_reach_the_devices_steady_state(device, monkeypatch):
    """A parskel subject is warmed up as many calls as its device needs to run as it will from
    then on (PoCL's inline queue takes a kernel on a later call), alone or interleaved with
    others; host code and peers keep the warm-up asked for."""
    from parskel.bench.harness import measure_together

    monkeypatch.setattr(type(device), "warm_calls", property(lambda self: 4))
    keys = np.arange(8, dtype=np.uint32)[::-1].copy()
    counts = {"variant": 0, "peer": 0}

    def subject(kind: str, where: str) -> Subject:
        def call(inputs):  # a steady time, so that no repetitions are added
            counts[kind] += 1
            return np.sort(inputs[0]), Timing(kernel=0.0, wall=1.0)

        return Subject("sort", kind, kind, where, call)

    measure(CASES["sort"], subject("variant", device.id), (keys,), np.sort(keys), reps=3, warmup=1)
    measure(CASES["sort"], subject("peer", "host"), (keys,), np.sort(keys), reps=3, warmup=1)
    assert counts == {"variant": 4 + 3, "peer": 1 + 3}
    counts.update(variant=0, peer=0)
    subjects = [subject("variant", device.id), subject("peer", "host")]
    measure_together(CASES["sort"], subjects, (keys,), np.sort(keys), reps=3, warmup=1)
    assert counts == {"variant": 4 + 3, "peer": 4 + 3}
