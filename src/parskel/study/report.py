"""The study's report: the findings table, then per study the seed's chart (speedup of each
variant over the baseline, one bar per device) and the table of kernel times, in one folder
with the results as CSV and the findings as Markdown. Built from the results store, so runs
made apart (a GPU machine's devices one day, a laptop's the next) report together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from ..algorithms import registry
from ..bench.harness import Result
from ..bench.progress import seconds
from ..bench.report import run_header
from ..bench.store import Run, Store
from ..errors import VariantError
from ..pages import escape, save_chart, slug, table, write_csv, write_page
from . import findings
from .base import STUDIES, label
from .findings import DeviceFacts, Verdict
from .runner import studies

_COLUMNS = [f.name for f in fields(Result) if f.name != "samples"]
_CLASS = {"holds": "holds", "does not hold": "fails", "partly": "partly"}


def study_runs(store: Store) -> list[Run]:
    """The stored runs made by ``parskel study``, oldest first."""
    return [run for run in store.runs() if run.settings.get("tool") == "study"]


def gather(store: Store, run_ids: Sequence[int] | None) -> tuple[list[Run], list[Result], list[DeviceFacts]]:
    """The runs (default: the latest study run), their results and devices. A device measured in
    several of them counts with its latest run only."""
    if run_ids:
        runs = [store.run(i) for i in run_ids]
    else:
        found = study_runs(store)
        if not found:
            raise LookupError(f"{store.path} holds no study runs yet; run `parskel study` first")
        runs = found[-1:]
    owner: dict[str, int] = {}
    facts: dict[str, DeviceFacts] = {}
    for run in runs:
        for row in run.devices:
            owner[row["id"]] = run.id
            facts[row["id"]] = DeviceFacts.from_store(row)
    results = [r for run in runs for r in store.results(run.id) if owner.get(r.where) == run.id]
    return runs, results, list(facts.values())


def write_report(store: Store, out: str | Path, run_ids: Sequence[int] | None = None) -> Path:
    """Write ``out/index.html`` with its charts, ``results.csv`` and the findings in Markdown:
    ``findings.md`` (a column per device) and ``findings-<device>.md`` (one device each)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    runs, results, devices = gather(store, run_ids)
    verdicts = findings.evaluate(results, devices)
    (folder / "findings.md").write_text(findings.markdown(verdicts, devices), encoding="utf-8")
    for device in devices:
        one = findings.markdown(verdicts, [device])
        (folder / f"findings-{slug(device.id)}.md").write_text(one, encoding="utf-8")
    body = [
        "<h1>The optimization study of seed 002</h1>",
        f"<p>Runs {', '.join(str(r.id) for r in runs)} from {escape(store.path)}. Kernel times come from "
        "device events and cover only the kernel each study varies; speedup is the baseline's kernel time "
        "over the variant's (above 1: the optimization helps). Every result was checked on the host before "
        "its time was kept.</p>",
        "<h2>Findings: seed 002 chapter 7 against these measurements</h2>",
        _findings_table(verdicts, devices),
        f"<details><summary>The rules</summary><pre>{escape(findings.__doc__ or '')}</pre></details>",
    ]
    for study in studies():
        mine = [r for r in results if r.family == study.family]
        if mine:
            body.append(_study_section(folder, study.name, mine, devices))
    body += [run_header(run) for run in runs]
    notes = [n for run in runs for n in run.notes]
    if notes:
        body.append("<h3>Notes</h3><ul>" + "".join(f"<li class=note>{escape(n)}</li>" for n in notes) + "</ul>")
    rows = [[getattr(r, c) for c in _COLUMNS] for r in results]
    csv_name = write_csv(folder / "results.csv", _COLUMNS, rows)
    body.append(
        f'<p>Tables: <a href="{csv_name}">{csv_name}</a> (every measurement), '
        '<a href="findings.md">findings.md</a> (the findings table in Markdown).</p>'
    )
    return write_page(folder / "index.html", "parskel study", body)


def _findings_table(verdicts: Sequence[Verdict], devices: Sequence[DeviceFacts]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in ["conclusion", "the seed measured", *(d.id for d in devices)])
    rows = []
    for claim in findings.CLAIMS:
        cells = [f"<td>{escape(claim.text)} <i>({escape(claim.where)})</i></td>", f"<td>{escape(claim.seed)}</td>"]
        for device in devices:
            v = next(v for v in verdicts if v.claim.key == claim.key and v.device == device.id)
            css = _CLASS.get(v.verdict, "")
            cells.append(f"<td class='{css}'><b>{escape(v.verdict)}</b><br><small>{escape(v.detail)}</small></td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    names = "; ".join(f"{d.id}: {d.name} ({d.kind.upper()})" for d in devices)
    return f"<p>{escape(names)}</p><table><tr>{head}</tr>{''.join(rows)}</table>"


def _section(family: str, subject: str) -> str:
    try:
        return registry.get(family, subject).seed
    except VariantError:
        return ""


def _points(results: Sequence[Result]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((r.subject, r.params) for r in results))


def _kernel(results: Sequence[Result], subject: str, params: str, device: str, size: int) -> Result | None:
    for r in results:
        if (r.subject, r.params, r.where, r.size) == (subject, params, device, size):
            return r
    return None


def _speedup(results: Sequence[Result], found: Result | None, baseline: str) -> float | None:
    if found is None or found.status != "ok" or not found.kernel:
        return None
    base = _kernel(results, baseline, "", found.where, found.size)
    if base is None or base.status != "ok" or not base.kernel:
        return None
    return base.kernel / found.kernel


def speedup_chart(name: str, results: Sequence[Result], devices: Sequence[str], size: int, path: Path) -> str | None:
    """The seed's chart: each variant's speedup over the baseline, a bar per device."""
    baseline = STUDIES[name].baseline
    points = [p for p in _points(results) if p[0] != baseline]
    values = {d: [_speedup(results, _kernel(results, s, p, d, size), baseline) for s, p in points] for d in devices}
    if not points or all(v is None for vs in values.values() for v in vs):
        return None
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(points) * max(1, len(devices)) + 2), 4.5))
    width = 0.8 / max(1, len(devices))
    x = np.arange(len(points))
    for k, device in enumerate(devices):
        heights = [v if v is not None else 0.0 for v in values[device]]
        ax.bar(x + (k - (len(devices) - 1) / 2) * width, heights, width, label=device)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(x, [label(s, p) for s, p in points], rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("speedup over the baseline (kernel time)")
    ax.set_title(f"{name} at {size}: speedup of each variant (a missing bar: not measured)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    return save_chart(fig, path)


def _cell(results: Sequence[Result], found: Result | None, baseline: str) -> str:
    if found is None:
        return "-"
    if found.status != "ok":
        return found.status
    ratio = _speedup(results, found, baseline)
    mark = "*" if found.unstable else ""
    return seconds(found.kernel) + mark + ("" if ratio is None else f" ({ratio:.2f}x)")


def _note(r: Result) -> str:
    return f"{label(r.subject, r.params)} on {r.where} at {r.size}: {r.status}: {r.message}"


def _study_section(folder: Path, name: str, results: Sequence[Result], devices: Sequence[DeviceFacts]) -> str:
    study = STUDIES[name]
    here = [d.id for d in devices if any(r.where == d.id for r in results)]
    sizes = sorted({r.size for r in results})
    parts = [
        f"<h2>{escape(name)} (seed 002 §{escape(study.section)})</h2>",
        f"<p>{escape(study.case.summary)}; timed: {escape(', '.join(study.timed))}.</p>",
    ]
    for size in sizes:
        chart = speedup_chart(name, results, here, size, folder / f"{slug(name)}-{size}.png")
        if chart:
            parts.append(f'<img src="{chart}" alt="{escape(name)} at {size}">')
    header = ["variant", "seed 002", *(f"{d} at {s}" for s in sizes for d in here)]
    rows = [
        [label(subject, params), _section(study.family, subject)]
        + [_cell(results, _kernel(results, subject, params, d, s), study.baseline) for s in sizes for d in here]
        for subject, params in _points(results)
    ]
    parts.append(
        "<p>Kernel time, median, and the speedup over the baseline on the same device and size; "
        "* marks a median more than 25 % above the fastest repetition (a busy machine).</p>"
    )
    parts.append(table(header, rows, numeric=set(range(2, len(header)))))
    unusual = sorted({_note(r) for r in results if r.status != "ok"})
    if unusual:
        parts.append("<ul>" + "".join(f"<li class=note>{escape(u)}</li>" for u in unusual) + "</ul>")
    return "".join(parts)
