"""The parskel command line."""

from __future__ import annotations

import json
import subprocess
import sys

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


def test_module_entry_point_and_version():
    out = subprocess.run([sys.executable, "-m", "parskel", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"parskel {ps.__version__}"
    helptext = subprocess.run([sys.executable, "-m", "parskel", "--help"], capture_output=True, text=True, check=True)
    assert "examples:" in helptext.stdout
