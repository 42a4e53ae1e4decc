"""The report page of a profile, ``probe-<device key>.html`` in a report folder (the one
``parskel bench`` writes into), with its charts and a CSV of every figure.

Charts: throughput against the number of independent chains, per operation and unrolling;
bandwidth per mapping and access; bandwidth against stride; local-memory bandwidth per stride;
time against work-group size; transfers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt

from ..pages import escape, save_chart, table, write_csv, write_page
from .display import percent
from .figures import SECTIONS, Figure, number
from .profile import Profile


def page_name(profile: Profile) -> str:
    """The file name of a profile's page in a report folder."""
    return f"probe-{profile.key}.html"


def _peak_lines(ax: plt.Axes, profile: Profile, kinds: Sequence[str]) -> None:
    """Horizontal lines at the theoretical and measured peaks of ``kinds``."""
    for kind in kinds:
        peak = profile.peaks.get(kind)
        if peak is not None and peak.value:
            ax.axhline(peak.value, color="black", linestyle="--", linewidth=0.8)
            ax.annotate(
                f"{kind} peak {number(peak.value)}",
                (0.01, peak.value),
                xycoords=("axes fraction", "data"),
                fontsize=7,
                va="bottom",
            )
        measured = profile.measured_peak(kind)
        if measured:
            ax.axhline(measured, color="grey", linestyle=":", linewidth=0.8)


def chains_chart(profile: Profile, path: Path) -> str | None:
    """Throughput against independent chains, one line per operation and unrolling; one panel
    for floating-point operations (GFLOP/s) and one for the others (Gop/s)."""
    figures = [f for f in profile.figures if f.section == "instructions"]
    units = list(dict.fromkeys(f.unit for f in figures))
    if not figures:
        return None
    fig, axes = plt.subplots(len(units), 1, figsize=(8, 4.5 * len(units)), squeeze=False, layout="constrained")
    axes = axes.T
    for ax, unit in zip(axes[0], units):
        lines: dict[tuple[str, str], list[Figure]] = {}
        for f in (f for f in figures if f.unit == unit):
            lines.setdefault((f.name, f.params["unroll"]), []).append(f)
        colors = {name: f"C{i}" for i, name in enumerate(dict.fromkeys(name for name, _ in lines))}
        for (name, unroll), found in lines.items():
            found.sort(key=lambda f: f.params["chains"])
            ax.plot(
                [f.params["chains"] for f in found],
                [f.value for f in found],
                "-" if unroll == "full" else "--",
                color=colors[name],
                marker="o",
                label=f"{name}, unroll {unroll}",
            )
        if unit == "GFLOP/s":
            _peak_lines(ax, profile, [k for k in ("fp32", "fp64") if any(f.peak == k for f in figures)])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("independent chains per work-item (1: a dependent chain)")
        ax.set_ylabel(unit)
        ax.set_title(f"instruction throughput ({unit})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save_chart(fig, path)


def bars_chart(
    figures: Sequence[Figure], labels: Sequence[str], title: str, path: Path, profile: Profile | None = None
) -> str | None:
    """One horizontal bar per figure, with the bandwidth peaks where ``profile`` is given."""
    if not figures:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.8 + 0.35 * len(figures)))
    ax.barh(list(labels), [f.value for f in figures], color="#4c72b0")
    if profile is not None:
        peak = profile.peaks["bandwidth"].value if "bandwidth" in profile.peaks else None
        if peak:
            ax.axvline(peak, color="black", linestyle="--", linewidth=0.8, label="theoretical peak")
        measured = profile.measured_peak("bandwidth")
        if measured:
            ax.axvline(measured, color="grey", linestyle=":", linewidth=0.8, label="measured peak")
        ax.legend(fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(figures[0].unit)
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    return save_chart(fig, path)


def line_chart(figures: Sequence[Figure], x: str, title: str, xlabel: str, path: Path) -> str | None:
    """``figure.value`` against ``figure.params[x]``, log-2 x axis."""
    if not figures:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot([f.params[x] for f in figures], [f.value for f in figures], marker="o")
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(figures[0].unit)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    return save_chart(fig, path)


def write_profile_page(profile: Profile, folder: str | Path) -> Path:
    """Write ``folder/probe-<key>.html``, its PNG charts and ``probe-<key>.csv``."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"probe-{profile.key}"
    of = {s: [f for f in profile.figures if f.section == s] for s in SECTIONS}
    charts: dict[str, str | None] = {
        "instructions": chains_chart(profile, out / f"{stem}-chains.png"),
        "global": bars_chart(
            of["global"],
            [f"{f.name}, {f.params['mapping']}" for f in of["global"]],
            "global-memory bandwidth by access and mapping",
            out / f"{stem}-global.png",
            profile,
        ),
        "stride": line_chart(
            of["stride"],
            "stride",
            "copy: useful bandwidth against stride",
            "stride (elements)",
            out / f"{stem}-stride.png",
        ),
        "local": bars_chart(
            of["local"],
            [f"stride {f.params['stride']}: {f.name}" for f in of["local"]],
            "local-memory reads",
            out / f"{stem}-local.png",
        ),
        "work-group": line_chart(
            of["work-group"],
            "work-group",
            "copy: time against work-group size",
            "work-group size",
            out / f"{stem}-work-group.png",
        ),
        "transfers": bars_chart(
            of["transfers"], [f.name for f in of["transfers"]], "host-device transfers", out / f"{stem}-transfers.png"
        ),
    }
    device = profile.device
    body = [
        f"<h1>Device profile: {escape(profile.name)}</h1>",
        f"<p>Measured {escape(profile.measured)} with <code>{escape(profile.command or 'parskel probe')}</code>"
        f"{' (quick)' if profile.quick else ''}. Each figure is the median of the timed repetitions, from the "
        "device's own event timers (transfers: host time of a blocking copy).</p>",
        table(
            ["", ""],
            [
                ["device", f"{device['name']} ({device['id']}, {device['type']})"],
                ["platform", f"{device['platform']} ({device['platform_version']})"],
                ["driver", device["driver_version"]],
                ["compute units, clock", f"{device['compute_units']}, {device['clock_mhz']} MHz"],
                ["versions", ", ".join(f"{k} {v}" for k, v in profile.versions.items())],
            ],
        ),
        "<h2>Peaks</h2>",
        table(
            ["kind", "theoretical", "measured", "measured / theoretical"],
            [
                [
                    kind,
                    peak.describe(),
                    _measured(profile, kind),
                    percent(profile.measured_fraction(kind)),
                ]
                for kind, peak in profile.peaks.items()
            ],
        ),
    ]
    for section, title in SECTIONS.items():
        if not of[section]:
            continue
        body.append(f"<h2>{escape(title)}</h2>")
        chart = charts.get(section)
        if chart:
            body.append(f'<img src="{chart}" alt="{escape(section)}">')
        body.append(
            table(
                ["measures", "setting", "figure", "% of peak", "time"],
                [
                    [
                        f.name,
                        f.setting(),
                        f.text(),
                        percent(profile.fraction(f)),
                        f"{f.seconds * 1e3:.3g} ms",
                    ]
                    for f in of[section]
                ],
                numeric={2, 3, 4},
            )
        )
    if profile.failures:
        body.append(
            "<h2>Failures</h2><ul>" + "".join(f"<li class=bad>{escape(f)}</li>" for f in profile.failures) + "</ul>"
        )
    rows = [[f.section, f.name, f.setting(), f.value, f.unit, f.seconds, profile.fraction(f)] for f in profile.figures]
    data = write_csv(out / f"{stem}.csv", ["section", "name", "setting", "value", "unit", "seconds", "of_peak"], rows)
    body.append(f'<p>Every figure: <a href="{data}">{data}</a>.</p>')
    return write_page(out / page_name(profile), f"parskel probe: {profile.device['name']}", body)


def _measured(profile: Profile, kind: str) -> str:
    best = profile.best(kind)
    return "-" if best is None else f"{best.text()}: {best.name} ({best.setting()})"
