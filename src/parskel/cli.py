"""The ``parskel`` command: parses arguments, calls the library, prints."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import __version__
from .errors import ParskelError
from .runtime import Device, DeviceInfo, devices, find, unavailable, unusable
from .runtime.selection import default_device, device as select_device

EPILOG = """examples:
  parskel devices                 every OpenCL (and CUDA) device, the default marked with *
  parskel devices --json          the same, for a program to read
  parskel info                    everything known about the default device
  parskel info pocl               ... about the first device whose name matches "pocl"
  PARSKEL_DEVICE=opencl:0:0 parskel info
  parskel bench                   quick sweep of every family on the default device, then the report
  parskel report                  the report of the latest stored run
"""

BENCH_EPILOG = """examples:
  parskel bench                                   quick sweep of everything (a few minutes on a CPU)
  parskel bench scan --sizes 2^10..2^20:4         one family, sizes 2^10, 2^12, ... 2^20
  parskel bench all --full --device nvidia        SPEC sizes (matrix edge 4000, 2^26 elements)
  parskel bench all --device opencl:0:0,opencl:1:0 --sizes matmul=256..4096 --sizes 2^16..2^26:4
  parskel bench sort --variants radix,bitonic --peers numpy,pyopencl --reps 10 --warmup 2
  parskel bench matmul --peers none --no-report --json > matmul.json

sizes: comma lists and ranges, "1000", "2^20", "64..512" (doubling), "2^10..2^26:4" (times 4);
"family=..." sets one family's sizes, a plain value every other family's.
peers: cpu (compiled seed baselines), numpy, pyopencl, cupy, torch, all or none; those missing
here are skipped with a note. Results go to OUT/results.sqlite, the report to OUT/report/.
"""

REPORT_EPILOG = """examples:
  parskel report                                  latest run of ./bench-results
  parskel report --out gpu-results --run 3 --run 4   two runs compared
  parskel report --all-runs                       every stored run
"""


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cmd_devices(args: argparse.Namespace) -> int:
    found = devices()
    default = default_device().id if found else None
    if args.json:
        print(json.dumps([dict(d.info.as_dict(), default=d.id == default) for d in found], indent=2))
        return 0
    if not found:
        print("no devices found")
        for name, why in unavailable():
            print(f"{name}: not available ({why})")
        for name, why in unusable():
            print(f"unusable {name}: {why}")
        return 1
    rows = [["", "id", "type", "name", "platform", "CUs", "memory", "max WG"]]
    for d in found:
        i = d.info
        rows.append(["*" if d.id == default else "", i.id, i.type, i.name, i.platform,
                     str(i.compute_units), _size(i.global_mem_bytes), str(i.max_work_group_size)])
    print(_table(rows))
    for name, why in unavailable():
        print(f"\n{name}: not available ({why})")
    for name, why in unusable():
        print(f"\nunusable {name}: {why}")
    print("\n* the default device (override with --device, PARSKEL_DEVICE or parskel.using)")
    return 0


def _info_lines(info: DeviceInfo) -> list[tuple[str, str]]:
    widths = ", ".join(f"{k} {v}" for k, v in info.preferred_vector_widths.items())
    return [
        ("id", info.id),
        ("name", info.name),
        ("vendor", info.vendor),
        ("type", info.type),
        ("backend", info.backend),
        ("platform", f"{info.platform} ({info.platform_version})"),
        ("version", info.version),
        ("driver", info.driver_version),
        ("compute units", str(info.compute_units)),
        ("clock", f"{info.clock_mhz} MHz"),
        ("global memory", _size(info.global_mem_bytes)),
        ("largest buffer", _size(info.max_alloc_bytes)),
        ("local memory", _size(info.local_mem_bytes)),
        ("max work-group", str(info.max_work_group_size)),
        ("max work-items", " x ".join(str(s) for s in info.max_work_item_sizes)),
        ("vector widths", widths),
        ("fp64", "yes" if info.fp64 else "no"),
        ("extensions", " ".join(info.extensions)),
    ]


def cmd_info(args: argparse.Namespace) -> int:
    dev: Device = find(args.device) if args.device else select_device(args.option_device)
    if args.json:
        print(json.dumps(dev.info.as_dict(), indent=2))
        return 0
    for key, value in _info_lines(dev.info):
        print(f"{key:>15}: {value}")
    return 0


def _sizes(text: str) -> tuple[int, ...]:
    """Parse ``64,128``, ``2^20``, ``64..512`` (doubling) or ``2^10..2^26:4``."""
    sizes: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        bounds, _, step = part.partition(":")
        low, dots, high = bounds.partition("..")
        first = _number(low)
        if not dots:
            sizes.append(first)
            continue
        last, factor = _number(high), int(step or 2)
        if factor < 2 or first < 1 or last < first:
            raise argparse.ArgumentTypeError(f"bad size range {part!r}")
        while first <= last:
            sizes.append(first)
            first *= factor
    if not sizes or min(sizes) < 0:
        raise argparse.ArgumentTypeError(f"no sizes in {text!r}")
    return tuple(sorted(set(sizes)))


def _number(text: str) -> int:
    base, caret, power = text.strip().partition("^")
    try:
        return int(base) ** int(power) if caret else int(base)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None


def _size_option(text: str) -> tuple[str | None, tuple[int, ...]]:
    family, eq, rest = text.partition("=")
    return (family.strip(), _sizes(rest)) if eq else (None, _sizes(text))


def _names(values: list[str] | None) -> list[str]:
    return [n.strip() for v in values or [] for n in v.split(",") if n.strip()]


def _bench_devices(specs: list[str]) -> list[Device]:
    if specs == ["all"]:
        return devices()
    chosen: list[Device] = []
    for spec in specs or [None]:
        dev = select_device(spec)
        if dev not in chosen:
            chosen.append(dev)
    return chosen


def cmd_bench(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .bench import bench, default_settings
    from .bench.cases import GROUPS
    from .bench.peers import select

    groups = args.families or ["all"]
    try:
        peer_groups = select(args.peers)
        settings = default_settings(groups, full=args.full)
    except ValueError as exc:
        print(f"parskel bench: error: {exc}", file=sys.stderr)
        return 2
    sizes = dict(settings.sizes)
    given = [_size_option(text) for text in args.sizes or []]
    # plain sizes first, so that "family=..." wins whatever the order on the command line
    for family in sizes:
        for named, values in sorted(given, key=lambda g: g[0] is not None):
            if named is None or family == named or family in GROUPS.get(named, ()):
                sizes[family] = values
    unknown = {named for named, _ in given if named is not None} - set(GROUPS) - set(sizes)
    if unknown:
        print(f"parskel bench: error: --sizes names unknown families {sorted(unknown)}", file=sys.stderr)
        return 2
    settings = default_settings(
        groups, full=args.full, sizes=sizes, reps=args.reps, warmup=args.warmup,
        variants=frozenset(_names(args.variants)) if args.variants else None,
        peers=frozenset(peer_groups), budget=args.budget,
    )
    devs = _bench_devices(_names(args.device))
    command = " ".join(["parskel", *(sys.argv[1:] if args.argv is None else args.argv)])
    outcome = bench(devs, settings, out=args.out, command=command, report=not args.no_report,
                    console=Console(stderr=True, quiet=args.json))
    if args.json:
        print(json.dumps({
            "run": outcome.run_id, "database": str(outcome.database),
            "report": str(outcome.report) if outcome.report else None,
            "notes": outcome.notes,
            "summary": [row.as_dict() for row in outcome.rows],
            "results": [r.as_dict() for r in outcome.results],
        }, indent=2))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .bench import Store, write_report

    database = Path(args.db or Path(args.out) / "results.sqlite")
    if not database.exists():
        print(f"parskel report: error: no results at {database}; run `parskel bench` first", file=sys.stderr)
        return 2
    with Store(database) as store:
        runs = [r.id for r in store.runs()] if args.all_runs else args.run
        try:
            page = write_report(store, Path(args.out) / "report", runs)
        except LookupError as exc:
            print(f"parskel report: error: {exc}", file=sys.stderr)
            return 2
    print(page)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parskel",
        description="Portable data-parallel computing on GPUs and CPUs: devices, skeletons, "
        "tuned algorithms and their benchmarks.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"parskel {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("devices", help="list every device", epilog="example: parskel devices --json",
                       description="List every device of every backend; * marks the default.")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(run=cmd_devices)

    p = sub.add_parser("info", help="everything known about one device",
                       epilog="examples: parskel info; parskel info nvidia; parskel info opencl:0:0 --json",
                       description="Show everything parskel knows about one device.")
    p.add_argument("device", nargs="?", help="id or name fragment (default: the default device)")
    p.add_argument("--device", dest="option_device", help="same as the positional argument")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=cmd_info)

    p = sub.add_parser("bench", help="time every variant, CPU baseline and peer; store and report",
                       epilog=BENCH_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Sweep sizes for each family, timing every parskel variant, the CPU "
                       "baselines and the peers (NumPy, PyOpenCL, CuPy, PyTorch) in one run; check every "
                       "result; store the run in OUT/results.sqlite and write OUT/report/.")
    p.add_argument("families", nargs="*", metavar="FAMILY",
                   help="matmul, scan, sort, reduce, skeletons or all (default: all)")
    p.add_argument("--device", action="append",
                   help="device id or name fragment; repeatable or a comma list; 'all' for every device")
    p.add_argument("--sizes", action="append", metavar="SIZES", help="sizes, see below; repeatable")
    p.add_argument("--variants", action="append", help="only these parskel variants (comma list)")
    p.add_argument("--peers", help="peer groups: cpu,numpy,pyopencl,cupy,torch, all or none (default all)")
    p.add_argument("--reps", type=int, help="measured repetitions (quick 3, full 10)")
    p.add_argument("--warmup", type=int, help="warm-up calls before them, at least 1 (quick 1, full 2)")
    p.add_argument("--out", default="bench-results", help="results folder (default ./bench-results)")
    preset = p.add_mutually_exclusive_group()
    preset.add_argument("--quick", action="store_true", help="small sizes, 3 repetitions (the default)")
    preset.add_argument("--full", action="store_true", help="SPEC sizes: matrix edge to 4000, 2^26 elements")
    p.add_argument("--budget", type=float, metavar="SECONDS",
                   help="stop a subject before a size whose measurement (compile, warm-ups, repetitions) "
                   "would take longer (quick 6, full 120; 0: no limit)")
    p.add_argument("--no-report", action="store_true", help="store the results but write no report")
    p.add_argument("--json", action="store_true", help="print the results as JSON on stdout (no display)")
    p.set_defaults(run=cmd_bench, argv=None)

    p = sub.add_parser("report", help="write the HTML/PNG/CSV report of stored runs",
                       epilog=REPORT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Write OUT/report/index.html with charts (PNG) and tables (CSV) "
                       "from OUT/results.sqlite.")
    p.add_argument("--out", default="bench-results", help="results folder (default ./bench-results)")
    p.add_argument("--db", help="the SQLite file (default OUT/results.sqlite)")
    p.add_argument("--run", type=int, action="append", help="run id; repeatable (default: the latest)")
    p.add_argument("--all-runs", action="store_true", help="every stored run, compared")
    p.set_defaults(run=cmd_report)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if argv is not None and getattr(args, "argv", "") is None:
        args.argv = list(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    try:
        return int(args.run(args))
    except ParskelError as exc:
        print(f"parskel: error: {exc}", file=sys.stderr)
        return 2
