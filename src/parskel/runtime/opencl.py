"""The OpenCL backend, through PyOpenCL. The only module of parskel that imports pyopencl.

Built programs are kept per process here; between processes, binaries persist in the cache that
PyOpenCL chooses for the driver: the driver's own where it has one (PoCL: ``POCL_CACHE_DIR``,
NVIDIA: ``~/.nv/ComputeCache``), PyOpenCL's binary cache otherwise.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import os
import re
import threading
import time
import warnings
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import BackendUnavailableError, DeviceMemoryError, LaunchError, ParskelError
from . import hostpool
from .arrays import based_on, host_address
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
from .geometry import Size
from .sources import MAX_REGISTERS, Defines, Source, define_options
from .timing import Event, EventKind
from .traits import is_nvidia_gpu

try:
    import pyopencl as cl
    from pyopencl import tools as cl_tools
except ImportError as exc:  # pragma: no cover - pyopencl is a hard dependency
    cl = cl_tools = None
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
    def __init__(self, device: OpenCLDevice, handle: Any, name: str, program: OpenCLProgram) -> None:
        super().__init__()
        self.name = name
        self.handle = handle
        self._device = device
        self._program = program
        info = cl.kernel_work_group_info
        self._max_wg = int(handle.get_work_group_info(info.WORK_GROUP_SIZE, device._cl))
        self.local_mem_bytes = int(handle.get_work_group_info(info.LOCAL_MEM_SIZE, device._cl))
        self._small_launches = 0
        self._inline: Any = None  # this kernel on the device's inline queue: not yet looked for
        self._share = _INLINE_UNITS / max(_INLINE_UNITS, device.info.compute_units)
        self.inline_bytes = int(_INLINE_BYTES * self._share)  # the most bytes of buffers of its launches there
        self.inline_seconds = _INLINE_SECONDS * self._share  # inline launches slower than this lower it
        self._inline_groups: set[tuple[int, ...] | None] = set()  # work-group sizes launched there
        self._inline_rate = 0.0  # the most bytes per second an inline launch of it has run at
        self._inline_slow = False  # whether its last inline launch took over inline_seconds
        # the integer scalars last set on each handle (the main one, the inline one), by index:
        # an OpenCL kernel keeps its arguments between launches, so an unchanged one is not set
        self.scalars: tuple[dict[int, np.generic], dict[int, np.generic]] = ({}, {})

    def in_chains(self) -> None:
        self.inline_bytes = min(self.inline_bytes, int(_CHAIN_BYTES * self._share))
        self.inline_seconds = _CHAIN_SECONDS * self._share

    def ran_inline(self, local_size: tuple[int, ...] | None, nbytes: int, seconds: float) -> None:
        """Note an inline launch over ``nbytes`` of buffers that took ``seconds``. Two slow
        launches in a row (over :attr:`inline_seconds`) lower :attr:`inline_bytes` to what
        would have taken that long at the fastest rate seen: one stall of a busy machine does
        not send a kernel back to the worker threads for good. The first launch with each
        work-group size is not counted (PoCL compiles the kernel for that size then)."""
        if local_size not in self._inline_groups:
            self._inline_groups.add(local_size)
            return
        self._inline_rate = max(self._inline_rate, nbytes / max(seconds, 1e-9))
        slow = seconds > self.inline_seconds
        if slow and self._inline_slow:
            fitting = int(self._inline_rate * self.inline_seconds)
            self.inline_bytes = max(_INLINE_FLOOR, min(self.inline_bytes, fitting))
        self._inline_slow = slow

    def inline_handle(self) -> Any:
        """This kernel for the device's inline queue (see :class:`OpenCLDevice`), or None: it is
        built once the kernel has had a few small launches, so a kernel run once costs one build."""
        if self._inline:
            return self._inline
        if self._inline is None:
            self._small_launches += 1
            if self._small_launches < _INLINE_AFTER:
                return None
            self._inline = self._program.inline_kernel(self.name, self._max_wg) or False
        return self._inline or None

    @property
    def max_work_group_size(self) -> int:
        return self._max_wg


class OpenCLProgram(Program):
    def __init__(self, device: OpenCLDevice, handle: Any, source: Source, options: tuple[str, ...]) -> None:
        self.source = source
        self._device = device
        self._handle = handle
        self._options = options
        self._kernels: dict[str, OpenCLKernel] = {}
        self._inline: Any = None  # the program built for the device's inline queue, once wanted

    def kernel(self, name: str) -> OpenCLKernel:
        found = self._kernels.get(name)
        if found is None:
            names = self._handle.get_info(cl.program_info.KERNEL_NAMES).split(";")
            if name not in names:
                raise KeyError(f"{self.source.name} has no kernel {name!r}; it has {sorted(names)}")
            found = self._kernels[name] = OpenCLKernel(self._device, cl.Kernel(self._handle, name), name, self)
        return found

    def inline_kernel(self, name: str, max_work_group_size: int) -> Any:
        """Kernel ``name`` built for the device's inline queue, or None where it has none or the
        kernel there takes smaller work-groups."""
        device = self._device._inline_cl
        if device is None:
            return None
        if self._inline is None:
            try:
                with captured_stderr(), warnings.catch_warnings():
                    warnings.simplefilter("ignore", cl.CompilerWarning)
                    self._inline = cl.Program(self._device.context, self.source.text).build(
                        options=list(self._options), devices=[device]
                    )
            except cl.Error:
                self._inline = False
        if self._inline is False:
            return None
        handle = cl.Kernel(self._inline, name)
        most = int(handle.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, device))
        return handle if most >= max_work_group_size else None


class OpenCLDevice(Device):
    """An OpenCL device with its own in-order queue.

    A PoCL CPU device runs each command on its pool of worker threads, which costs tens of
    microseconds to start and to report; PoCL's single-threaded driver runs a command at once,
    in the thread that enqueues it. parskel pairs the two (``inline``, the driver's device in
    the same context, so that both work in the same memory): a launch over few work-items and
    little data goes to the inline queue when nothing is pending on the main one, once its kernel
    has been launched so a few times (building it for the second driver costs one more build).
    """

    def __init__(self, info: DeviceInfo, handle: Any, inline: Any = None, *, build_tag: int | None = None) -> None:
        super().__init__(info)
        self._cl = handle
        self._inline_cl = inline
        self._ctx: Any = None
        self._queue: Any = None
        self._inline_queue: Any = None
        self._inline_used = False  # commands were enqueued on the inline queue since it was last finished
        self._busy = False  # the main queue may hold commands not yet known to be complete
        self._streams: list[Any] = []  # queues made by stream(), finished with the device's own
        self._programs: dict[tuple[str, tuple[str, ...]], OpenCLProgram] = {}
        self._shared: bool | None = None
        self._partitions: dict[int, list[Device]] = {}
        # host arrays that enqueued commands work in, kept alive until those commands are done
        self._held: collections.deque[tuple[Any, list[np.ndarray]]] = collections.deque()
        self._exit_hooked = False
        # a memory pool per queue (see _alloc)
        self._pools: dict[Any, Any] = {}
        # a sub-device's number where its programs must be built apart from its siblings' (see
        # apart_builds), else None
        self._build_tag = build_tag
        # page-locked blocks of freed results, by size, for the next results (see host_result)
        self._result_blocks: dict[int, list[np.ndarray]] = {}
        self._returned_blocks: collections.deque[np.ndarray] = collections.deque()  # (appends are atomic)
        self._result_lock = threading.Lock()

    @property
    def queue(self) -> Any:
        """The queue commands go to now: the active stream's (see :meth:`Device.on`) or the device's own."""
        if self._active is not None:
            return self._active.handle
        self._settle_inline()
        self._busy = True
        return self._main_queue()

    def _main_queue(self) -> Any:
        if self._queue is None:
            with _translated(self):
                self._ctx = cl.Context([self._cl] if self._inline_cl is None else [self._cl, self._inline_cl])
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
            self._main_queue()  # creates the context with it
        return self._ctx

    # memory -------------------------------------------------------------------------------
    def _alloc(self, nbytes: int) -> Buffer:
        # from the memory pool of the queue commands go to now: a buffer freed there is reused by
        # the next allocation of its size class, which that queue, in order, runs after every
        # command that used it (as CuPy's pool does per stream). A new buffer costs a driver
        # allocation, which NVIDIA's OpenCL makes at the buffer's first use: 0.4 ms for a
        # sort's 64 MiB of scratch at 2^24 keys, most of the sort's own time.
        queue = self._active.handle if self._active is not None else self._main_queue()
        pool = self._pools.get(queue)
        with _translated(self):
            if pool is None:
                with warnings.catch_warnings():  # a CPU device's deferred allocator, chosen (below)
                    warnings.simplefilter("ignore", UserWarning)
                    pool = self._pools[queue] = cl_tools.MemoryPool(self._allocator(queue))
            handle = pool.allocate(max(nbytes, 1))
        return Buffer(self, nbytes, handle)

    def _allocator(self, queue: Any) -> Any:
        """What a pool allocates new buffers with. On a GPU, a write of a few bytes into each
        new buffer, enqueued on ``queue``, makes the driver allocate at once, so that a failure
        is seen (and the pools give back what they hold) where it can be mended; nothing reads a
        new buffer before the commands enqueued after that write. A CPU device's memory is the
        host's, allocated at once anyway: there nothing is enqueued, which PoCL's inline queue,
        beside the main one, would not wait for."""
        if self.info.type == "cpu":
            return cl_tools.DeferredAllocator(self.context)
        return cl_tools.ImmediateAllocator(queue)

    def release_held_memory(self) -> None:
        """Give the memory the device's pools hold for reuse back to the driver (the pools give
        it back by themselves when an allocation would not fit otherwise)."""
        for pool in self._pools.values():
            pool.free_held()

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

    def is_pinned(self, array: np.ndarray) -> bool:
        return based_on(array, cl.MemoryMap)

    def _page_locked_result(self, dims: tuple[int, ...], dtype: np.dtype, nbytes: int) -> np.ndarray:
        """A mapped buffer allocated in host memory, as :meth:`empty_pinned`. A freed result's
        block stays mapped and serves the next result of its size (in
        :data:`~parskel.runtime.hostpool.GRAIN` steps): mapping new page-locked memory costs the
        host more than the copy it saves. At most two freed blocks of a size wait, and no more
        bytes than :func:`~parskel.runtime.hostpool.idle_limit` in all."""
        block = self._result_block(-(-nbytes // hostpool.GRAIN) * hostpool.GRAIN)
        raw = np.frombuffer(memoryview(block.data), np.uint8, nbytes)  # its base: a memoryview of the block
        hostpool.pinned_result_made(raw.base, nbytes)
        weakref.finalize(raw.base, self._returned_blocks.append, block)
        return raw.view(dtype).reshape(dims)

    def _result_block(self, size: int) -> np.ndarray:
        """A page-locked block of ``size`` bytes: one a freed result left, else a new one."""
        with self._result_lock:
            while self._returned_blocks:
                block = self._returned_blocks.popleft()
                kept = self._result_blocks.setdefault(block.nbytes, [])
                idle = sum(b.nbytes for blocks in self._result_blocks.values() for b in blocks)
                if len(kept) < 2 and idle + block.nbytes <= hostpool.idle_limit():
                    kept.append(block)  # (a block not kept is unmapped as it goes)
            free = self._result_blocks.get(size)
            if free:
                return free.pop()
        return self.empty_pinned(size, np.uint8)

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
        apart = apart_builds(platform.version)
        found = self._partitions[parts] = [
            OpenCLDevice(_describe(f"{self.id}/{k}", platform, handle), handle, build_tag=k if apart else None)
            for k, handle in enumerate(handles)
        ]
        return found

    def _event(self, kind: EventKind, label: str, event: Any) -> Event:
        found = OpenCLEvent(kind, label, event)
        return self._track(found) if self._recorders else found

    @property
    def warm_calls(self) -> int:
        # a small launch goes inline from its kernel's _INLINE_AFTER-th on, which builds it again
        return _INLINE_AFTER + 1 if self._inline_cl is not None else 1

    @property
    def shares_host_memory(self) -> bool:
        if self._shared is None:
            self._shared = self.info.type == "cpu" and _writes_reach_host(self)
        return self._shared

    def host_buffer(self, array: np.ndarray, *, upload: bool = True) -> Buffer:
        array = _contiguous(array)
        # kernels assume vector elements aligned to their size (a float16 to 64 bytes), which
        # NumPy's memory need not be: such an array gets memory of its own. A scalar type needs
        # NumPy's own alignment, which the array's flags tell without its address.
        dtype = array.dtype
        if dtype.names is None:
            misaligned = not array.flags.aligned
        else:
            misaligned = host_address(array) % alignment(dtype) != 0
        if array.nbytes == 0 or not self.shares_host_memory or misaligned:
            return super().host_buffer(array, upload=upload)
        # the array's own memory; a read-only array (a borrowed input) can only be read
        flags = cl.mem_flags.USE_HOST_PTR | (
            cl.mem_flags.READ_WRITE if array.flags.writeable else cl.mem_flags.READ_ONLY
        )
        try:  # (not _translated: this is on the path of every small result made)
            handle = cl.Buffer(self.context, flags, hostbuf=array)
        except cl.Error as exc:
            raise _translate(self, exc) from None
        if upload and self._recorders:  # nothing moves, and the timing split shows it
            self._event("upload", "upload: the device reads the host array itself", None)
        # A command enqueued on the buffer holds its array until it is known to be done (see
        # _hold), so the memory outlives a result nobody kept; at the interpreter's exit, which
        # frees arrays in no order, the device finishes first.
        if not self._exit_hooked:
            self._exit_hooked = True
            atexit.register(self.finish)
        return Buffer(self, array.nbytes, handle, host=array)

    def upload(self, buffer: Buffer, host: np.ndarray, *, offset: int = 0, wait: bool = False) -> Event:
        host = _contiguous(host)
        check_range(buffer, offset, host.nbytes)
        if host.nbytes == 0:
            return self._event("upload", "upload", None)
        if _same_memory(buffer, host, offset):
            return self._event("upload", "upload: the device reads the host array itself", None)
        with _translated(self):
            ev = cl.enqueue_copy(self._copy_queue(), buffer.handle, host, dst_offset=offset, is_blocking=wait)
        return self._event("upload", f"upload {host.nbytes} B", ev)

    def download(self, buffer: Buffer, out: np.ndarray, *, offset: int = 0, wait: bool = True) -> Event:
        if not (out.flags.c_contiguous and out.flags.writeable):
            raise ValueError("download needs a writable C-contiguous output array")
        check_range(buffer, offset, out.nbytes)
        if out.nbytes == 0:
            return self._event("download", "download", None)
        try:  # (not _translated: this is on the path of every small result read back)
            if _same_memory(buffer, out, offset):  # the kernels wrote into it: only wait for them
                if wait:  # the queues are in order: what was enqueued before is all there is to wait for
                    if self._active is not None:
                        self._active.handle.finish()
                    else:
                        self._settle()
                    ev = None
                else:
                    ev = cl.enqueue_marker(self._copy_queue())
                return self._event("download", "download: the device wrote the host array itself", ev)
            ev = cl.enqueue_copy(self._copy_queue(), out, buffer.handle, src_offset=offset, is_blocking=wait)
        except cl.Error as exc:
            raise _translate(self, exc) from None
        if wait:
            self._drained()
        return self._event("download", f"download {out.nbytes} B", ev)

    def _drained(self) -> None:
        """A blocking command on the queue returned: everything enqueued there before is done."""
        if self._active is None:
            self._busy = False

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
                self._copy_queue(),
                dst.handle,
                src.handle,
                byte_count=nbytes,
                src_offset=src_offset,
                dst_offset=dst_offset,
            )
        self._hold(ev, _host_arrays((dst, src)))
        return self._event("copy", f"copy {nbytes} B", ev)

    def fill(self, buffer: Buffer, value: np.generic, nbytes: int | None = None, *, offset: int = 0) -> Event:
        pattern, nbytes = fill_extent(buffer, value, nbytes, offset)
        if nbytes == 0:
            return self._event("fill", "fill", None)
        with _translated(self):
            ev = cl.enqueue_fill_buffer(self._copy_queue(), buffer.handle, pattern, offset, nbytes)
        self._hold(ev, _host_arrays((buffer,)))
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
                    self._copy_queue(),
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
                self._copy_queue(),
                out,
                buffer.handle,
                buffer_origin=(0, 0),
                host_origin=(0, 0),
                region=(cols * item, rows),
                buffer_pitches=(pcol * item,),
                host_pitches=(cols * item,),
                is_blocking=True,
            )
        self._drained()
        return self._event("download", f"download {out.nbytes} B from {padded_shape}", ev)

    # programs -----------------------------------------------------------------------------
    def build(self, source: Source, defines: Defines | None = None) -> OpenCLProgram:
        options = tuple(define_options(defines))
        if self._build_tag is not None:
            options += (f"-DPS_SUB_DEVICE={self._build_tag}",)
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
                    handle = cl.Program(context, source.text).build(options=list(options), devices=[self._cl])
            except cl.RuntimeError as exc:
                failure = _build_log(str(exc))
        if failure is not None:
            raise source.build_error(failure)
        bound = (defines or {}).get(MAX_REGISTERS)
        if bound is not None and is_nvidia_gpu(self):
            handle = _bounded(self, handle, int(bound), source.name)
        program = self._programs[key] = OpenCLProgram(self, handle, source, options)
        program.log = "\n".join(filter(None, (_device_log(handle, self._cl), *chatter))).strip()
        report(source.name, program.log)
        return program

    def launch(self, kernel: Kernel, global_size: Size, local_size: Size | None, *args: Any) -> Event:
        assert isinstance(kernel, OpenCLKernel)
        gsize, lsize = kernel.geometry(global_size, local_size, self.info)
        nbytes = 0  # of the launch's buffers
        local_bytes = kernel.local_mem_bytes
        for arg in args:
            kind = type(arg)
            if kind is Buffer:
                nbytes += arg.nbytes
            elif kind is Local:
                local_bytes += arg.nbytes
        if local_bytes > self.info.local_mem_bytes:
            raise LaunchError(
                f"kernel {kernel.name} needs {local_bytes} bytes of local memory per work-group; "
                f"{self.id} has {self.info.local_mem_bytes}"
            )
        handle: Any = None
        if nbytes <= kernel.inline_bytes and self._inline_idle() and _few_items(gsize):
            handle = kernel.inline_handle()
        inline = handle is not None
        if not inline:
            handle = kernel.handle
        arrays = []  # the host arrays of host-memory buffers, held while the command may use them
        scalars = kernel.scalars[inline]
        try:
            for i, arg in enumerate(args):
                kind = type(arg)
                if kind is Buffer:
                    handle.set_arg(i, arg.handle)
                    if arg.host is not None:
                        arrays.append(arg.host)
                elif isinstance(arg, np.generic):
                    last = scalars.get(i)
                    if last is not arg and (last is None or type(last) is not kind or last != arg):
                        _set_scalar(handle, i, arg)
                        if kind in _NUMBERS:
                            scalars[i] = arg
                        else:
                            scalars.pop(i, None)
                elif kind is Local:
                    handle.set_arg(i, cl.LocalMemory(max(arg.nbytes, 1)))
                    scalars.pop(i, None)
                else:
                    raise TypeError(
                        f"kernel {kernel.name}, argument {i}: pass a Buffer, Local or a NumPy scalar "
                        f"such as np.int32(...), not {type(arg).__name__} (the scalar's type fixes the C type)"
                    )
            if 0 in gsize:
                return self._event("kernel", kernel.name, None)
            if inline and nbytes <= _INLINE_FLOOR:  # it runs now, and stays inline however long it takes
                ev = cl.enqueue_nd_range_kernel(self._inline_commands(), handle, gsize, lsize)
            elif inline:  # it runs now, in this thread: a kernel found slow there goes inline less
                start = time.perf_counter()
                ev = cl.enqueue_nd_range_kernel(self._inline_commands(), handle, gsize, lsize)
                kernel.ran_inline(lsize, nbytes, time.perf_counter() - start)
            else:
                ev = cl.enqueue_nd_range_kernel(self.queue, handle, gsize, lsize)
        except cl.Error as exc:
            raise _translate(self, exc, kernel.name) from None
        self._hold(ev, arrays)
        return self._event("kernel", kernel.name, ev)

    def _copy_queue(self) -> Any:
        """The queue for a copy or fill: the inline one while nothing is pending on the main
        queue (a copy runs in one thread either way), else the queue commands go to now."""
        return self._inline_commands() if self._inline_idle() else self.queue

    def _inline_idle(self) -> bool:
        """Whether a command may go to the inline queue: the device has one, commands go to its
        own queues (no stream is active) and nothing is pending on the main queue."""
        return self._inline_cl is not None and not self._busy and self._active is None

    def _settle_inline(self) -> None:
        """Wait for the commands of the inline queue (PoCL's inline driver has run them when
        they were enqueued; a driver may not)."""
        if self._inline_used:
            self._inline_used = False
            self._inline_queue.finish()

    def _inline_commands(self) -> Any:
        """The inline queue, noted as used: the main queue's next command waits for it."""
        self._inline_used = True
        if self._inline_queue is None:
            self._inline_queue = cl.CommandQueue(
                self.context, self._inline_cl, properties=cl.command_queue_properties.PROFILING_ENABLE
            )
        return self._inline_queue

    def _hold(self, event: Any, arrays: list[np.ndarray]) -> None:
        """Keep ``arrays`` (the host arrays of host-memory buffers) alive while ``event``'s
        command may use them: the caller may drop its last reference to a container as soon as
        it has enqueued."""
        held = self._held
        if not (held or arrays):
            return
        done = cl.command_execution_status.COMPLETE
        # the queue is in order: commands complete in the order they were held
        while held and held[0][0].command_execution_status == done:
            held.popleft()
        if arrays:
            held.append((event, arrays))

    def finish(self) -> None:
        try:
            self._settle()
            for queue in self._streams:
                queue.finish()
        except cl.Error as exc:
            raise _translate(self, exc) from None
        self._held.clear()

    def _settle(self) -> None:
        """Wait for the device's own queues: the inline one, and the main one if it may hold
        commands."""
        self._settle_inline()
        if self._busy:
            self._main_queue().finish()
            self._busy = False
        if not self._streams:  # every command is done: nothing needs its host arrays now
            self._held.clear()
        elif self._held:  # a stream's commands may not be: keep only what those still use
            done = cl.command_execution_status.COMPLETE
            self._held = collections.deque(h for h in self._held if h[0].command_execution_status != done)


# PoCL's drivers, named for POCL_DEVICES, that parskel asks for unless the user named them: the
# CPU driver with its worker threads and the single-threaded one (PoCL 3 calls them pthread and
# basic, later versions cpu and cpu-minimal; each version ignores the names it does not know).
# The single-threaded device is not listed: it is the inline queue of the other (OpenCLDevice).
POCL_DEVICES = "pthread basic cpu cpu-minimal"
_INLINE_NAMES = ("basic-", "cpu-minimal-")


def _ask_pocl_for_inline_devices() -> None:
    """Name PoCL's drivers in ``POCL_DEVICES`` before OpenCL is first used, unless the user set
    it or turned the inline queue off with ``PARSKEL_POCL_INLINE=0``."""
    if "POCL_DEVICES" not in os.environ and os.environ.get("PARSKEL_POCL_INLINE", "1") != "0":
        os.environ["POCL_DEVICES"] = POCL_DEVICES


# PoCL's CPU driver leaves its worker threads to the scheduler, which on a machine of few cores
# at times wakes two of them on one core: a sort of 2^20 keys on 2 cores (AMD Zen 5, PoCL 3.1)
# took 1.8 or 3.0 ms from one call to the next, and 1.7-1.8 ms every time with each thread
# pinned to its core (POCL_AFFINITY=1). On 16 cores of a Xeon (PoCL 5.0) pinning gained nothing
# (a sort of 2^24 keys 19.4-19.5 ms pinned, 17.7-19.6 not; sums and maps alike). Asked for on
# machines of at most this many cores, and only where the process may use every core (PoCL pins
# thread i to core i).
_PIN_CORES = 4


def _pins_threads(cores: int, usable: set[int], env: Mapping[str, str]) -> bool:
    """Whether to ask PoCL to pin its worker threads: the user has not set ``POCL_AFFINITY``
    in ``env``, the machine has at most :data:`_PIN_CORES` ``cores``, and the process may use
    every one of them (``usable``, its affinity mask).

    >>> _pins_threads(2, {0, 1}, {}), _pins_threads(16, set(range(16)), {})
    (True, False)
    >>> _pins_threads(2, {1}, {}), _pins_threads(2, {0, 1}, {"POCL_AFFINITY": "0"})
    (False, False)
    """
    return "POCL_AFFINITY" not in env and 0 < cores <= _PIN_CORES and usable == set(range(cores))


def _ask_pocl_to_pin_threads() -> None:
    """Set ``POCL_AFFINITY=1`` before OpenCL is first used where :func:`_pins_threads` says so
    (on Linux: elsewhere PoCL pins nothing)."""
    if hasattr(os, "sched_getaffinity") and _pins_threads(os.cpu_count() or 0, os.sched_getaffinity(0), os.environ):
        os.environ["POCL_AFFINITY"] = "1"


def _is_inline(platform: Any, handle: Any) -> bool:
    """Whether ``handle`` is a PoCL single-threaded device that parskel asked for (see above)."""
    return (
        os.environ.get("POCL_DEVICES") == POCL_DEVICES
        and "Portable Computing Language" in platform.name
        and handle.name.startswith(_INLINE_NAMES)
    )


# A CPU device compiles for the host CPU, and a driver whose compiler predates the CPU may fail
# it: PoCL 3.0 (as PyOpenCL installs it, LLVM 14) cannot build anything on AMD Zen 5 ("unknown
# target CPU 'generic'"), and on CPUs with AVX-512 that it takes for AMD Zen 3 it builds, but
# loads the upper half of a 64-byte vector (vload16 of floats) as zeros and crashes the process
# on a store of one (vstore16). parskel's CPU scans and matmul move 64-byte vectors. Such a
# device is found by building and running this once, and is reported as unusable instead of
# failing calls or giving wrong results.
_PROBE = """__kernel void ps_probe(__global const float *x, __global float *y)
{
    float16 v = vload16(0, x);
    y[0] = v.s8 + v.sf;
}"""


def _unfit(handle: Any) -> str:
    """Why the CPU device cannot serve parskel's kernels (it cannot build a trivial kernel, or
    it loads a 64-byte vector wrong), or ``""`` when it can."""
    try:
        with captured_stderr(), warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.CompilerWarning)
            context = cl.Context([handle])
            program = cl.Program(context, _PROBE).build()
            queue = cl.CommandQueue(context)
            x = np.arange(16, dtype=np.float32)
            y = np.zeros(1, np.float32)
            flags = cl.mem_flags
            xb = cl.Buffer(context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
            yb = cl.Buffer(context, flags.WRITE_ONLY, y.nbytes)
            program.ps_probe(queue, (1,), (1,), xb, yb)
            cl.enqueue_copy(queue, y, yb, is_blocking=True)
    except cl.Error as exc:
        log = _build_log(str(exc))
        return log.splitlines()[0] if log else str(exc)
    if y[0] != x[8] + x[15]:
        return f"wrong vector loads: the upper half of a vload16 of floats read {y[0]:g} where {x[8] + x[15]:g} was due"
    return ""


class OpenCLBackend(Backend):
    name = "opencl"

    def __init__(self) -> None:
        self._unusable: list[tuple[str, str]] = []

    def available(self) -> tuple[bool, str]:
        if cl is None:
            return False, f"pyopencl cannot be imported: {_IMPORT_ERROR}"
        _ask_pocl_for_inline_devices()
        _ask_pocl_to_pin_threads()
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
            inline = [h for h in handles if _is_inline(platform, h)]
            handles = [h for h in handles if not any(h == i for i in inline)]
            for d_index, handle in enumerate(handles):
                info = _describe(f"opencl:{p_index}:{d_index}", platform, handle)
                why = _unfit(handle) if info.type == "cpu" else ""
                if why:
                    self._unusable.append((f"{info.id}: {info.name} ({info.platform_version})", _advice(why)))
                    continue
                partner = inline[0] if inline and info.type == "cpu" else None
                found.append(OpenCLDevice(info, handle, partner))
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
        cache_bytes=int(dev.global_mem_cache_size),
    )


def _same_memory(buffer: Buffer, host: np.ndarray, offset: int) -> bool:
    """Whether ``host`` is the part of a host-memory buffer at byte ``offset``."""
    if buffer.host is None:
        return False
    return (host is buffer.host and offset == 0) or host.ctypes.data == buffer.host.ctypes.data + offset


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
    if "unknown target CPU" in why or "wrong vector loads" in why:
        return (
            f"its compiler does not build right for this CPU ({why.strip()}); install a newer PoCL, "
            "e.g. Debian/Ubuntu's pocl-opencl-icd"
        )
    return f"it cannot build a trivial kernel: {why.strip()}"


def _contiguous(host: np.ndarray) -> np.ndarray:
    if type(host) is np.ndarray and host.ndim and host.flags.c_contiguous:
        return host
    if not isinstance(host, np.ndarray):
        raise TypeError(f"expected a NumPy array, got {type(host).__name__}")
    return np.ascontiguousarray(host)


_INLINE_AFTER = 4  # small launches of a kernel before it is built for the inline queue too
# The most work-items of a launch on the inline queue, and the most bytes of buffers it may be
# given at first. A call of one launch (a reduction, a Map, a chained scan) pays the worker
# threads' start and report once, 0.1 to 0.25 ms on a 2-core machine: on 2^20 floats a sum
# took 0.30 ms there and 0.19 ms inline, a Map of 2^18 0.11 and 0.08 ms. The bytes leave room
# for a few small buffers beside 8 MiB of data (a chained scan's tile flags and totals): an
# exclusive scan of 2^20 int32, timed between NumPy's (AMD Zen 5, PoCL 3.1), took 0.29-0.36 ms
# on the worker threads and 0.21 ms inline.
_INLINE_ITEMS = 1 << 21
_INLINE_BYTES = 9 << 20
# The bytes and seconds here hold for a device of at most this many compute units; one of more
# has them in proportion, its worker threads sharing the work more ways. On 16 cores of a Xeon
# (PoCL 5.0) a sum of 2^18 floats took 0.09 ms inline and 0.20 on the worker threads, one of
# 2^20 0.29-0.61 ms inline and 0.22-0.25 on the worker threads; an eighth of the bytes sent the
# first to the worker threads too, a quarter keeps it inline.
_INLINE_UNITS = 4
# Two inline launches in a row that take longer than this lower the bytes their kernel may take
# there to what would have run in this time at its fastest inline rate (on the worker threads
# it would have run on every core), but never below the floor: stalls of a busy machine must
# not send small launches back to the worker threads.
_INLINE_SECONDS = 400e-6
_INLINE_FLOOR = 1 << 16
# Kernels launched in chains of several per call (a sort's passes, see Kernel.in_chains) share
# one start of the worker threads: inline, each would run on one core, so they keep to less.
_CHAIN_BYTES = 1 << 20
_CHAIN_SECONDS = 100e-6


def apart_builds(platform_version: str) -> bool:
    """Whether the sub-devices of a platform's devices must build their programs apart (with a
    define of their own, so that no two share a compiled kernel): PoCL from version 5 on. There
    (PoCL 5.0, 2026-11-26), two sub-devices of one CPU finishing the same kernel's commands at
    once, from two threads, abort the process in PoCL (``pocl_release_dlhandle_cache: Assertion
    'found->ref_count > 0' failed``); with a define of each sub-device's own they never did.

    >>> apart_builds("OpenCL 3.0 PoCL 5.0+debian  Linux, None+Asserts, RELOC, LLVM 16.0.6")
    True
    >>> apart_builds("OpenCL 3.0 PoCL 3.1+debian  Linux"), apart_builds("OpenCL 3.0 CUDA 13.0.98")
    (False, False)
    """
    found = re.search(r"\bPoCL (\d+)\.", platform_version)
    return found is not None and int(found.group(1)) >= 5


def _few_items(gsize: tuple[int, ...]) -> bool:
    """Whether a launch of ``gsize`` work-items is small enough for the inline queue (with at
    most :attr:`OpenCLKernel.inline_bytes` of buffers: running it in one thread then costs
    less than handing it to the worker threads)."""
    if len(gsize) == 1:
        return gsize[0] <= _INLINE_ITEMS
    items = 1
    for g in gsize:
        items *= g
    return items <= _INLINE_ITEMS


def _host_arrays(buffers: Sequence[Buffer]) -> list[np.ndarray]:
    """The host arrays of those of ``buffers`` that are host memory."""
    return [b.host for b in buffers if b.host is not None]


# the scalar types whose last value a kernel remembers: integers, which == compares exactly
# (floats are always set: -0.0 == 0.0, and NaN != NaN)
_NUMBERS = frozenset({np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64})


def _set_scalar(handle: Any, index: int, value: np.generic) -> None:
    """Set a scalar kernel argument from its bytes: PyOpenCL's own buffer setter, where it has
    one, takes a microsecond less than ``set_arg``, which tries other kinds of argument first."""
    setter = getattr(handle, "_set_arg_buf", None)
    if setter is None:
        handle.set_arg(index, value)
    else:
        setter(index, memoryview(value))  # type: ignore[arg-type]


_BUILD_NOISE = re.compile(r"^(clBuildProgram failed.*|Build on <.*>:|\(options: .*\))$")


# a kernel's entry in PTX, up to the brace that opens its body: its parameters and directives
_PTX_ENTRY = re.compile(r"(\.entry\s+\w+\s*\([^)]*\)[^{]*?)(\{)")


def with_register_bound(ptx: str, registers: int) -> str:
    r"""``ptx`` with ``.maxnreg registers`` on every kernel entry that has no such bound yet.

    >>> text = ".entry k(\n.param .u32 k_param_0\n)\n.reqntid 256, 1, 1\n{\nret;\n}"
    >>> print(with_register_bound(text, 80))
    .entry k(
    .param .u32 k_param_0
    )
    .reqntid 256, 1, 1
    .maxnreg 80
    {
    ret;
    }
    >>> with_register_bound(with_register_bound(text, 80), 64).count(".maxnreg")
    1
    """

    def bound(entry: re.Match[str]) -> str:
        head = entry.group(1)
        if ".maxnreg" in head:
            return entry.group(0)
        return f"{head.rstrip()}\n.maxnreg {registers}\n{entry.group(2)}"

    return _PTX_ENTRY.sub(bound, ptx)


def _bounded(device: OpenCLDevice, handle: Any, registers: int, name: str) -> Any:
    """``handle`` (a program built by NVIDIA's OpenCL) rebuilt from its own PTX with at most
    ``registers`` registers a work-item; ``handle`` itself where the driver refuses that."""
    try:
        ptx = handle.get_info(cl.program_info.BINARIES)[0].rstrip(b"\0").decode()
        bounded = with_register_bound(ptx, registers)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cl.CompilerWarning)
            return cl.Program(device.context, [device._cl], [bounded.encode()]).build()
    except (cl.Error, UnicodeDecodeError, IndexError) as exc:
        report(name, f"built without the bound of {registers} registers: {exc}")
        return handle


def _device_log(handle: Any, device: Any) -> str:
    try:
        return str(handle.get_build_info(device, cl.program_build_info.LOG)).strip()
    except cl.Error:
        return ""


def _build_log(message: str) -> str:
    lines = [line for line in message.splitlines() if not _BUILD_NOISE.match(line.strip())]
    return "\n".join(lines).strip()


class _translated:
    """``with _translated(device, what):`` turns PyOpenCL errors into parskel errors that name
    the device (a class, not a generator: it is on the path of every buffer, copy and launch,
    where a generator's context costs a microsecond more on a small machine)."""

    __slots__ = ("_device", "_what")

    def __init__(self, device: OpenCLDevice, what: str = "") -> None:
        self._device = device
        self._what = what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, trace: Any) -> None:
        if isinstance(exc, cl.Error):
            raise _translate(self._device, exc, self._what) from None


def _translate(device: OpenCLDevice, exc: Any, what: str = "") -> ParskelError:
    """The parskel error for PyOpenCL's ``exc``, naming the device (and ``what`` it was doing)."""
    where = f"{device.id}{' ' + what if what else ''}"
    code = _code_name(exc)
    if code in _MEMORY_CODES:
        return DeviceMemoryError(f"{where}: out of device memory ({code}): {exc}")
    if code in _LAUNCH_CODES:
        return LaunchError(f"{where}: the device refused the launch ({code}): {exc}")
    return ParskelError(f"{where}: OpenCL error {code}: {exc}")


def _code_name(exc: Any) -> str:
    try:
        code = exc.code
    except AttributeError:
        return "UNKNOWN"
    for name in dir(cl.status_code):
        if not name.startswith("_") and getattr(cl.status_code, name) == code:
            return name
    return str(code)
