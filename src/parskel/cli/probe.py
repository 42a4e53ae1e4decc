"""``parskel probe``: seed 003's microbenchmarks of a device, its profile and report page."""

from __future__ import annotations

import argparse
import json

from .common import UsageError, chosen_devices, command_line, device_option, names, writable_folder

EPILOG = """examples:
  parskel probe --quick                        the default device in under a minute
  parskel probe --device cuda:0                everything, thoroughly (a few minutes)
  parskel probe --device all --quick           every device in turn
  parskel probe --sections instructions,global only these; the profile keeps the others
  parskel probe --quick --json > profile.json  the profile as JSON on stdout

sections: instructions, global, stride, local, launch, work-group, transfers.
The profile is stored in the user's cache folder ($PARSKEL_PROFILES overrides it), where
`parskel bench` finds it to give each figure as a % of the measured peak; a copy and the report
page go to OUT (OUT/probe-<device>.json, OUT/report/probe-<device>.html).
"""


def _sections(text: str) -> tuple[str, ...]:
    from ..probe import SECTIONS

    chosen = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown sections {unknown or [text]}; choose from {', '.join(SECTIONS)} (comma list)"
        )
    return chosen


def cmd_probe(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..probe import load, probe, save
    from ..probe.display import ProgressDisplay, print_profile
    from ..probe.profile import folder as profiles_folder
    from ..probe.report import write_profile_page

    out = writable_folder(args.out)
    writable_folder(str(out / "report"))
    devs = chosen_devices(names(args.device))
    command = command_line(args)
    err = Console(stderr=True, quiet=args.json)
    shown = Console(quiet=args.json)
    outcome = []
    for dev in devs:
        err.print(f"probing {dev}{' (quick)' if args.quick else ''}")
        with ProgressDisplay(err) as progress:
            profile = probe(dev, quick=args.quick, sections=args.sections, command=command, listen=progress)
        profile = profile.merged(load(dev.info))
        try:
            stored = save(profile)
        except OSError as exc:
            raise UsageError(
                f"cannot store the profile in {profiles_folder()}: {exc.strerror or exc}; "
                "set PARSKEL_PROFILES to a writable folder"
            ) from None
        copy = save(profile, out)
        page = write_profile_page(profile, out / "report")
        print_profile(shown, profile)
        err.print(f"profile: {stored} (copy: {copy})\nreport: {page}")
        outcome.append(dict(profile.as_dict(), path=str(stored), copy=str(copy), report=str(page)))
    if args.json:
        print(json.dumps({"profiles": outcome}, indent=1))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "probe",
        help="measure a device's instruction throughput, bandwidths and overheads (seed 003)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Microbenchmarks after seed 003: instruction chains (dependent and independent, "
        "unrolled fully and by 64), global memory with the four mappings of work-items and a "
        "stride sweep, local memory with and without bank conflicts, launch overhead, a "
        "work-group size sweep and host-device transfers; each figure as a fraction of the "
        "device's theoretical peak where it reports enough to derive one.",
    )
    device_option(p)
    p.add_argument("--quick", action="store_true", help="fewer settings, shorter runs (under a minute on a CPU)")
    p.add_argument("--sections", type=_sections, help="only these sections (comma list); see below")
    p.add_argument(
        "--out",
        default="bench-results",
        help="folder for a copy of the profile and the report page (default ./bench-results)",
    )
    p.add_argument("--json", action="store_true", help="print the profiles as JSON on stdout (no display)")
    p.set_defaults(handler=cmd_probe, argv=None)
