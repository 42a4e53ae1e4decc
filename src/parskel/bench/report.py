"""The report of stored runs: an HTML page, PNG charts (matplotlib) and CSV tables in one folder.

Per run, family and device: time against size (log-log) with every variant, baseline and peer;
the upload / kernel / download split as stacked bars; the speedup over the CPU baseline and the
best peer. A summary table gives the best variant per size and its ratios. With several runs, a
chart per family compares the best variant of each run and device.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import matplotlib.pyplot as plt

from ..pages import escape as _e
from ..pages import save_chart as _save
from ..pages import slug as _slug
from ..pages import table as _table
from ..pages import write_csv as _write_csv
from ..pages import write_page
from ..probe import Profile
from ..probe.report import page_name
from .cases import CASES
from .harness import UNSTABLE, Result
from .progress import PEAK_COLUMN, ratio, seconds
from .roofline import ABOVE_PEAK_NOTE, peak_cell, profiles_of, roofline_chart
from .store import Run, Store
from .summary import Row, failures, fastest, speedup_over_baseline, summarize

_STYLE = {"variant": ("-", "o"), "baseline": ("--", "s"), "peer": (":", "^")}
_PHASES = (
    ("upload", "#4c72b0"),
    ("kernel", "#dd8452"),
    ("download", "#55a868"),
    ("other", "#8172b3"),
    ("host", "#bbbbbb"),
)


def _label(r: Result) -> str:
    return r.subject if r.kind == "variant" else f"{r.subject} ({r.kind}, {r.where})"


def _series(results: Sequence[Result]) -> dict[str, list[Result]]:
    out: dict[str, list[Result]] = {}
    for r in results:
        if r.status == "ok" and r.e2e:
            out.setdefault(_label(r), []).append(r)
    return out


def time_chart(results: Sequence[Result], title: str, path: Path) -> str | None:
    """End-to-end median time against size, log-log; bars span min to max."""
    series = _series(results)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, rs in series.items():
        line, marker = _STYLE[rs[0].kind]
        sizes = [r.size for r in rs]
        med = [r.e2e or 0.0 for r in rs]
        low = [m - (r.e2e_min or m) for m, r in zip(med, rs)]
        high = [(r.e2e_max or m) - m for m, r in zip(med, rs)]
        ax.errorbar(sizes, med, yerr=[low, high], linestyle=line, marker=marker, markersize=4, capsize=2, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    case = CASES.get(results[0].family)
    ax.set_xlabel(case.size_label if case else "size")
    ax.set_ylabel("time, host arrays in and out (s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, path)


def split_chart(results: Sequence[Result], title: str, path: Path) -> str | None:
    """Upload, kernel, download (and the rest) of each timed subject at the largest common size."""
    split = [r for r in results if r.status == "ok" and r.kernel is not None and r.e2e]
    if not split:
        return None
    size = max(r.size for r in split)
    rows = [r for r in split if r.size == size]
    fig, ax = plt.subplots(figsize=(8, 0.8 + 0.45 * len(rows)))
    names = [_label(r) for r in rows]
    left = [0.0] * len(rows)
    for phase, color in _PHASES:
        if phase == "host":
            parts = [max(0.0, (r.e2e or 0.0) - sum(_phase(r, p) for p, _ in _PHASES[:-1])) for r in rows]
        else:
            parts = [_phase(r, phase) for r in rows]
        parts_ms = [p * 1e3 for p in parts]
        ax.barh(names, parts_ms, left=left, color=color, label=phase if phase != "host" else "host side")
        left = [a + b for a, b in zip(left, parts_ms)]
    ax.set_xlabel(f"milliseconds at size {size} (medians)")
    ax.set_title(title)
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, path)


def _phase(r: Result, phase: str) -> float:
    value = getattr(r, phase)
    return float(value) if value is not None else 0.0


def speedup_chart(results: Sequence[Result], everything: Sequence[Result], title: str, path: Path) -> str | None:
    """Each variant's speedup over the CPU baseline and over the best peer, against size."""
    variants = _series([r for r in results if r.kind == "variant"])
    curves: list[tuple[str, str, list[int], list[float]]] = []
    for label, rs in variants.items():
        found = [(r.size, speedup_over_baseline(r, everything)) for r in rs]
        base = [(s, v) for s, v in found if v]
        if base:
            curves.append(("CPU baseline", label, [s for s, _ in base], [v for _, v in base]))
        over = [(r.size, _over_peer(r, everything)) for r in rs]
        peer = [(s, v) for s, v in over if v]
        if peer:
            curves.append(("best peer", label, [s for s, _ in peer], [v for _, v in peer]))
    if not curves:
        return None
    panels = [p for p in ("CPU baseline", "best peer") if any(c[0] == p for c in curves)]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        for _, label, sizes, values in (c for c in curves if c[0] == panel):
            ax.plot(sizes, values, marker="o", markersize=4, label=label)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{title}: speedup over the {panel}")
        ax.set_xlabel("size")
        ax.set_ylabel("times faster (above 1: parskel wins)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, path)


def _over_peer(result: Result, everything: Sequence[Result]) -> float | None:
    peer = fastest(r for r in everything if r.kind == "peer" and r.family == result.family and r.size == result.size)
    return (peer.e2e or 0.0) / result.e2e if peer and result.e2e else None


def comparison_chart(family: str, runs: Sequence[tuple[Run, list[Result]]], path: Path) -> str | None:
    """The best variant per size of each run and device, one line each."""
    fig, ax = plt.subplots(figsize=(8, 5))
    drawn = False
    for run, results in runs:
        for row_device, rows in _by_device([r for r in summarize(results) if r.family == family]).items():
            ax.plot(
                [r.size for r in rows],
                [r.seconds for r in rows],
                marker="o",
                markersize=4,
                label=f"run {run.id}: {row_device}",
            )
            drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("size")
    ax.set_ylabel("best variant, time (s)")
    ax.set_title(f"{family}: best parskel variant per run and device")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return _save(fig, path)


def _by_device(rows: Sequence[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for row in rows:
        out.setdefault(row.device, []).append(row)
    return out


# tables ---------------------------------------------------------------------------------------

_RESULT_COLUMNS = [f.name for f in fields(Result) if f.name != "samples"]
_SUMMARY_COLUMNS = [
    "run",
    "family",
    "device",
    "size",
    "best",
    "seconds",
    "figure",
    "metric",
    "baseline",
    "baseline_seconds",
    "vs_baseline",
    "peer",
    "peer_seconds",
    "vs_peer",
    "default",
    "default_seconds",
    "default_vs_peer",
    "unstable",
    "of_peak",
    "kernel_of_peak",
]


# the page ---------------------------------------------------------------------------------------


def run_header(run: Run) -> str:
    """A stored run's when, where, command, repetitions, versions, sizes and devices."""
    settings = run.settings
    sizes = settings.get("sizes", {})
    meta = [
        ("run", f"{run.id}, {run.started} to {run.finished or '(unfinished)'}"),
        ("host", f"{run.host} ({run.cpu})"),
        ("command", run.command),
        (
            "repetitions",
            f"{settings.get('reps')} measured after {settings.get('warmup')} warm-up "
            "(median, min, max; the first call's excess is compile time)",
        ),
        ("versions", ", ".join(f"{k} {v}" for k, v in run.versions.items())),
    ]
    meta += [(f"sizes: {family}", ", ".join(str(s) for s in values)) for family, values in sizes.items()]
    devices = [[d["id"], d["name"], d["type"], d["platform"], d["driver"]] for d in run.devices]
    parts = [
        f"<h2>Run {run.id}</h2>",
        _table(["", ""], meta),
        "<h3>Devices</h3>",
        _table(["id", "name", "type", "platform", "driver"], devices),
    ]
    return "".join(parts)


def bench_runs(store: Store) -> list[Run]:
    """The stored runs made by ``parskel bench`` (not by ``parskel study``), oldest first."""
    return [run for run in store.runs() if run.settings.get("tool") != "study"]


def write_report(store: Store, out: str | Path, run_ids: Sequence[int] | None = None) -> Path:
    """Write ``out/index.html`` with its charts and CSV for ``run_ids`` (default: the latest
    bench run)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    if run_ids:
        runs = [store.run(i) for i in run_ids]
    else:
        found = bench_runs(store)
        if not found:
            raise LookupError(f"{store.path} holds no bench runs yet; run `parskel bench` first")
        runs = found[-1:]
    loaded = [(run, store.results(run.id)) for run in runs]

    body: list[str] = [
        f"<h1>parskel benchmark report</h1><p>Runs {', '.join(str(r.id) for r in runs)} "
        f"from {_e(store.path)}. Times are end to end: host arrays in, host arrays out. "
        "Charts are log-log; bars span the fastest and slowest repetition.</p>"
    ]
    summary_rows: list[list[object]] = []
    result_rows: list[list[object]] = []
    for run, results in loaded:
        body.append(run_header(run))
        profiles = profiles_of([json.loads(d["info"]) for d in run.devices])
        rows = summarize(results, profiles)
        summary_rows += [[run.id] + [row.as_dict()[c] for c in _SUMMARY_COLUMNS[1:]] for row in rows]
        result_rows += [[run.id] + [getattr(r, c) for c in _RESULT_COLUMNS] for r in results]
        body.append("<h3>parskel's default against the best peer</h3>")
        body.append(
            _table(
                ["family", "device", "size", "default variant", "time", "best peer", "vs peer"],
                [
                    [
                        r.family,
                        r.device,
                        r.size,
                        r.default or "-",
                        seconds(r.default_seconds),
                        f"{r.peer or '-'} {seconds(r.peer_seconds)}",
                        ratio(r.default_vs_peer) + (" ~" if r.unstable else ""),
                    ]
                    for r in rows
                ],
                numeric={2, 4, 6},
            )
        )
        if any(r.unstable for r in rows):
            body.append(
                f"<p class=note>~ a figure of the row is unstable: its repetitions disagreed by more than "
                f"{UNSTABLE:.0%} even when measured again, so the machine was busy; re-run before quoting it.</p>"
            )
        body.append("<h3>Best variant per size</h3>")
        peak = [PEAK_COLUMN] if profiles else []
        body.append(
            _table(
                ["family", "device", "size", "best variant", "time", "figure", *peak]
                + ["CPU baseline", "vs baseline", "best peer", "vs peer"],
                [
                    [
                        r.family,
                        r.device,
                        r.size,
                        r.best,
                        seconds(r.seconds),
                        "-" if r.figure is None else f"{r.figure:.3g} {r.metric}",
                        *([peak_cell(r.of_peak, r.kernel_of_peak)] if peak else []),
                        f"{r.baseline or '-'} {seconds(r.baseline_seconds)}",
                        ratio(r.vs_baseline),
                        f"{r.peer or '-'} {seconds(r.peer_seconds)}",
                        ratio(r.vs_peer) + (" ~" if r.unstable else ""),
                    ]
                    for r in rows
                ],
                numeric={2, 4, 5, 6, 8, 10} if peak else {2, 4, 5, 7, 9},
            )
        )
        if peak and any(max(r.of_peak or 0, r.kernel_of_peak or 0) > 1 for r in rows):
            body.append(f"<p class=note>{_e(ABOVE_PEAK_NOTE)}</p>")
        body += [_roofline_section(folder, run, device, profile, results) for device, profile in profiles.items()]
        for family in dict.fromkeys(r.family for r in results):
            body.append(_family_section(folder, run, family, [r for r in results if r.family == family], results))
        if run.notes:
            body.append("<h3>Notes</h3><ul>" + "".join(f"<li class=note>{_e(n)}</li>" for n in run.notes) + "</ul>")
    if len(loaded) > 1:
        body.append("<h2>Runs compared</h2>")
        for family in dict.fromkeys(r.family for _, results in loaded for r in results):
            name = comparison_chart(family, loaded, folder / f"compare-{_slug(family)}.png")
            if name:
                body.append(f'<img src="{name}" alt="{_e(family)} compared">')

    results_csv = _write_csv(folder / "results.csv", ["run"] + _RESULT_COLUMNS, result_rows)
    summary_csv = _write_csv(folder / "summary.csv", _SUMMARY_COLUMNS, summary_rows)
    body.append(
        f'<p>Tables: <a href="{results_csv}">{results_csv}</a> (every measurement), '
        f'<a href="{summary_csv}">{summary_csv}</a> (best variant per size).</p>'
    )
    return write_page(folder / "index.html", "parskel benchmarks", body)


def _family_section(folder: Path, run: Run, family: str, results: list[Result], everything: Sequence[Result]) -> str:
    case = CASES.get(family)
    parts = [f"<h3>{_e(family)}</h3>"]
    if case:
        parts.append(f"<p>{_e(case.summary)}; figure: {_e(case.metric)}.</p>")
    others = [r for r in results if r.kind != "variant"]
    devices = list(dict.fromkeys(r.where for r in results if r.kind == "variant")) or ["host"]
    for device in devices:
        mine = [r for r in results if r.kind == "variant" and r.where == device] + others
        stem = f"run{run.id}-{_slug(family)}-{_slug(device)}"
        title = f"{family} on {device}"
        for chart in (
            time_chart(mine, title, folder / f"{stem}-time.png"),
            split_chart(mine, f"{title}: where the time goes", folder / f"{stem}-split.png"),
            speedup_chart(mine, everything, title, folder / f"{stem}-speedup.png"),
        ):
            if chart:
                parts.append(f'<img src="{chart}" alt="{_e(chart)}">')
    bad = failures(results)
    if bad:
        parts.append("<p class=bad>Failures (recorded without a time):</p>")
        parts.append(
            _table(
                ["subject", "where", "size", "status", "message"],
                [[r.subject, r.where, r.size, r.status, r.message] for r in bad],
            )
        )
    skipped = [r for r in results if r.status == "skipped"]
    if skipped:
        parts.append(
            "<p class=note>Skipped: "
            + _e("; ".join(sorted({f"{r.subject} on {r.where}: {r.message}" for r in skipped})))
            + "</p>"
        )
    return "".join(parts)


def _roofline_section(folder: Path, run: Run, device: str, profile: Profile, results: Sequence[Result]) -> str:
    """The roofline of a probed device with the best kernel time of each family and size."""
    best: dict[tuple[str, int], float] = {}
    for r in results:
        if r.kind == "variant" and r.where == device and r.status == "ok" and r.kernel:
            key = (r.family, r.size)
            best[key] = min(best.get(key, r.kernel), r.kernel)
    parts = [
        f"<h3>Roofline of {_e(device)}</h3><p>Measured peaks from the profile of "
        f"{_e(profile.device['name'])} measured {_e(profile.measured)} by <code>parskel probe</code>; "
        "each point is a family's best kernel time at one size, at the operations per byte it must "
        "at least move. Sort has no arithmetic to place it by; its % of peak is in the table.</p>"
    ]
    chart = roofline_chart(
        [(family, size, t) for (family, size), t in best.items()],
        profile,
        f"run {run.id} on {device}: kernels against the roofline",
        folder / f"run{run.id}-roofline-{_slug(device)}.png",
    )
    if chart:
        parts.append(f'<img src="{chart}" alt="roofline of {_e(device)}">')
    if (folder / page_name(profile)).exists():
        parts.append(f'<p>The device\'s profile: <a href="{page_name(profile)}">{_e(page_name(profile))}</a>.</p>')
    return "".join(parts)
