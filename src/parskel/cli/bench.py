"""``parskel bench`` and ``parskel report``."""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path

from ..errors import ArgumentError
from ..pipeline import max_device_memory, parse_bytes
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

BENCH_EPILOG = """examples:
  parskel bench                                   quick sweep of everything (a few minutes on a CPU)
  parskel bench scan --sizes 2^10..2^20:4         one family, sizes 2^10, 2^12, ... 2^20
  parskel bench all --full --device nvidia        SPEC sizes (matrix edge 4000, 2^26 elements)
  parskel bench all --device opencl:0:0,opencl:1:0 --sizes matmul=256..4096 --sizes 2^16..2^26:4
  parskel bench sort --variants radix,bitonic --peers numpy,pyopencl --reps 10 --warmup 2
  parskel bench matmul --peers none --no-report --json > matmul.json
  parskel bench e2e --full --device cuda:0 --out e2e   NumPy in and out on a GPU against CuPy and PyTorch
  parskel bench e2e --max-device-memory 64MiB      the same work in chunks of a 64 MiB device
  parskel bench primitives --peers numpy,cupy     int64 sorts, argsort, axes, histogram, unique, ...
  parskel bench resident --full --device cuda:0,opencl   sort, scan, Reduce, Map, matmul on device data
                                                  against CuPy, PyTorch and CUB's C++ (2^20 to 2^28)

sizes: comma lists and ranges, "1000", "2^20", "64..512" (doubling), "2^10..2^26:4" (times 4);
"family=..." sets one family's sizes, a plain value every other family's.
peers: cpu (compiled seed baselines), numpy, pyopencl, cupy, torch, cub (CUB's own C++, built
with nvcc; resident only), all or none; those missing here are skipped with a note.
Results go to OUT/results.sqlite, the report to OUT/report/.
"""

REPORT_EPILOG = """examples:
  parskel report                                  latest run of ./bench-results
  parskel report --out gpu-results --run 3 --run 4   two runs compared
  parskel report --all-runs                       every stored run
"""


def cmd_bench(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..bench import bench, default_settings
    from ..bench.cases import GROUPS
    from ..bench.peers import select
    from ..bench.subjects import variant_names

    groups = args.families or ["all"]
    try:
        peer_groups = select(args.peers)
        settings = default_settings(groups, full=args.full)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    sizes = dict(settings.sizes)
    given = args.sizes or []
    # plain sizes first, so that "family=..." wins whatever the order on the command line
    for family in sizes:
        for named, values in sorted(given, key=lambda g: g[0] is not None):
            if named is None or family == named or family in GROUPS.get(named, ()):
                sizes[family] = values
    unknown = {named for named, _ in given if named is not None} - set(GROUPS) - set(sizes)
    if unknown:
        raise UsageError(f"--sizes names unknown families {sorted(unknown)}; choose from {', '.join(GROUPS)}")
    wanted = frozenset(names(args.variants)) if args.variants else None
    if wanted is not None:
        known = {name for family in settings.families for name in variant_names(family)}
        missing = sorted(wanted - known)
        if missing:
            raise UsageError(
                f"--variants names {missing}, which {', '.join(groups)} does not have; "
                f"choose from {', '.join(sorted(known))}"
            )
    settings = default_settings(
        groups,
        full=args.full,
        sizes=sizes,
        reps=args.reps,
        warmup=args.warmup,
        variants=wanted,
        peers=frozenset(peer_groups),
        budget=args.budget,
    )
    try:
        cap = None if args.max_device_memory is None else parse_bytes(args.max_device_memory, "--max-device-memory")
    except ArgumentError as exc:
        raise UsageError(str(exc)) from None
    folder = writable_folder(args.out)
    devs = chosen_devices(args.device or [])
    command = command_line(args)
    with max_device_memory(cap) if cap is not None else contextlib.nullcontext():
        outcome = bench(
            devs,
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
                    "notes": outcome.notes,
                    "summary": [row.as_dict() for row in outcome.rows],
                    "results": [r.as_dict() for r in outcome.results],
                },
                indent=2,
            )
        )
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ..bench import Store, write_report
    from ..bench.report import bench_runs

    database = Path(args.db or Path(args.out) / "results.sqlite")
    if not database.exists():
        raise UsageError(f"no results at {database}; run `parskel bench` first")
    with Store(database) as store:
        runs = [r.id for r in bench_runs(store)] if args.all_runs else args.runs
        try:
            page = write_report(store, writable_folder(str(Path(args.out) / "report")), runs)
        except LookupError as exc:
            raise UsageError(str(exc).strip("'\"")) from None
    print(page)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="time every variant, CPU baseline and peer; store and report",
        epilog=BENCH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Sweep sizes for each family, timing every parskel variant, the CPU "
        "baselines and the peers (NumPy, PyOpenCL, CuPy, PyTorch) in one run; check every "
        "result; store the run in OUT/results.sqlite and write OUT/report/.",
    )
    p.add_argument(
        "families",
        nargs="*",
        metavar="FAMILY",
        help="matmul, scan, sort, reduce, skeletons, overhead, e2e, primitives, resident or all "
        "(default: all, which leaves out e2e, primitives and resident)",
    )
    device_option(p)
    p.add_argument("--sizes", action="append", type=size_option, metavar="SIZES", help="sizes, see below; repeatable")
    p.add_argument("--variants", action="append", help="only these parskel variants (comma list)")
    p.add_argument("--peers", help="peer groups: cpu,numpy,pyopencl,cupy,torch,cub, all or none (default all)")
    p.add_argument("--reps", type=positive_int, help="measured repetitions (quick 3, full 10)")
    p.add_argument("--warmup", type=positive_int, help="warm-up calls before them, at least 1 (quick 1, full 2)")
    p.add_argument("--out", default="bench-results", help="results folder (default ./bench-results)")
    preset = p.add_mutually_exclusive_group()
    preset.add_argument("--quick", action="store_true", help="small sizes, 3 repetitions (the default)")
    preset.add_argument("--full", action="store_true", help="SPEC sizes: matrix edge to 4000, 2^26 elements")
    p.add_argument(
        "--budget",
        type=seconds,
        metavar="SECONDS",
        help="stop a subject before a size whose measurement (compile, warm-ups, repetitions) "
        "would take longer (quick 6, full 120; 0: no limit)",
    )
    p.add_argument(
        "--max-device-memory",
        metavar="BYTES",
        help="cap the device memory of each call (e.g. 64MiB): larger work runs in chunks "
        "(default: $PARSKEL_MAX_DEVICE_MEMORY, else 3/4 of the device's memory)",
    )
    p.add_argument("--no-report", action="store_true", help="store the results but write no report")
    p.add_argument("--json", action="store_true", help="print the results as JSON on stdout (no display)")
    p.set_defaults(handler=cmd_bench, argv=None)

    p = sub.add_parser(
        "report",
        help="write the HTML/PNG/CSV report of stored runs",
        epilog=REPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write OUT/report/index.html with charts (PNG) and tables (CSV) from OUT/results.sqlite.",
    )
    p.add_argument("--out", default="bench-results", help="results folder (default ./bench-results)")
    p.add_argument("--db", help="the SQLite file (default OUT/results.sqlite)")
    p.add_argument(
        "--run", dest="runs", type=positive_int, action="append", help="run id; repeatable (default: the latest)"
    )
    p.add_argument("--all-runs", action="store_true", help="every stored run, compared")
    p.set_defaults(handler=cmd_report)
