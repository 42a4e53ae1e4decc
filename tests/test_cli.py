"""The parskel command line."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

import parskel as ps
from parskel.cli import main


def test_devices_table_lists_pocl(capsys):
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "Portable Computing Language" in out
    assert "*" in out  # the default is marked


def test_devices_json(capsys):
    assert main(["devices", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {row["id"] for row in rows} == {d.id for d in ps.devices()}
    assert sum(row["default"] for row in rows) == 1


def test_info_shows_everything(capsys):
    assert main(["info", "pocl"]) == 0
    out = capsys.readouterr().out
    for field in ("compute units", "local memory", "max work-group", "vector widths", "fp64", "driver"):
        assert field in out


def test_info_json_round_trips(capsys):
    dev = ps.device()
    assert main(["info", dev.id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == dev.id


def test_unknown_device_is_a_clean_error(capsys):
    assert main(["info", "no-such-device-xyz"]) == 2
    err = capsys.readouterr().err
    assert "no device matches" in err and "Traceback" not in err


def test_every_command_takes_devices_as_a_comma_list(capsys):
    """``--device a,b`` names two devices wherever ``--device`` is taken (tune read it whole)."""
    from parskel.cli.common import chosen_devices

    dev = ps.device("cpu")
    assert chosen_devices([f"{dev.id},{dev.id}"]) == [dev]
    assert main(["tune", "--list", "--device", f"{dev.id},no-such-device-xyz"]) == 2
    err = capsys.readouterr().err
    assert "no device matches 'no-such-device-xyz'" in err and "Traceback" not in err


def test_module_entry_point_and_version():
    out = subprocess.run([sys.executable, "-m", "parskel", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"parskel {ps.__version__}"
    helptext = subprocess.run([sys.executable, "-m", "parskel", "--help"], capture_output=True, text=True, check=True)
    assert "examples:" in helptext.stdout


@pytest.mark.parametrize(
    "argv, says",
    [
        (["bench", "--sizes", "garbage"], "not a size"),
        (["bench", "--sizes=-5"], "at least 1"),
        (["bench", "--sizes", "64..8"], "bad size range"),
        (["bench", "--reps", "0"], "at least 1"),
        (["bench", "--warmup", "0"], "at least 1"),
        (["bench", "--budget", "soon"], "not a number"),
        (["report", "--run", "x"], "not a whole number"),
        (["bench", "--sizes", "2^20,2^50"], "at most 2^48"),
    ],
)
def test_bad_arguments_are_usage_errors(argv, says, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_a_misspelt_variant_is_refused_before_anything_runs(tmp_path, capsys):
    assert main(["bench", "sort", "--variants", "radx", "--out", str(tmp_path), "--no-report"]) == 2
    err = capsys.readouterr().err
    assert "radx" in err and "radix" in err
    assert not (tmp_path / "results.sqlite").exists()


def test_an_unwritable_results_folder_is_a_clean_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["bench", "sort", "--out", str(blocker / "results"), "--sizes", "16"]) == 2
    err = capsys.readouterr().err
    assert "cannot write results" in err and "Traceback" not in err


def test_a_size_beyond_the_host_s_memory_is_a_clean_error(monkeypatch, capsys, request):
    """Tuning at a size whose inputs the host cannot hold says so, without a traceback."""
    from parskel.bench.cases import CASES
    from parskel.tune import targets

    def make(n, rng):
        raise MemoryError(f"Unable to allocate {4 * n >> 40} TiB")

    monkeypatch.setitem(CASES, "sort", dataclasses.replace(CASES["sort"], make=make))
    targets.targets.cache_clear()  # the tuner's targets hold their case: made again with this one,
    request.addfinalizer(targets.targets.cache_clear)  # and again after it
    argv = ["tune", "sort", "--device", ps.device().id, "--sizes", "2^40", "--budget", "5"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the host ran out of memory (Unable to allocate 4 TiB)" in err and "Traceback" not in err


def test_a_closed_pipe_ends_quietly():
    shell = f"{sys.executable} -m parskel info | head -1"
    run = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True)
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr
    assert run.stdout.strip()


def test_a_bogus_parskel_device_marks_no_default(monkeypatch, capsys):
    monkeypatch.setenv("PARSKEL_DEVICE", "bogus-device-name")
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert "no default" in out and "bogus-device-name" in out
    assert not any(line.startswith("*  ") for line in out.splitlines())
