"""The ``parskel`` command: parses arguments, calls the library, prints."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from . import __version__
from .errors import ParskelError
from .runtime import Device, DeviceInfo, devices, find
from .runtime.selection import default_device, device as select_device

EPILOG = """examples:
  parskel devices                 every OpenCL (and CUDA) device, the default marked with *
  parskel devices --json          the same, for a program to read
  parskel info                    everything known about the default device
  parskel info pocl               ... about the first device whose name matches "pocl"
  PARSKEL_DEVICE=opencl:0:0 parskel info
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
        return 1
    rows = [["", "id", "type", "name", "platform", "CUs", "memory", "max WG"]]
    for d in found:
        i = d.info
        rows.append(["*" if d.id == default else "", i.id, i.type, i.name, i.platform,
                     str(i.compute_units), _size(i.global_mem_bytes), str(i.max_work_group_size)])
    print(_table(rows))
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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    try:
        return int(args.run(args))
    except ParskelError as exc:
        print(f"parskel: error: {exc}", file=sys.stderr)
        return 2
