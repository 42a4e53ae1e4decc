"""Events and the Timing record built from them."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Literal

EventKind = Literal["upload", "kernel", "download", "copy", "fill"]


class Event(ABC):
    """A command enqueued on a device: wait for it, and read its duration once complete."""

    kind: EventKind
    label: str

    @abstractmethod
    def wait(self) -> None:
        """Block until the command has completed."""

    @property
    @abstractmethod
    def seconds(self) -> float:
        """Device time of the command from profiling (start to end), after completion."""


@dataclass(frozen=True)
class Timing:
    """Where the time of one host-level operation went, in seconds.

    ``upload``, ``kernel`` and ``download`` are sums of device profiling intervals;
    ``other`` holds device-side copies and fills; ``wall`` is host time from the first
    command issued to the last one completed.
    """

    upload: float = 0.0
    kernel: float = 0.0
    download: float = 0.0
    other: float = 0.0
    wall: float = 0.0
    launches: int = 0

    @property
    def device(self) -> float:
        """Total device time of all recorded commands."""
        return self.upload + self.kernel + self.download + self.other


@dataclass
class Recorder:
    """Collects the events enqueued on a device while active (see ``Device.record``)."""

    events: list[Event] = field(default_factory=list)
    _start: float = 0.0
    _timing: Timing | None = None

    def add(self, event: Event) -> None:
        self.events.append(event)

    def start(self) -> None:
        self._start = time.perf_counter()

    def stop(self) -> None:
        for event in self.events:
            event.wait()
        wall = time.perf_counter() - self._start
        sums = {"upload": 0.0, "kernel": 0.0, "download": 0.0, "other": 0.0}
        launches = 0
        for event in self.events:
            key = event.kind if event.kind in sums else "other"
            sums[key] += event.seconds
            launches += event.kind == "kernel"
        self._timing = Timing(wall=wall, launches=launches, **sums)

    @property
    def timing(self) -> Timing:
        """The record; available once the ``with`` block has ended."""
        if self._timing is None:
            raise RuntimeError("the timing is known once the recording block has ended")
        return self._timing
