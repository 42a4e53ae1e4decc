"""The report: its files exist, the PNGs are real images, the page references them, CSV holds the rows."""

from __future__ import annotations

import csv
import re

import matplotlib.image
import pytest

import parskel as ps
from parskel.bench import Store, write_report
from parskel.bench.harness import Result
from parskel.bench.summary import summarize
from parskel.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _results(dev_id: str, scale: float) -> list[Result]:
    out = []
    for size in (1024, 4096, 16384):
        t = size * 1e-8 * scale
        for name, kind, where, seconds in (
            ("blelloch", "variant", dev_id, t),
            ("vector_blocks", "variant", dev_id, t / 2),
            ("loop", "baseline", "host", t * 3),
            ("numpy", "peer", "host", t),
        ):
            timed = kind == "variant"
            out.append(
                Result(
                    "scan",
                    name,
                    kind,
                    where,
                    size,
                    "ok",
                    reps=3,
                    e2e=seconds,
                    e2e_min=seconds * 0.9,
                    e2e_max=seconds * 1.1,
                    kernel=seconds / 4 if timed else None,
                    upload=seconds / 4 if timed else None,
                    download=seconds / 4 if timed else None,
                    other=0.0 if timed else None,
                    compile=0.1,
                    figure=8 * size / seconds / 1e9,
                    metric="GB/s",
                )
            )
    out.append(
        Result("scan", "hillis_steele", "variant", dev_id, 1024, "wrong", metric="GB/s", message="3 wrong elements")
    )
    out.append(
        Result(
            "matmul",
            "naive",
            "variant",
            dev_id,
            64,
            "ok",
            reps=3,
            e2e=1e-3,
            e2e_min=1e-3,
            e2e_max=1e-3,
            kernel=5e-4,
            upload=1e-4,
            download=1e-4,
            other=0.0,
            figure=0.5,
            metric="GFLOP/s",
        )
    )
    return out


@pytest.fixture
def store(tmp_path):
    dev = ps.devices()[0]
    with Store(tmp_path / "results.sqlite") as s:
        for scale in (1.0, 0.5):
            run = s.begin("parskel bench scan", {"reps": 3, "warmup": 1, "sizes": {"scan": [1024, 4096, 16384]}}, [dev])
            s.add(run, _results(dev.id, scale))
            s.finish(run, ["CuPy peers skipped: CuPy is not installed"])
        yield s


def _check_page(page):
    text = page.read_text()
    images = re.findall(r'<img src="([^"]+)"', text)
    assert images
    for name in images:
        data = (page.parent / name).read_bytes()
        assert data.startswith(PNG_MAGIC)
        pixels = matplotlib.image.imread(page.parent / name)
        assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    for name in ("results.csv", "summary.csv"):
        assert f'href="{name}"' in text
    return text, images


def test_report_of_the_latest_run(store, tmp_path):
    page = write_report(store, tmp_path / "report")
    text, images = _check_page(page)
    assert "Run 2" in text and "Run 1" not in text
    dev = ps.devices()[0]
    for fact in (
        dev.info.driver_version,
        dev.name,
        "numpy",
        "1024, 4096, 16384",
        "CuPy is not installed",
        "3 wrong elements",
    ):
        assert fact in text
    assert any(name.endswith("-time.png") for name in images)
    assert any(name.endswith("-split.png") for name in images)
    assert any(name.endswith("-speedup.png") for name in images)
    with (tmp_path / "report" / "summary.csv").open() as f:
        rows = list(csv.DictReader(f))
    scan = [r for r in rows if r["family"] == "scan"]
    assert [r["best"] for r in scan] == ["vector_blocks"] * 3
    assert float(scan[0]["vs_baseline"]) == pytest.approx(6.0)
    assert float(scan[0]["vs_peer"]) == pytest.approx(2.0)
    with (tmp_path / "report" / "results.csv").open() as f:
        assert len(list(csv.DictReader(f))) == len(_results(dev.id, 1.0))


def test_report_compares_runs(store, tmp_path):
    page = write_report(store, tmp_path / "both", [1, 2])
    text, images = _check_page(page)
    assert "Run 1" in text and "Run 2" in text
    assert "compare-scan.png" in images


def test_summary_ratios():
    rows = summarize(_results("opencl:0:0", 1.0))
    assert {(r.family, r.size) for r in rows} == {("scan", 1024), ("scan", 4096), ("scan", 16384), ("matmul", 64)}
    matmul = next(r for r in rows if r.family == "matmul")
    assert matmul.vs_baseline is None and matmul.vs_peer is None


def test_report_command(store, tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path), "--all-runs"]) == 0
    page = tmp_path / "report" / "index.html"
    assert capsys.readouterr().out.strip() == str(page)
    _check_page(page)


def test_report_command_without_results(tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path / "nothing")]) == 2
    assert "parskel bench" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [[], ["--run", "1"], ["--run", "1", "--run", "2"]])
def test_report_command_latest_and_chosen_runs(store, tmp_path, capsys, extra):
    assert main(["report", "--out", str(tmp_path), *extra]) == 0
    _check_page(tmp_path / "report" / "index.html")


def test_report_of_an_unknown_run_is_a_clean_error(store, tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path), "--run", "99"]) == 2
    err = capsys.readouterr().err
    assert "99" in err and "Traceback" not in err
