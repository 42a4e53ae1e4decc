"""Shared fixtures: every test that takes ``device`` runs once per available device.

``PARSKEL_TEST_DEVICES`` narrows the set (comma-separated ids or name fragments, e.g.
``nvidia,pocl``); by default every device of every backend is used.
"""

from __future__ import annotations

import os

import pytest

import parskel as ps


def _test_devices() -> list[ps.Device]:
    wanted = os.environ.get("PARSKEL_TEST_DEVICES", "").strip()
    if not wanted:
        return ps.devices()
    chosen: list[ps.Device] = []
    for spec in wanted.split(","):
        dev = ps.runtime.find(spec)
        if dev not in chosen:
            chosen.append(dev)
    return chosen


DEVICES = _test_devices()


@pytest.fixture(params=DEVICES, ids=lambda d: d.id)
def device(request: pytest.FixtureRequest) -> ps.Device:
    return request.param


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(20131)
