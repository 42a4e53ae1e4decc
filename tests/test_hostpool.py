"""The host pool for large results: memory reused only once nothing refers to it."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import parskel as ps
from parskel.errors import ArgumentError
from parskel.runtime import hostpool

N = hostpool.POOL_BYTES // 4  # float32 elements of the smallest pooled array


@pytest.fixture(autouse=True)
def _fresh_pool(monkeypatch):
    monkeypatch.delenv(hostpool.ENV_VAR, raising=False)
    hostpool.clear()
    yield
    gc.collect()
    hostpool.clear()


def _address(a: np.ndarray) -> int:
    return int(a.ctypes.data)


def test_a_freed_array_s_memory_makes_the_next_one_of_its_size():
    a = hostpool.empty(N, np.float32)
    a[:] = 1.5
    where = _address(a)
    del a
    b = hostpool.empty((N // 2, 2), np.int32)  # same bytes, another shape and dtype
    assert _address(b) == where
    assert b.shape == (N // 2, 2) and b.flags.c_contiguous and b.flags.writeable


def test_memory_is_not_reused_while_a_view_or_the_base_lives():
    a = hostpool.empty(N, np.float32)
    a[:] = 7.0
    where = _address(a)
    view = a[10:20]
    base = a.base
    del a
    b = hostpool.empty(N, np.float32)
    assert _address(b) != where
    b[:] = -1.0
    assert np.all(view == 7.0)
    del view, b
    c = hostpool.empty(N, np.float32)
    assert _address(c) != where  # the base still holds it
    del base, c
    gc.collect()
    again = [hostpool.empty(N, np.float32) for _ in range(2)]
    assert where in {_address(a) for a in again}


def test_small_arrays_and_a_pool_turned_off_are_numpy_s_own(monkeypatch):
    small = hostpool.empty(100, np.float64)
    assert small.flags.owndata and small.shape == (100,)
    monkeypatch.setenv(hostpool.ENV_VAR, "0")
    big = hostpool.empty(N, np.float32)
    assert big.flags.owndata
    del big
    assert hostpool.idle_bytes() == 0


def test_idle_memory_stays_within_the_limit(monkeypatch):
    size = hostpool.POOL_BYTES
    monkeypatch.setenv(hostpool.ENV_VAR, str(2 * size))
    arrays = [hostpool.empty(N, np.float32) for _ in range(4)]
    del arrays
    assert hostpool.idle_bytes() == 2 * size
    hostpool.clear()
    assert hostpool.idle_bytes() == 0


def test_a_malformed_limit_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(hostpool.ENV_VAR, "lots")
    with pytest.raises(ArgumentError, match="PARSKEL_HOST_POOL"):
        hostpool.empty(N, np.float32)


def test_results_held_by_the_caller_are_not_overwritten_by_later_calls():
    """Public calls on large arrays take their results from the pool: a result kept stays
    intact while the next calls reuse a freed one's memory."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 100, N, dtype=np.int32)
    kept = ps.scan(x, inclusive=True)
    expected = np.cumsum(x, dtype=np.int32)
    for _ in range(3):
        other = ps.scan(x[::-1].copy(), inclusive=True)
        assert np.array_equal(other, np.cumsum(x[::-1], dtype=np.int32))
        del other
    assert np.array_equal(kept, expected)
    y = ps.sort(x)
    assert np.array_equal(y, np.sort(x)) and np.array_equal(kept, expected)


def test_without_a_mapping_the_array_is_numpy_s_own(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(hostpool.mmap, "mmap", refuse)
    a = hostpool.empty(N, np.float32)
    assert a.flags.owndata and a.shape == (N,)


def test_threads_never_share_live_memory():
    """Arrays made and dropped on several threads at once: each live array keeps what its
    thread wrote into it, so no two live arrays ever share memory."""
    import threading

    failures: list[str] = []

    def work(mark: int) -> None:
        kept = []
        for round_ in range(40):
            a = hostpool.empty(N, np.float32)
            a[::4096] = mark
            kept.append(a)
            if len(kept) > 2:
                old = kept.pop(0)
                if not np.all(old[::4096] == mark):
                    failures.append(f"thread {mark}, round {round_}: another thread wrote into a live array")
                del old

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    gc.collect()
    assert hostpool.idle_bytes() <= hostpool.idle_limit()
