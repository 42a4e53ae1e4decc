"""The errors parskel raises.

Every error a user can fix by changing their call derives from :class:`ParskelError`, so
``except parskel.errors.ParskelError`` catches all of them. Backend exceptions (PyOpenCL, CuPy)
are translated into these at the runtime boundary and never reach the caller unwrapped.
"""

from __future__ import annotations

from collections.abc import Sequence


class ParskelError(Exception):
    """Base class of every parskel error."""


class DeviceNotFoundError(ParskelError, LookupError):
    """No device matches a selection; the message lists the devices that exist."""

    def __init__(self, spec: str, available: Sequence[str]) -> None:
        self.spec = spec
        self.available = list(available)
        listing = "\n".join(f"  {line}" for line in self.available) or "  (none)"
        super().__init__(f"no device matches {spec!r}; the devices are:\n{listing}")


class BackendUnavailableError(ParskelError):
    """A backend (OpenCL, CUDA) cannot be used on this machine."""


class BuildError(ParskelError):
    """A kernel program failed to compile.

    ``log`` is the compiler's full message; ``excerpt`` shows the offending source lines
    (file name and line numbers as written, not as expanded by ``#include``).
    """

    def __init__(self, what: str, log: str, excerpt: str) -> None:
        self.what = what
        self.log = log
        self.excerpt = excerpt
        parts = [f"could not build {what}", "", "compiler says:", log.strip()]
        if excerpt:
            parts += ["", "at:", excerpt]
        super().__init__("\n".join(parts))


class LaunchError(ParskelError, ValueError):
    """A launch geometry (global or local size) the device or kernel cannot run."""


class DeviceMemoryError(ParskelError, MemoryError):
    """An allocation larger than the device allows, or the device ran out of memory."""


class ShapeError(ParskelError, ValueError):
    """Arguments whose shapes or sizes do not fit together."""


class DTypeError(ParskelError, TypeError):
    """An element type the operation or the device does not support."""


class UserFunctionError(ParskelError, ValueError):
    """A user function (skeleton source) that cannot be used as given."""


class ArgumentError(ParskelError, ValueError):
    """An argument of the wrong kind or value (a flag that is not a bool, a size that is not a
    whole number) where no more specific error applies."""


class VariantError(ParskelError, ValueError):
    """An unknown algorithm variant, or one that cannot run on the chosen device."""


def boolean(value: object, what: str) -> bool:
    """``value`` as a flag: a bool (or NumPy bool); anything else is an :class:`ArgumentError`.

    >>> boolean(True, "inclusive")
    True
    """
    if value is True or value is False or type(value).__name__ == "bool_":
        return bool(value)
    raise ArgumentError(f"{what} must be True or False, got {value!r}")
