"""``parskel devices`` and ``parskel info``."""

from __future__ import annotations

import argparse
import json

from ..runtime import Device, DeviceInfo, devices, find, unavailable, unusable
from ..runtime.selection import default_device
from ..runtime.selection import device as select_device
from .common import human_bytes, table


def cmd_devices(args: argparse.Namespace) -> int:
    found = devices()
    default = default_device().id if found and not _bad_choice() else None
    if args.json:
        print(json.dumps([dict(d.info.as_dict(), default=d.id == default) for d in found], indent=2))
        return 0
    if not found:
        print("no devices found")
    else:
        rows = [["", "id", "type", "name", "platform", "CUs", "memory", "max WG"]]
        for d in found:
            i = d.info
            rows.append(
                [
                    "*" if d.id == default else "",
                    i.id,
                    i.type,
                    i.name,
                    i.platform,
                    str(i.compute_units),
                    human_bytes(i.global_mem_bytes),
                    str(i.max_work_group_size),
                ]
            )
        print(table(rows))
    for name, why in unavailable():
        print(f"\n{name}: not available ({why})")
    for name, why in unusable():
        print(f"\nunusable {name}: {why}")
    if found:
        bad = _bad_choice()
        if bad:
            print(f"\nno default: {bad}")
        else:
            print("\n* the default device (override with --device, PARSKEL_DEVICE or parskel.using)")
    return 0 if found else 1


def _bad_choice() -> str:
    """Why ``$PARSKEL_DEVICE`` names no device (empty when it is unset or valid)."""
    from ..errors import DeviceNotFoundError

    try:
        select_device()
    except DeviceNotFoundError as exc:
        return f"PARSKEL_DEVICE names no device ({str(exc).splitlines()[0]})"
    return ""


def _info_lines(info: DeviceInfo) -> list[tuple[str, str]]:
    widths = ", ".join(f"{k} {v}" for k, v in info.preferred_vector_widths.items())
    lines = [
        ("id", info.id),
        ("name", info.name),
        ("vendor", info.vendor),
        ("type", info.type),
        ("backend", info.backend),
        ("platform", f"{info.platform} ({info.platform_version})"),
        ("version", info.version),
        ("driver", info.driver_version),
        ("compute units", str(info.compute_units)),
        ("compute capability", info.compute_capability),
        ("clock", f"{info.clock_mhz} MHz"),
        ("global memory", human_bytes(info.global_mem_bytes)),
        ("memory bus", _memory_bus(info)),
        ("largest buffer", human_bytes(info.max_alloc_bytes)),
        ("local memory", human_bytes(info.local_mem_bytes)),
        ("max work-group", str(info.max_work_group_size)),
        ("max work-items", " x ".join(str(s) for s in info.max_work_item_sizes)),
        ("vector widths", widths),
        ("fp64", "yes" if info.fp64 else "no"),
        ("extensions", " ".join(info.extensions)),
    ]
    return [(key, value) for key, value in lines if value]


def _memory_bus(info: DeviceInfo) -> str:
    if not (info.memory_clock_mhz and info.memory_bus_bits):
        return ""
    return f"{info.memory_bus_bits} bits at {info.memory_clock_mhz} MHz"


def cmd_info(args: argparse.Namespace) -> int:
    dev: Device = find(args.device) if args.device else select_device(args.option_device)
    if args.json:
        print(json.dumps(dev.info.as_dict(), indent=2))
        return 0
    for key, value in _info_lines(dev.info):
        print(f"{key:>18}: {value}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "devices",
        help="list every device",
        epilog="example: parskel devices --json",
        description="List every device of every backend; * marks the default. Backends "
        "that cannot be used here, and devices that cannot run kernels, are listed with the reason.",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(handler=cmd_devices)

    p = sub.add_parser(
        "info",
        help="everything known about one device",
        epilog="examples: parskel info; parskel info nvidia; parskel info opencl:0:0 --json",
        description="Show everything parskel knows about one device.",
    )
    p.add_argument("device", nargs="?", help="id or name fragment (default: the default device)")
    p.add_argument("--device", dest="option_device", help="same as the positional argument")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=cmd_info)
