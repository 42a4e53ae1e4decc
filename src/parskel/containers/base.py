"""What Vector and Matrix share: one array kept on the host and on a device, copied lazily.

Each side is either valid or stale. A skeleton asks for the device buffer (uploaded if the
device copy is stale) and marks its outputs as written on the device; reading on the host
downloads once and keeps the host copy until the device is written again.

On a CUDA device a container also takes and gives device arrays without host copies: built
from a CuPy array or a PyTorch tensor (anything with ``__cuda_array_interface__`` or DLPack)
it starts valid on the device only, and it exports its device buffer through both protocols,
so ``cupy.asarray(v)`` and ``torch.from_dlpack(v)`` share its memory.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ..errors import DTypeError, ShapeError
from ..runtime import Buffer, Device, hostpool
from ..runtime import device as select_device
from ..runtime.arrays import backend_view, cuda_ordinal, empty_like, host_copy, is_device_array
from .structs import element_c_type, vector_elements, vector_of


class Container:
    """An n-dimensional array on the host and on one device (see :class:`Vector`, :class:`Matrix`)."""

    ndim: int = 0

    # None until the side exists: a container made on the device has no host array yet
    _host: np.ndarray | None
    _buffer: Buffer | None

    __slots__ = (
        "_borrowed",
        "_buffer",
        "_c_type",
        "_device",
        "_device_valid",
        "_dtype",
        "_host",
        "_host_valid",
        "_shape",
        "_size",
    )

    #: None for a container on one device; a distributed container (``parskel.dist``) has its
    #: distribution here, and parts that are containers of this kind on one device each
    distribution: Any = None

    def __new__(cls, *args: Any, distribution: Any = None, **kwargs: Any) -> Any:
        """With ``distribution=`` (``ps.dist.block(devices)``, ...) the container is made by the
        distribution as its distributed kind (a subclass of ``cls``), initialised by that
        class from the same arguments."""
        if distribution is None:
            return super().__new__(cls)
        return super().__new__(distribution.container_class(cls))

    def __init__(
        self,
        data: Any = None,
        *,
        dtype: DTypeLike | None = None,
        shape: tuple[int, ...] | None = None,
        device: Device | str | None = None,
        copy: bool = True,
        distribution: Any = None,
    ) -> None:
        """``copy=False`` borrows ``data`` (a C-contiguous NumPy array of the right dtype)
        instead of copying it: parskel never writes into a borrowed array, and the caller must
        not either while the container uses it (or must call :meth:`mark_host_modified`).

        ``data`` may be a CUDA device array; the container then lives on that GPU's CUDA device
        (unless ``device`` names another) and copies it on the device, or with ``copy=False``
        shares its memory: what parskel writes into the container, the array shows.
        """
        if data is not None and not isinstance(data, (np.ndarray, Container)) and is_device_array(data):
            self._adopt(data, dtype, device, copy)
            return
        dev = select_device(device)
        if data is None:
            if shape is None or dtype is None:
                raise ShapeError(f"{type(self).__name__} needs data, or a shape and a dtype")
            host = np.zeros(self._checked_shape(shape), dtype=dtype)
        else:
            if isinstance(data, Container):
                data = data.numpy()
            data = vector_elements(data, dtype, copy=copy)
            if copy:
                host = np.array(data, dtype=dtype, copy=True, order="C")
            else:
                host = _borrowable(data, dtype)
            self._checked_shape(host.shape)
        self._setup(host.shape, host.dtype, dev)
        self._host = host
        self._host_valid = True
        self._borrowed = not copy

    def _adopt(self, array: Any, dtype: DTypeLike | None, device: Device | str | None, copy: bool) -> None:
        """Take a CUDA device array: its memory (``copy=False``) or a device-side copy."""
        dev = select_device(device if device is not None else f"cuda:{cuda_ordinal(array)}")
        vector = dtype is not None and vector_of(np.dtype(dtype)) is not None
        if dev.backend != "cuda" or vector:  # from the host: an OpenCL device; records CuPy has not
            if not copy:
                why = "vector elements" if vector else f"{dev.id}, which is not a CUDA device"
                raise ShapeError(f"copy=False shares a CUDA array's memory; not possible for {why}")
            Container.__init__(self, host_copy(array), dtype=dtype, device=dev)
            return
        source = backend_view(array)
        if dtype is not None and np.dtype(dtype) != source.dtype:
            if not copy:
                raise DTypeError(f"copy=False cannot convert {source.dtype} to {np.dtype(dtype)}")
            source = source.astype(dtype)
        if not copy and not source.flags.c_contiguous:
            raise ShapeError("copy=False shares only a C-contiguous array; pass copy=True")
        self._setup(self._checked_shape(source.shape), source.dtype, dev)
        buffer, _ = dev.wrap(source)
        if copy:
            own = dev.alloc(buffer.nbytes)
            dev.copy(own, buffer)
            buffer = own
        self._buffer = buffer
        self._device_valid = True

    @classmethod
    def _checked_shape(cls, shape: Any) -> tuple[int, ...]:
        dims = shape_of(shape, f"{cls.__name__} shape")
        if len(dims) != cls.ndim:
            raise ShapeError(f"{cls.__name__} needs a {cls.ndim}D shape, got {shape!r}")
        return dims

    def _setup(self, shape: tuple[int, ...], dtype: np.dtype, dev: Device) -> None:
        self._shape = shape
        self._size = math.prod(shape)
        self._dtype = np.dtype(dtype)
        self._device = dev
        self._c_type = element_c_type(self._dtype, dev)
        self._host = None
        self._buffer = None
        self._host_valid = False
        self._device_valid = False
        self._borrowed = False

    @classmethod
    def empty(cls, shape: int | tuple[int, ...], dtype: DTypeLike, *, device: Device | str | None = None) -> Container:
        """A container whose contents live (uninitialised) on the device only."""
        return cls._made(cls._checked_shape(shape), np.dtype(dtype), select_device(device))

    @classmethod
    def _made(cls, shape: tuple[int, ...], dtype: np.dtype, device: Device) -> Container:
        """:meth:`empty` from a shape, dtype and device already checked (a skeleton's result,
        shaped like its input)."""
        self = object.__new__(cls)  # (not cls.__new__: a container made here is never distributed)
        self._setup(shape, dtype, device)
        self._buffer = self._new_buffer(upload=False)
        self._device_valid = True
        return self

    # description ----------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    @property
    def size(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.itemsize

    @property
    def c_type(self) -> str:
        """The C type of an element in kernels (a scalar type or a registered struct name)."""
        return self._c_type

    def __len__(self) -> int:
        return self._shape[0]

    def __repr__(self) -> str:
        where = "+".join(side for side, ok in (("host", self._host_valid), ("device", self._device_valid)) if ok)
        return (
            f"{type(self).__name__}(shape={self._shape}, dtype={self._dtype}, "
            f"device={self._device.id}, valid on {where})"
        )

    # coherence ------------------------------------------------------------------------------
    def to_device(self) -> Buffer:
        """The device buffer, uploaded first if the device copy is stale."""
        if self._buffer is None:
            self._buffer = self._new_buffer(upload=False)
        if not self._device_valid:
            assert self._host is not None  # one side is always valid
            self._device.upload(self._buffer, self._host)
            self._device_valid = True
        return self._buffer

    def to_host(self) -> np.ndarray:
        """Download if the host copy is stale; returns the host array (read-only view)."""
        host = self._host
        if not self._host_valid:
            assert self._buffer is not None  # one side is always valid
            if host is None or self._borrowed:
                host = self._host = hostpool.empty(self._shape, self._dtype)
                self._borrowed = False
            self._device.download(self._buffer, host)
            self._host_valid = True
        assert host is not None
        view = host.view()
        view.flags.writeable = False
        return view

    def read_rows(self, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
        """Rows ``start:stop`` (elements of a Vector) as a new host array, or into ``out`` (a
        C-contiguous array of their shape and dtype): sliced from the host copy if it is
        current, else downloaded alone, without the rest of the container."""
        row = self.nbytes // max(self._shape[0], 1)
        if self._host_valid or stop <= start:
            return copied_rows(self.to_host()[start:stop], out)
        out = rows_out(out, (stop - start, *self._shape[1:]), self._dtype)
        assert self._buffer is not None  # one side is always valid
        self._device.download(self._buffer, out, offset=start * row)
        return out

    def numpy(self, *, writable: bool = False) -> np.ndarray:
        """The contents as a NumPy array: a read-only view of the host copy.

        ``writable=True`` gives a writable view and marks the device copy stale, since the
        caller means to write through it.
        """
        view = self.to_host()
        if writable:
            view = self._own_host().view()
            self.mark_host_modified()
        return view

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        view = self.to_host()
        if dtype is not None and np.dtype(dtype) != self._dtype:
            return view.astype(dtype)
        return view.copy() if copy else view

    def mark_host_modified(self) -> None:
        """The host copy was written behind the container's back: the device copy is stale."""
        self.to_host()
        self._host_valid = True
        self._device_valid = False

    def mark_device_modified(self) -> None:
        """The device buffer was written behind the container's back: the host copy is stale."""
        self.to_device()
        self._device_valid = True
        self._host_valid = False

    def output_buffer(self) -> Buffer:
        """The device buffer for a kernel that writes every element, without uploading a stale
        device copy first; call :meth:`mark_device_written` once the kernel is enqueued."""
        self._unborrow(keep=False)
        if self._buffer is None:
            self._buffer = self._new_buffer(upload=False)
        return self._buffer

    def writable_buffer(self) -> Buffer:
        """The device buffer, current, for a kernel that writes some elements (an extra argument
        of a user function, Scatter's ``out``); call :meth:`mark_device_written` afterwards."""
        self._unborrow(keep=True)
        return self.to_device()

    def _new_buffer(self, *, upload: bool) -> Buffer:
        """The container's device buffer: on a device that shares host memory, the host array
        itself (made if there is none yet), so nothing is ever copied; elsewhere new memory."""
        if not self._device.shares_host_memory:
            return self._device.alloc(self.nbytes)
        if self._host is None:
            self._host = hostpool.empty(self._shape, self._dtype)
        return self._device.host_buffer(self._host, upload=upload)

    def _unborrow(self, *, keep: bool) -> None:
        """Before the device writes: a borrowed array must not be the memory it writes (on a
        device that shares host memory), so the container takes an array of its own."""
        if not (self._borrowed and self._device.shares_host_memory):
            return
        assert self._host is not None
        self._host = self._host.copy() if keep else empty_like(self._host)
        self._borrowed = False
        self._buffer = self._device.host_buffer(self._host, upload=False)
        self._device_valid = self._host_valid = keep

    def mark_device_written(self) -> None:
        """A command enqueued on the device wrote the buffer: the host copy is stale (no upload)."""
        if self._buffer is None:
            raise ShapeError(f"this {type(self).__name__} has no device buffer to have been written")
        self._device_valid = True
        self._host_valid = False

    # device arrays --------------------------------------------------------------------------
    def _cuda_view(self) -> Any:
        """A CuPy array over the device buffer (no copy); only on a CUDA device."""
        if self._device.backend != "cuda":
            raise AttributeError(
                f"this {type(self).__name__} lives on {self._device.id}, not in CUDA memory; read it with numpy()"
            )
        if vector_of(self._dtype) is not None:  # so that array protocols see no device array
            raise AttributeError(f"{self._c_type} elements have no CuPy or DLPack dtype; read them with numpy()")
        return self._device.view(self.to_device(), self._shape, self._dtype)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """The device buffer for CuPy, PyTorch, Numba (CUDA devices only; no copy).

        A consumer that writes into it must call :meth:`mark_device_modified` afterwards.
        """
        return self._cuda_view().__cuda_array_interface__

    def __dlpack__(self, **kwargs: Any) -> Any:
        """The device buffer as a DLPack capsule (CUDA devices only; no copy)."""
        if self._device.backend != "cuda":
            raise BufferError(
                f"this {type(self).__name__} lives on {self._device.id}; DLPack export "
                "needs a CUDA device (read it with numpy())"
            )
        return self._cuda_view().__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        if self._device.backend != "cuda":
            return (1, 0)  # kDLCPU: the host copy is what can be read
        return self._cuda_view().__dlpack_device__()

    # host view ------------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Any:
        return self.to_host()[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.to_host()
        self._own_host()[key] = value
        self._device_valid = False

    def _own_host(self) -> np.ndarray:
        """The valid host array, copied first if it is borrowed (before the container writes to it)."""
        self.to_host()
        assert self._host is not None
        if self._borrowed:
            self._host = self._host.copy()
            self._borrowed = False
            if self._buffer is not None and self._buffer.host is not None:
                self._buffer = None  # it was the borrowed memory: made again over the copy
                self._device_valid = False
        return self._host


def rows_out(out: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Where :meth:`Container.read_rows` puts rows of ``shape`` and ``dtype``: ``out``, checked
    to be a writable C-contiguous NumPy array of them, or a new array where it is None.

    >>> rows_out(np.zeros((2, 3), np.float32), (2, 3), np.dtype(np.float64))
    Traceback (most recent call last):
    parskel.errors.ShapeError: read_rows: out must be ... dtype float64; got one ... dtype float32
    """
    if out is None:
        return hostpool.empty(shape, dtype)
    if not isinstance(out, np.ndarray):
        raise ShapeError(f"read_rows: out must be a NumPy array, got {type(out).__name__}")
    if out.shape != shape or out.dtype != dtype or not out.flags.c_contiguous or not out.flags.writeable:
        raise ShapeError(
            f"read_rows: out must be a writable C-contiguous array of shape {shape} and dtype {dtype}; "
            f"got one of shape {out.shape} and dtype {out.dtype}"
            + ("" if out.flags.c_contiguous else ", not contiguous")
            + ("" if out.flags.writeable else ", read-only")
        )
    return out


def copied_rows(rows: np.ndarray, out: Any = None) -> np.ndarray:
    """``rows`` copied into ``out`` (checked by :func:`rows_out`), or into a new array where
    there is none.

    >>> into = np.zeros(2, np.int32)
    >>> copied_rows(np.arange(2, dtype=np.int32), into) is into, into.tolist()
    (True, [0, 1])
    """
    target = rows_out(out, rows.shape, rows.dtype)
    target[...] = rows
    return target


def shape_of(value: Any, what: str) -> tuple[int, ...]:
    """A shape from a size or a sequence of sizes, each a non-negative whole number.

    >>> shape_of(np.int64(4), "size"), shape_of([2, 3], "shape")
    ((4,), (2, 3))
    """
    items = value if isinstance(value, (tuple, list)) else (value,)
    dims = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise ShapeError(f"{what}: sizes are whole numbers, got {item!r} ({type(item).__name__})")
        if item < 0:
            raise ShapeError(f"{what}: sizes cannot be negative, got {item}")
        dims.append(int(item))
    return tuple(dims)


def _borrowable(data: Any, dtype: DTypeLike | None) -> np.ndarray:
    if not isinstance(data, np.ndarray):
        raise ShapeError(f"copy=False borrows a NumPy array, got {type(data).__name__}")
    if dtype is not None and np.dtype(dtype) != data.dtype:
        raise DTypeError(f"copy=False cannot convert {data.dtype} to {np.dtype(dtype)}")
    if not data.flags.c_contiguous:
        raise ShapeError("copy=False borrows only a C-contiguous array; pass copy=True")
    view = data.view()
    view.flags.writeable = False
    return view
