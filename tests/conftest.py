"""Shared fixtures: every test that takes ``device`` runs once per available device.

``PARSKEL_TEST_DEVICES`` narrows the set (comma-separated ids or name fragments, e.g.
``cuda:0,pocl``); by default every device of every backend is used, and each backend that
cannot be used here (CUDA without a GPU or without CuPy) adds one skipped case per test that
says why.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

import parskel as ps


def _test_devices() -> list:
    wanted = os.environ.get("PARSKEL_TEST_DEVICES", "").strip()
    if not wanted:
        again = _same_cpu_again(ps.devices())
        params = [
            pytest.param(d, id=d.id, marks=pytest.mark.skip(reason=again[d.id]))
            if d.id in again
            else pytest.param(d, id=d.id)
            for d in ps.devices()
        ]
        for name, why in ps.runtime.unavailable():
            params.append(pytest.param(None, id=name, marks=pytest.mark.skip(reason=f"{name} unavailable: {why}")))
        for name, why in ps.runtime.unusable():
            ident = name.split(":", 2)
            params.append(
                pytest.param(
                    None, id=":".join(ident[:2]) + "-unusable", marks=pytest.mark.skip(reason=f"{name} unusable: {why}")
                )
            )
        return params
    chosen: list[ps.Device] = []
    for spec in wanted.split(","):
        dev = ps.runtime.find(spec)
        if dev not in chosen:
            chosen.append(dev)
    return [pytest.param(d, id=d.id) for d in chosen]


def _same_cpu_again(devices: list) -> dict[str, str]:
    """PoCL's CPU device is this host's CPU, whichever build of PoCL provides it. Where two are
    installed (a distribution's and the one that comes with PyOpenCL), the tests run on the
    first, the one parskel chooses by default, and skip the others, with the reason: the same
    kernels on the same cores would double the run. ``PARSKEL_TEST_DEVICES`` still tests any."""
    first = None
    again = {}
    for d in devices:
        if d.type != "cpu" or "Portable Computing Language" not in d.info.platform:
            continue
        if first is None:
            first = d
        else:
            again[d.id] = (
                f"{d.id} is this host's CPU again, through another PoCL build ({d.info.platform_version}); "
                f"the tests run on {first.id}, parskel's default, and PARSKEL_TEST_DEVICES={d.id} tests it"
            )
    return again


DEVICES = _test_devices()

#: most worker processes a run takes (pytest-xdist's ``-n auto``, set in pyproject.toml)
MOST_WORKERS = 4


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """One worker process a core, at most :data:`MOST_WORKERS`; none (the tests run in this
    process) on one core. Most of a first run builds kernels, one build a core at a time: on 2
    cores the suite took 7.0 minutes in two workers against 12.4 in one process, both with
    empty kernel caches. Each worker builds the programs its tests need, and all share one
    GPU: the cap keeps a machine of many cores from building the same programs in as many
    processes."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cores, MOST_WORKERS) if cores > 1 else 0


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> ps.Device:
    return request.param


@pytest.fixture(autouse=True)
def profiles_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Device profiles (``parskel probe``) are read and written in a folder of the test's own,
    never the user's cache."""
    folder = tmp_path_factory.mktemp("profiles")
    monkeypatch.setenv("PARSKEL_PROFILES", str(folder))
    return folder


@pytest.fixture(autouse=True)
def tuning_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Tuning data (``parskel tune``'s overlay and measurements) lives in a folder of the test's
    own, never the user's cache, so that what a user tuned cannot change what a test runs."""
    from parskel.tune import database

    folder = tmp_path_factory.mktemp("tuning")
    monkeypatch.setenv(database.ENV_VAR, str(folder))
    database.reload()
    yield folder
    database.reload()


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(20131)


def _noted_dispatches(monkeypatch: pytest.MonkeyPatch, note: Callable[[str, dict], Any]) -> list:
    """``note(family, context)`` of every ``registry.dispatch`` call made from now on, in order;
    each call goes on to the dispatch with all its arguments."""
    from parskel.algorithms import registry

    notes: list = []
    dispatch = registry.dispatch

    def noted(family, device, variant, params, call, context=None, *rest, **kwargs):
        notes.append(note(family, dict(context or {})))
        return dispatch(family, device, variant, params, call, context, *rest, **kwargs)

    monkeypatch.setattr(registry, "dispatch", noted)
    return notes


@pytest.fixture
def dispatched(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The context of every ``registry.dispatch`` call the test makes, in order (what the
    dispatch knows of each call: its size, its operands' element size)."""
    return _noted_dispatches(monkeypatch, lambda family, context: context)


@pytest.fixture
def dispatched_families(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The family of every ``registry.dispatch`` call the test makes, in order."""
    return _noted_dispatches(monkeypatch, lambda family, context: family)
