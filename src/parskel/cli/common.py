"""What the commands share: tables, byte sizes, size lists, comma-separated names, devices."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..runtime import Device, devices
from ..runtime.selection import device as select_device


class UsageError(Exception):
    """A mistake on the command line that the user can fix; printed without a traceback."""


def human_bytes(nbytes: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"


def table(rows: list[list[str]]) -> str:
    """Left-aligned columns with a rule under the first row."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


#: the largest size a command takes: 2^48 elements of a byte are 256 TiB
LARGEST_SIZE = 1 << 48


def parse_sizes(text: str) -> tuple[int, ...]:
    """Parse ``64,128``, ``2^20``, ``64..512`` (doubling) or ``2^10..2^26:4`` (times 4).

    >>> parse_sizes("2^4..2^8:4,3")
    (3, 16, 64, 256)
    """
    sizes: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        bounds, _, step = part.partition(":")
        low, dots, high = bounds.partition("..")
        first = _number(low)
        if not dots:
            sizes.append(first)
            continue
        last, factor = _number(high), _number(step) if step else 2
        if factor < 2 or first < 1 or last < first:
            raise argparse.ArgumentTypeError(
                f"bad size range {part!r}: write LOW..HIGH[:FACTOR], 1 <= LOW <= HIGH, FACTOR >= 2"
            )
        while first <= last:
            sizes.append(first)
            first *= factor
    if not sizes:
        raise argparse.ArgumentTypeError(f"no sizes in {text!r}")
    if min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"sizes must be at least 1, got {min(sizes)} in {text!r}")
    if max(sizes) > LARGEST_SIZE:
        raise argparse.ArgumentTypeError(f"sizes must be at most 2^48 (no memory holds more), got {text!r}")
    return tuple(sorted(set(sizes)))


def _number(text: str) -> int:
    base, caret, power = text.strip().partition("^")
    try:
        return int(base) ** int(power) if caret else int(base)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text.strip()!r} (write 1000, 2^20 or 64..512)") from None


def size_option(text: str) -> tuple[str | None, tuple[int, ...]]:
    """``--sizes`` values: ``SIZES`` for every family or ``FAMILY=SIZES`` for one."""
    family, eq, rest = text.partition("=")
    return (family.strip(), parse_sizes(rest)) if eq else (None, parse_sizes(text))


def log2_sizes(text: str) -> list[int]:
    """A comma list of powers of two by their exponents, 1 to 30 (``24,28``: 2^24 and 2^28).

    >>> log2_sizes("24, 28")
    [24, 28]
    >>> log2_sizes("2^24")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: not a comma list of exponents: '2^24' (write 24,28)
    >>> log2_sizes("24,40")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: exponents run from 1 to 30, got '24,40'
    """
    try:
        found = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma list of exponents: {text!r} (write 24,28)") from None
    if not all(1 <= k <= 30 for k in found):
        raise argparse.ArgumentTypeError(f"exponents run from 1 to 30, got {text!r}")
    return found


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value:g}")
    return value


def names(values: list[str] | None) -> list[str]:
    """Names from repeated and comma-separated options, in order."""
    return [n.strip() for v in values or [] for n in v.split(",") if n.strip()]


def writable_folder(path: str) -> Path:
    """The folder ``path``, created if needed, after checking that a file can be written there."""
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        check = folder / ".parskel-write-test"
        check.touch()
        check.unlink()
    except OSError as exc:
        raise UsageError(f"cannot write results to {folder}: {exc.strerror or exc}") from None
    return folder


def device_option(parser: argparse.ArgumentParser) -> None:
    """The ``--device`` option of commands that run on devices; read it with :func:`chosen_devices`."""
    parser.add_argument(
        "--device",
        action="append",
        help="device id or name fragment; repeatable or a comma list; 'all' for every device",
    )


def chosen_devices(specs: list[str]) -> list[Device]:
    """The devices that ``--device`` names (repeatable, comma lists, ``all``); the default if none."""
    specs = names(specs)
    if specs == ["all"]:
        return devices()
    chosen: list[Device] = []
    wanted: list[str | None] = list(specs) or [None]
    for spec in wanted:
        dev = select_device(spec)
        if dev not in chosen:
            chosen.append(dev)
    return chosen


def command_line(args: argparse.Namespace) -> str:
    """The command as the user typed it, for the records a run stores."""
    given = getattr(args, "argv", None)
    return " ".join(["parskel", *(sys.argv[1:] if given is None else given)])
