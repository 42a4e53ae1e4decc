"""Devices, buffers, programs, launches and timing behind one interface per backend.

Only the backend modules (``parskel.runtime.opencl``, ``parskel.runtime.cuda``) import a GPU library; everything above
this package uses :class:`Device` and the handles it creates.
"""

from .base import Backend, Buffer, Device, DeviceInfo, Kernel, Local, Marker, Program, Stream
from .cltypes import c_type
from .geometry import round_down_to_power_of_two, round_to_multiple, round_to_power_of_two
from .selection import ENV_VAR, backends, default_device, device, devices, find, unavailable, unusable, using
from .sources import Source
from .timing import Event, Recorder, Timing

__all__ = [
    "ENV_VAR",
    "Backend",
    "Buffer",
    "Device",
    "DeviceInfo",
    "Event",
    "Kernel",
    "Local",
    "Marker",
    "Program",
    "Recorder",
    "Source",
    "Stream",
    "Timing",
    "backends",
    "c_type",
    "default_device",
    "device",
    "devices",
    "find",
    "round_down_to_power_of_two",
    "round_to_multiple",
    "round_to_power_of_two",
    "unavailable",
    "unusable",
    "using",
]
