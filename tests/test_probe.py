"""``parskel probe``: its kernels compute what they claim (checked against host computations of
the same chains, mappings and reads), they compile with NVRTC and keep every operation, the
peaks follow from what a device reports, profiles round-trip, ``parskel bench`` shows the
fraction of the measured peak when a profile exists, and the command and its bad input."""

from __future__ import annotations

import json
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from parskel.bench import Store, write_report
from parskel.bench.harness import Result
from parskel.bench.progress import print_summary
from parskel.bench.roofline import of_peak
from parskel.bench.summary import summarize
from parskel.cli import main
from parskel.errors import ParskelError
from parskel.probe import Figure, Peak, Profile, launches, load, plan, probe, save
from parskel.probe import global_memory as gm
from parskel.probe import local_memory as lm
from parskel.probe.display import print_profile
from parskel.probe.instructions import OPERATIONS, PATH, measure_chain
from parskel.probe.peaks import PUBLISHED, peaks
from parskel.probe.profile import key, record
from parskel.probe.timing import Settings
from parskel.runtime import DeviceInfo
from test_cuda import NVRTC, NVRTC_WHY, nvrtc_ptx  # the NVRTC library, where it can be loaded

# the chains --------------------------------------------------------------------------------

# inputs with which the host can follow each chain exactly: fma with a = 0.75 keeps x * a within
# 26 bits, so x * a + b is exact in float64 and rounding it to float32 is the single rounding of
# a fused multiply-add
INPUTS = {
    "fp32 add": (1.0, 0.1, 0.0),
    "fp32 mul": (1.0, 1.0001, 0.0),
    "fp32 fma": (1.0, 0.75, 0.5),
    "fp64 fma": (1.0, 0.75, 0.5),
    "fp32 rsqrt": (4.0, 0.0, 0.0),
    "int32 add": (5.0, 0.0, 3.0),
    "int32 mul": (5.0, 0.0, 3.0),
}
MASK = (1 << 32) - 1


def _chain_on_host(name: str, lane: int, steps: int, chains: int) -> tuple[float | int, bool]:
    """The kernel's stored result for one work-item, and whether it stores (result != 0)."""
    start, a, b = INPUTS[name]
    if name.startswith("int"):
        xs = [(int(start) + 2 * c + 2 * (lane & 15)) & MASK for c in range(chains)]
        ys = [(int(b) + 2 * c) & MASK for c in range(chains)]
        for _ in range(steps):
            for c in range(chains):
                if name == "int32 add":
                    xs[c] = (xs[c] + ys[c]) & MASK
                    ys[c] = (ys[c] + xs[c]) & MASK
                else:
                    xs[c] = (xs[c] * ys[c]) & MASK
                    ys[c] = (ys[c] * xs[c]) & MASK
        total = 0
        for x, y in zip(xs, ys):
            total = (total + x + y) & MASK
        return total, total != 0
    single = name.startswith("fp32")
    real = np.float32 if single else np.float64
    xs = [real(real(real(start) + real(2 * c)) + real(2 * (lane & 15))) for c in range(chains)]
    for _ in range(steps):
        for c in range(chains):
            x = xs[c]
            if name == "fp32 add":
                xs[c] = real(x + real(a))
            elif name == "fp32 mul":
                xs[c] = real(x * real(a))
            elif name == "fp32 rsqrt":
                xs[c] = real(1.0 / np.sqrt(np.float64(x)))
            elif single:  # fused: exact in float64 for these inputs, then one rounding
                xs[c] = real(np.float64(x) * a + b)
            else:
                xs[c] = real(float(Fraction(float(x)) * Fraction(a) + Fraction(b)))
    total = xs[0]
    for x in xs[1:]:
        total = real(total + x)
    return total, total != 0


CHAIN_CASES = [(name, 3, 4) for name in OPERATIONS] + [("fp32 fma", c, u) for c, u in ((1, 0), (2, 0), (1, 4))]


@pytest.mark.parametrize("name, chains, unroll", CHAIN_CASES)
def test_chain_stores_the_host_computation_when_the_flag_is_set(device, name, chains, unroll):
    op = OPERATIONS[name]
    if op.ctype == "double" and not device.info.fp64:
        pytest.skip(f"{device.id} has no fp64")
    steps, items = 10, 40  # 10 is not a multiple of the unrolling: the remainder runs too
    kernel = device.program(PATH, op.defines(chains, unroll, steps)).kernel("chain")
    sentinel = op.dtype.type(7)
    t = op.dtype.type
    start, a, b = INPUTS[name]
    for flag in (1, 0):
        out = device.to_device(np.full(items, sentinel, op.dtype))
        device.launch(kernel, items, None, out, t(start), t(a), t(b), np.int32(flag))
        got = np.empty(items, op.dtype)
        device.download(out, got)
        expected = []
        for lane in range(items):
            value, stored = _chain_on_host(name, lane, steps, chains)
            expected.append(value if stored and flag else sentinel)
        want = np.array(expected, dtype=op.dtype)
        if name == "fp32 rsqrt":  # native_rsqrt is only approximately 1 / sqrt
            np.testing.assert_allclose(got, want, rtol=1e-3)
        elif name == "fp32 mul":  # a GPU compiler may fuse the last product into the chains' sum
            np.testing.assert_array_max_ulp(got, want, maxulp=1)
        else:
            np.testing.assert_array_equal(got, want)


def test_a_quick_plan_sweeps_fp32_fma_and_spot_checks_the_rest(device):
    chosen = plan(device, Settings.preset(True), ["instructions"])
    labels = [s.label for s in chosen]
    assert sum(label.startswith("fp32 fma") for label in labels) == 8
    assert sum(label.startswith("int32 mul") for label in labels) == 2
    full = plan(device, Settings.preset(False), ["instructions"])
    assert len(full) == 4 * 2 * (len(OPERATIONS) - (0 if device.info.fp64 else 1))


def test_a_chain_measurement_counts_every_operation(device):
    settings = Settings(quick=True, target=1e-3, reps=1)
    (figure,) = measure_chain(device, settings, OPERATIONS["int32 add"], 2, 64)
    items = figure.params["work-items"]
    assert figure.unit == "Gop/s" and figure.params["chains"] == 2
    assert figure.value == pytest.approx(items * 2 * 1024 * 2 / figure.seconds / 1e9)


# memory kernels ------------------------------------------------------------------------------


def _owned(mapping: str, items: int, group: int, per_item: int) -> list[list[int]]:
    """The elements each work-item touches, from seed 003's definitions of the mappings."""
    owned = []
    for i in range(items):
        if mapping == "one-to-one":
            owned.append([i])
        elif mapping == "contiguous":
            owned.append([i * per_item + k for k in range(per_item)])
        elif mapping == "strided":
            owned.append([i + k * items for k in range(per_item)])
        else:
            g, loc = divmod(i, group)
            owned.append([g * group * per_item + loc + k * group for k in range(per_item)])
    return owned


@pytest.mark.parametrize("mapping", list(gm.MAPPINGS))
@pytest.mark.parametrize("access", list(gm.ACCESSES))
def test_traffic_kernels_touch_each_element_as_the_mapping_says(device, rng, mapping, access):
    group, per_item = 32, 1 if mapping == "one-to-one" else 4
    n = 3 * group * 4  # 384: not a power of two
    items = n // per_item
    defines = {"MAPPING": gm.MAPPINGS[mapping], "ACCESS": gm.ACCESSES[access], "PER_ITEM": per_item, "T": "float"}
    kernel = device.program(gm.PATH, defines).kernel("traffic")
    host = rng.random(n, dtype=np.float32)
    src = device.to_device(host)
    dst = device.to_device(np.full(n, -1.0, np.float32))
    device.launch(kernel, items, group, src, dst, np.float32(2.5), np.int32(1))
    got = np.empty(n, np.float32)
    device.download(dst, got)
    owned = _owned(mapping, items, group, per_item)
    assert sorted(j for js in owned for j in js) == list(range(n))  # the mapping covers the data once
    if access == "copy":
        np.testing.assert_array_equal(got, host)
    elif access == "write":
        np.testing.assert_array_equal(got, np.full(n, 2.5, np.float32))
    else:
        want = np.array([np.sum(host[js], dtype=np.float64) for js in owned])
        np.testing.assert_allclose(got[:items], want, rtol=1e-6)
        assert (got[items:] == -1.0).all()


@pytest.mark.parametrize("stride", [1, 3, 32])
def test_stride_copy_copies_every_strideth_element(device, rng, stride):
    items = 64
    n = items * 32 + 7  # room for the largest stride, not a power of two
    kernel = device.program(gm.PATH, {"T": "float"}).kernel("stride_copy")
    host = rng.random(n, dtype=np.float32)
    src, dst = device.to_device(host), device.to_device(np.zeros(n, np.float32))
    device.launch(kernel, items, 32, src, dst, np.uint32(stride))
    got = np.empty(n, np.float32)
    device.download(dst, got)
    touched = np.arange(items) * stride
    want = np.zeros(n, np.float32)
    want[touched] = host[touched]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("stride", [1, 32, 33])
def test_local_reads_sum_the_words_they_claim(device, stride):
    words, repeats, group, groups = 256, 64, 64, 3
    kernel = device.program(lm.PATH, {"WORDS": words, "STRIDE": stride, "REPEATS": repeats}).kernel("local_reads")
    out = device.to_device(np.full(group * groups, -1.0, np.float32))
    device.launch(kernel, group * groups, group, out, np.int32(1))
    got = np.empty(group * groups, np.float32)
    device.download(out, got)
    local = np.arange(words) & 7
    want = [sum(int(local[(lid * stride + r) % words]) for r in range(repeats)) for lid in range(group)] * groups
    expected = np.where(np.array(want) != 0, np.array(want, np.float32), -1.0)
    np.testing.assert_array_equal(got, expected)


def test_pinned_host_memory_round_trips(device, rng):
    pinned = device.empty_pinned((3, 5), np.float32)
    assert pinned.shape == (3, 5) and pinned.dtype == np.float32 and pinned.flags.c_contiguous
    pinned[:] = rng.random((3, 5), dtype=np.float32)
    buffer = device.to_device(pinned)
    back = device.empty_pinned(15, np.float32)
    device.download(buffer, back)
    np.testing.assert_array_equal(back, pinned.reshape(-1))


# NVRTC ----------------------------------------------------------------------------------------

PTX_INSTRUCTION = {
    "fp32 add": ("add.f32",),
    "fp32 mul": ("mul.f32", "fma.rn.f32"),
    "fp32 fma": ("fma.rn.f32",),
    "fp64 fma": ("fma.rn.f64",),
    "fp32 rsqrt": ("rsqrt.approx.f32",),
    "int32 add": ("add.s32",),
    "int32 mul": ("mul.lo.s32", "mad.lo.s32"),
}


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
@pytest.mark.parametrize("name", list(OPERATIONS))
@pytest.mark.parametrize("unroll", [0, 16])
def test_chains_build_with_nvrtc_and_keep_every_operation(name, unroll):
    """The compiler may neither fold a chain nor drop it: the PTX holds one instruction per
    operation (with flag = 0 at run time, it cannot know the result is unused)."""
    op, steps, chains = OPERATIONS[name], 64, 4
    ptx = nvrtc_ptx(PATH, op.defines(chains, unroll, steps))
    counts = Counter(re.findall(r"^\s+([a-z]+\.[a-z0-9.]+)", ptx, re.M))
    per_body = steps if unroll == 0 else unroll
    assert sum(counts[i] for i in PTX_INSTRUCTION[name]) >= per_body * chains * op.per_step


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
@pytest.mark.parametrize(
    "path, defines",
    [(gm.PATH, {"MAPPING": m, "ACCESS": a, "PER_ITEM": 16, "T": "float"}) for m in (1, 2, 3, 4) for a in (0, 1, 2)]
    + [(lm.PATH, {"STRIDE": s}) for s in (1, 32)]
    + [("probe/empty.cl", {})],
)
def test_memory_kernels_build_with_nvrtc(path, defines):
    assert ".entry" in nvrtc_ptx(path, defines)


# peaks -------------------------------------------------------------------------------------


def _info(**changes) -> DeviceInfo:
    base = dict(
        id="cuda:0",
        backend="cuda",
        name="NVIDIA H200",
        vendor="NVIDIA Corporation",
        type="gpu",
        platform="CUDA",
        platform_version="CUDA runtime 13.0",
        version="compute capability 9.0",
        driver_version="13.0",
        compute_units=132,
        clock_mhz=1980,
        global_mem_bytes=1 << 37,
        max_alloc_bytes=1 << 37,
        local_mem_bytes=49152,
        max_work_group_size=1024,
        max_work_item_sizes=(1024, 1024, 64),
        preferred_vector_widths={"float": 1, "double": 1},
        fp64=True,
        compute_capability="9.0",
        memory_clock_mhz=3201,
        memory_bus_bits=6144,
    )
    base.update(changes)
    return DeviceInfo(**base)  # type: ignore[arg-type]


def test_peaks_are_derived_from_what_cuda_reports():
    found = peaks(_info())
    assert found["fp32"].derived == pytest.approx(132 * 1.980 * 128 * 2)
    assert found["fp64"].derived == pytest.approx(132 * 1.980 * 64 * 2)
    assert found["bandwidth"].derived == pytest.approx(2 * 3.201 * 6144 / 8)
    assert found["fp32"].published == PUBLISHED["NVIDIA H200"]["fp32"]
    assert "132 multiprocessors" in found["fp32"].basis


def test_opencl_without_memory_clock_says_so_and_uses_the_published_figure():
    info = _info(backend="opencl", platform="NVIDIA CUDA", memory_clock_mhz=0, memory_bus_bits=0, compute_capability="")
    found = peaks(info)
    assert found["bandwidth"].derived is None and "OpenCL reports neither" in found["bandwidth"].basis
    assert found["bandwidth"].value == 4800.0
    assert found["fp32"].derived is None and "compute capability" in found["fp32"].basis
    assert "published" in found["bandwidth"].describe()


def test_an_unknown_gpu_gets_no_guess():
    info = _info(name="Some GPU", vendor="Other", compute_capability="", memory_clock_mhz=0, backend="opencl")
    found = peaks(info)
    assert all(p.value is None for p in found.values())
    assert found["fp32"].describe().startswith("unknown: ")


def test_a_cpu_peak_names_its_assumption(device):
    if device.type != "cpu":
        pytest.skip("a CPU device")
    fp32 = peaks(device.info)["fp32"]
    width = device.info.preferred_vector_widths["float"]
    assert fp32.derived == pytest.approx(device.info.compute_units * device.info.clock_mhz * 1e-3 * width * 2)
    assert "assuming" in fp32.basis


# profiles ---------------------------------------------------------------------------------------


def _profile(device_info: dict, bandwidth: float = 100.0, flops: float = 1000.0) -> Profile:
    figures = [
        Figure("instructions", "fp32 fma", flops, "GFLOP/s", 0.01, {"chains": 8, "unroll": "full"}, "fp32"),
        Figure("instructions", "fp32 fma", flops / 4, "GFLOP/s", 0.04, {"chains": 1, "unroll": "full"}, "fp32"),
        Figure("global", "copy", bandwidth, "GB/s", 0.01, {"mapping": "one-to-one"}, "bandwidth"),
        Figure("stride", "copy", bandwidth / 2, "GB/s", 0.01, {"stride": 2}, "bandwidth"),
        Figure("transfers", "upload", bandwidth * 2, "GB/s", 0.01, {}, "bandwidth"),  # not device memory
        Figure("launch", "launch and wait", 20.0, "us", 2e-5),
    ]
    return Profile(
        device=device_info,
        measured="2026-01-01T00:00:00+00:00",
        command="parskel probe",
        quick=True,
        peaks={"fp32": Peak("fp32", 2000.0, "test"), "bandwidth": Peak("bandwidth", None, "unknown", 400.0)},
        figures=figures,
        versions={"parskel": "test"},
    )


def test_a_profile_round_trips_and_knows_its_peaks(tmp_path, device):
    profile = _profile(record(device.info))
    path = save(profile, tmp_path)
    assert path.name == f"{key(device.info)}.json"
    assert load(device.info, tmp_path) == profile
    assert profile.measured_peak("bandwidth") == 100.0  # a transfer is not device memory
    assert profile.measured_fraction("fp32") == pytest.approx(0.5)
    assert profile.fraction(profile.figures[2]) == pytest.approx(0.25)  # of the published 400
    assert profile.fraction(profile.figures[5]) is None
    data = json.loads(path.read_text())
    assert data["measured_peaks"] == {"fp32": 1000.0, "bandwidth": 100.0}


def test_a_missing_or_stale_profile_is_none(tmp_path, device):
    assert load(device.info, tmp_path) is None
    path = save(_profile(record(device.info)), tmp_path)
    path.write_text(json.dumps({"schema": 0}))
    assert load(device.info, tmp_path) is None


def test_a_partial_probe_keeps_the_other_sections(device):
    older = _profile(record(device.info))
    newer = Profile(older.device, "later", "", True, older.peaks, [Figure("global", "copy", 5.0, "GB/s", 1.0)])
    merged = newer.merged(older)
    sections = ["instructions", "instructions", "global", "stride", "launch", "transfers"]
    assert [f.section for f in merged.figures] == sections
    assert [f.value for f in merged.figures if f.section == "global"] == [5.0]


# bench reads the profile -------------------------------------------------------------------------


def _results(dev_id: str) -> list[Result]:
    def result(family: str, size: int, e2e: float, kernel: float, figure: float, metric: str) -> Result:
        timed = dict(e2e=e2e, e2e_min=e2e, e2e_max=e2e, kernel=kernel, upload=0.0, download=0.0, other=0.0)
        return Result(family, "v", "variant", dev_id, size, "ok", reps=1, figure=figure, metric=metric, **timed)

    return [
        result("reduce", 1 << 20, 4e-3, 1e-4, 4 * (1 << 20) / 4e-3 / 1e9, "GB/s"),
        result("matmul", 256, 1e-2, 1e-3, 2 * 256**3 / 1e-2 / 1e9, "GFLOP/s"),
        result("sort", 1 << 20, 2e-2, 1e-2, (1 << 20) / 2e-2 / 1e6, "Mkeys/s"),
    ]


def test_summary_rows_carry_the_fraction_of_the_measured_peak(device):
    profile = _profile(record(device.info))
    rows = {r.family: r for r in summarize(_results(device.id), {device.id: profile})}
    assert rows["reduce"].of_peak == pytest.approx(4 * (1 << 20) / 4e-3 / 1e9 / 100.0)
    assert rows["reduce"].kernel_of_peak == pytest.approx(4 * (1 << 20) / 1e-4 / 1e9 / 100.0)
    assert rows["matmul"].kernel_of_peak == pytest.approx(2 * 256**3 / 1e-3 / 1e9 / 1000.0)
    assert rows["sort"].kernel_of_peak == pytest.approx(8 * (1 << 20) / 1e-2 / 1e9 / 100.0)
    assert of_peak("no-such-family", 10, 1.0, profile) is None
    assert all(r.of_peak is None for r in summarize(_results(device.id)))


def test_bench_summary_and_report_show_the_column_only_with_a_profile(tmp_path, device, monkeypatch):
    console = Console(record=True, width=250)
    print_summary(console, summarize(_results(device.id)), [], [])
    assert "% of peak" not in console.export_text()
    profile = _profile(record(device.info))
    save(profile)  # into the test's own $PARSKEL_PROFILES
    console = Console(record=True, width=250)
    print_summary(console, summarize(_results(device.id), {device.id: profile}), [], [])
    text = console.export_text()
    assert "% of peak" in text and "1.05 % / 41.9 %" in text  # reduce: 1.05 and 41.9 GB/s of 100

    with Store(tmp_path / "results.sqlite") as store:
        run = store.begin("parskel bench", {"reps": 1, "warmup": 1}, [device])
        store.add(run, _results(device.id))
        store.finish(run, [])
        (tmp_path / "report").mkdir()
        (tmp_path / "report" / f"probe-{profile.key}.html").write_text("<html></html>")
        page = write_report(store, tmp_path / "report")
    html = page.read_text()
    assert "% of peak" in html and f"run{run}-roofline-" in html and f"probe-{profile.key}.html" in html
    roofline = next(Path(page.parent).glob("run*-roofline-*.png"))
    assert roofline.read_bytes().startswith(b"\x89PNG")
    summary = (page.parent / "summary.csv").read_text()
    assert "kernel_of_peak" in summary.splitlines()[0]


# the command ---------------------------------------------------------------------------------------


def test_a_failing_step_is_a_note_and_the_others_still_measure(device, monkeypatch):
    def refuse(*args, **kwargs):
        raise ParskelError("the driver refused the empty kernel")

    monkeypatch.setattr(launches, "measure_launch", refuse)
    profile = probe(device, quick=True, sections=["launch", "work-group"])
    assert profile.failures == ["launch: empty kernel: ParskelError: the driver refused the empty kernel"]
    assert {f.section for f in profile.figures} == {"work-group"}
    console = Console(record=True, width=200)
    print_profile(console, profile)
    assert "failed: launch: empty kernel" in console.export_text()


def test_probe_command_measures_stores_and_reports(tmp_path, capsys, device):
    argv = ["probe", "--quick", "--device", device.id, "--sections", "launch,transfers", "--out", str(tmp_path)]
    assert main([*argv, "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["profiles"]
    assert {f["section"] for f in entry["figures"]} == {"launch", "transfers"}
    assert all(f["value"] > 0 for f in entry["figures"])
    assert Path(entry["path"]).exists() and Path(entry["copy"]).parent == tmp_path
    assert Path(entry["report"]).read_text().count("<table>") >= 3
    stored = load(device.info)
    assert stored is not None and stored.command.startswith("parskel probe --quick")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "the cost of launching an empty kernel" in out and "upload, pinned" in out


@pytest.mark.parametrize(
    "argv, says",
    [
        (["probe", "--sections", "everything"], "unknown sections"),
        (["probe", "--sections", ","], "unknown sections"),
    ],
)
def test_probe_bad_arguments_are_usage_errors(argv, says, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_probe_of_an_unknown_device_or_into_a_file_is_a_clean_error(tmp_path, capsys):
    assert main(["probe", "--device", "no-such-device-xyz", "--out", str(tmp_path)]) == 2
    assert "no device matches" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["probe", "--quick", "--out", str(blocker / "x")]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "Traceback" not in err
