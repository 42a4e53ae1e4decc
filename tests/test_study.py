"""``parskel study``: every variant of seed 002's five kernels against host references, on every
device, at small sizes (0, 1 and sizes that are no multiple of a block); the findings rules on
synthetic timings; the command. The NVRTC build of every study kernel is in test_cuda.py."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections import deque
from types import SimpleNamespace

import numpy as np
import pytest

from parskel.bench.harness import Result
from parskel.cli import main
from parskel.errors import LaunchError
from parskel.runtime import round_down_to_power_of_two
from parskel.study import STUDIES, bfs, crc, default_settings, findings, lud, needle, srad
from parskel.study.base import COMBINED
from parskel.study.findings import DeviceFacts
from parskel.study.runner import run


def _points(name: str):
    return STUDIES[name].grid()


# the kernels, every variant ---------------------------------------------------------------------


def _ran(point, device, *args):
    """The point's result, or None where the device cannot run its work-group geometry (a kernel
    of NVIDIA's OpenCL may take at most 256 work-items; the study records such points skipped)."""
    try:
        return point.variant.run(device, *args, **point.values)
    except LaunchError:
        return None


@pytest.mark.parametrize("name", ["lud_perimeter", "lud_internal"])
def test_lud_variants_factor_the_matrix(device, name):
    for n in (0, 1, 45):
        (a,) = lud.make(n, np.random.default_rng(n))
        kept = a.copy()
        for point in _points(name):
            got = _ran(point, device, a)
            if got is None:
                continue
            lower, upper = np.tril(got, -1) + np.eye(n), np.triu(got)
            error = np.abs(lower.astype(np.float64) @ upper - a).max(initial=0.0)
            assert error <= 1e-5 * n, f"{point.label} at {n}: L U is off by {error}"
            assert lud.check(got, a) is None
        assert np.array_equal(a, kept)


def test_lud_check_refuses_a_wrong_factor(device):
    (a,) = lud.make(64, np.random.default_rng(2))
    good = lud.run_baseline(device, a)
    for i, j in ((63, 0), (20, 40), (40, 20)):
        bad = good.copy()
        bad[i, j] += 0.01
        assert lud.check(bad, a) is not None, (i, j)
    bad = good.copy()
    bad[5, 5] = np.nan
    assert "not finite" in (lud.check(bad, a) or "")


def test_crc_shares_add_up_to_the_bytewise_crc(device):
    assert crc.crc8(b"123456789") == 0xF4  # CRC-8 (polynomial 0x07)'s catalogued check value
    for n in (0, 1, 1000, 4099):
        (data,) = crc.make(n, np.random.default_rng(n))
        expected = crc.crc8(data.tobytes())
        for point in _points("crc"):
            got = _ran(point, device, data)
            if got is None:
                continue
            total = int(np.bitwise_xor.reduce(got)) if n else 0
            assert total == expected, f"{point.label} at {n}"
            assert np.array_equal(got, crc.shares(data)), f"{point.label} at {n}"


@pytest.mark.parametrize(
    "params",
    [
        {"COARSEN": 1, "UNROLL": 32, "DIVIDE": 1},
        {"COARSEN": 16, "UNROLL": 1, "DIVIDE": 32},
        {"COARSEN": 8, "UNROLL": 2, "DIVIDE": 16},
        {"COARSEN": 2, "UNROLL": 8, "DIVIDE": 2},
    ],
)
def test_crc_combined_at_other_levels(device, params):
    """The combined variant away from its defaults (the grid measures those): every level of
    each optimization at once still gives each byte's share, at sizes no multiple of a group."""
    variant = next(v for v in STUDIES["crc"].variants() if v.name == "combined")
    if variant.unmet(device, params):
        pytest.skip(f"{device.id} cannot run {params}: {variant.unmet(device, params)}")
    for n in (1, 4099):
        (data,) = crc.make(n, np.random.default_rng(5))
        assert np.array_equal(crc.run_combined(device, data, **params), crc.shares(data)), (params, n)


@pytest.mark.parametrize(
    "study, name, params",
    [
        ("lud_internal", "blocked", {"BS": 16, "ROWS": 8, "COLS": 1, "UNROLL": 8}),
        ("lud_internal", "blocked", {"BS": 64, "ROWS": 4, "COLS": 8, "UNROLL": 2}),
        ("lud_internal", "blocked", {"BS": 32, "ROWS": 1, "COLS": 4, "UNROLL": 1}),
        ("lud_internal", "blocked", {"BS": 16, "ROWS": 2, "COLS": 2, "UNROLL": 4}),
        ("lud_perimeter", "combined", {"BS": 16, "COARSEN": 1, "VECTOR": 0, "UNROLL": 8}),
        ("lud_perimeter", "combined", {"BS": 32, "COARSEN": 16, "VECTOR": 1, "UNROLL": 4}),
        ("lud_perimeter", "combined", {"BS": 64, "COARSEN": 2, "VECTOR": 1, "UNROLL": 2}),
        ("lud_perimeter", "combined", {"BS": 64, "COARSEN": 8, "VECTOR": 0, "UNROLL": 1}),
    ],
)
def test_lud_combined_variants_at_other_levels(device, study, name, params):
    """The optimizations of one lud kernel at once, at levels away from the defaults, on a
    matrix of no block's multiple (100): the perimeter's rows of varying length leave
    remainders after the unrolled steps."""
    variant = next(v for v in STUDIES[study].variants() if v.name == name)
    if variant.unmet(device, params):
        pytest.skip(f"{device.id} cannot run {params}: {variant.unmet(device, params)}")
    (a,) = lud.make(100, np.random.default_rng(6))
    try:
        got = variant.run(device, a, **params)
    except LaunchError as exc:  # more registers or local memory than such a group has here
        pytest.skip(str(exc))  # (NVIDIA's OpenCL adds a few bytes to BS 64's three blocks)
    assert lud.check(got, a) is None


def test_the_perimeter_combined_space_leaves_out_one_value_vectors(device):
    from parskel.tune import targets, tuner

    space = tuner.space_for(targets.find("lud_perimeter"), device, 256, tuner.Settings(strategy="brute", budget=None))
    combined = [c.values for c in space.points if c.variant == "combined"]
    assert combined and all(p["COARSEN"] >= 2 for p in combined if p["VECTOR"])
    fits = sum(3 * bs * bs * 4 <= device.info.local_mem_bytes for bs in (16, 32, 64))
    assert len(combined) == fits * (5 + 4) * 4  # scalar at 5 coarsenings, vectors at 4; 4 unrollings


def test_a_combined_variant_is_one_point_of_the_study():
    for name in ("crc", "lud_perimeter", "lud_internal"):
        combined = [p for p in _points(name) if COMBINED in p.variant.tags]
        assert len(combined) == 1 and combined[0].values == combined[0].variant.resolve()
        assert combined[0].label == combined[0].variant.name


def test_the_tuner_searches_every_level_of_the_combined_variants(device):
    """Spaces counted from the choices and the requirements: crc's DIVIDE must leave a
    work-item of the base group (at most 1024), groups needs 2 compute units; lud_internal's
    blocked needs its (BS / COLS) x (BS / ROWS) group and the perimeter's 3 BS^2 floats."""
    from parskel.tune import targets, tuner

    info = device.info
    base = round_down_to_power_of_two(min(1024, info.max_work_group_size))
    settings = tuner.Settings(strategy="brute", budget=None)

    target = targets.find("crc")
    expected = 0
    for variant in target.variants():
        levels = [sum(1 for v in p.choices if p.name != "DIVIDE" or v <= base) for p in variant.params]
        expected += math.prod(levels) * (variant.name != "groups" or info.compute_units >= 2)
    space = tuner.space_for(target, device, 1 << 16, settings)
    assert len(space) == expected > 100
    assert sum(c.variant == "combined" for c in space.points) == 5 * 6 * sum(d <= base for d in (1, 2, 4, 8, 16, 32))

    target = targets.find("lud_internal")
    blocked = target.variant("blocked")
    fits = 0
    for values in itertools.product(*(p.choices for p in blocked.params)):
        p = dict(zip((q.name for q in blocked.params), values))
        group = (p["BS"] // p["COLS"]) * (p["BS"] // p["ROWS"])
        fits += group <= info.max_work_group_size and 3 * p["BS"] ** 2 * 4 <= info.local_mem_bytes
    space = tuner.space_for(target, device, 256, settings)
    assert sum(c.variant == "blocked" for c in space.points) == fits


def test_a_divide_that_leaves_no_work_item_is_refused_before_building():
    small = SimpleNamespace(id="small", info=SimpleNamespace(max_work_group_size=24, compute_units=4))
    for name in ("geometry", "combined"):
        variant = next(v for v in STUDIES["crc"].variants() if v.name == name)
        assert not variant.unmet(small, {"DIVIDE": 16})  # 16 of a base group of 16
        assert variant.unmet(small, {"DIVIDE": 32})


def _alignment(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Needleman-Wunsch as written in the textbooks, one cell at a time."""
    score = np.zeros((a.size + 1, b.size + 1), dtype=np.int64)
    score[0] = -needle.PENALTY * np.arange(b.size + 1)
    score[:, 0] = -needle.PENALTY * np.arange(a.size + 1)
    for i in range(1, a.size + 1):
        for j in range(1, b.size + 1):
            match = score[i - 1, j - 1] + needle.BLOSUM62[a[i - 1], b[j - 1]]
            score[i, j] = max(match, score[i, j - 1] - needle.PENALTY, score[i - 1, j] - needle.PENALTY)
    return score


def test_needle_variants_score_like_the_textbook(device):
    assert np.array_equal(needle.BLOSUM62, needle.BLOSUM62.T) and needle.BLOSUM62[17, 17] == 11  # W-W
    for n in (0, 1, 45, 130):
        inputs = needle.make(n, np.random.default_rng(n))
        expected = _alignment(inputs[0], inputs[1]) if n < 100 else needle.scores(inputs[0], inputs[1])
        for point in _points("needle"):
            got = point.variant.run(device, *inputs, **point.values)
            assert np.array_equal(got, expected), f"{point.label} at {n}"


def _srad_pixelwise(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One SRAD step written out pixel by pixel, neighbours clamped at the border."""
    rows, cols = image.shape
    j = image.astype(np.float64)
    q0 = float(srad.q0sqr(image))
    c = np.zeros_like(j)
    deltas = np.zeros((rows, cols, 4))
    at = lambda r, k: j[min(max(r, 0), rows - 1), min(max(k, 0), cols - 1)]
    for r in range(rows):
        for k in range(cols):
            d = [at(r - 1, k) - j[r, k], at(r + 1, k) - j[r, k], at(r, k - 1) - j[r, k], at(r, k + 1) - j[r, k]]
            g2 = sum(x * x for x in d) / j[r, k] ** 2
            lap = sum(d) / j[r, k]
            q = (0.5 * g2 - lap * lap / 16) / (1 + 0.25 * lap) ** 2
            c[r, k] = min(max(1 / (1 + (q - q0) / (q0 * (1 + q0))), 0.0), 1.0)
            deltas[r, k] = d
    out = np.empty_like(j)
    for r in range(rows):
        for k in range(cols):
            south, east = c[min(r + 1, rows - 1), k], c[r, min(k + 1, cols - 1)]
            n, s, w, e = deltas[r, k]
            out[r, k] = j[r, k] + 0.25 * srad.LAMBDA * (c[r, k] * n + south * s + c[r, k] * w + east * e)
    return out, c


def test_srad_variants_step_like_the_pixelwise_stencil(device):
    for n in (1, 17, 40):
        (image,) = srad.make(n, np.random.default_rng(n))
        expected = _srad_pixelwise(image) if n < 20 else srad.reference(image)
        for point in _points("srad"):
            got = _ran(point, device, image)
            if got is None:
                continue
            assert srad.check(got, expected) is None, f"{point.label} at {n}: {srad.check(got, expected)}"
    empty = np.zeros((0, 0), np.float32)
    assert all(r.shape == (0, 0) for r in srad.run_baseline(device, empty))


def _levels(starts: np.ndarray, degrees: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Breadth-first search with a queue, from node 0."""
    cost = np.full(starts.size, -1, dtype=np.int32)
    if starts.size:
        cost[0], queue = 0, deque([0])
        while queue:
            v = queue.popleft()
            for w in edges[starts[v] : starts[v] + degrees[v]]:
                if cost[w] < 0:
                    cost[w] = cost[v] + 1
                    queue.append(w)
    return cost


def test_bfs_variants_find_the_queue_levels(device):
    for n in (0, 1, 700):
        graph = bfs.make(n, np.random.default_rng(n))
        expected = _levels(*graph)
        assert np.array_equal(bfs.levels(*graph), expected)
        for point in _points("bfs"):
            got = _ran(point, device, *graph)
            assert got is None or np.array_equal(got, expected), point.label


def test_every_variant_names_its_seed_section_and_the_baseline_comes_first():
    for study in STUDIES.values():
        variants = study.variants()
        assert variants[0].name == "baseline" and variants[0].params == ()
        assert all(v.seed.startswith(("002 ", "beyond 002 ")) for v in variants)
        assert len({p.label for p in study.grid()}) == len(study.grid())


# skipped with the reason, not a crash --------------------------------------------------------


def test_what_a_device_cannot_hold_is_skipped_with_the_reason(device, monkeypatch):
    # the device reports the limits of a smaller one for the length of the test
    smaller = dataclasses.replace(device.info, max_work_group_size=256, max_alloc_bytes=1 << 15)
    monkeypatch.setattr(device, "info", smaller)
    settings = default_settings(["srad", "crc"], sizes={"srad": (20,), "crc": (1 << 16,)}, reps=1)
    results = run([device], settings)
    by = {(r.family, r.subject, r.params): r for r in results}
    assert by[("study.srad", "padding", "BS=32")].status == "skipped"
    assert "work-groups of BS x BS" in by[("study.srad", "padding", "BS=32")].message
    assert by[("study.srad", "padding", "BS=16")].status == "ok"
    assert all(r.status == "skipped" and "largest allocation" in r.message for r in results if r.family == "study.crc")


def test_a_budget_stops_a_point_before_sizes_it_would_take_too_long_at(device, monkeypatch):
    from parskel.study import runner

    monkeypatch.setattr(runner, "predicted", lambda case, result, size, calls: 100.0 * size)
    settings = default_settings(["srad"], sizes={"srad": (8, 16, 32)}, reps=1, budget=1000.0)
    results = run([device], settings)
    statuses = [(r.size, r.status) for r in results if r.subject == "baseline"]
    assert statuses == [(8, "ok"), (16, "skipped"), (32, "skipped")]
    # skipped by the budget, or (a device whose work-groups are smaller: NVIDIA's OpenCL) by BS=32's
    budget = [r for r in results if r.status == "skipped" and "work-group" not in r.message]
    assert budget and all("over 1000 s (judged at size 8)" in r.message for r in budget)


def test_a_time_limit_skips_what_is_left(device):
    settings = default_settings(["bfs"], sizes={"bfs": (50,)}, reps=1, time_limit=1e-9)
    results = run([device], settings)
    assert results and all(r.status == "skipped" and "time limit" in r.message for r in results)


# the findings rules on synthetic timings ---------------------------------------------------------

CPU = DeviceFacts("cpu:0", "a CPU", "cpu", 4096)
GPU = DeviceFacts("gpu:0", "a GPU", "gpu", 1024)


def _timed(study: str, subject: str, params: str, where: str, size: int, kernel: float) -> Result:
    return Result(f"study.{study}", subject, "variant", where, size, "ok", reps=1, kernel=kernel, params=params)


def _claim(key: str) -> findings.Claim:
    return next(c for c in findings.CLAIMS if c.key == key)


def _verdict(key: str, device: DeviceFacts, results: list[Result], others=(CPU, GPU)) -> findings.Verdict:
    return findings.judge(_claim(key), device, results, list(others))


def test_findings_faster_and_slower_take_the_best_level():
    results = [
        _timed("lud_perimeter", "baseline", "", "cpu:0", 100, 1.0),
        _timed("lud_perimeter", "granularity", "COARSEN=2", "cpu:0", 100, 1.0 / 1.10),  # 1.10x: just helps
        _timed("lud_perimeter", "granularity", "COARSEN=4", "cpu:0", 100, 2.0),
        _timed("lud_perimeter", "baseline", "", "gpu:0", 100, 1.0),
        _timed("lud_perimeter", "granularity", "COARSEN=2", "gpu:0", 100, 1.05),  # 0.95x: not slower enough
        _timed("lud_perimeter", "granularity", "COARSEN=4", "gpu:0", 100, 3.0),
    ]
    assert _verdict("coarsening", CPU, results).verdict == "holds"
    assert _verdict("coarsening", GPU, results).verdict == "does not hold"
    results[4] = _timed("lud_perimeter", "granularity", "COARSEN=2", "gpu:0", 100, 1.2)
    assert _verdict("coarsening", GPU, results).verdict == "holds"
    assert "0.33-0.83x at 100" in _verdict("coarsening", GPU, results).detail


def test_findings_take_the_largest_size_and_growth_needs_two():
    small = [
        _timed("lud_perimeter", "baseline", "", "cpu:0", 100, 1.0),
        _timed("lud_perimeter", "granularity", "COARSEN=2", "cpu:0", 100, 0.8),  # 1.25x
    ]
    assert _verdict("coarsening_grows", CPU, small).verdict == "not measured"
    grown = small + [
        _timed("lud_perimeter", "baseline", "", "cpu:0", 200, 1.0),
        _timed("lud_perimeter", "granularity", "COARSEN=2", "cpu:0", 200, 0.5),  # 2x >= 1.1 x 1.25x
    ]
    assert _verdict("coarsening_grows", CPU, grown).verdict == "holds"
    assert _verdict("coarsening", CPU, grown).detail.endswith("2.00x at 200; expected faster")
    flat = small + [
        _timed("lud_perimeter", "baseline", "", "cpu:0", 200, 1.0),
        _timed("lud_perimeter", "granularity", "COARSEN=2", "cpu:0", 200, 0.78),
    ]
    assert _verdict("coarsening_grows", CPU, flat).verdict == "does not hold"
    assert _verdict("coarsening_grows", GPU, grown).verdict == "n/a"


def test_findings_partly_and_not_measured():
    results = [
        _timed("lud_internal", "baseline", "", "gpu:0", 64, 1.0),
        _timed("lud_internal", "transposed", "", "gpu:0", 64, 2.0),  # slower: agrees
        _timed("lud_internal", "vectorization", "WIDTH=4", "gpu:0", 64, 0.5),  # faster: does not
    ]
    assert _verdict("vectors_rearranged", GPU, results).verdict == "partly"
    assert _verdict("vectors_rearranged", CPU, results).verdict == "not measured"
    results.append(Result("study.lud_internal", "transposed", "variant", "cpu:0", 64, "skipped", message="no"))
    assert _verdict("vectors_rearranged", CPU, results).verdict == "not measured"


def test_findings_steady_and_references_other_than_the_baseline():
    results = [_timed("bfs", "baseline", "", "gpu:0", 10, 1.0)]
    results += [_timed("bfs", "geometry", f"WG={w}", "gpu:0", 10, 1.0 + d) for w, d in ((128, 0.05), (256, -0.05))]
    assert _verdict("group_size_harmless", GPU, results).verdict == "holds"
    results.append(_timed("bfs", "geometry", "WG=512", "gpu:0", 10, 1.2))
    assert _verdict("group_size_harmless", GPU, results).verdict == "does not hold"
    groups = [
        _timed("crc", "groups", "PERCENT=50", "cpu:0", 10, 2.0),
        _timed("crc", "groups", "PERCENT=100", "cpu:0", 10, 1.0),
    ]
    assert _verdict("fewer_groups_than_cores", CPU, groups).verdict == "holds"
    vectors = [
        _timed("lud_perimeter", "baseline", "", "gpu:0", 10, 1.0),
        _timed("lud_perimeter", "granularity", "COARSEN=4", "gpu:0", 10, 2.0),
        _timed("lud_perimeter", "vectorization", "COARSEN=4", "gpu:0", 10, 1.0),  # 2x over granularity 4
    ]
    verdict = _verdict("vectors_contiguous", GPU, vectors)
    assert verdict.verdict == "does not hold" and "vs granularity: 2.00x" in verdict.detail


def test_findings_compare_the_cpu_with_the_gpus():
    results = [
        _timed("needle", "baseline", "", "cpu:0", 10, 1.0),
        _timed("needle", "geometry", "BS=32", "cpu:0", 10, 1.25),  # 0.8x
        _timed("needle", "baseline", "", "gpu:0", 10, 1.0),
        _timed("needle", "geometry", "BS=32", "gpu:0", 10, 4.0),  # 0.25x
    ]
    assert _verdict("heavy_items", CPU, results).verdict == "holds"
    assert _verdict("heavy_items", CPU, results, others=[CPU]).verdict == "not measured"
    assert _verdict("heavy_items", GPU, results).verdict == "holds"


def test_findings_on_work_group_limits():
    refused = Result(
        "study.lud_internal", "geometry", "variant", "gpu:0", 64, "skipped", params="BS=64",
        message="gpu:0 lacks work-groups of BS x BS work-items (the internal kernel)",
    )  # fmt: skip
    ran = _timed("lud_internal", "geometry", "BS=64", "cpu:0", 64, 1.0)
    assert _verdict("work_group_limits", CPU, [ran, refused]).verdict == "holds"  # 4096, not 1024
    assert _verdict("work_group_limits", GPU, []).verdict == "does not hold"
    verdict = _verdict("work_group_limits", GPU, [ran, refused])
    assert verdict.verdict == "holds" and "lud_internal geometry BS=64" in verdict.detail


def test_findings_markdown_has_a_row_per_claim_and_a_column_per_device():
    text = findings.markdown(findings.evaluate([], [CPU, GPU]), [CPU, GPU])
    lines = text.strip().splitlines()
    assert len(lines) == 2 + len(findings.CLAIMS)
    assert all(line.count("|") == 5 for line in lines)
    assert "**n/a**" in text and "**not measured**" in text


# the command --------------------------------------------------------------------------------------


def test_study_command_stores_checks_and_reports(tmp_path, device, capsys):
    argv = ["study", "crc", "srad", "--variants", "granularity,padding", "--sizes", "crc=5000", "--sizes", "srad=33"]
    rc = main([*argv, "--reps", "1", "--device", device.id, "--out", str(tmp_path), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    seen = {(r["family"], r["subject"], r["params"], r["status"]) for r in out["results"]}
    assert ("study.crc", "granularity", "COARSEN=16", "ok") in seen
    # srad at BS=32 takes 32 x 32 work-items, more than some devices' kernels run (NVIDIA's OpenCL)
    (wide,) = [r for r in out["results"] if r["subject"] == "padding" and r["params"] == "BS=32"]
    assert wide["status"] == "ok" or (wide["status"] == "skipped" and "work-group" in wide["message"])
    assert {r["status"] for r in out["results"] if r is not wide} == {"ok"} and len(out["results"]) == 5 + 3
    assert {f["claim"] for f in out["findings"]} == {c.key for c in findings.CLAIMS}
    report = tmp_path / "report"
    page = (report / "index.html").read_text()
    assert "padding" in page and "Findings" in page and (report / "crc-5000.png").exists()
    assert "| Padding the data" in (report / "findings.md").read_text()
    assert (report / f"findings-{device.id.replace(':', '-')}.md").exists()
    assert main(["study", "--redraw", "--out", str(tmp_path)]) == 0
    assert main(["report", "--out", str(tmp_path)]) == 2  # the bench report leaves study runs alone
    assert "no bench runs" in capsys.readouterr().err


def test_study_quick_runs_a_kernel_with_its_progress(tmp_path, device, capsys):
    assert main(["study", "needle", "--quick", "--device", device.id, "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "Seed 002's conclusions" in err and "report:" in err


@pytest.mark.parametrize(
    "argv, says",
    [
        (["study", "lu"], "choose from all, lud, lud_perimeter, lud_internal, crc, needle, srad, bfs"),
        (["study", "crc", "--variants", "tiles"], "choose from baseline, crc/baseline, granularity"),
        (["study", "--sizes", "nope=10"], "unknown kernel 'nope'"),
    ],
)
def test_unknown_names_list_the_valid_ones(argv, says, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_redraw_without_results_and_the_listing(tmp_path, capsys):
    assert main(["study", "--redraw", "--out", str(tmp_path)]) == 2
    assert "no results" in capsys.readouterr().err
    assert main(["study", "--list"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in STUDIES) and "granularity_adjacent" in listing
