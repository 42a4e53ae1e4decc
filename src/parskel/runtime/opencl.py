"""The OpenCL backend, through PyOpenCL. The only module of parskel that imports pyopencl.

Built programs are kept per process here; between processes, binaries persist in the cache that
PyOpenCL chooses for the driver: the driver's own where it has one (PoCL: ``POCL_CACHE_DIR``,
NVIDIA: ``~/.nv/ComputeCache``), PyOpenCL's binary cache otherwise.
"""

from __future__ import annotations

import collections
import contextlib
import re
import warnings
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import BackendUnavailableError, DeviceMemoryError, LaunchError, ParskelError
from .base import (
    Backend,
    Buffer,
    Device,
    DeviceInfo,
    Kernel,
    Local,
    Marker,
    Program,
    Stream,
    check_range,
    fill_extent,
    shape2d,
)
from .buildlog import captured_stderr, report
from .cltypes import alignment
from .geometry import Size, check_launch
from .sources import Defines, Source, define_options
from .timing import Event, EventKind

try:
    import pyopencl as cl
except ImportError as exc:  # pragma: no cover - pyopencl is a hard dependency
    cl = None
    _IMPORT_ERROR = str(exc)
else:
    _IMPORT_ERROR = ""

_MEMORY_CODES = {"MEM_OBJECT_ALLOCATION_FAILURE", "OUT_OF_RESOURCES", "OUT_OF_HOST_MEMORY"}
_LAUNCH_CODES = {"INVALID_WORK_GROUP_SIZE", "INVALID_WORK_ITEM_SIZE", "INVALID_GLOBAL_WORK_SIZE"}


class OpenCLEvent(Event):
    __slots__ = ("_event", "kind", "label")

    def __init__(self, kind: EventKind, label: str, event: Any) -> None:
        self.kind = kind
        self.label = label
        self._event = event

    def wait(self) -> None:
        if self._event is not None:
            self._event.wait()

    @property
    def seconds(self) -> float:
        if self._event is None:
            return 0.0
        self._event.wait()
        return (self._event.profile.end - self._event.profile.start) * 1e-9


class OpenCLMarker(Marker):
    __slots__ = ("event",)

    def __init__(self, event: Any) -> None:
        self.event = event

    def wait(self) -> None:
        self.event.wait()


class OpenCLKernel(Kernel):
    def __init__(self, device: OpenCLDevice, handle: Any, name: str) -> None:
        self.name = name
        self.handle = handle
        self._device = device
        info = cl.kernel_work_group_info
        self._max_wg = int(handle.get_work_group_info(info.WORK_GROUP_SIZE, device._cl))
        self.local_mem_bytes = int(handle.get_work_group_info(info.LOCAL_MEM_SIZE, device._cl))

    @property
    def max_work_group_size(self) -> int:
        return self._max_wg


class OpenCLProgram(Program):
    def __init__(self, device: OpenCLDevice, handle: Any, source: Source) -> None:
        self.source = source
        self._device = device
        self._handle = handle
        self._kernels: dict[str, OpenCLKernel] = {}

    def kernel(self, name: str) -> OpenCLKernel:
        found = self._kernels.get(name)
        if found is None:
            names = self._handle.get_info(cl.program_info.KERNEL_NAMES).split(";")
            if name not in names:
                raise KeyError(f"{self.source.name} has no kernel {name!r}; it has {sorted(names)}")
            found = self._kernels[name] = OpenCLKernel(self._device, cl.Kernel(self._handle, name), name)
        return found


class OpenCLDevice(Device):
    def __init__(self, info: DeviceInfo, handle: Any) -> None:
        super().__init__(info)
        self._cl = handle
        self._ctx: Any = None
        self._queue: Any = None
        self._streams: list[Any] = []  # queues made by stream(), finished with the device's own
        self._programs: dict[tuple[str, tuple[str, ...]], OpenCLProgram] = {}
        self._shared: bool | None = None
        self._partitions: dict[int, list[Device]] = {}
        # host arrays that enqueued commands work in, kept alive until those commands are done
        self._held: collections.deque[tuple[Any, list[np.ndarray]]] = collections.deque()

    @property
    def queue(self) -> Any:
        """The queue commands go to now: the active stream's (see :meth:`Device.on`) or the device's own."""
        if self._active is not None:
            return self._active.handle
        if self._queue is None:
            with _translated(self):
                self._ctx = cl.Context([self._cl])
                self._queue = self._new_queue()
        return self._queue

    def _new_queue(self) -> Any:
        return cl.CommandQueue(self._ctx, self._cl, properties=cl.command_queue_properties.PROFILING_ENABLE)

    def stream(self) -> Stream:
        _ = self.context
        with _translated(self, "a second queue"):
            queue = self._new_queue()
        self._streams.append(queue)
        return Stream(self, queue)

    def mark(self) -> Marker:
        with _translated(self):
            return OpenCLMarker(cl.enqueue_marker(self.queue))

    def wait_for(self, marker: Marker) -> None:
        assert isinstance(marker, OpenCLMarker)
        with _translated(self):
            cl.enqueue_barrier(self.queue, wait_for=[marker.event])

    @property
    def context(self) -> Any:
        if self._ctx is None:
            with self.on(None):
                _ = self.queue  # creates the context with it
        return self._ctx

    # memory -------------------------------------------------------------------------------
    def _alloc(self, nbytes: int) -> Buffer:
        with _translated(self):
            handle = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, size=max(nbytes, 1))
        return Buffer(self, nbytes, handle)

    def empty_pinned(self, shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
        dims = (int(shape),) if isinstance(shape, int) else tuple(int(n) for n in shape)
        nbytes = int(np.prod(dims, dtype=np.int64)) * np.dtype(dtype).itemsize
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR
        with _translated(self, "pinned host memory"):
            buffer = cl.Buffer(self.context, flags, size=max(nbytes, 1))
            # the array's base is the mapping, which holds the buffer: both live as long as it
            array, _ = cl.enqueue_map_buffer(
                self.queue, buffer, cl.map_flags.READ | cl.map_flags.WRITE, 0, dims, dtype, is_blocking=True
            )
        return array

    def partition(self, parts: int) -> list[Device]:
        found = self._partitions.get(parts)
        if found is not None:
            return found
        units = self.info.compute_units
        if not isinstance(parts, int) or isinstance(parts, bool) or not 1 <= parts <= units:
            raise BackendUnavailableError(f"{self.id} has {units} compute units: it splits into 1 to {units} parts")
        by_counts = cl.device_partition_property.BY_COUNTS
        counts = [units // parts + (k < units % parts) for k in range(parts)]
        try:
            handles = self._cl.create_sub_devices([by_counts, *counts, cl.device_partition_property.BY_COUNTS_LIST_END])
        except (cl.Error, cl.LogicError, cl.RuntimeError) as exc:
            raise BackendUnavailableError(f"{self.id} cannot be partitioned: {exc}") from None
        platform = self._cl.platform
        found = self._partitions[parts] = [
            OpenCLDevice(_describe(f"{self.id}/{k}", platform, handle), handle) for k, handle in enumerate(handles)
        ]
        return found

    def _event(self, kind: EventKind, label: str, event: Any) -> Event:
        return self._track(OpenCLEvent(kind, label, event))

    @property
    def shares_host_memory(self) -> bool:
        if self._shared is None:
            self._shared = self.info.type == "cpu" and _writes_reach_host(self)
        return self._shared

    def host_buffer(self, array: np.ndarray, *, upload: bool = True) -> Buffer:
        array = _contiguous(array)
        # kernels assume vector elements aligned to their size (a float16 to 64 bytes), which
        # NumPy's memory need not be: such an array gets memory of its own
        misaligned = array.ctypes.data % alignment(array.dtype) != 0
        if array.nbytes == 0 or not self.shares_host_memory or misaligned:
            return super().host_buffer(array, upload=upload)
        # the array's own memory; a read-only array (a borrowed input) can only be read
        flags = cl.mem_flags.USE_HOST_PTR | (
            cl.mem_flags.READ_WRITE if array.flags.writeable else cl.mem_flags.READ_ONLY
        )
        with _translated(self):
            handle = cl.Buffer(self.context, flags, hostbuf=array)
        if upload:  # nothing moves, and the timing split shows it
            self._event("upload", "upload: the device reads the host array itself", None)
        buffer = Buffer(self, array.nbytes, handle, host=array)
        # the kernels enqueued on it may still read or write the array's memory when the buffer
        # goes (a result nobody kept, or the interpreter's exit): they finish before it is freed
        weakref.finalize(buffer, self.finish)
        return buffer

    def upload(self, buffer: Buffer, host: np.ndarray, *, offset: int = 0, wait: bool = False) -> Event:
        host = _contiguous(host)
        check_range(buffer, offset, host.nbytes)
        if host.nbytes == 0:
            return self._event("upload", "upload", None)
        if _same_memory(buffer, host, offset):
            return self._event("upload", "upload: the device reads the host array itself", None)
        with _translated(self):
            ev = cl.enqueue_copy(self.queue, buffer.handle, host, dst_offset=offset, is_blocking=wait)
        return self._event("upload", f"upload {host.nbytes} B", ev)

    def download(self, buffer: Buffer, out: np.ndarray, *, offset: int = 0, wait: bool = True) -> Event:
        if not (out.flags.c_contiguous and out.flags.writeable):
            raise ValueError("download needs a writable C-contiguous output array")
        check_range(buffer, offset, out.nbytes)
        if out.nbytes == 0:
            return self._event("download", "download", None)
        with _translated(self):
            if _same_memory(buffer, out, offset):  # the kernels wrote into it: only wait for them
                ev = cl.enqueue_marker(self.queue)
                if wait:
                    ev.wait()
                return self._event("download", "download: the device wrote the host array itself", ev)
            ev = cl.enqueue_copy(self.queue, out, buffer.handle, src_offset=offset, is_blocking=wait)
        return self._event("download", f"download {out.nbytes} B", ev)

    def copy(
        self, dst: Buffer, src: Buffer, nbytes: int | None = None, *, src_offset: int = 0, dst_offset: int = 0
    ) -> Event:
        nbytes = src.nbytes - src_offset if nbytes is None else nbytes
        check_range(src, src_offset, nbytes)
        check_range(dst, dst_offset, nbytes)
        if nbytes == 0:
            return self._event("copy", "copy", None)
        with _translated(self):
            ev = cl.enqueue_copy(
                self.queue, dst.handle, src.handle, byte_count=nbytes, src_offset=src_offset, dst_offset=dst_offset
            )
        self._hold(ev, (dst, src))
        return self._event("copy", f"copy {nbytes} B", ev)

    def fill(self, buffer: Buffer, value: np.generic, nbytes: int | None = None, *, offset: int = 0) -> Event:
        pattern, nbytes = fill_extent(buffer, value, nbytes, offset)
        if nbytes == 0:
            return self._event("fill", "fill", None)
        with _translated(self):
            ev = cl.enqueue_fill_buffer(self.queue, buffer.handle, pattern, offset, nbytes)
        self._hold(ev, (buffer,))
        return self._event("fill", f"fill {nbytes} B", ev)

    def upload_padded(self, host: np.ndarray, padded_shape: tuple[int, int], fill: np.generic | None = None) -> Buffer:
        host = _contiguous(host)
        rows, cols = shape2d(host.shape)
        prow, pcol = padded_shape
        if prow < rows or pcol < cols:
            raise ValueError(f"padded shape {padded_shape} is smaller than the array {host.shape}")
        item = host.dtype.itemsize
        buffer = self.alloc(prow * pcol * item)
        self.fill(buffer, fill if fill is not None else host.dtype.type(0))
        if rows and cols:
            with _translated(self):
                ev = cl.enqueue_copy(
                    self.queue,
                    buffer.handle,
                    host,
                    buffer_origin=(0, 0),
                    host_origin=(0, 0),
                    region=(cols * item, rows),
                    buffer_pitches=(pcol * item,),
                    host_pitches=(cols * item,),
                    is_blocking=False,
                )
            self._event("upload", f"upload {host.nbytes} B into {padded_shape}", ev)
        return buffer

    def download_trimmed(self, buffer: Buffer, padded_shape: tuple[int, int], out: np.ndarray) -> Event:
        rows, cols = shape2d(out.shape)
        prow, pcol = padded_shape
        item = out.dtype.itemsize
        if prow < rows or pcol < cols or buffer.nbytes < prow * pcol * item:
            raise ValueError(f"cannot read {out.shape} out of a {padded_shape} buffer of {buffer.nbytes} B")
        if not (out.flags.c_contiguous and out.flags.writeable):
            raise ValueError("download needs a writable C-contiguous output array")
        if not (rows and cols):
            return self._event("download", "download", None)
        with _translated(self):
            ev = cl.enqueue_copy(
                self.queue,
                out,
                buffer.handle,
                buffer_origin=(0, 0),
                host_origin=(0, 0),
                region=(cols * item, rows),
                buffer_pitches=(pcol * item,),
                host_pitches=(cols * item,),
                is_blocking=True,
            )
        return self._event("download", f"download {out.nbytes} B from {padded_shape}", ev)

    # programs -----------------------------------------------------------------------------
    def build(self, source: Source, defines: Defines | None = None) -> OpenCLProgram:
        options = tuple(define_options(defines))
        key = (source.digest, options)
        program = self._programs.get(key)
        if program is not None:
            return program
        context = self.context
        failure: str | None = None
        with captured_stderr() as chatter:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", cl.CompilerWarning)
                    handle = cl.Program(context, source.text).build(options=list(options))
            except cl.RuntimeError as exc:
                failure = _build_log(str(exc))
        if failure is not None:
            raise source.build_error(failure)
        program = self._programs[key] = OpenCLProgram(self, handle, source)
        program.log = "\n".join(filter(None, (_device_log(handle, self._cl), *chatter))).strip()
        report(source.name, program.log)
        return program

    def launch(self, kernel: Kernel, global_size: Size, local_size: Size | None, *args: Any) -> Event:
        assert isinstance(kernel, OpenCLKernel)
        gsize, lsize = check_launch(
            global_size,
            local_size,
            max_work_group_size=min(kernel.max_work_group_size, self.info.max_work_group_size),
            max_work_item_sizes=self.info.max_work_item_sizes,
            kernel_name=kernel.name,
        )
        cl_args = [_argument(kernel.name, i, a) for i, a in enumerate(args)]
        local_bytes = kernel.local_mem_bytes + sum(a.nbytes for a in args if isinstance(a, Local))
        if local_bytes > self.info.local_mem_bytes:
            raise LaunchError(
                f"kernel {kernel.name} needs {local_bytes} bytes of local memory per work-group; "
                f"{self.id} has {self.info.local_mem_bytes}"
            )
        if 0 in gsize:
            return self._event("kernel", kernel.name, None)
        with _translated(self, kernel.name):
            kernel.handle.set_args(*cl_args)
            ev = cl.enqueue_nd_range_kernel(self.queue, kernel.handle, gsize, lsize)
        self._hold(ev, args)
        return self._event("kernel", kernel.name, ev)

    def _hold(self, event: Any, args: Sequence[Any]) -> None:
        """Keep the host arrays of host-memory buffers alive while ``event``'s command may use
        them: the caller may drop its last reference to a container as soon as it has enqueued."""
        done = cl.command_execution_status.COMPLETE
        # the queue is in order: commands complete in the order they were held
        while self._held and self._held[0][0].command_execution_status == done:
            self._held.popleft()
        arrays = [a.host for a in args if isinstance(a, Buffer) and a.host is not None]
        if arrays:
            self._held.append((event, arrays))

    def finish(self) -> None:
        with _translated(self), self.on(None):
            self.queue.finish()
            for queue in self._streams:
                queue.finish()
        self._held.clear()


# A CPU device compiles for the host CPU; a driver whose compiler predates the CPU (PoCL 3.0's
# LLVM 14 on AMD Zen 5: "unknown target CPU 'generic'") cannot build anything. Such a device is
# found by building this once, and is reported as unusable instead of failing every call.
_PROBE = "__kernel void ps_probe(__global int *x) { x[get_global_id(0)] = 1; }"


def _cannot_build(handle: Any) -> str:
    """Why the device cannot build a trivial kernel, or ``""`` when it can."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.CompilerWarning)
            cl.Program(cl.Context([handle]), _PROBE).build()
    except cl.Error as exc:
        log = _build_log(str(exc))
        return log.splitlines()[0] if log else str(exc)
    return ""


class OpenCLBackend(Backend):
    name = "opencl"

    def __init__(self) -> None:
        self._unusable: list[tuple[str, str]] = []

    def available(self) -> tuple[bool, str]:
        if cl is None:
            return False, f"pyopencl cannot be imported: {_IMPORT_ERROR}"
        try:
            cl.get_platforms()
        except cl.Error as exc:
            return False, f"no OpenCL platform: {exc}"
        return True, ""

    def discover(self) -> Sequence[OpenCLDevice]:
        ok, _ = self.available()
        if not ok:
            return []
        found = []
        for p_index, platform in enumerate(cl.get_platforms()):
            try:
                handles = platform.get_devices()
            except cl.Error:
                continue
            for d_index, handle in enumerate(handles):
                info = _describe(f"opencl:{p_index}:{d_index}", platform, handle)
                why = _cannot_build(handle) if info.type == "cpu" else ""
                if why:
                    self._unusable.append((f"{info.id}: {info.name} ({info.platform_version})", _advice(why)))
                    continue
                found.append(OpenCLDevice(info, handle))
        return found

    def unusable(self) -> list[tuple[str, str]]:
        return list(self._unusable)


# helpers ----------------------------------------------------------------------------------


def _describe(device_id: str, platform: Any, dev: Any) -> DeviceInfo:
    dtype = dev.type
    kind = "gpu" if dtype & cl.device_type.GPU else "cpu" if dtype & cl.device_type.CPU else "accelerator"
    widths = {}
    for name in ("char", "short", "int", "long", "float", "double", "half"):
        try:
            widths[name] = int(getattr(dev, f"preferred_vector_width_{name}"))
        except (cl.Error, AttributeError):
            widths[name] = 0
    extensions = tuple(sorted(dev.extensions.split()))
    capability = ""
    if "cl_nv_device_attribute_query" in extensions:
        with contextlib.suppress(cl.Error, AttributeError):
            capability = f"{int(dev.compute_capability_major_nv)}.{int(dev.compute_capability_minor_nv)}"
    return DeviceInfo(
        id=device_id,
        backend="opencl",
        name=dev.name.strip(),
        vendor=dev.vendor.strip(),
        type=kind,
        platform=platform.name.strip(),
        platform_version=platform.version.strip(),
        version=dev.version.strip(),
        driver_version=dev.driver_version.strip(),
        compute_units=int(dev.max_compute_units),
        clock_mhz=int(dev.max_clock_frequency),
        global_mem_bytes=int(dev.global_mem_size),
        max_alloc_bytes=int(dev.max_mem_alloc_size),
        local_mem_bytes=int(dev.local_mem_size),
        max_work_group_size=int(dev.max_work_group_size),
        max_work_item_sizes=tuple(int(s) for s in dev.max_work_item_sizes),
        preferred_vector_widths=widths,
        fp64=bool(dev.double_fp_config) or "cl_khr_fp64" in extensions,
        extensions=extensions,
        compute_capability=capability,
    )


def _same_memory(buffer: Buffer, host: np.ndarray, offset: int) -> bool:
    """Whether ``host`` is the part of a host-memory buffer at byte ``offset``."""
    return buffer.host is not None and host.ctypes.data == buffer.host.ctypes.data + offset


def _writes_reach_host(device: OpenCLDevice) -> bool:
    """Whether a kernel's writes into a host-pointer buffer are in the host array once the queue
    is finished, with no map (PoCL works in the host memory itself). Asked once per device."""
    probe = np.zeros(4, dtype=np.uint32)
    try:
        with _translated(device):
            flags = cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR
            buffer = cl.Buffer(device.context, flags, hostbuf=probe)
            program = cl.Program(device.context, _WRITE_PROBE).build()
            kernel = cl.Kernel(program, "ps_write_probe")
            kernel.set_args(buffer)
            cl.enqueue_nd_range_kernel(device.queue, kernel, (4,), None)
            device.queue.finish()
    except (ParskelError, cl.Error):
        return False
    return bool((probe == np.arange(1, 5, dtype=np.uint32)).all())


_WRITE_PROBE = "__kernel void ps_write_probe(__global uint *x) { x[get_global_id(0)] = get_global_id(0) + 1; }"


def _advice(why: str) -> str:
    if "unknown target CPU" in why:
        return (
            f"its compiler does not know this CPU ({why.strip()}); install a newer PoCL, "
            "e.g. Debian/Ubuntu's pocl-opencl-icd"
        )
    return f"it cannot build a trivial kernel: {why.strip()}"


def _contiguous(host: np.ndarray) -> np.ndarray:
    if not isinstance(host, np.ndarray):
        raise TypeError(f"expected a NumPy array, got {type(host).__name__}")
    return np.ascontiguousarray(host)


def _argument(kernel: str, index: int, arg: Any) -> Any:
    if isinstance(arg, Buffer):
        return arg.handle
    if isinstance(arg, Local):
        return cl.LocalMemory(max(arg.nbytes, 1))
    if isinstance(arg, np.generic):
        return arg
    raise TypeError(
        f"kernel {kernel}, argument {index}: pass a Buffer, Local or a NumPy scalar such as "
        f"np.int32(...), not {type(arg).__name__} (the scalar's type fixes the C type)"
    )


_BUILD_NOISE = re.compile(r"^(clBuildProgram failed.*|Build on <.*>:|\(options: .*\))$")


def _device_log(handle: Any, device: Any) -> str:
    try:
        return str(handle.get_build_info(device, cl.program_build_info.LOG)).strip()
    except cl.Error:
        return ""


def _build_log(message: str) -> str:
    lines = [line for line in message.splitlines() if not _BUILD_NOISE.match(line.strip())]
    return "\n".join(lines).strip()


@contextlib.contextmanager
def _translated(device: OpenCLDevice, what: str = "") -> Iterator[None]:
    """Turn PyOpenCL errors into parskel errors that name the device."""
    where = f"{device.id}{' ' + what if what else ''}"
    try:
        yield
    except cl.Error as exc:
        code = _code_name(exc)
        if code in _MEMORY_CODES:
            raise DeviceMemoryError(f"{where}: out of device memory ({code}): {exc}") from None
        if code in _LAUNCH_CODES:
            raise LaunchError(f"{where}: the device refused the launch ({code}): {exc}") from None
        raise ParskelError(f"{where}: OpenCL error {code}: {exc}") from None


def _code_name(exc: Any) -> str:
    try:
        code = exc.code
    except AttributeError:
        return "UNKNOWN"
    for name in dir(cl.status_code):
        if not name.startswith("_") and getattr(cl.status_code, name) == code:
            return name
    return str(code)
