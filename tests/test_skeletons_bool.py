"""bool Vectors and Matrices: Map, Zip and Generate take and give bools (stored as one byte,
0 or 1, as NumPy stores them), in C and in Python; the other skeletons refuse them clearly."""

from __future__ import annotations

import numpy as np
import pytest

import parskel as ps
from parskel.errors import DTypeError, UserFunctionError
from test_cuda import NVRTC, NVRTC_WHY, captured_builds, nvrtc_build


def test_elementwise_skeletons_take_and_give_bools(device, rng) -> None:
    x = rng.standard_normal(1001).astype(np.float32)
    v = ps.Vector(x, device=device)
    for above in (ps.Map(lambda t: t > 0.5), ps.Map("bool above(float t) { return t > 0.5f; }")):
        flags = above(v)
        assert flags.dtype == np.bool_ and flags.c_type == "bool"
        np.testing.assert_array_equal(flags.numpy(), x > 0.5)
    flags = ps.Vector(x > 0.5, device=device)
    other = ps.Vector(x < 1.0, device=device)
    both = ps.Zip("bool both(bool p, bool q) { return p && !q; }")(flags, other)
    np.testing.assert_array_equal(both.numpy(), (x > 0.5) & ~(x < 1.0))
    chosen = ps.Zip(lambda p, t: np.where(p, t, np.float32(0)))(flags, v)
    np.testing.assert_array_equal(chosen.numpy(), np.where(x > 0.5, x, 0))
    even = ps.Generate(lambda *, r, c: (r + c) % 2 == 0)((3, 4), device=device)
    assert even.dtype == np.bool_
    np.testing.assert_array_equal(even.numpy(), (np.add.outer(np.arange(3), np.arange(4)) % 2) == 0)
    m = ps.Matrix(rng.random((5, 6)) > 0.5, device=device)
    np.testing.assert_array_equal(ps.Map("bool f(bool p) { return !p; }")(m).numpy(), ~m.numpy())


def test_other_skeletons_refuse_bools_before_building(device) -> None:
    flags = ps.Vector(np.ones(5, bool), device=device)
    with device.record() as rec:
        with pytest.raises(DTypeError, match="astype"):
            ps.Reduce("uchar add(uchar a, uchar b) { return a + b; }", identity=0)(flags)
        with pytest.raises(DTypeError, match="bools"):
            ps.MapOverlap("bool f(const bool *w) { return w[0]; }")(flags)
        with pytest.raises(UserFunctionError, match="bools"):
            ps.Reduce("bool any(bool a, bool b) { return a || b; }", identity=0)
        with pytest.raises(UserFunctionError, match="returns a bool"):
            ps.MapReduce(lambda t: t > 0, lambda a, b: a + b, identity=0)(
                ps.Vector(np.ones(3, np.float32), device=device)
            )
    assert rec.timing.launches == 0


@pytest.mark.skipif(NVRTC is None, reason=NVRTC_WHY)
def test_bool_skeletons_build_with_nvrtc(monkeypatch) -> None:
    dev, captured = captured_builds(monkeypatch)
    flags = ps.Map("bool f(float t) { return t > 0; }")(ps.Vector(np.ones(4, np.float32), device=dev))
    ps.Zip(lambda p, q: p != q)(flags, flags)
    assert len(captured) == 2
    for source in captured:
        log, ptx = nvrtc_build(source)
        assert ".entry" in ptx, log
