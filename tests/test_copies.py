"""Host copies of the pipeline: on threads, or made by the host's CPU device with non-temporal
stores (``parskel.pipeline.copies``)."""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.errors import LaunchError
from parskel.pipeline import copies


def _cpu_device():
    for device in ps.devices():
        if device.backend == "opencl" and device.type == "cpu" and device.shares_host_memory:
            return device
    pytest.skip("needs an OpenCL CPU device that works in host memory (PoCL) to make the copies")


@pytest.fixture
def streaming(monkeypatch):
    """The CPU device makes every copy of 64 KiB or more, whatever its compute units; the calls
    that reach it are counted."""
    device = _cpu_device()
    monkeypatch.setattr(copies, "STREAM_UNITS", 1)
    monkeypatch.setattr(copies, "STREAM_BYTES", 1 << 16)
    monkeypatch.setattr(copies, "_streamer", [])
    made: list[int] = []
    stream = copies._stream

    def counted(pairs):
        done = stream(pairs)
        made.extend(dst.nbytes for dst, _ in pairs if done)
        return done

    monkeypatch.setattr(copies, "_stream", counted)
    return device, made


@pytest.mark.parametrize(("n", "src_at", "dst_at"), [(1 << 20, 0, 0), ((1 << 20) + 37, 1, 3), ((1 << 17) + 5, 7, 0)])
def test_the_cpu_device_copies_any_bytes_to_any_address(streaming, rng, n, src_at, dst_at):
    """Sources and destinations off a line's boundary and sizes off whole lines: the ends go
    byte by byte, and nothing outside the destination is written."""
    _, made = streaming
    source = rng.integers(0, 256, n + 64, dtype=np.uint8)
    backing = np.zeros(n + 64, np.uint8)
    src, dst = source[src_at : src_at + n], backing[dst_at : dst_at + n]
    copies.copy([(dst, src)])
    assert made == [n]
    assert np.array_equal(dst, src)
    assert not backing[:dst_at].any() and not backing[dst_at + n :].any()


def test_small_non_contiguous_and_added_copies_stay_on_the_threads(streaming, rng):
    _, made = streaming
    a = rng.random((512, 256), dtype=np.float32)
    big, small = np.zeros_like(a), np.zeros(100, np.float32)
    strided = np.zeros((512, 512), np.float32)[:, ::2]
    copies.copy([(big, a), (small, a.reshape(-1)[:100]), (strided, a)])
    assert made == [a.nbytes]
    assert np.array_equal(big, a) and np.array_equal(small, a.reshape(-1)[:100]) and np.array_equal(strided, a)
    copies.copy([(big, a)], add=True)
    assert made == [a.nbytes]
    assert np.array_equal(big, 2 * a)


def test_a_device_that_fails_leaves_its_copies_to_the_threads(streaming, rng, monkeypatch):
    device, made = streaming

    def refuse(*args, **kwargs):
        raise LaunchError("refused for the test")

    monkeypatch.setattr(device, "launch", refuse)
    src = rng.random(1 << 18, dtype=np.float32)
    dst = np.zeros_like(src)
    copies.copy([(dst, src)])
    assert np.array_equal(dst, src) and made == []
    assert copies._streamer == [None]  # not asked again
