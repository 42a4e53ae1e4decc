"""Compiler output: kept with the program, shown only when asked.

Some drivers' compilers write straight to the process's standard error (PoCL's clang prints
"1 warning generated." for every program with a warning), which would reach the user's terminal
on every build. Builds run with file descriptor 2 redirected into a temporary file; what was
written becomes part of the program's build log, shown in a :class:`~parskel.errors.BuildError`
or, with ``PARSKEL_VERBOSE=1`` in the environment, printed after every build.

The redirection is process-wide for the duration of a build: another thread's writes to
standard error during a build are kept in the log instead of being shown.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator

VERBOSE_VAR = "PARSKEL_VERBOSE"


def verbose() -> bool:
    """Whether ``PARSKEL_VERBOSE`` asks for compiler output to be shown."""
    return os.environ.get(VERBOSE_VAR, "").strip() not in ("", "0")


@contextlib.contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Collect what is written to file descriptor 2 inside the block; the list gets one string."""
    found: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable descriptor 2: nothing to keep quiet
        yield found
        return
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield found
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            found.append(sink.read().decode(errors="replace"))


def report(what: str, log: str) -> None:
    """Print a successful build's log to standard error when verbose (and it says anything)."""
    if verbose() and log.strip():
        print(f"parskel: building {what}:\n{log.rstrip()}", file=sys.stderr)
