"""The CUDA backend, through CuPy. The only module of parskel that imports cupy for the runtime.

Kernels are the same ``.cl`` files the OpenCL backend builds: ``common/cuda.h`` is put in front
of the source and NVRTC compiles it as C++ with unannotated functions made device functions.
Built programs are kept per process here and on disk in CuPy's kernel cache
(``CUPY_CACHE_DIR``, ``~/.cupy/kernel_cache`` by default).

Buffers are CuPy memory (its pool). A copy between a buffer and a device array is timed as a
device-side copy ("other" in a :class:`Timing`), not as an upload or download. All commands go
to the legacy default stream, so they are ordered with what CuPy and PyTorch enqueue on theirs
by default; ``device.on(device.stream())`` sends commands to a non-blocking stream of their own
instead, ordered with the default one only through markers. Every copy is a
``cudaMemcpyDefault``: either side may be host memory or a device array (anything with
``__cuda_array_interface__``), so device arrays move without passing through the host.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import math
import re
import struct
import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import numpy as np

from ..errors import DeviceMemoryError, LaunchError, ParskelError
from . import hostpool
from .arrays import based_on, host_address, is_device_array
from .base import (
    NOTHING,
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
from .geometry import Size
from .memo import remembered
from .sources import Defines, Source, define_lines, define_options, read_kernel_file
from .timing import Event, EventKind

HEADER = "common/cuda.h"
_OPTIONS = ("-default-device", "-std=c++17")
_ZERO_FILLS = frozenset({np.uint8, np.int32, np.uint32, np.int64, np.uint64})  # (a float -0.0 is not zero bytes)
_KERNEL_NAME = re.compile(r"__kernel\s+(?:__attribute__\s*\(\(.*?\)\)\s*)?void\s+(\w+)\s*\(", re.S)
# a bare OpenCL qualifier; not one that follows a dot, as in PTX (prefetch.global.L2)
_BARE_QUALIFIER = re.compile(r"(?<![\w#.])(global|local|constant|private|kernel)\b(?!\s*\()")
# an OpenCL vector literal, (float4)(a, b, c, d): a cast of a comma expression in C++
_VECTOR_LITERAL = re.compile(r"\(\s*((?:u?(?:char|short|int|long)|float|double)(?:2|3|4|8|16))\s*\)\s*\(")
_MEMCPY_DEFAULT = 4  # cudaMemcpyDefault: the direction follows from the pointers (UVA)
#: downloads up to this size that wait go through a page-locked buffer of the thread's, then
#: memmove: 8.5 us for 4 KB on an H100 where a pageable cudaMemcpy took 10.9 us
STAGED_DOWNLOAD_BYTES = 64 << 10
_STAGING = threading.local()  # per thread: {device index: (pinned memory, its address)}
_LAUNCH_ERRORS = ("INVALID_VALUE", "LAUNCH_OUT_OF_RESOURCES", "INVALID_CONFIGURATION")
_MEMORY_ERRORS = ("MEMORY_ALLOCATION", "OUT_OF_MEMORY", "OutOfMemory")
# cudaDeviceAttr codes: CUDA 13 dropped the clocks from cudaDeviceProp, the attributes remain
_ATTR_CLOCK_KHZ = 13
_ATTR_MEMORY_CLOCK_KHZ = 36
_ATTR_MEMORY_BUS_BITS = 37
_ATTR_SHARED_OPTIN = 97  # cudaDevAttrMaxSharedMemoryPerBlockOptin
_FUNC_MAX_DYNAMIC_SHARED = 8  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

_cupy: Any = None
_import_error = ""
R = TypeVar("R")


def _cp() -> Any:
    """CuPy, imported on first use; ``None`` where it cannot be."""
    global _cupy, _import_error
    if _cupy is None and not _import_error:
        try:
            import cupy
        except Exception as exc:  # ImportError, or a broken CUDA installation
            _import_error = f"{type(exc).__name__}: {exc}"
        else:
            _cupy = cupy
    return _cupy


class CUDAEvent(Event):
    """A command between two CUDA events; keeps the host memory it reads or writes alive.
    An untimed command (see :meth:`Device.timed`) has an end event only, or none (a launch:
    waiting for it waits for its whole ``stream``, on device ``index``)."""

    __slots__ = ("_end", "_index", "_keep", "_start", "_stream", "_untimed", "kind", "label")

    def __init__(
        self,
        kind: EventKind,
        label: str,
        start: Any,
        end: Any,
        keep: Any = None,
        stream: Any = None,
        index: int = 0,
        untimed: bool = False,
    ) -> None:
        self.kind = kind
        self.label = label
        self._start = start
        self._end = end
        self._keep = keep
        self._stream = stream
        self._index = index
        self._untimed = untimed

    def wait(self) -> None:
        if self._end is not None:
            self._end.synchronize()
        elif self._stream is not None:
            with _cp().cuda.Device(self._index):
                self._stream.synchronize()
            self._stream = None
        self._keep = None

    @property
    def seconds(self) -> float:
        if self._untimed:
            raise ParskelError(
                f"{self.label} was not timed: enqueue it inside device.timed() or device.record() to read its time"
            )
        if self._end is None:
            return 0.0
        self.wait()
        return _cp().cuda.get_elapsed_time(self._start, self._end) * 1e-3


class CUDAMarker(Marker):
    __slots__ = ("event",)

    def __init__(self, event: Any) -> None:
        self.event = event

    def wait(self) -> None:
        self.event.synchronize()


Grid = tuple[tuple[int, int, int], tuple[int, int, int]]  # a launch's grid and block, in three dimensions


class CUDAKernel(Kernel):
    def __init__(self, raw: Any, name: str) -> None:
        super().__init__()
        self._grids: dict[Hashable, Grid | None] = {}
        self.name = name
        self.pointer = int(raw.kernel.ptr)  # the CUfunction
        self._max_wg = int(raw.max_threads_per_block)
        self.local_mem_bytes = int(raw.shared_size_bytes)
        self.dynamic_local_bytes = 0  # given to every launch (see take_dynamic_local)

    def take_dynamic_local(self, nbytes: int) -> None:
        if nbytes > self.dynamic_local_bytes:  # the driver refuses launches over the function's limit
            try:
                _driver().funcSetAttribute(self.pointer, _FUNC_MAX_DYNAMIC_SHARED, int(nbytes))
            except Exception as exc:
                raise LaunchError(
                    f"kernel {self.name}: {nbytes} bytes of dynamic local memory beside its own "
                    f"{self.local_mem_bytes} are more than the device allows ({exc})"
                ) from None
        self.dynamic_local_bytes = int(nbytes)

    @property
    def max_work_group_size(self) -> int:
        return self._max_wg

    def grid(self, global_size: Size, local_size: Size | None, info: DeviceInfo) -> Grid | None:
        """The grid and block of a launch (None for an empty one), checked and remembered per
        pair of sizes like :meth:`geometry`."""
        return remembered(self._grids, (global_size, local_size), lambda: self._grid(global_size, local_size, info))

    def _grid(self, global_size: Size, local_size: Size | None, info: DeviceInfo) -> Grid | None:
        gsize, lsize = self.geometry(global_size, local_size, info)
        if lsize is None:
            lsize = _default_local(gsize, min(self._max_wg, 256))
        if self.local_mem_bytes > info.local_mem_bytes:
            raise LaunchError(
                f"kernel {self.name} needs {self.local_mem_bytes} bytes of local memory per "
                f"work-group; {info.id} has {info.local_mem_bytes}"
            )
        if 0 in gsize:
            return None
        grid = [g // loc for g, loc in zip(gsize, lsize)] + [1] * (3 - len(gsize))
        block = list(lsize) + [1] * (3 - len(lsize))
        return (grid[0], grid[1], grid[2]), (block[0], block[1], block[2])


class CUDAProgram(Program):
    def __init__(self, device: CUDADevice, module: Any, source: Source) -> None:
        self.source = source
        self._device = device
        self._module = module
        self._kernels: dict[str, CUDAKernel] = {}

    def kernel(self, name: str) -> CUDAKernel:
        found = self._kernels.get(name)
        if found is None:
            # CuPy loads a kernel for the current device: the handle and its attributes are read
            # with this program's device current, or a launch on another GPU refuses the handle
            with self._device.active():
                try:
                    raw = self._module.get_function(name)
                    _ = raw.kernel  # loads the module: a missing kernel fails here
                except Exception:
                    names = sorted(set(_KERNEL_NAME.findall(self.source.text)))
                    raise KeyError(f"{self.source.name} has no kernel {name!r}; it has {names}") from None
                found = self._kernels[name] = CUDAKernel(raw, name)
        return found


class CUDADevice(Device):
    def __init__(self, info: DeviceInfo, index: int, *, alone: bool = False) -> None:
        super().__init__(info)
        self.index = index
        # the host's only CUDA device is always the current one: no command need look or switch
        self.alone = alone
        self._programs: dict[tuple[str, tuple[str, ...]], CUDAProgram] = {}
        self._streams: list[Any] = []  # made by stream(), synchronized by finish()

    def active(self, what: str = "") -> _Active:
        """Make this the current CUDA device (and the active stream CuPy's current one), and turn
        CUDA errors into parskel errors."""
        return _Active(self, what)

    def _translate(self, exc: Exception, what: str) -> ParskelError:
        """The parskel error for CuPy's ``exc``, naming the device (and ``what`` it was doing)."""
        where = f"{self.id}{' ' + what if what else ''}"
        text = str(exc)
        if isinstance(exc, _cp().cuda.memory.OutOfMemoryError) or any(code in text for code in _MEMORY_ERRORS):
            return DeviceMemoryError(f"{where}: out of device memory: {text}")
        if any(code in text for code in _LAUNCH_ERRORS):
            return LaunchError(f"{where}: the device refused the launch: {text}")
        return ParskelError(f"{where}: CUDA error: {text}")

    def current(self) -> contextlib.AbstractContextManager[Any]:
        # the host's only device is current already
        return NOTHING if self.alone else _cp().cuda.Device(self.index)

    # streams ------------------------------------------------------------------------------
    def _cuda_stream(self) -> Any:
        """The CuPy stream commands go to now: the active one, or the legacy default stream."""
        return self._active.handle if self._active is not None else _cp().cuda.Stream.null

    def _stream_pointer(self) -> int:
        return int(self._active.handle.ptr) if self._active is not None else 0

    def stream(self) -> Stream:
        # non-blocking: the legacy default stream, where other commands go, does not wait for it
        with self.active("a stream"):
            handle = _cp().cuda.Stream(non_blocking=True)
        self._streams.append(handle)
        return Stream(self, handle)

    def mark(self) -> Marker:
        with self.active():
            event = _cp().cuda.Event(disable_timing=True)
            event.record(self._cuda_stream())
        return CUDAMarker(event)

    def wait_for(self, marker: Marker) -> None:
        assert isinstance(marker, CUDAMarker)
        with self.active():
            self._cuda_stream().wait_event(marker.event)

    # events -------------------------------------------------------------------------------
    def _begin(self) -> Any:
        """The start event of a command, where commands are timed now (see :meth:`Device.timed`)."""
        if not (self._timed or self._recorders):
            return None
        start = _cp().cuda.Event()
        start.record(self._cuda_stream())
        return start

    def _end(self, kind: EventKind, label: str, start: Any, keep: Any = None, *, mark: bool = True) -> Event:
        """The event of a command just enqueued: timed from ``start``, or untimed with an end
        event to wait for (``mark``) or none (a launch: waiting waits for its stream)."""
        stream = self._cuda_stream()
        if start is None:
            end = None
            if mark:
                end = _cp().cuda.Event(disable_timing=True)
                end.record(stream)
            return CUDAEvent(kind, label, None, end, keep, None if mark else stream, self.index, untimed=True)
        end = _cp().cuda.Event()
        end.record(stream)
        return self._track(CUDAEvent(kind, label, start, end, keep))

    def _none(self, kind: EventKind, label: str) -> Event:
        return self._track(CUDAEvent(kind, label, None, None))

    # memory -------------------------------------------------------------------------------
    def _alloc(self, nbytes: int) -> Buffer:
        # CuPy's pool hands out memory per stream: the active one's
        return Buffer(self, nbytes, self._current("", _cp().cuda.alloc, max(nbytes, 1)))

    def _memcpy(self, kind: EventKind, dst: int, src: int, nbytes: int, keep: Any, wait: bool) -> Event:
        if wait and self._active is None and not self.timing:  # one call: it waits itself
            if kind == "download" and nbytes <= STAGED_DOWNLOAD_BYTES:
                self._current(kind, self._download_staged, dst, src, nbytes)
            else:
                self._current(kind, _cp().cuda.runtime.memcpy, dst, src, nbytes, _MEMCPY_DEFAULT)
            return CUDAEvent(kind, f"{kind} {nbytes} B", None, None, untimed=True)
        return self._current(kind, self._memcpy_here, kind, dst, src, nbytes, keep, wait)

    def _memcpy_here(
        self, kind: EventKind, dst: int, src: int, nbytes: int, keep: Any, wait: bool, mark: bool = True
    ) -> Event:
        start = self._begin()
        _cp().cuda.runtime.memcpyAsync(dst, src, nbytes, _MEMCPY_DEFAULT, self._stream_pointer())
        event = self._end(kind, f"{kind} {nbytes} B", start, keep, mark=mark)
        if wait:
            event.wait()
        return event

    def _current(self, what: str, fn: Callable[..., R], *args: Any) -> R:
        """``fn(*args)`` inside :meth:`active`: with this device current (and the active
        stream CuPy's), CUDA errors translated. The host's only device with no stream active is
        current already, so ``fn`` runs directly, with only its errors translated: this is on
        the path of every launch, copy and allocation, where entering a context costs a
        microsecond."""
        if self._active is None and self.alone:
            try:
                return fn(*args)
            except Exception as exc:
                if _is_cuda_error(exc):
                    raise self._translate(exc, what) from None
                raise
        with self.active(what):
            return fn(*args)

    def to_device(self, host: Any) -> Buffer:
        """As :meth:`Device.to_device`; a NumPy array's copy makes no end event unless commands
        are timed: the caller has none to wait for, and a copy from pageable memory has read its
        source when the call returns (CUDA stages it)."""
        if type(host) is not np.ndarray:
            return super().to_device(host)
        source, pointer = _readable(host)
        buffer = self.alloc(source.nbytes)
        if source.nbytes:
            self._current(
                "upload", self._memcpy_here, "upload", _pointer(buffer), pointer, source.nbytes, source, False, False
            )
        return buffer

    def upload(self, buffer: Buffer, host: Any, *, offset: int = 0, wait: bool = False) -> Event:
        source, pointer = _readable(host)
        _check_buffer(self, buffer, offset, source.nbytes)
        if source.nbytes == 0:
            return self._none("upload", "upload")
        kind: EventKind = "upload" if isinstance(source, np.ndarray) else "copy"  # from a device array
        return self._memcpy(kind, _pointer(buffer) + offset, pointer, source.nbytes, source, wait)

    def download(self, buffer: Buffer, out: Any, *, offset: int = 0, wait: bool = True) -> Event:
        pointer = _writable(out)
        _check_buffer(self, buffer, offset, out.nbytes)
        if out.nbytes == 0:
            return self._none("download", "download")
        kind: EventKind = "download" if isinstance(out, np.ndarray) else "copy"  # into a device array
        return self._memcpy(kind, pointer, _pointer(buffer) + offset, out.nbytes, out, wait)

    def _download_staged(self, dst: int, src: int, nbytes: int) -> None:
        """A small download to the host that waits: into the thread's page-locked buffer, then
        to ``dst``."""
        buffers: dict[int, tuple[Any, int]] | None = getattr(_STAGING, "buffers", None)
        if buffers is None:
            buffers = _STAGING.buffers = {}
        found = buffers.get(self.index)
        if found is None:
            memory = _cp().cuda.alloc_pinned_memory(STAGED_DOWNLOAD_BYTES)
            found = buffers[self.index] = (memory, int(memory.ptr))
        runtime, stream = _cp().cuda.runtime, self._stream_pointer()
        runtime.memcpyAsync(found[1], src, nbytes, _MEMCPY_DEFAULT, stream)
        runtime.streamSynchronize(stream)
        ctypes.memmove(dst, found[1], nbytes)

    def copy(
        self, dst: Buffer, src: Buffer, nbytes: int | None = None, *, src_offset: int = 0, dst_offset: int = 0
    ) -> Event:
        nbytes = src.nbytes - src_offset if nbytes is None else nbytes
        _check_buffer(self, src, src_offset, nbytes)
        _check_buffer(self, dst, dst_offset, nbytes)
        if nbytes == 0:
            return self._none("copy", "copy")
        return self._memcpy("copy", _pointer(dst) + dst_offset, _pointer(src) + src_offset, nbytes, None, False)

    def fill(self, buffer: Buffer, value: np.generic, nbytes: int | None = None, *, offset: int = 0) -> Event:
        _mine(self, buffer)
        if type(value) in _ZERO_FILLS and not value and not offset and not (self._timed or self._recorders):
            # zeros from the start, as the algorithms clear their counters and flags: a bare
            # memset, checked as fill_extent checks it, without building the pattern
            size = buffer.nbytes if nbytes is None else nbytes
            if 0 < size <= buffer.nbytes and size % value.itemsize == 0:
                self._current("fill", _cp().cuda.runtime.memsetAsync, _pointer(buffer), 0, size, self._stream_pointer())
                return self._end("fill", "fill", None, mark=False)
        pattern, nbytes = fill_extent(buffer, value, nbytes, offset)
        size = pattern.dtype.itemsize
        if nbytes == 0:
            return self._none("fill", "fill")
        raw = pattern.tobytes()
        byte = raw[0] if raw.count(raw[0]) == size else None  # one byte repeated (zeros, mostly)
        cp = _cp()
        if byte is not None and not (self._timed or self._recorders):  # a bare memset
            pointer = _pointer(buffer) + offset
            self._current("fill", cp.cuda.runtime.memsetAsync, pointer, byte, nbytes, self._stream_pointer())
            return self._end("fill", "fill", None, mark=False)  # waiting waits for its stream
        with self.active("fill"):
            start = self._begin()
            if byte is not None:
                cp.cuda.runtime.memsetAsync(_pointer(buffer) + offset, byte, nbytes, self._stream_pointer())
            elif size in (2, 4, 8):
                word = pattern.view(f"u{size}")
                view = cp.ndarray((nbytes // size,), dtype=word.dtype, memptr=buffer.handle + offset)
                view.fill(word[0])
            else:  # a record whose bytes differ: copy the pattern out once per element
                tiled = np.tile(pattern.view(np.uint8), nbytes // size)
                cp.cuda.runtime.memcpyAsync(
                    _pointer(buffer) + offset, tiled.ctypes.data, nbytes, _MEMCPY_DEFAULT, self._stream_pointer()
                )
                return self._end("fill", f"fill {nbytes} B", start, tiled)
            return self._end("fill", f"fill {nbytes} B", start)

    def upload_padded(self, host: Any, padded_shape: tuple[int, int], fill: np.generic | None = None) -> Buffer:
        source, pointer = _readable(host)
        rows, cols = shape2d(source.shape)
        prow, pcol = padded_shape
        if prow < rows or pcol < cols:
            raise ValueError(f"padded shape {padded_shape} is smaller than the array {source.shape}")
        item = source.dtype.itemsize
        buffer = self.alloc(prow * pcol * item)
        self.fill(buffer, fill if fill is not None else source.dtype.type(0))
        if rows and cols:
            kind: EventKind = "upload" if isinstance(source, np.ndarray) else "copy"
            with self.active(kind):
                start = self._begin()
                _cp().cuda.runtime.memcpy2DAsync(
                    _pointer(buffer),
                    pcol * item,
                    pointer,
                    cols * item,
                    cols * item,
                    rows,
                    _MEMCPY_DEFAULT,
                    self._stream_pointer(),
                )
                self._end(kind, f"{kind} {source.nbytes} B into {padded_shape}", start, source)
        return buffer

    def download_trimmed(self, buffer: Buffer, padded_shape: tuple[int, int], out: Any) -> Event:
        pointer = _writable(out)
        rows, cols = shape2d(out.shape)
        prow, pcol = padded_shape
        item = out.dtype.itemsize
        if prow < rows or pcol < cols or buffer.nbytes < prow * pcol * item:
            raise ValueError(f"cannot read {out.shape} out of a {padded_shape} buffer of {buffer.nbytes} B")
        if not (rows and cols):
            return self._none("download", "download")
        if pcol == cols:  # no padding between the rows: one plain copy
            return self.download(buffer, out)
        kind: EventKind = "download" if isinstance(out, np.ndarray) else "copy"
        with self.active(kind):
            start = self._begin()
            _cp().cuda.runtime.memcpy2DAsync(
                pointer,
                cols * item,
                _pointer(buffer),
                pcol * item,
                cols * item,
                rows,
                _MEMCPY_DEFAULT,
                self._stream_pointer(),
            )
            event = self._end(kind, f"{kind} {out.nbytes} B from {padded_shape}", start, out)
            event.wait()
        return event

    def empty_pinned(self, shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
        dims = (int(shape),) if isinstance(shape, int) else tuple(int(n) for n in shape)
        with self.active("pinned host memory"):
            import cupyx

            return cupyx.empty_pinned(dims, dtype=dtype)

    def is_pinned(self, array: np.ndarray) -> bool:
        return based_on(array, _cp().cuda.pinned_memory.PinnedMemoryPointer)

    def _page_locked_result(self, dims: tuple[int, ...], dtype: np.dtype, nbytes: int) -> np.ndarray:
        """Page-locked memory from CuPy's pinned pool: a freed result goes back to it, so
        repeated calls reuse their memory."""
        array = self.empty_pinned(dims, dtype)
        hostpool.pinned_result_made(array, nbytes)
        return array

    # device arrays ------------------------------------------------------------------------
    def wrap(self, array: Any) -> tuple[Buffer, Any]:
        """A buffer over the memory of a device array (CuPy, PyTorch, anything with
        ``__cuda_array_interface__`` or DLPack) on this device, without a copy, and the array as
        CuPy sees it. A non-contiguous array is first made contiguous on the device."""
        cp = _cp()
        if type(array) is cp.ndarray and self.alone and array.flags.c_contiguous:  # the usual case
            return Buffer(self, array.nbytes, array.data), array  # (the only GPU holds it)
        with self.active():
            found = as_cupy(array)
            if found.device.id != self.index:
                raise ParskelError(f"the array lives on cuda:{found.device.id}, not on {self.id}")
            found = cp.ascontiguousarray(found)
        return Buffer(self, found.nbytes, found.data), found

    def view(self, buffer: Buffer, shape: tuple[int, ...], dtype: Any) -> Any:
        """A CuPy array over ``buffer`` (no copy): it shares the buffer's memory."""
        _check_buffer(self, buffer, 0, int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize)
        return _cp().ndarray(shape, dtype=dtype, memptr=buffer.handle)

    # programs -----------------------------------------------------------------------------
    def build(self, source: Source, defines: Defines | None = None) -> CUDAProgram:
        options = tuple(define_options(defines))
        key = (source.digest, options)
        program = self._programs.get(key)
        if program is not None:
            return program
        full = cuda_source(source, defines)
        cp = _cp()
        with self.active():
            module = cp.RawModule(code=full.text, options=_OPTIONS, backend="nvrtc")
            try:
                module.compile()
            except cp.cuda.compiler.CompileException as exc:
                raise full.build_error(_build_log(exc), source.name) from None
        program = self._programs[key] = CUDAProgram(self, module, full)
        return program

    def launch(self, kernel: Kernel, global_size: Size, local_size: Size | None, *args: Any) -> Event:
        assert isinstance(kernel, CUDAKernel)
        shape = kernel.grid(global_size, local_size, self.info)
        params, keep = _parameters(self, kernel.name, args)
        if shape is None:
            return self._none("kernel", kernel.name)
        if self.alone and self._plain_now():
            return self._launch_plain(kernel.pointer, kernel.name, shape, params, kernel.dynamic_local_bytes)
        event = self._current(kernel.name, self._launch_here, kernel, shape, params)
        del keep  # the driver has copied the parameters
        return event

    def _plain_now(self) -> bool:
        """Whether a launch now may be the plain one: no stream active, nothing timed."""
        return self._active is None and not (self._timed or self._recorders)

    def _launch_plain(self, pointer: int, name: str, shape: Grid, params: int, shared: int) -> Event:
        """The usual launch (the host's only GPU, no stream, nothing timed), as _launch_here
        makes it on the legacy default stream, without its calls: a few are on the path of
        every kernel a call enqueues. ``shared``: the kernel's dynamic local memory."""
        (gx, gy, gz), (bx, by, bz) = shape
        try:
            _driver().launchKernel(pointer, gx, gy, gz, bx, by, bz, shared, 0, params, 0)
        except Exception as exc:
            if _is_cuda_error(exc):
                raise self._translate(exc, name) from None
            raise
        return CUDAEvent("kernel", name, None, None, None, _cp().cuda.Stream.null, self.index, untimed=True)

    def launcher(self, kernel: Kernel, global_size: Size, local_size: Size | None) -> Callable[..., Event]:
        assert isinstance(kernel, CUDAKernel)
        shape = kernel.grid(global_size, local_size, self.info)
        if shape is None or not self.alone:
            return super().launcher(kernel, global_size, local_size)
        pointer, name, launch = kernel.pointer, kernel.name, self.launch

        def plain_or_launch(*args: Any) -> Event:
            if not self._plain_now():
                return launch(kernel, global_size, local_size, *args)
            params, keep = _parameters(self, name, args)
            event = self._launch_plain(pointer, name, shape, params, kernel.dynamic_local_bytes)
            del keep  # the driver has copied the parameters
            return event

        return plain_or_launch

    def _launch_here(self, kernel: CUDAKernel, shape: Grid, params: int) -> Event:
        (gx, gy, gz), (bx, by, bz) = shape
        start = self._begin()
        shared = kernel.dynamic_local_bytes
        _driver().launchKernel(kernel.pointer, gx, gy, gz, bx, by, bz, shared, self._stream_pointer(), params, 0)
        return self._end("kernel", kernel.name, start, mark=False)

    def finish(self) -> None:
        self._current("", self._finish_here)

    def _finish_here(self) -> None:
        _cp().cuda.Stream.null.synchronize()
        for stream in self._streams:
            stream.synchronize()


def cuda_source(source: Source, defines: Defines | None = None) -> Source:
    """What NVRTC compiles for ``source``: the mapping header, the defines, then the source.

    OpenCL's bare qualifiers (``global``, ``local``, ...) are keywords there, so they are
    spelled with their ``__`` prefix, which the header maps; a vector literal
    ``(float4)(a, b, c, d)`` becomes ``PS_VEC(float4, a, b, c, d)``; lines stay where they were.
    """
    text = _VECTOR_LITERAL.sub(r"PS_VEC(\1, ", _BARE_QUALIFIER.sub(r"__\1", source.text))
    respelled = dataclasses.replace(source, text=text)
    return respelled.prefixed([(HEADER, read_kernel_file(HEADER)), ("<defines>", define_lines(defines))])


class CUDABackend(Backend):
    name = "cuda"

    def available(self) -> tuple[bool, str]:
        cp = _cp()
        if cp is None:
            return False, f"CuPy cannot be imported ({_import_error}); install cupy-cuda12x or cupy-cuda13x"
        try:
            count = cp.cuda.runtime.getDeviceCount()
        except Exception as exc:
            return False, f"no usable CUDA driver: {exc}"
        if count == 0:
            return False, "no CUDA device"
        return True, ""

    def discover(self) -> Sequence[CUDADevice]:
        ok, _ = self.available()
        if not ok:
            return []
        runtime = _cp().cuda.runtime
        count = runtime.getDeviceCount()
        return [CUDADevice(_describe(i, runtime), i, alone=count == 1) for i in range(count)]


# device arrays -----------------------------------------------------------------------------


def as_cupy(obj: Any) -> Any:
    """``obj`` as a CuPy array sharing its memory (``__cuda_array_interface__`` or DLPack)."""
    cp = _cp()
    if cp is None:
        raise ParskelError(f"a CUDA array needs CuPy, which cannot be imported ({_import_error})")
    if isinstance(obj, cp.ndarray):
        return obj
    if hasattr(obj, "__cuda_array_interface__"):
        return cp.asarray(obj)
    return cp.from_dlpack(obj)


# helpers ----------------------------------------------------------------------------------


def _describe(index: int, runtime: Any) -> DeviceInfo:
    props = runtime.getDeviceProperties(index)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    version = runtime.runtimeGetVersion()
    driver = runtime.driverGetVersion()
    threads = int(props["maxThreadsPerBlock"])
    return DeviceInfo(
        id=f"cuda:{index}",
        backend="cuda",
        name=name.strip(),
        vendor="NVIDIA Corporation",
        type="gpu",
        platform="CUDA",
        platform_version=f"CUDA runtime {version // 1000}.{version % 1000 // 10}",
        version=f"compute capability {props['major']}.{props['minor']}",
        driver_version=f"{driver // 1000}.{driver % 1000 // 10}",
        compute_units=int(props["multiProcessorCount"]),
        clock_mhz=_attribute(props, "clockRate", _ATTR_CLOCK_KHZ, runtime, index) // 1000,
        global_mem_bytes=int(props["totalGlobalMem"]),
        max_alloc_bytes=int(props["totalGlobalMem"]),
        local_mem_bytes=int(props["sharedMemPerBlock"]),
        local_mem_optin_bytes=_attribute(props, "sharedMemPerBlockOptin", _ATTR_SHARED_OPTIN, runtime, index),
        max_work_group_size=threads,
        max_work_item_sizes=tuple(int(s) for s in props["maxThreadsDim"]),
        preferred_vector_widths={t: 1 for t in ("char", "short", "int", "long", "float", "double", "half")},
        fp64=True,
        extensions=(),
        compute_capability=f"{props['major']}.{props['minor']}",
        memory_clock_mhz=_attribute(props, "memoryClockRate", _ATTR_MEMORY_CLOCK_KHZ, runtime, index) // 1000,
        memory_bus_bits=_attribute(props, "memoryBusWidth", _ATTR_MEMORY_BUS_BITS, runtime, index),
        cache_bytes=int(props.get("l2CacheSize", 0)),
    )


def _attribute(props: dict[str, Any], name: str, code: int, runtime: Any, index: int) -> int:
    """A device property, from the attribute query where the runtime's properties lack it; 0
    where neither has it."""
    value = props.get(name)
    if not value:
        try:
            value = runtime.deviceGetAttribute(code, index)
        except Exception:  # an attribute this runtime does not know
            value = 0
    return int(value or 0)


def _pointer(buffer: Buffer) -> int:
    return int(buffer.handle.ptr)


def _readable(source: Any) -> tuple[Any, int]:
    """A C-contiguous host or device array and the address of its first byte."""
    if isinstance(source, np.ndarray):
        source = np.ascontiguousarray(source)
        return source, host_address(source)
    if is_device_array(source):
        array = _cp().ascontiguousarray(as_cupy(source))
        return array, int(array.data.ptr)
    raise TypeError(f"expected a NumPy or CUDA array, got {type(source).__name__}")


def _writable(out: Any) -> int:
    if isinstance(out, np.ndarray):
        flags = out.flags
        if not (flags.c_contiguous and flags.writeable):
            raise ValueError("download needs a writable C-contiguous output array")
        return host_address(out)
    if is_device_array(out):
        array = as_cupy(out)
        if not array.flags.c_contiguous:
            raise ValueError("download needs a C-contiguous output array")
        return int(array.data.ptr)
    raise TypeError(f"expected a NumPy or CUDA array, got {type(out).__name__}")


def _mine(device: CUDADevice, buffer: Buffer) -> None:
    if buffer.device is not device:
        raise ParskelError(f"a buffer of {buffer.device.id} cannot be used on {device.id}")


def _check_buffer(device: CUDADevice, buffer: Buffer, offset: int, nbytes: int) -> None:
    _mine(device, buffer)
    check_range(buffer, offset, nbytes)


def _default_local(gsize: tuple[int, ...], most: int) -> tuple[int, ...]:
    """Work-group sizes dividing the global sizes, for a launch that leaves them to the device."""
    local = []
    for g in gsize:
        size = math.gcd(g, most)
        local.append(size)
        most = max(most // size, 1)
    return tuple(local)


def _parameters(device: CUDADevice, kernel: str, args: Sequence[Any]) -> tuple[int, Any]:
    """The address of the launch's parameter array (one pointer per argument, to its bytes),
    and what must stay alive until the launch call returns. The bytes of all arguments are
    packed into a buffer kept per thread and sequence of argument types, with its array of
    pointers made once (a record's, whose layout its type does not fix, is made per launch):
    the driver copies both when the launch is enqueued."""
    if not args:
        return 0, None
    types = tuple(map(type, args))
    packed: dict[tuple[Any, ...], Any] | None = getattr(_PACKED, "slots", None)
    if packed is None:
        packed = _PACKED.slots = {}
    slot = packed.get(types)
    keep = None
    if slot is None:
        kinds = tuple(_kind(device, kernel, index, arg) for index, arg in enumerate(args))
        layout = _LAYOUTS.get(kinds)
        if layout is None:
            layout = _LAYOUTS[kinds] = _layout(kinds)
        packer, offsets, _ = layout
        blob = ctypes.create_string_buffer(max(packer.size, 1))
        base = ctypes.addressof(blob)
        pointers = (ctypes.c_uint64 * len(offsets))(*(base + o for o in offsets))
        slot = (packer, layout[2], blob, pointers, ctypes.addressof(pointers))
        if any(issubclass(t, np.void) for t in types):  # a record's layout is its dtype's, not its type's
            keep = slot
        else:
            packed[types] = slot
    values: list[Any] = []
    for arg in args:
        if type(arg) is Buffer:
            if arg.device is not device:
                _kind(device, kernel, len(values), arg)  # raises
            arg = arg.handle.ptr
        values.append(arg)
    packer, raw, blob, pointers, address = slot
    for k in raw:  # records, vectors and complex numbers go as their bytes
        values[k] = values[k].tobytes()
    packer.pack_into(blob, 0, *values)
    return address, keep


# struct codes of the scalar kinds (NumPy's kind and size); other scalars go as raw bytes
_CODES = {("u", 1): "B", ("u", 2): "H", ("u", 4): "I", ("u", 8): "Q", ("i", 1): "b", ("i", 2): "h"}
_CODES.update({("i", 4): "i", ("i", 8): "q", ("f", 2): "e", ("f", 4): "f", ("f", 8): "d", ("b", 1): "?"})
_LAYOUTS: dict[tuple[Any, ...], tuple[struct.Struct, tuple[int, ...], tuple[int, ...]]] = {}
# per thread: each sequence of argument types' packing buffer and its array of pointers
_PACKED = threading.local()


def _kind(device: CUDADevice, kernel: str, index: int, arg: Any) -> np.dtype | None:
    """How launch argument ``index`` is passed: None for a buffer (its address), else the
    scalar's dtype; anything else is refused with the reason."""
    if type(arg) is Buffer:
        if arg.device is not device:
            raise LaunchError(
                f"kernel {kernel}, argument {index}: a buffer of {arg.device.id} "
                f"cannot be passed to a kernel on {device.id}"
            )
        return None
    if isinstance(arg, np.generic):
        return arg.dtype
    if isinstance(arg, Local):
        raise LaunchError(
            f"kernel {kernel}, argument {index}: CUDA kernels take no __local pointer arguments; "
            "declare the local array inside the kernel with a size fixed at build time"
        )
    raise TypeError(
        f"kernel {kernel}, argument {index}: pass a Buffer or a NumPy scalar such as "
        f"np.int32(...), not {type(arg).__name__} (the scalar's type fixes the C type)"
    )


def _layout(kinds: tuple[Any, ...]) -> tuple[struct.Struct, tuple[int, ...], tuple[int, ...]]:
    """The packing of arguments of ``kinds`` (None: a buffer's address; else a scalar's dtype),
    each at an 8-byte aligned offset: the struct, the offsets, and the arguments packed raw."""
    fields: list[str] = []
    offsets: list[int] = []
    raw: list[int] = []
    at = 0
    for index, kind in enumerate(kinds):
        code: str | None = "Q"
        size = 8
        if kind is not None:
            size = kind.itemsize
            code = _CODES.get((kind.kind, size)) if kind.names is None else None
            if code is None:
                code = f"{size}s"
                raw.append(index)
        offsets.append(at)
        pad = -size % 8
        fields.append(f"{code}{pad}x" if pad else f"{code}")
        at += size + pad
    return struct.Struct("=" + "".join(fields)), tuple(offsets), tuple(raw)


class _Active:
    """The context of :meth:`CUDADevice.active` (a class: this is on every command's path)."""

    __slots__ = ("_before", "_device", "_stream", "_what")

    def __init__(self, device: CUDADevice, what: str) -> None:
        self._device = device
        self._what = what
        self._before = -1
        self._stream: Any = None

    def __enter__(self) -> None:
        device = self._device
        if device._active is None and device.alone:  # the current device, and CuPy's stream
            self._before = device.index
            return
        runtime = _cp().cuda.runtime
        self._before = runtime.getDevice()
        if self._before != device.index:
            runtime.setDevice(device.index)
        if device._active is not None:
            self._stream = device._active.handle
            self._stream.__enter__()

    def __exit__(self, kind: Any, exc: BaseException | None, trace: Any) -> None:
        if self._stream is not None:
            self._stream.__exit__(kind, exc, trace)
        if self._before != self._device.index:
            _cp().cuda.runtime.setDevice(self._before)
        if isinstance(exc, Exception) and _is_cuda_error(exc):
            raise self._device._translate(exc, self._what) from None


def _is_cuda_error(exc: Exception) -> bool:
    """Whether ``exc`` is CuPy's report of a failed CUDA call (or of its pool out of memory)."""
    return isinstance(exc, (_cp().cuda.memory.OutOfMemoryError, *_errors()))


def _errors() -> tuple[type[Exception], ...]:
    """CuPy's exceptions for failed CUDA runtime and driver calls."""
    cp = _cp()
    return cp.cuda.runtime.CUDARuntimeError, cp.cuda.driver.CUDADriverError


def _driver() -> Any:
    """CuPy's CUDA driver module (looked up once: it is on every launch's path)."""
    global _driver_module
    if _driver_module is None:
        from cupy_backends.cuda.api import driver

        _driver_module = driver
    return _driver_module


_driver_module: Any = None


def _build_log(exc: Any) -> str:
    try:
        log = exc.get_message()
    except Exception:
        log = str(exc)
    return str(log).strip()


__all__ = ["CUDABackend", "CUDADevice", "as_cupy"]
