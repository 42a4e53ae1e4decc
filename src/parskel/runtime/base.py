"""The backend interface: what every layer above the runtime may use of a device.

A backend (OpenCL, CUDA) implements :class:`Backend` and :class:`Device`; buffers, programs,
kernels and events are opaque handles created by its device. Code above ``parskel.runtime``
never touches PyOpenCL or CuPy objects directly.
"""

from __future__ import annotations

import contextlib
import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import BackendUnavailableError, DeviceMemoryError, LaunchError
from . import hostpool
from .geometry import Geometry, Size, check_launch
from .memo import remembered
from .sources import Defines, Source
from .timing import Event, Recorder


@dataclass(frozen=True)
class DeviceInfo:
    """Everything parskel knows about a device. Sizes in bytes, clocks in MHz.

    ``compute_capability`` ("9.0") is known for NVIDIA devices (CUDA, and OpenCL with
    ``cl_nv_device_attribute_query``); the memory clock and bus width only where the backend
    reports them (CUDA), 0 elsewhere. They are what theoretical peaks are derived from.
    """

    id: str
    backend: str
    name: str
    vendor: str
    type: str  # "gpu", "cpu" or "accelerator"
    platform: str
    platform_version: str
    version: str
    driver_version: str
    compute_units: int
    clock_mhz: int
    global_mem_bytes: int
    max_alloc_bytes: int
    local_mem_bytes: int
    max_work_group_size: int
    max_work_item_sizes: tuple[int, ...]
    preferred_vector_widths: dict[str, int]
    fp64: bool
    extensions: tuple[str, ...] = field(default=())
    compute_capability: str = ""
    memory_clock_mhz: int = 0
    memory_bus_bits: int = 0
    cache_bytes: int = 0  # the largest cache in front of global memory (a CPU's last level, a GPU's L2)
    # the most local memory a work-group may have where its kernel asks for more than
    # local_mem_bytes (CUDA's opt-in shared memory, see Kernel.take_dynamic_local); 0: no more
    local_mem_optin_bytes: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Buffer:
    """Device memory of ``nbytes`` bytes. ``handle`` is the backend's object; ``host`` is the
    host array whose memory the buffer is (see :meth:`Device.host_buffer`), or None."""

    __slots__ = ("__weakref__", "device", "handle", "host", "nbytes")

    def __init__(self, device: Device, nbytes: int, handle: Any, host: np.ndarray | None = None) -> None:
        self.device = device
        self.nbytes = nbytes
        self.handle = handle
        self.host = host

    def __repr__(self) -> str:
        shared = ", the host array's memory" if self.host is not None else ""
        return f"Buffer({self.nbytes} bytes on {self.device.id}{shared})"


@dataclass(frozen=True)
class Local:
    """A kernel argument that reserves ``nbytes`` of local (shared) memory per work-group."""

    nbytes: int


class Stream:
    """A queue of a device beside its own, in order like it: commands enqueued inside
    ``with device.on(stream)`` go there and may run at the same time as the device's own queue
    (a transfer beside a kernel). ``handle`` is the backend's queue or stream."""

    __slots__ = ("device", "handle")

    def __init__(self, device: Device, handle: Any) -> None:
        self.device = device
        self.handle = handle

    def __repr__(self) -> str:
        return f"Stream(on {self.device.id})"


class Marker(ABC):
    """A point in one queue's order (see :meth:`Device.mark`): reached once every command
    enqueued there before it has completed."""

    @abstractmethod
    def wait(self) -> None:
        """Block the host until the point is reached."""


class Kernel(ABC):
    """A compiled entry point of a program."""

    name: str
    local_mem_bytes: int = 0

    @property
    @abstractmethod
    def max_work_group_size(self) -> int:
        """The largest work-group this kernel can run with on its device."""

    def __init__(self) -> None:
        self._geometries: dict[Hashable, Geometry] = {}

    def take_dynamic_local(self, nbytes: int) -> None:
        """Give each work-group of this kernel ``nbytes`` of dynamic local memory, beyond its
        own arrays, for a source built with ``PS_DYNAMIC_LOCAL`` (``PS_TILE_LOCAL`` in
        ``common/parskel.h``). Only CUDA has it, up to ``local_mem_optin_bytes`` in all."""
        raise LaunchError(f"kernel {self.name}: only CUDA kernels take dynamic local memory")

    def in_chains(self) -> None:
        """Say that this kernel is launched several times per call, one launch after another
        (a sort's passes). A device that runs small launches in the calling thread (PoCL's
        inline queue) then keeps this kernel to smaller ones there: a chain shares one start of
        the worker threads, which one launch alone would pay. Nothing elsewhere."""
        return None

    def geometry(self, global_size: Size, local_size: Size | None, info: DeviceInfo) -> Geometry:
        """The checked launch sizes for ``global_size`` and ``local_size`` on the device
        described by ``info`` (see :func:`check_launch`), remembered per pair of sizes: a kernel
        launched in a loop is checked once."""
        try:
            found = self._geometries.get((global_size, local_size))
        except TypeError:  # sizes given as lists: checked every time
            found = None
        if found is not None:
            return found
        return remembered(
            self._geometries,
            (global_size, local_size),
            lambda: check_launch(
                global_size,
                local_size,
                max_work_group_size=min(self.max_work_group_size, info.max_work_group_size),
                max_work_item_sizes=info.max_work_item_sizes,
                kernel_name=self.name,
            ),
        )


class Program(ABC):
    """A built program; kernels are looked up by name. ``log`` is what the compiler said
    (warnings) when the build succeeded; ``PARSKEL_VERBOSE=1`` prints it at build time."""

    source: Source
    log: str = ""

    @abstractmethod
    def kernel(self, name: str) -> Kernel:
        """The kernel ``name``; raises ``KeyError`` listing the kernels if it does not exist."""


class Device(ABC):
    """One compute device of one backend, with its own in-order, profiling queue."""

    info: DeviceInfo

    def __init__(self, info: DeviceInfo) -> None:
        self.info = info
        self._recorders: list[Recorder] = []
        self._timed = 0  # depth of timed() blocks
        self._active: Stream | None = None  # where commands go (None: the device's own queue)
        self._by_path: dict[tuple[str, tuple[tuple[str, Any], ...]], Program] = {}

    # identity -----------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.info.id

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def backend(self) -> str:
        return self.info.backend

    @property
    def type(self) -> str:
        return self.info.type

    def __repr__(self) -> str:
        return f"<Device {self.id}: {self.name} ({self.type}, {self.info.platform})>"

    def __str__(self) -> str:
        return f"{self.id}: {self.name} ({self.type}, {self.info.platform})"

    # memory -------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> Buffer:
        """A new uninitialised buffer. Raises :class:`DeviceMemoryError` naming the sizes."""
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError(f"cannot allocate {nbytes} bytes")
        if nbytes > self.info.max_alloc_bytes:
            raise DeviceMemoryError(
                f"{self.id} cannot hold one buffer of {_size(nbytes)}: its largest allocation "
                f"is {_size(self.info.max_alloc_bytes)} (global memory {_size(self.info.global_mem_bytes)})"
            )
        return self._alloc(nbytes)

    def to_device(self, host: np.ndarray) -> Buffer:
        """A new buffer holding a copy of ``host`` (upload enqueued, not awaited); on a CUDA
        device ``host`` may also be a device array (copied on the device)."""
        if isinstance(host, np.ndarray):
            host = np.ascontiguousarray(host)
        buffer = self.alloc(host.nbytes)
        self.upload(buffer, host)
        return buffer

    @property
    def warm_calls(self) -> int:
        """Calls of the same operation after which it runs as it will from then on: the first
        builds its programs; a device that prepares more on later calls says so (PoCL's inline
        queue takes a kernel only after a few small launches). Benchmarks warm up this much."""
        return 1

    @property
    def shares_host_memory(self) -> bool:
        """Whether kernels can work in host arrays' memory (a CPU device): then
        :meth:`host_buffer` copies nothing and :meth:`download` into that array only waits."""
        return False

    def host_buffer(self, array: np.ndarray, *, upload: bool = True) -> Buffer:
        """A buffer for a host array that kernels only read (``upload=True``), or that they fill
        and :meth:`download` then reads back into ``array`` (``upload=False``).

        On a device that shares host memory the buffer *is* the array's memory (where it is
        aligned for its elements): nothing is copied either way, so kernels must not write into
        a buffer made for an input the caller owns. Elsewhere it is a new device buffer,
        uploaded (non-blocking) when asked.
        """
        array = _contiguous_host(array)
        buffer = self.alloc(array.nbytes)
        if upload:
            self.upload(buffer, array)
        return buffer

    @abstractmethod
    def _alloc(self, nbytes: int) -> Buffer: ...

    @abstractmethod
    def upload(self, buffer: Buffer, host: np.ndarray, *, offset: int = 0, wait: bool = False) -> Event:
        """Copy a C-contiguous host array into ``buffer`` at byte ``offset``; non-blocking by default.

        A non-blocking upload keeps a reference to ``host`` until it completes; the caller must
        not modify ``host`` before then.
        """

    @abstractmethod
    def download(self, buffer: Buffer, out: np.ndarray, *, offset: int = 0, wait: bool = True) -> Event:
        """Copy ``out.nbytes`` bytes from ``buffer`` at byte ``offset`` into ``out``; blocking by default."""

    @abstractmethod
    def copy(
        self, dst: Buffer, src: Buffer, nbytes: int | None = None, *, src_offset: int = 0, dst_offset: int = 0
    ) -> Event:
        """Device-to-device copy of ``nbytes`` (default: all of ``src``)."""

    @abstractmethod
    def fill(self, buffer: Buffer, value: np.generic, nbytes: int | None = None, *, offset: int = 0) -> Event:
        """Fill ``buffer`` with copies of the scalar ``value`` (its dtype gives the pattern)."""

    @abstractmethod
    def upload_padded(self, host: np.ndarray, padded_shape: tuple[int, int], fill: np.generic | None = None) -> Buffer:
        """A buffer of ``padded_shape`` holding the 2D ``host`` at its top-left, the rest ``fill`` (zero).

        The rectangular copy of seed 000's matrix padding.
        """

    @abstractmethod
    def download_trimmed(self, buffer: Buffer, padded_shape: tuple[int, int], out: np.ndarray) -> Event:
        """Copy the top-left ``out.shape`` block of a 2D padded buffer into ``out`` (blocking)."""

    def empty_pinned(self, shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
        """An uninitialised host array in page-locked (pinned) memory, which the device copies
        to and from without staging; use it with :meth:`upload` and :meth:`download`.

        OpenCL maps a buffer allocated in host memory (``CL_MEM_ALLOC_HOST_PTR``), which is
        how NVIDIA's OpenCL hands out pinned memory, and on a CPU device is simply mapped
        memory; CUDA allocates pinned memory. The array keeps its allocation alive. A backend
        without such memory raises :class:`BackendUnavailableError`.
        """
        raise BackendUnavailableError(f"{self.id} has no page-locked host memory")

    def is_pinned(self, array: np.ndarray) -> bool:
        """Whether ``array`` lies in page-locked memory made by :meth:`empty_pinned` (or the
        backend's own allocator of it), which the device copies to and from where it is."""
        return False

    def host_result(self, shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
        """A host array for a result that comes back through the device's staging
        (:mod:`parskel.pipeline`): page-locked memory where the backend has it
        (:meth:`_page_locked_result`), the device copies over a link and
        :func:`~parskel.runtime.hostpool.pinned_result_room` allows it (4 MiB or more, while
        live page-locked results hold at most a quarter of the host's memory), which the device
        then writes at the link's speed with no copy on the host; ordinary memory otherwise,
        and where the host will not lock more."""
        dims = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
        dtype = np.dtype(dtype)
        nbytes = math.prod(dims) * dtype.itemsize
        if self.shares_host_memory or dtype.hasobject or not hostpool.pinned_result_room(nbytes):
            return hostpool.empty(dims, dtype)
        try:
            found = self._page_locked_result(dims, dtype, nbytes)
        except DeviceMemoryError:
            found = None
        return hostpool.empty(dims, dtype) if found is None else found

    def _page_locked_result(self, dims: tuple[int, ...], dtype: np.dtype, nbytes: int) -> np.ndarray | None:
        """For :meth:`host_result`: a page-locked array of ``dims`` and ``dtype`` (``nbytes``),
        counted with :func:`~parskel.runtime.hostpool.pinned_result_made`; None where the
        backend has no page-locked memory to give."""
        return None

    def partition(self, parts: int) -> list[Device]:
        """This device split into ``parts`` devices of its compute units (OpenCL sub-devices),
        each with its own queue, so that a distribution can run on them at once; the same
        objects again for the same ``parts``. A backend or device that cannot be split raises
        :class:`BackendUnavailableError`."""
        raise BackendUnavailableError(f"{self.id} cannot be partitioned into sub-devices")

    # device arrays ------------------------------------------------------------------------
    def wrap(self, array: Any) -> tuple[Buffer, Any]:
        """A buffer over a device array's memory (no copy), and the array as the backend sees it.

        Only the CUDA backend has device arrays (CuPy, PyTorch); others raise.
        """
        raise BackendUnavailableError(f"{self.id} cannot take a device array; use a cuda device")

    def view(self, buffer: Buffer, shape: tuple[int, ...], dtype: Any) -> Any:
        """A device array (CuPy) over ``buffer``, sharing its memory. CUDA backend only."""
        raise BackendUnavailableError(f"{self.id} has no device arrays; read buffers with download()")

    # programs -----------------------------------------------------------------------------
    @abstractmethod
    def build(self, source: Source, defines: Defines | None = None) -> Program:
        """Build ``source`` with ``-D`` defines; cached per process and on disk.

        Raises :class:`parskel.errors.BuildError` with the compiler's message and source lines.
        """

    def program(self, path: str, defines: Defines | None = None) -> Program:
        """Build the package kernel file ``path`` (e.g. ``"basics/saxpy.cl"``).

        Found again by (path, defines) without reading or hashing any source: a call in a loop
        costs a dictionary lookup.
        """
        key = (path, tuple(sorted(defines.items())) if defines else ())
        found = self._by_path.get(key)
        if found is None:
            found = self._by_path[key] = self.build(Source.load(path), defines)
        return found

    @abstractmethod
    def launch(self, kernel: Kernel, global_size: Size, local_size: Size | None, *args: Any) -> Event:
        """Enqueue ``kernel`` over ``global_size`` work-items in groups of ``local_size``.

        Arguments are :class:`Buffer`, :class:`Local` or NumPy scalars (``np.int32(5)``), which
        fix the C type. The geometry is checked first: a size the device or the kernel cannot
        run raises :class:`parskel.errors.LaunchError` before anything is enqueued.
        """

    def launcher(self, kernel: Kernel, global_size: Size, local_size: Size | None) -> Callable[..., Event]:
        """:meth:`launch` of ``kernel`` over these sizes as a function of its arguments, for a
        caller that launches it again and again: the geometry is checked here, before the
        first launch, and a backend may work out more of the launch ahead (CUDA: the grid).

        >>> dev = ps.device()
        >>> kernel = dev.program("basics/vector_add.cl", {"T": "float"}).kernel("vector_add")
        >>> x = dev.to_device(np.ones(4, np.float32))
        >>> add = dev.launcher(kernel, 4, None)
        >>> add(x, x, x, np.uint32(4)).wait(); add(x, x, x, np.uint32(4)).wait()
        >>> out = np.empty(4, np.float32); _ = dev.download(x, out); out
        array([4., 4., 4., 4.], dtype=float32)
        """
        kernel.geometry(global_size, local_size, self.info)
        return functools.partial(self.launch, kernel, global_size, local_size)

    @abstractmethod
    def finish(self) -> None:
        """Block until every enqueued command has completed, on every queue of the device."""

    # queues -------------------------------------------------------------------------------
    def stream(self) -> Stream:
        """A new queue beside the device's own (see :class:`Stream`); a backend without
        concurrent queues raises :class:`BackendUnavailableError`."""
        raise BackendUnavailableError(f"{self.id} has a single queue")

    @property
    def on_own_queue(self) -> bool:
        """Whether commands go to the device's own queue now (no :meth:`on` block active).

        >>> ps.device().on_own_queue
        True
        """
        return self._active is None

    @contextlib.contextmanager
    def on(self, stream: Stream | None) -> Iterator[None]:
        """Send the commands of the block (allocations included) to ``stream``; ``None`` is the
        device's own queue. Order between queues comes only from :meth:`mark` and :meth:`wait_for`.

        >>> dev = ps.device()
        >>> buffer, host = dev.alloc(16), np.zeros(4, np.int32)
        >>> with dev.on(dev.stream()):
        ...     _ = dev.fill(buffer, np.int32(7))
        ...     written = dev.mark()
        >>> dev.wait_for(written)     # the device's own queue waits for the fill
        >>> dev.download(buffer, host).wait()
        >>> host
        array([7, 7, 7, 7], dtype=int32)
        """
        if stream is not None and stream.device is not self:
            raise ValueError(f"a stream of {stream.device.id} cannot take commands for {self.id}")
        previous, self._active = self._active, stream
        try:
            yield
        finally:
            self._active = previous

    def current(self) -> contextlib.AbstractContextManager[Any]:
        """Within the block, this is the device that device-array libraries (CuPy) allocate new
        arrays on, on this thread: parskel's calls enter it around work on device arrays, so an
        array of the second GPU, or a part handled by a worker thread, gets its results there.
        Nothing to do on OpenCL devices."""
        return NOTHING

    def mark(self) -> Marker:
        """A marker at the current end of the active queue (see :meth:`on`)."""
        raise BackendUnavailableError(f"{self.id} has a single queue")

    def wait_for(self, marker: Marker) -> None:
        """Commands enqueued on the active queue from now on start after ``marker`` is reached;
        the host does not wait."""
        raise BackendUnavailableError(f"{self.id} has a single queue")

    # timing -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def record(self) -> Iterator[Recorder]:
        """Collect the events enqueued inside the block; ``recorder.timing`` afterwards.

        >>> dev = ps.device()
        >>> with dev.record() as rec:
        ...     sums = ps.scan(np.ones(1000, np.int32), device=dev)
        >>> rec.timing.launches > 0 and rec.timing.kernel > 0
        True
        """
        recorder = Recorder()
        self._recorders.append(recorder)
        recorder.start()
        try:
            yield recorder
        finally:
            self._recorders.remove(recorder)
            recorder.stop()

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        """Inside the block every command is timed, so that the ``seconds`` of the event it
        returns can be read (inside :meth:`record` too). Elsewhere a device may leave commands
        untimed where timing costs (CUDA: two events per command); OpenCL queues time them all.

        >>> dev = ps.device()
        >>> with dev.timed():
        ...     event = dev.fill(dev.alloc(4096), np.float32(1))
        >>> event.seconds >= 0
        True
        """
        self._timed += 1
        try:
            yield
        finally:
            self._timed -= 1

    @property
    def timing(self) -> bool:
        """Whether commands enqueued now are timed: inside :meth:`timed` or :meth:`record`."""
        return bool(self._timed or self._recorders)

    def _track(self, event: Event) -> Event:
        for recorder in self._recorders:
            recorder.add(event)
        return event


class Backend(ABC):
    """A family of devices (OpenCL, CUDA)."""

    name: str

    @abstractmethod
    def available(self) -> tuple[bool, str]:
        """Whether the backend can be used here, and why not."""

    @abstractmethod
    def discover(self) -> Sequence[Device]:
        """Every usable device of this backend, in a stable order."""

    def unusable(self) -> list[tuple[str, str]]:
        """Devices found by :meth:`discover` that cannot run kernels, each with the reason
        (after :meth:`discover`; empty by default)."""
        return []


# checks shared by the backends, before anything is enqueued ------------------------------------


NOTHING = contextlib.nullcontext()  # a context that does nothing (reusable: it holds no state)


def check_range(buffer: Buffer, offset: int, nbytes: int) -> None:
    """Refuse bytes ``offset .. offset + nbytes`` that are not all inside ``buffer``."""
    if offset < 0 or nbytes < 0 or offset + nbytes > buffer.nbytes:
        raise ValueError(f"bytes {offset}..{offset + nbytes} are outside a buffer of {buffer.nbytes} bytes")


def fill_extent(buffer: Buffer, value: Any, nbytes: int | None, offset: int) -> tuple[np.ndarray, int]:
    """The one-element pattern of a fill and the bytes it covers (default: to the buffer's end),
    checked to be whole values inside the buffer."""
    pattern = np.asarray(value).reshape(1)
    nbytes = buffer.nbytes - offset if nbytes is None else nbytes
    check_range(buffer, offset, nbytes)
    if nbytes % pattern.nbytes or offset % pattern.nbytes:
        raise ValueError(f"fill of {nbytes} bytes at {offset} is not a whole number of {pattern.dtype} values")
    return pattern, nbytes


def shape2d(shape: tuple[int, ...]) -> tuple[int, int]:
    """Rows and columns of a 2D shape; ``ValueError`` for any other."""
    if len(shape) != 2:
        raise ValueError(f"expected a 2D array, got shape {shape}")
    return shape[0], shape[1]


def _size(nbytes: int) -> str:
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError


def _contiguous_host(array: np.ndarray) -> np.ndarray:
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected a NumPy array, got {type(array).__name__}")
    return np.ascontiguousarray(array)
