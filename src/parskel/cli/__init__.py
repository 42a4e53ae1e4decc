"""The ``parskel`` command: parses arguments, calls the library, prints.

Each command group is a module of this package with a ``register(subparsers)`` function that
adds its parsers and sets ``handler`` to the function that runs it; :data:`COMMANDS` lists them
in the order ``parskel --help`` shows them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import ParskelError
from . import bench, devices, docs, enlight, probe, study, tune
from .common import UsageError

COMMANDS = (devices, bench, probe, study, enlight, tune, docs)

EPILOG = """examples:
  parskel devices                 every OpenCL (and CUDA) device, the default marked with *
  parskel devices --json          the same, for a program to read
  parskel info                    everything known about the default device
  parskel info pocl               ... about the first device whose name matches "pocl"
  PARSKEL_DEVICE=opencl:0:0 parskel info
  parskel bench                   quick sweep of every family on the default device, then the report
  parskel report                  the report of the latest stored run
  parskel probe --quick           the default device's peaks, bandwidths and overheads (seed 003)
  parskel study --quick           seed 002's optimization study at small sizes, with its findings
  parskel tune scan               search scan's variants and parameters here; parskel.scan uses the best
  parskel explain sort --size 2^24    which sort variant and parameters a call would use, and why
  parskel docs --open             build the documentation site from a checkout and open it
"""


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
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status is 0 on success, 2 for a mistake the user can fix."""
    # the commands draw charts into files only: no display needed. The library itself leaves
    # the backend alone, so that a notebook importing parskel keeps showing its own figures.
    os.environ.setdefault("MPLBACKEND", "Agg")
    parser = build_parser()
    args = parser.parse_args(argv)
    if argv is not None and getattr(args, "argv", "") is None:
        args.argv = list(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return int(handler(args))
    except (ParskelError, UsageError) as exc:
        print(f"parskel {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # the host's, for sizes its memory cannot hold (the device's is a ParskelError)
        print(f"parskel {args.command}: error: the host ran out of memory ({exc}); try smaller sizes", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"parskel {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`parskel info | head -3`): stop quietly, as a filter does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
