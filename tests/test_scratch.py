"""Scratch memory of the algorithms: host arrays kept between calls on CPU devices, bounded."""

from __future__ import annotations

import numpy as np

import parskel as ps
from parskel.algorithms import scratch


def _sorts(device, rng, sizes) -> set[int]:
    """Sort keys and values of each size, check them, and return which arrays are kept."""
    for n in sizes:
        keys = rng.integers(0, 2**32, n, dtype=np.uint32)
        values = np.arange(n, dtype=np.int32)
        out_keys, out_values = ps.sort(keys, values, variant="radix8_cpu", device=device)
        order = np.argsort(keys, kind="stable")
        np.testing.assert_array_equal(out_keys, keys[order])
        np.testing.assert_array_equal(out_values, values[order])
    return {id(a) for a in scratch._kept}


def test_buffers_are_reused_and_results_stay_right(device, rng, monkeypatch) -> None:
    monkeypatch.setattr(scratch, "_kept", [])
    first = _sorts(device, rng, (5000, 7000))
    assert _sorts(device, rng, (5000, 7000, 5000)) == first
    if device.shares_host_memory:  # spares for keys and values of each size, and the counts
        assert 4 * 5000 in {a.nbytes for a in scratch._kept} and len(first) >= 4
    else:
        assert not first


def test_what_is_kept_is_bounded(device, monkeypatch) -> None:
    monkeypatch.setattr(scratch, "_kept", [])
    monkeypatch.setattr(scratch, "KEEP_BYTES", 3000)
    for nbytes in (1000, 1500, 2000):
        with scratch.scratch(device) as take:
            buffer = take(nbytes)
            assert buffer.nbytes == nbytes
    if device.shares_host_memory:  # the oldest goes first
        assert [a.nbytes for a in scratch._kept] == [2000]
