"""The runtime layer: selection, buffers, programs, launches, timing, errors."""

from __future__ import annotations

import gc
import math
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import parskel as ps
from parskel.errors import BuildError, DeviceMemoryError, DeviceNotFoundError, LaunchError
from parskel.runtime import Local, Source, round_to_multiple, round_to_power_of_two
from parskel.runtime.sources import define_options

# sizes --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("x", "m", "want"), [(0, 16, 0), (1, 16, 16), (16, 16, 16), (17, 16, 32), (4000, 256, 4096)])
def test_round_to_multiple(x, m, want):
    assert round_to_multiple(x, m) == want


@pytest.mark.parametrize(
    ("x", "want"), [(0, 1), (1, 1), (2, 2), (3, 4), (1024, 1024), (1025, 2048), (2**26 - 1, 2**26)]
)
def test_round_to_power_of_two(x, want):
    assert round_to_power_of_two(x) == want


# selection ----------------------------------------------------------------------------------


def test_there_is_a_device_and_a_default():
    found = ps.devices()
    assert found, "PoCL should always provide a CPU device"
    default = ps.device()
    assert default in found
    if any(d.type == "gpu" for d in found):
        assert default.type == "gpu"


def test_select_by_id_and_fragment(device):
    assert ps.device(device.id) is device
    assert ps.device(device.id.upper()) is device
    fragment = device.name.split()[0].lower()
    assert (
        ps.device(fragment).name.lower().startswith(fragment) or fragment in ps.device(fragment).info.platform.lower()
    )
    assert ps.device(f"{device.backend}:{device.type}").type == device.type


def test_pocl_is_found_by_name():
    pocl = ps.device("pocl")
    assert pocl.type == "cpu"
    assert "portable computing language" in pocl.info.platform.lower()


def test_unknown_device_lists_the_existing_ones():
    with pytest.raises(DeviceNotFoundError) as info:
        ps.device("no-such-device-xyz")
    message = str(info.value)
    for dev in ps.devices():
        assert dev.id in message


def test_using_is_scoped_and_env_var_applies(monkeypatch, device):
    outer = ps.device()
    with ps.using(device.id) as chosen:
        assert chosen is device and ps.device() is device
    assert ps.device() is outer
    monkeypatch.setenv("PARSKEL_DEVICE", device.id)
    assert ps.device() is device
    monkeypatch.setenv("PARSKEL_DEVICE", "no-such-device-xyz")
    with pytest.raises(DeviceNotFoundError):
        ps.device()


def test_device_info_is_complete(device):
    info = device.info
    assert info.backend in {"opencl", "cuda"} and info.id.startswith(f"{info.backend}:")
    assert info.type in {"gpu", "cpu", "accelerator"}
    assert info.compute_units >= 1 and info.global_mem_bytes > 0 and info.local_mem_bytes > 0
    assert 0 < info.max_alloc_bytes <= info.global_mem_bytes
    assert len(info.max_work_item_sizes) == 3 and info.max_work_group_size >= 1
    assert set(info.preferred_vector_widths) >= {"char", "int", "float", "double"}
    assert info.version.startswith("OpenCL" if info.backend == "opencl" else "compute capability")
    assert info.driver_version
    assert isinstance(info.fp64, bool)


# buffers ------------------------------------------------------------------------------------


def test_upload_download_copy_fill(device, rng):
    host = rng.integers(0, 1 << 30, 1001, dtype=np.int32)
    original = host.copy()
    a = device.to_device(host)
    b = device.alloc(host.nbytes)
    device.copy(b, a)
    out = np.empty_like(host)
    device.download(b, out)
    np.testing.assert_array_equal(out, original)
    np.testing.assert_array_equal(host, original)  # the input is untouched

    device.fill(b, np.int32(-7), 400, offset=40)
    device.download(b, out)
    want = original.copy()
    want[10:110] = -7
    np.testing.assert_array_equal(out, want)
    device.fill(b, np.int16(-1), 12, offset=8)  # one byte repeated (a memset where there is one)
    device.fill(b, np.uint8(0), 4, offset=4000)
    device.download(b, out)
    want[2:5], want[1000] = -1, 0
    np.testing.assert_array_equal(out, want)

    part = np.empty(5, dtype=np.int32)
    device.download(a, part, offset=8)
    np.testing.assert_array_equal(part, original[2:7])


def test_zero_sized_transfers(device):
    empty = np.empty(0, dtype=np.float32)
    buf = device.to_device(empty)
    assert buf.nbytes == 0
    device.download(buf, empty)


@pytest.mark.parametrize(
    ("shape", "padded"), [((3, 5), (16, 16)), ((16, 16), (16, 16)), ((17, 1), (32, 4)), ((0, 4), (16, 16))]
)
def test_padded_round_trip(device, rng, shape, padded):
    host = rng.random(shape, dtype=np.float32)
    buf = device.upload_padded(host, padded)
    whole = np.empty(padded, dtype=np.float32)
    device.download(buf, whole)
    want = np.zeros(padded, dtype=np.float32)
    want[: shape[0], : shape[1]] = host
    np.testing.assert_array_equal(whole, want)
    back = np.empty(shape, dtype=np.float32)
    device.download_trimmed(buf, padded, back)
    np.testing.assert_array_equal(back, host)


def test_allocation_larger_than_the_device_names_the_sizes(device):
    with pytest.raises(DeviceMemoryError) as info:
        device.alloc(device.info.max_alloc_bytes + 1)
    assert "largest allocation" in str(info.value)


def test_out_of_range_transfers_are_refused(device):
    buf = device.alloc(16)
    with pytest.raises(ValueError):
        device.upload(buf, np.zeros(5, dtype=np.float32))


# programs -----------------------------------------------------------------------------------


def test_build_error_quotes_compiler_and_line(device):
    broken = "__kernel void broken(__global float *x)\n{\n    x[0] = 1.0f\n}\n"
    with pytest.raises(BuildError) as info:
        device.build(Source.compose([("broken.cl", broken)]))
    message = str(info.value)
    assert "broken.cl" in message
    assert "x[0] = 1.0f" in message  # the offending line, as written
    # the missing ';' is reported at its line (Clang) or at the next token's (NVRTC)
    assert "line 3" in message or "line 4" in message


def test_build_error_in_an_included_header_points_at_the_caller(device):
    source = '#include "common/parskel.h"\n__kernel void k(__global T *x) { x[0] = undefined_name; }\n'
    with pytest.raises(BuildError) as info:
        device.build(Source.compose([("user.cl", source)]))
    assert "user.cl, line 2" in str(info.value)


def test_programs_are_built_once_per_process(device):
    first = device.program("basics/saxpy.cl", {"T": "float"})
    assert device.program("basics/saxpy.cl", {"T": "float"}) is first
    assert device.program("basics/saxpy.cl", {"T": "int"}) is not first


def test_includes_are_expanded_with_line_markers():
    source = Source.load("basics/saxpy.cl")
    assert "#include" not in source.text
    assert '#line 1 "common/parskel.h"' in source.text
    assert "common/parskel.h" in source.files and "basics/saxpy.cl" in source.files


def test_define_options_are_stable_and_checked():
    assert define_options({"WG": 256, "T": "float", "FAST": True}) == ["-DFAST=1", "-DT=float", "-DWG=256"]
    with pytest.raises(ValueError):
        define_options({"not valid": 1})


def test_binaries_persist_on_disk(tmp_path):
    code = "import parskel as ps; d = ps.device('pocl');d.program('basics/vector_add.cl', {'T': 'short'})"
    env = dict(os.environ, POCL_CACHE_DIR=str(tmp_path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    assert any(p.is_file() for p in tmp_path.rglob("*"))  # PoCL's binary cache, used by PyOpenCL


# launches -----------------------------------------------------------------------------------


def test_work_group_larger_than_the_device_is_refused(device):
    kernel = device.program("basics/mappings.cl").kernel("one_to_one")
    too_big = device.info.max_work_group_size * 2
    buf = device.alloc(too_big * 4)
    with pytest.raises(LaunchError) as info:
        device.launch(kernel, too_big, too_big, buf)
    assert str(device.info.max_work_group_size) in str(info.value) or "limit" in str(info.value)


def test_global_not_a_multiple_of_local_is_refused(device):
    kernel = device.program("basics/mappings.cl").kernel("one_to_one")
    with pytest.raises(LaunchError, match="round_to_multiple"):
        device.launch(kernel, 100, 64, device.alloc(400))


def test_too_much_local_memory_is_refused(device):
    if device.backend == "cuda":  # no __local pointer arguments there: local arrays are sized at build
        words = device.info.local_mem_bytes // 4 + 1
        big = (
            f"__kernel void big(__global float *x)\n{{\n    __local float s[{words}];\n"
            "    s[get_local_id(0)] = x[0];\n    barrier(CLK_LOCAL_MEM_FENCE);\n    x[1] = s[1];\n}\n"
        )
        with pytest.raises((BuildError, LaunchError), match=r"shared data|local memory"):
            kernel = device.build(Source.compose([("big.cl", big)])).kernel("big")
            device.launch(kernel, 32, 32, device.alloc(8))
        return
    kernel = device.program("basics/mappings.cl").kernel("one_to_one")
    with pytest.raises(LaunchError, match="local memory"):
        device.launch(kernel, 1, 1, device.alloc(4), Local(device.info.local_mem_bytes + 1))


# Each group reverses its run of WORDS words through one local array, PS_TILE_LOCAL's: on CUDA,
# built with PS_DYNAMIC_LOCAL, from dynamic shared memory.
_TILE_REVERSE = """#include "common/parskel.h"
__kernel void tile_reverse(__global const uint *x, __global uint *y)
{
    PS_TILE_LOCAL(uint, tile, WORDS);
    size_t base = get_group_id(0) * WORDS;
    for (uint i = get_local_id(0); i < WORDS; i += get_local_size(0))
        tile[i] = x[base + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_local_id(0); i < WORDS; i += get_local_size(0))
        y[base + i] = tile[WORDS - 1 - i];
}
"""


def test_a_tile_local_array_beyond_the_fixed_local_memory(device, rng):
    """On CUDA a group's tile of 64 KiB, past the 48 KiB of fixed local arrays a block may
    have, comes from dynamic shared memory once the kernel takes it; elsewhere the same source
    declares an ordinary local array (of what the device holds)."""
    dynamic = device.info.local_mem_optin_bytes > device.info.local_mem_bytes
    words = (64 << 10) // 4 if dynamic else min(4096, device.info.local_mem_bytes // 8)
    if device.backend == "cuda" and not dynamic:
        pytest.skip(f"{device.id} gives a block no more than its {device.info.local_mem_bytes} bytes")
    defines = {"WORDS": words, "PS_DYNAMIC_LOCAL": int(dynamic)}
    kernel = device.build(Source.compose([("tile_reverse.cl", _TILE_REVERSE)]), defines).kernel("tile_reverse")
    if dynamic:
        kernel.take_dynamic_local(4 * words)
    groups = 3
    x = rng.integers(0, 2**32, groups * words, dtype=np.uint32)
    src, dst = device.to_device(x), device.alloc(x.nbytes)
    device.launch(kernel, groups * 256, 256, src, dst)
    out = np.empty_like(x)
    device.download(dst, out)
    np.testing.assert_array_equal(out, x.reshape(groups, words)[:, ::-1].reshape(-1))


def test_dynamic_local_memory_is_cuda_only(device):
    kernel = device.program("basics/mappings.cl").kernel("contiguous")
    if device.backend == "cuda":
        with pytest.raises(LaunchError, match="dynamic local memory"):
            kernel.take_dynamic_local(device.info.local_mem_optin_bytes + 1)
        return
    with pytest.raises(LaunchError, match="only CUDA"):
        kernel.take_dynamic_local(1024)


def test_python_scalars_are_refused_with_a_hint(device):
    kernel = device.program("basics/mappings.cl").kernel("contiguous")
    with pytest.raises(TypeError, match=r"np\.int32"):
        device.launch(kernel, 4, None, device.alloc(64), 4)


def test_unknown_kernel_lists_the_kernels(device):
    with pytest.raises(KeyError, match="one_to_one"):
        device.program("basics/mappings.cl").kernel("nope")


# timing -------------------------------------------------------------------------------------


def test_record_splits_upload_kernel_download(device):
    a = np.arange(1 << 16, dtype=np.float32)
    with device.record() as rec:
        ps.vector_add(a, a, device=device)
    timing = rec.timing
    assert timing.launches == 1
    assert timing.upload > 0 and timing.kernel > 0 and timing.download > 0
    assert timing.wall >= timing.kernel
    assert timing.device == pytest.approx(timing.upload + timing.kernel + timing.download + timing.other)


def test_excerpt_follows_expanded_line_numbers_too():
    # NVIDIA's compiler ignores #line and reports lines of the expanded text as "<kernel>:L:C"
    source = Source.compose([("user.cl", '#include "common/parskel.h"\nfloat f(float x) { return y; }\n')])
    expanded_line = source.text.splitlines().index("float f(float x) { return y; }") + 1
    excerpt = source.excerpt_for(f"<kernel>:{expanded_line}:28: error: use of undeclared identifier 'y'")
    assert excerpt.startswith("user.cl, line 2:")
    assert "return y;" in excerpt


@pytest.mark.parametrize(
    "why",
    [
        "error: unknown target CPU 'generic'",
        "wrong vector loads: the upper half of a vload16 of floats read 0 where 23 was due",
    ],
)
def test_a_cpu_device_that_cannot_compile_is_reported_unusable(monkeypatch, why):
    """PoCL 3.0's LLVM 14 cannot target CPUs it predates, or builds 64-byte vector loads
    wrong on some; such a device is set aside with advice."""
    from parskel.runtime import opencl

    cpus = [d for d in opencl.OpenCLBackend().discover() if d.type == "cpu"]
    if not cpus:
        pytest.skip("no usable OpenCL CPU device here")
    monkeypatch.setattr(opencl, "_unfit", lambda handle: why)
    backend = opencl.OpenCLBackend()
    found = backend.discover()
    assert all(d.type != "cpu" for d in found)
    reasons = dict(backend.unusable())
    named = {name.split(": ", 1)[0] for name in reasons}
    assert named >= {d.id for d in cpus}
    assert all("pocl-opencl-icd" in why for why in reasons.values())


def test_a_working_cpu_device_builds_and_runs_the_probe(monkeypatch):
    """The probe passes on a working CPU device, and finds a vector load that reads wrong: here
    a probe that sums the wrong lanes stands for a driver that loads them wrong."""
    from parskel.runtime import opencl

    cpus = [dev for dev in opencl.OpenCLBackend().discover() if dev.type == "cpu"]
    if not cpus:
        pytest.skip("no usable OpenCL CPU device here")
    for dev in cpus:
        assert opencl._unfit(dev._cl) == ""
    monkeypatch.setattr(opencl, "_PROBE", opencl._PROBE.replace("v.s8 + v.sf", "v.s0 + v.s7"))
    for dev in cpus:
        assert opencl._unfit(dev._cl).startswith("wrong vector loads")


def test_a_host_array_misaligned_for_its_scalar_type_gets_memory_of_its_own(device):
    # a scalar array's alignment is read from its flags: one a byte off is copied, not shared
    raw = np.zeros(4 * 100 + 1, np.uint8)
    x = np.frombuffer(raw.data, dtype=np.float32, count=100, offset=1)
    x[:] = np.arange(100, dtype=np.float32)
    assert not x.flags.aligned
    buffer = device.host_buffer(x)
    assert buffer.host is not x
    out = np.empty(100, np.float32)
    device.download(buffer, out)
    np.testing.assert_array_equal(out, np.arange(100, dtype=np.float32))
    aligned = np.arange(100, dtype=np.float32)
    if device.shares_host_memory:
        assert device.host_buffer(aligned).host is aligned


def _doubled_into_host_memory(device, *, beside_a_stream=False):
    """On a device that works in host memory (else the test is skipped): a kernel launched to
    write 1 + 1 into a new host array, over 16 MiB buffers, more than an inline launch takes, so
    the worker threads run it; ``beside_a_stream``, once the device has a stream beside its own
    queue. Returns the array's buffer, the array and a weak reference to it."""
    if not device.shares_host_memory or device.backend != "opencl":
        pytest.skip(f"{device.id} copies host arrays: its buffers are memory of their own")
    if beside_a_stream:
        device.stream()
    n = 1 << 22
    ones = device.host_buffer(np.ones(n, np.float32))
    out = np.empty(n, np.float32)
    result = device.host_buffer(out, upload=False)
    kernel = device.program("basics/vector_add.cl", {"T": "float"}).kernel("vector_add")
    device.launch(kernel, n, None, ones, ones, result, np.uint32(n))
    return result, out, weakref.ref(out)


def test_a_result_nobody_kept_keeps_its_memory_until_the_device_is_done(device):
    # kernels may still write a result's host memory when nobody keeps the result: the command
    # holds the array until the device is known to be done with it (freed memory written was a
    # crash on PoCL)
    result, out, gone = _doubled_into_host_memory(device)
    del result, out
    gc.collect()
    assert gone() is not None
    device.finish()
    gc.collect()
    assert gone() is None


def test_a_device_that_has_waited_lets_go_of_the_arrays_it_held(device):
    # once a read back has waited for the queues, no command of theirs needs a held array: a
    # result dropped then is freed at once, not at the next launch or finish(), also where the
    # device has streams beside its own queue (whose commands it did not wait for)
    result, out, gone = _doubled_into_host_memory(device, beside_a_stream=True)
    device.download(result, out)  # the kernel wrote the array itself: this waits for it
    assert out[0] == 2 and out[-1] == 2
    del result, out
    gc.collect()
    assert gone() is None


def test_the_device_finishes_at_the_interpreters_exit(device):
    # the interpreter frees arrays in no order at its exit: the device finishes before that
    if not device.shares_host_memory or device.backend != "opencl":
        pytest.skip(f"{device.id} copies host arrays: its buffers are memory of their own")
    script = (
        "import numpy as np, parskel as ps\n"
        "from parskel.runtime.opencl import OpenCLDevice\n"
        "real = OpenCLDevice.finish\n"
        "def finish(self):\n"
        "    real(self)\n"
        "    print('finished', flush=True)\n"
        "OpenCLDevice.finish = finish\n"
        f"dev = ps.device({device.id!r})\n"
        "kernel = dev.program('basics/vector_add.cl', {'T': 'float'}).kernel('vector_add')\n"
        "x = dev.host_buffer(np.ones(1 << 22, np.float32))\n"
        "dev.launch(kernel, 1 << 22, None, x, x, x, np.uint32(1 << 22))\n"
        "print('end', flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["end", "finished"]


def test_opencl_memory_freed_on_a_queue_is_reused_there_and_not_on_another(device):
    if device.backend != "opencl":
        pytest.skip(f"{device.id} allocates through CuPy's pool")
    nbytes = 3 << 20
    first = device.alloc(nbytes)
    device.fill(first, np.uint32(7))
    device.finish()
    handle = first.handle.int_ptr
    del first
    gc.collect()
    with device.on(device.stream()):  # another queue: its own pool, never the block just freed
        elsewhere = device.alloc(nbytes)
        assert elsewhere.handle.int_ptr != handle
    again = device.alloc(nbytes)  # the device's own queue: the freed block, reused
    assert again.handle.int_ptr == handle
    out = np.empty(nbytes // 4, np.uint32)
    device.fill(again, np.uint32(9))
    device.download(again, out)
    assert (out == 9).all()
    del again, elsewhere
    gc.collect()
    assert sum(pool.held_blocks for pool in device._pools.values()) >= 2
    device.release_held_memory()
    assert sum(pool.held_blocks for pool in device._pools.values()) == 0


# PoCL's inline queue --------------------------------------------------------------------------


def _pocl_with_inline_queue() -> ps.Device:
    dev = ps.device("pocl")
    if getattr(dev, "_inline_cl", None) is None:
        pytest.skip(f"{dev.id} has no single-threaded PoCL device beside it (POCL_DEVICES was set by the user)")
    return dev


def test_pocl_single_threaded_device_is_the_inline_queue_not_a_device():
    _pocl_with_inline_queue()
    names = [d.name for d in ps.devices()]
    assert not any(n.startswith(("basic-", "cpu-minimal-")) for n in names), names


def test_a_hot_small_launch_runs_inline_and_large_ones_do_not():
    dev = _pocl_with_inline_queue()
    square = ps.Map("float f(float x) { return x * x; }")
    small = ps.Vector(np.arange(1000, dtype=np.float32), device=dev)
    for _ in range(5):
        np.testing.assert_array_equal(square(small).numpy(), small.numpy() ** 2)
    kernel = next(iter(square._plans.values())).kernel
    assert kernel.inline_handle() is not None  # built for the inline queue once hot
    dev.finish()
    big = ps.Vector(np.arange(1 << 22, dtype=np.float32), device=dev)
    result = square(big)
    assert dev._busy  # a launch over the inline limits (2^21 work-items, 8 MiB) goes to the worker threads
    np.testing.assert_array_equal(result.numpy(), big.numpy() ** 2)
    assert not dev._busy  # reading the result waited for them


def test_kernels_launched_in_chains_keep_to_small_inline_launches():
    """A Map over 2^19 floats (4 MiB of buffers) runs inline once hot; the same kernel said to
    be launched in chains (a sort's passes) goes to the worker threads with it."""
    dev = _pocl_with_inline_queue()
    square = ps.Map("float chained_square(float x) { return x * x; }")  # a kernel no other test shares
    mid = ps.Vector(np.arange(1 << 19, dtype=np.float32), device=dev)
    square(mid)
    flat = next(iter(square._plans.values())).flat
    flat.inline_seconds = math.inf  # however slow this machine runs it in one thread, it stays inline
    flat.inline_bytes = 8 << 20  # as on a device of 2 compute units, whatever this one has
    for _ in range(6):
        square(mid)
        dev.finish()
    assert not dev._busy
    result = square(mid)
    assert not dev._busy  # ran inline, in this thread
    np.testing.assert_array_equal(result.numpy(), mid.numpy() ** 2)
    flat.in_chains()
    dev.finish()
    chained = square(mid)  # (a new name: freeing the last result's host memory would wait)
    assert dev._busy  # over a chain's inline limit (1 MiB): on the worker threads
    np.testing.assert_array_equal(chained.numpy(), mid.numpy() ** 2)


def test_one_slow_inline_launch_does_not_lower_the_limit_two_in_a_row_do():
    """A stall of a busy machine (one slow launch among fast ones) leaves a kernel's inline
    limit alone; a second slow launch in a row lowers it to what the fastest launch seen would
    have done in the time allowed, and never below the floor."""
    from parskel.runtime import opencl

    dev = _pocl_with_inline_queue()
    square = ps.Map("float stalled_square(float x) { return x * x; }")  # a kernel of its own
    square(ps.Vector(np.arange(1 << 12, dtype=np.float32), device=dev))
    flat = next(iter(square._plans.values())).flat
    limit, allowed = flat.inline_bytes, flat.inline_seconds
    group = (256,)
    flat.ran_inline(group, 1 << 20, 10.0)  # the first launch of a work-group size: PoCL compiles
    assert flat.inline_bytes == limit
    flat.ran_inline(group, 1 << 20, allowed / 4)  # 4 MiB in the time allowed
    flat.ran_inline(group, 1 << 20, allowed * 10)  # one stall
    assert flat.inline_bytes == limit
    flat.ran_inline(group, 1 << 20, allowed / 4)
    flat.ran_inline(group, 1 << 20, allowed * 10)  # stalls again, but not twice in a row
    assert flat.inline_bytes == limit
    flat.ran_inline(group, 1 << 20, allowed * 2)  # slow twice in a row
    assert flat.inline_bytes == min(limit, 4 << 20)
    flat.ran_inline(group, 1 << 16, 1.0)
    flat.ran_inline(group, 1 << 16, 1.0)
    assert flat.inline_bytes == min(limit, 4 << 20)  # the fastest rate seen decides, not the last one
    slow = ps.Map("float crawling_square(float x) { return x * x; }")
    slow(ps.Vector(np.arange(1 << 12, dtype=np.float32), device=dev))
    crawl = next(iter(slow._plans.values())).flat
    for _ in range(3):
        crawl.ran_inline(group, 1 << 20, 100.0)
    assert crawl.inline_bytes == opencl._INLINE_FLOOR


def test_inline_limits_shrink_with_the_compute_units(monkeypatch):
    """A kernel's inline limits (bytes, seconds, and those of chains) are the same on devices
    of up to 4 compute units, and in proportion on one of more: 16 cores share a launch's work
    4 times as many ways as 4, so a launch pays to go to them 4 times sooner."""
    import dataclasses

    from parskel.runtime import opencl

    dev = _pocl_with_inline_queue()
    limits = {}
    for units in (1, 4, 16):
        monkeypatch.setattr(dev, "info", dataclasses.replace(dev.info, compute_units=units))
        square = ps.Map(f"float square_on_{units}(float x) {{ return x * x; }}")  # built for these units
        square(ps.Vector(np.arange(64, dtype=np.float32), device=dev))
        kernel = next(iter(square._plans.values())).kernel
        plain = (kernel.inline_bytes, kernel.inline_seconds)
        kernel.in_chains()
        limits[units] = (*plain, kernel.inline_bytes, kernel.inline_seconds)
    base = (opencl._INLINE_BYTES, opencl._INLINE_SECONDS, opencl._CHAIN_BYTES, opencl._CHAIN_SECONDS)
    assert limits[1] == base and limits[4] == base
    assert limits[16] == (base[0] // 4, base[1] / 4, base[2] // 4, base[3] / 4)


def test_an_inline_launch_within_the_floor_is_not_timed_and_a_larger_one_is():
    """A launch over at most _INLINE_FLOOR bytes of buffers stays inline however long it takes,
    so it is not timed (its kernel's limits are left alone); a larger one notes its time."""
    from parskel.runtime import opencl

    dev = _pocl_with_inline_queue()
    square = ps.Map("float untimed_square(float x) { return x * x; }")  # a kernel of its own
    noted: list[int] = []
    for n in (1000, 1 << 15):  # 8 KB and 256 KB of buffers
        x = ps.Vector(np.arange(n, dtype=np.float32), device=dev)
        square(x)
        plan = next(iter(square._plans.values()))
        for kernel in (plan.kernel, plan.flat):
            kernel.inline_seconds = math.inf  # however slow this machine is, it stays inline
            kernel.ran_inline = lambda group, nbytes, seconds: noted.append(nbytes)
        before = len(noted)
        for _ in range(6):
            np.testing.assert_array_equal(square(x).numpy(), x.numpy() ** 2)
            assert not dev._busy  # inline, in this thread
        timed = noted[before:]
        if 2 * n * 4 <= opencl._INLINE_FLOOR:
            assert timed == []
        else:
            assert timed and all(nbytes == 2 * n * 4 for nbytes in timed)


def test_inline_and_main_queue_commands_keep_their_order(rng):
    """Small launches (inline, once hot) and large ones (worker threads) read what the others
    wrote, in one chain of dependent calls with no wait between them but the reads."""
    dev = _pocl_with_inline_queue()
    big = rng.random(1 << 16, dtype=np.float32)
    total = ps.Reduce("float f(float a, float b) { return a + b; }", identity=0)
    scale = ps.Map("float f(float x, __global const float *s) { return x * s[0]; }")
    bump = ps.Map("float f(float x) { return x * 0.5f + 0.25f; }")
    sums = ps.Vector(np.zeros(1, np.float32), device=dev)
    big_v, want_big = ps.Vector(big, device=dev), big.copy()
    small, want_small = ps.Vector(np.ones(64, np.float32), device=dev), np.ones(64, np.float32)
    for _ in range(8):
        small = bump(small)  # the main queue is idle: inline once hot
        want_small = want_small * np.float32(0.5) + np.float32(0.25)
        big_v = scale(big_v, small)  # large: reads what the inline queue wrote
        want_big = want_big * want_small[0]
        total(big_v, out=sums)  # large, writes a small container
        twice = bump(sums)  # small, while the main queue is busy: stays behind the sum
        np.testing.assert_allclose(twice.numpy()[0], want_big.sum(dtype=np.float64) * 0.5 + 0.25, rtol=1e-4)
    assert next(iter(bump._plans.values())).kernel.inline_handle() is not None
    np.testing.assert_array_equal(small.numpy(), want_small)
    np.testing.assert_allclose(big_v.numpy(), want_big, rtol=1e-6)


@pytest.mark.parametrize(
    ("env", "paired"), [({"PARSKEL_POCL_INLINE": "0"}, False), ({"POCL_DEVICES": "pthread"}, False)]
)
def test_inline_queue_can_be_turned_off(env, paired):
    code = (
        "import os, parskel as ps; d = ps.device('pocl'); "
        "print(d._inline_cl is not None, os.environ.get('POCL_DEVICES'), len(ps.devices()))"
    )
    clean = {k: v for k, v in os.environ.items() if k not in ("POCL_DEVICES", "PARSKEL_POCL_INLINE")}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, check=True)
    has_inline, pocl_devices, count = out.stdout.split()
    assert has_inline == "False"
    assert pocl_devices == env.get("POCL_DEVICES", "None")
    assert int(count) == len(ps.devices())


def test_pocl_is_asked_to_pin_its_threads_unless_the_user_said_otherwise():
    """On a machine of few cores that the process may use whole, parskel sets POCL_AFFINITY=1
    before OpenCL starts (see opencl._pins_threads); a value the user set stays as it is."""
    from parskel.runtime.opencl import _pins_threads

    code = "import os, parskel as ps; ps.devices(); print(os.environ.get('POCL_AFFINITY'))"
    clean = {k: v for k, v in os.environ.items() if k != "POCL_AFFINITY"}
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    expected = "1" if usable and _pins_threads(os.cpu_count() or 0, usable, {}) else "None"
    for env, want in (({}, expected), ({"POCL_AFFINITY": "0"}, "0")):
        out = subprocess.run(
            [sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == want


def test_host_addresses_match_numpys():
    """The fast address of a host array (copies, host buffers) is NumPy's own, for whole arrays,
    views that start inside another, read-only and empty ones."""
    from parskel.runtime.arrays import host_address

    base = np.arange(64, dtype=np.float32)
    read_only = base.copy()
    read_only.flags.writeable = False
    for array in (base, base[5:], base.view(np.uint8)[3:40], read_only, base[:0], np.zeros((4, 4), np.int16)):
        assert host_address(array) == array.ctypes.data


def test_kernels_keep_unchanged_integer_arguments_but_set_floats_again(device, monkeypatch):
    """An integer argument equal to the last one set on the kernel is not set again (OpenCL
    keeps it); a changed one, and every float (-0.0 equals 0.0, but its bits differ), is."""
    x = np.zeros(4, dtype=np.float32)
    out = np.empty(4, dtype=np.float32)
    kernel = device.program("basics/vector_add.cl", {"T": "float"}).kernel("vector_add")
    a, c = device.to_device(x), device.alloc(x.nbytes)
    for n in (4, 4, 2, 4):
        device.fill(c, np.float32(7))
        device.launch(kernel, 4, None, a, a, c, np.uint32(n))
        device.download(c, out)
        np.testing.assert_array_equal(out, [0] * n + [7] * (4 - n))
    from parskel.runtime import opencl

    if device.backend == "opencl":  # the kernel is not told again what it holds
        set_now: list[int] = []
        real = opencl._set_scalar
        monkeypatch.setattr(opencl, "_set_scalar", lambda h, i, v: (set_now.append(i), real(h, i, v)))
        device.launch(kernel, 4, None, a, a, c, np.uint32(3))
        device.launch(kernel, 4, None, a, a, c, np.uint32(3))
        device.launch(kernel, 4, None, a, a, c, np.uint32(2))
        device.finish()
        assert set_now == [3, 3]  # the count, index 3: set when it changed, not when it did not
    signs = ps.Map("float f(float x, float s) { return copysign(1.0f, s); }")
    v = ps.Vector(x, device=device)
    for s, want in ((0.0, 1), (-0.0, -1), (-0.0, -1), (0.0, 1)):
        np.testing.assert_array_equal(signs(v, np.float32(s)).numpy(), [want] * 4)


def test_a_register_bound_the_driver_cannot_take_leaves_the_program_as_built():
    """A program whose PTX cannot be had keeps its first build: the bound only speeds it up."""
    from parskel.runtime import opencl

    class Built:
        def get_info(self, what):
            return []  # no binary to bound

    handle = Built()
    assert opencl._bounded(None, handle, 80, "a test program") is handle
