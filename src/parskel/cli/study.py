"""``parskel study``: seed 002's optimization study on the chosen devices."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .common import (
    UsageError,
    chosen_devices,
    command_line,
    device_option,
    names,
    positive_int,
    seconds,
    size_option,
    writable_folder,
)

EPILOG = """examples:
  parskel study --quick                           every kernel at small sizes on the default device
  parskel study crc needle --device pocl          two kernels on the PoCL CPU
  parskel study lud --variants granularity,vectorization --device cuda:0 --device opencl:nvidia
  parskel study --full --device cuda:0,opencl:nvidia,pocl --budget 10 --time-limit 330 --out h200
  parskel study --sizes crc=2^20..2^24:4 crc      the crc study at 1, 4 and 16 MiB
  parskel study --list                            the kernels, their variants and the seed's sections
  parskel study --redraw --out h200 --run 1 --run 2    one report of two stored runs

kernels: lud (lud_perimeter and lud_internal), crc, needle, srad, bfs, or all (the default).
variants: a name (granularity) in every chosen kernel that has it, or kernel/name; the baseline
always runs, speedups are measured against it. Results go to OUT/results.sqlite (the store
`parskel bench` uses), the report with the findings table to OUT/report/.
"""


def cmd_study(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .. import study as lib

    if args.list:
        print(_listing())
        return 0
    if args.redraw:
        return _redraw(writable_folder(args.out), args.runs)
    sizes: dict[str, tuple[int, ...]] = {}
    try:
        chosen = lib.runner.select(args.kernels)
        for named, values in sorted(args.sizes or [], key=lambda g: g[0] is not None):
            for study in lib.runner.select([named]) if named is not None else chosen:
                sizes[study] = values
        settings = lib.default_settings(
            args.kernels,
            full=args.full,
            reps=args.reps,
            warmup=args.warmup,
            budget=args.budget,
            time_limit=args.time_limit,
            sizes=sizes or None,
            variants=names(args.variants) or None,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    folder = writable_folder(args.out)
    devices = chosen_devices(args.device or [])
    command = command_line(args)
    outcome = lib.study(
        devices,
        settings,
        out=folder,
        command=command,
        report=not args.no_report,
        console=Console(stderr=True, quiet=args.json),
    )
    if args.json:
        print(
            json.dumps(
                {
                    "run": outcome.run_id,
                    "database": str(outcome.database),
                    "report": str(outcome.report) if outcome.report else None,
                    "findings": [
                        {"claim": v.claim.key, "device": v.device, "verdict": v.verdict, "detail": v.detail}
                        for v in outcome.verdicts
                    ],
                    "results": [r.as_dict() for r in outcome.results],
                },
                indent=2,
            )
        )
    return 0


def _redraw(folder: Path, runs: list[int] | None) -> int:
    from ..bench.store import Store
    from ..study import write_report

    database = folder / "results.sqlite"
    if not database.exists():
        raise UsageError(f"no results at {database}; run `parskel study` first")
    with Store(database) as store:
        try:
            page = write_report(store, writable_folder(str(folder / "report")), runs)
        except LookupError as exc:
            raise UsageError(str(exc).strip("'\"")) from None
    print(page)
    return 0


def _listing() -> str:
    from ..study import studies

    lines = []
    for study in studies():
        lines.append(f"{study.name}  (seed 002 §{study.section}; {study.case.summary})")
        for variant in study.variants():
            levels = "; ".join(f"{p.name} in {', '.join(map(str, p.choices))}" for p in variant.params if p.choices)
            lines.append(
                f"  {variant.name:<22} {variant.seed:<32} {variant.summary}" + (f" [{levels}]" if levels else "")
            )
    return "\n".join(lines)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "study",
        help="seed 002's optimization study: five kernels, their variants, the seed's conclusions judged",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run each kernel of seed 002 (lud, crc, needle, srad, bfs) in every variant on each "
        "device, time the studied kernel from device events, check every result on the host, store the run "
        "in OUT/results.sqlite and write OUT/report/: the speedup charts, the kernel times and the findings "
        "table that marks each conclusion of the seed's chapter 7 as holding or not on each device.",
    )
    p.add_argument(
        "kernels", nargs="*", metavar="KERNEL", help="lud, lud_perimeter, lud_internal, crc, needle, srad, bfs or all"
    )
    device_option(p)
    preset = p.add_mutually_exclusive_group()
    preset.add_argument("--quick", action="store_true", help="small sizes (two for lud), 3 repetitions (the default)")
    preset.add_argument(
        "--full", action="store_true", help="the seed's sizes (lud 4096 and 8192, crc 50 M ... 200 M bytes, ...)"
    )
    p.add_argument("--variants", action="append", help="only these variants (comma list; the baseline always runs)")
    p.add_argument(
        "--sizes", action="append", type=size_option, metavar="SIZES", help="KERNEL=SIZES or SIZES for every kernel"
    )
    p.add_argument("--reps", type=positive_int, help="measured repetitions (quick 3, full 5)")
    p.add_argument("--warmup", type=positive_int, help="warm-up calls before them, at least 1")
    p.add_argument(
        "--budget",
        type=seconds,
        metavar="SECONDS",
        help="stop a variant before a size whose measurement would take longer (full: 60; 0: no limit)",
    )
    p.add_argument(
        "--time-limit",
        type=seconds,
        metavar="SECONDS",
        help="skip what is left once the run has taken this long (sizes go in rounds, smallest first; 0: none)",
    )
    p.add_argument("--out", default="study-results", help="results folder (default ./study-results)")
    p.add_argument("--no-report", action="store_true", help="store the results but write no report")
    p.add_argument("--json", action="store_true", help="print the findings and results as JSON on stdout")
    p.add_argument("--list", action="store_true", help="list the kernels and their variants, and exit")
    p.add_argument("--redraw", action="store_true", help="write the report of stored runs without measuring")
    p.add_argument("--run", dest="runs", type=positive_int, action="append", help="with --redraw: a run id; repeatable")
    p.set_defaults(handler=cmd_study, argv=None)
