"""Finding and choosing devices: ``devices()``, ``device()``, ``using()`` and ``PARSKEL_DEVICE``.

A selection is one of:

- a :class:`Device`;
- an id, ``opencl:<platform>:<device>`` or ``cuda:<n>``;
- a backend name (``opencl``, ``cuda``), a device type (``gpu``, ``cpu``), or a case-insensitive
  fragment of the device's name, vendor or platform (``pocl``, ``nvidia``), optionally after a
  backend prefix (``opencl:nvidia``). Among several matches the best kind wins: GPU, then
  accelerator, then CPU; among GPUs a CUDA device before the same GPU through OpenCL (the
  CUDA backend also takes device arrays without copies); then discovery order.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator

from ..errors import DeviceNotFoundError
from .base import Backend, Device

ENV_VAR = "PARSKEL_DEVICE"

_RANK = {"gpu": 0, "accelerator": 1, "cpu": 2}
_BACKEND_RANK = {"cuda": 0}


def _rank(dev: Device) -> tuple[int, int]:
    return _RANK.get(dev.type, 3), _BACKEND_RANK.get(dev.backend, 1)


_scoped: contextvars.ContextVar[Device | None] = contextvars.ContextVar("parskel_device", default=None)
_found: list[Device] | None = None
_default: Device | None = None  # of _found, chosen when they are found (every call on host arrays asks)
_backends: list[Backend] | None = None


def backends() -> list[Backend]:
    """Every backend parskel knows, usable here or not."""
    global _backends
    if _backends is None:
        from .cuda import CUDABackend
        from .opencl import OpenCLBackend

        _backends = [OpenCLBackend(), CUDABackend()]
    return list(_backends)


def devices(*, refresh: bool = False) -> list[Device]:
    """Every usable device of every available backend, discovered once per process."""
    global _found, _backends, _default
    if _found is None or refresh:
        if refresh:
            _backends = None
        _found = [dev for backend in backends() for dev in backend.discover()]
        _default = min(_found, key=_rank) if _found else None
    return list(_found)


def unusable() -> list[tuple[str, str]]:
    """Devices that were found but cannot run kernels here, each with the reason."""
    devices()
    return [entry for backend in backends() for entry in backend.unusable()]


def _matches(dev: Device, fragment: str) -> bool:
    info = dev.info
    fields = (info.name, info.vendor, info.platform, info.platform_version, info.type, info.backend)
    return any(fragment in field.lower() for field in fields)


def find(spec: str) -> Device:
    """The device a selection string names; :class:`DeviceNotFoundError` lists the others."""
    everything = devices()
    text = spec.strip()
    lowered = text.lower()
    for dev in everything:
        if dev.id == lowered:
            return dev
    backend, _, fragment = lowered.partition(":")
    known = {b.name for b in backends()}
    if backend in known:
        pool = [d for d in everything if d.backend == backend]
    else:
        pool, fragment = everything, lowered
    if fragment:
        pool = [d for d in pool if _matches(d, fragment)]
    if not pool:
        raise DeviceNotFoundError(text, [str(d) for d in everything] + _unavailable_notes())
    return min(pool, key=_rank)


def unavailable() -> list[tuple[str, str]]:
    """The backends that cannot be used here, each with the reason."""
    found = []
    for backend in backends():
        ok, why = backend.available()
        if not ok:
            found.append((backend.name, why))
    return found


def _unavailable_notes() -> list[str]:
    return [f"({name} unavailable: {why})" for name, why in unavailable()] + [
        f"({name} unusable: {why})" for name, why in unusable()
    ]


def default_device() -> Device:
    """A GPU if there is one (through CUDA where it can), else an accelerator, else a CPU
    (the embedded PoCL)."""
    if _found is None:
        devices()
    if _default is None:
        raise DeviceNotFoundError("any device", _unavailable_notes())
    return _default


def device(spec: str | Device | None = None) -> Device:
    """The device to use: ``spec`` if given, else the innermost ``using()``, else
    ``$PARSKEL_DEVICE``, else the default (a GPU if present, else the PoCL CPU)."""
    if isinstance(spec, Device):
        return spec
    if spec is not None:
        if not isinstance(spec, str):
            raise DeviceNotFoundError(
                f"{spec!r} (a {type(spec).__name__}; name a device by id such as 'opencl:0:0' or 'cuda:0', "
                "or by a fragment of its name)",
                [str(d) for d in devices()],
            )
        return find(spec)
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return find(env)
    return default_device()


@contextlib.contextmanager
def using(spec: str | Device) -> Iterator[Device]:
    """Make ``spec`` the default device inside the block.

    >>> with ps.using("cpu") as dev:
    ...     ps.sort(np.array([3, 1, 2], np.uint32))   # runs on dev
    array([1, 2, 3], dtype=uint32)
    >>> dev.type
    'cpu'
    """
    dev = device(spec)
    token = _scoped.set(dev)
    try:
        yield dev
    finally:
        _scoped.reset(token)
