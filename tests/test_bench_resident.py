"""``parskel bench resident``: the primitives on device data, checked, against CuPy, PyTorch and CUB."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from parskel.bench import default_settings, resident
from parskel.bench.cases import CASES, GROUPS, stable_pairs
from parskel.bench.harness import Result, sweep
from parskel.cli import main

FAMILIES = ("resident.sort", "resident.sort_pairs", "resident.scan", "resident.reduce", "resident.map")


def test_the_group_sweeps_every_primitive_on_device_data_and_checks_it(device):
    notes: list[str] = []
    sizes = {f: (1, 1000, 4099) for f in GROUPS["resident"]}
    sizes["resident.matmul"] = (1, 130, 259)  # edges: whole tiles, a tile and a bit, two and a bit
    settings = default_settings(["resident"], sizes=sizes, reps=2, warmup=1, budget=0, peers=frozenset())
    results = sweep([device], settings, notes)
    measured = {*FAMILIES, "resident.matmul"} if device.type == "gpu" else set(FAMILIES)
    assert {r.family for r in results} == measured
    for r in results:
        assert r.status == "ok", (r.family, r.size, r.message)
        assert r.kind == "variant" and r.where == device.id and r.default
        assert (r.kernel is not None and r.kernel > 0) or r.size == 1
        assert r.upload == 0, "the inputs were copied to the device once, before the timed calls"
    if device.type != "gpu":
        assert any("resident.matmul" in n and "host matrices" in n for n in notes)


def test_xgemm_on_device_buffers_gives_the_product(device):
    """The OpenCL GPUs' matmul of the group, run here on any device: operands placed once,
    padded to whole tiles; each call launches the kernel; the result read back is NumPy's."""
    rng = np.random.default_rng(7)
    op = resident._xgemm_on_buffers(device)
    for m, k, n in ((1, 1, 1), (130, 77, 259)):
        a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
        placed = op.place((a, b))
        for _ in range(2):  # a second call on the same buffers gives the same product
            got = op.fetch(placed, op.run(placed))
            np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_a_wrong_device_result_is_reported_wrong(device, monkeypatch):
    """The results are copied back and checked: a sort that drops its last key fails."""
    from parskel.algorithms import sorts

    real = sorts.sort_words

    def lossy(dev, keys, values, out, out_values, n, **kw):
        real(dev, keys, values, out, out_values, n, **kw)
        dev.fill(out, np.uint32(0), 4, offset=4 * (n - 1))

    monkeypatch.setattr(sorts, "sort_words", lossy)
    if device.backend == "cuda":
        pytest.skip("the CUDA subject calls parskel.sort on CuPy arrays, not sort_words")
    settings = default_settings(["resident"], sizes={"resident.sort": (1000,)}, reps=1, warmup=1, peers=frozenset())
    settings = dataclasses.replace(settings, families=("resident.sort",))
    (result,) = sweep([device], settings, [])
    assert result.status == "wrong" and "wrong elements" in result.message


def test_the_pairs_check_holds_keys_values_and_their_order():
    keys = np.array([5, 2, 5, 1, 2], np.uint32)
    expected = (np.sort(keys), keys)
    order = np.argsort(keys, kind="stable").astype(np.uint32)
    assert stable_pairs((keys[order], order), expected) is None
    swapped = order.copy()
    swapped[[1, 2]] = swapped[[2, 1]]  # the two 2s out of input order
    assert "input order" in stable_pairs((keys[order], swapped), expected)
    stranger = order.copy()
    stranger[0] = 0  # the value of a 5 beside the key 1
    assert "do not belong" in stable_pairs((keys[order], stranger), expected)
    assert "keys" in stable_pairs((keys, order), expected)


def test_cub_s_figures_are_read_from_its_output_and_set_beside_parskel_s(monkeypatch):
    text = "\n".join(
        [
            "# NVIDIA H200, CUB 3.0.1",
            "copy                   2^24     0.041 ms   3238.8 GB/s",
            "sort keys uint32       2^24     0.468 ms     35.8 Gkeys/s",
            "exclusive scan int32   2^24     0.058 ms   2305.8 GB/s",
            "inclusive scan int32   2^24     0.056 ms   2389.9 GB/s",
        ]
    )
    figures = resident.parse_cub(text)
    assert figures == pytest.approx(
        {("resident.map", 24): 0.041e-3, ("resident.sort", 24): 0.468e-3, ("resident.scan", 24): 0.056e-3}
    )
    monkeypatch.setattr(resident, "_cub", figures)
    base = dict(kind="variant", status="ok", metric="Mkeys/s", params="")
    size = 1 << 24
    ours = Result("resident.sort", "parskel", where="cuda:0", size=size, e2e=0.52e-3, kernel=0.426e-3, **base)
    cupy = Result("resident.sort", "cupy_sort", where="cupy:H200", size=size, e2e=0.52e-3, **{**base, "kind": "peer"})
    (line,) = resident.conclusions([ours, cupy])
    assert "0.520 ms a call, kernels 0.426 ms" in line
    assert "CUB's C++ 0.468 ms: 0.90x the call, 1.10x the kernels" in line
    assert "1.00x cupy_sort" in line


def test_a_size_that_is_no_power_of_two_is_named_as_it_is(monkeypatch):
    monkeypatch.setattr(resident, "_cub", {("resident.sort", 1): 1.0})
    base = dict(kind="variant", status="ok", metric="Mkeys/s", params="", where="cuda:0", e2e=1e-3)
    (odd, even) = resident.conclusions(
        [Result("resident.sort", "parskel", size=3, **base), Result("resident.sort", "parskel", size=2, **base)]
    )
    assert odd.startswith("resident.sort 3 on cuda:0") and "CUB" not in odd
    assert even.startswith("resident.sort 2^1 on cuda:0") and "CUB's C++" in even


def test_without_nvcc_cub_is_skipped_with_a_note(monkeypatch):
    monkeypatch.setattr(resident.shutil, "which", lambda name: None)
    monkeypatch.setattr(resident, "_cub", {})
    notes: list[str] = []
    resident.cub_reference([1 << 20, 1000], notes)
    assert notes == ["CUB's C++ reference skipped: nvcc is not on the PATH"]
    assert resident._cub == {}


def test_the_cub_source_ships_with_the_package():
    from importlib import resources

    source = resources.files("parskel.bench").joinpath("cub_reference.cu").read_text()
    assert "DeviceRadixSort" in source and "int main" in source


def test_the_command_runs_the_group(tmp_path, capsys, device):
    code = main(
        ["bench", "resident", "--device", device.id, "--sizes", "2^12", "--sizes", "resident.matmul=64", "--reps", "1",
         "--peers", "none", "--out", str(tmp_path), "--no-report"]
    )  # fmt: skip
    assert code == 0
    shown = capsys.readouterr()
    assert "resident.sort 2^12 on" in shown.out + shown.err


def test_resident_cases_reuse_the_checks_of_their_host_families():
    assert CASES["resident.reduce"].check is CASES["reduce"].check
    assert CASES["resident.map"].reference is CASES["skeletons.map"].reference
    assert "resident" not in GROUPS["all"]


def _fake_nvcc(folder, body: str):
    """An ``nvcc`` that 'builds' its -o file as a shell script with ``body``."""
    nvcc = folder / "nvcc"
    nvcc.write_text(
        "#!/bin/sh\n"
        'while [ "$1" != "-o" ]; do shift; done\n'
        f"printf '%s\\n' '#!/bin/sh' {body!r} > \"$2\"\n"
        'chmod +x "$2"\n'
    )
    nvcc.chmod(0o755)
    return str(nvcc)


def test_cub_is_built_once_run_for_the_powers_of_two_and_read(tmp_path, monkeypatch):
    import platformdirs

    line = "sort keys uint32       2^$k     0.500 ms  1 Gkeys/s"
    output = f'echo "# Fake GPU, CUB 9"; for k in "$@"; do echo "{line}"; done'
    nvcc = _fake_nvcc(tmp_path, output)
    monkeypatch.setattr(resident.shutil, "which", lambda name: nvcc)
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda name: str(tmp_path / "cache"))
    monkeypatch.setattr(resident, "_cub", {})
    notes: list[str] = []
    resident.cub_reference([1 << 20, 1 << 24, 3000], notes)
    assert resident._cub == pytest.approx({("resident.sort", 20): 0.5e-3, ("resident.sort", 24): 0.5e-3})
    assert notes == ["CUB's C++ reference (Fake GPU, CUB 9, cub_reference.cu built with nvcc) at 2^20, 2^24"]
    assert len(list((tmp_path / "cache").glob("cub_reference-*"))) == 2  # the source and its binary
    resident.cub_reference([1 << 20], notes)  # measured already: nothing runs again
    assert len(notes) == 1


def test_a_failing_cub_build_is_a_note(tmp_path, monkeypatch):
    import platformdirs

    nvcc = tmp_path / "nvcc"
    nvcc.write_text("#!/bin/sh\necho 'nvcc fatal : Unsupported gpu architecture' >&2\nexit 1\n")
    nvcc.chmod(0o755)
    monkeypatch.setattr(resident.shutil, "which", lambda name: str(nvcc))
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda name: str(tmp_path / "cache"))
    monkeypatch.setattr(resident, "_cub", {})
    notes: list[str] = []
    resident.cub_reference([1 << 20], notes)
    assert notes == ["CUB's C++ reference failed: nvcc fatal : Unsupported gpu architecture"]
