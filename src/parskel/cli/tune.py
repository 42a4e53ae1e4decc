"""``parskel tune`` and ``parskel explain``: search a family's variants and parameters on a
device, keep the best in the tuning database, and say what a call would use."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import TYPE_CHECKING

from .common import UsageError, chosen_devices, device_option, names, parse_sizes, positive_int, seconds

if TYPE_CHECKING:
    from ..runtime import Device
    from ..tune.targets import Target
    from ..tune.tuner import Outcome

TUNE_EPILOG = """examples:
  parskel tune scan                         search scan on the default device for 60 s (Bayesian)
  parskel tune sort --sizes 2^16,2^24 --budget 300 --device pocl
  parskel tune matmul --strategy anneal --variants xgemm --set VW=2,4 --set MIN_GROUPS=2
  parskel tune crc --strategy brute --budget 0          every point of the crc study's space
  parskel tune scan --write-defaults        also rewrite the defaults parskel ships (a developer's step)
  parskel tune --list                       what can be tuned, and the size of each space here

Each point is timed by the bench harness and its result checked; points that fail to build or
run are recorded with the reason and never chosen. Measurements are kept in the user's cache
($PARSKEL_TUNING, else the platform's cache folder: results.sqlite), so a second run measures
nothing already measured: the same run replays the first, a larger budget goes on from it. The
best variant order and parameters go to the user's overlay (tuning.json there), which
parskel.sort, scan, matmul and the study kernels' dispatch read; see `parskel explain`.
"""

EXPLAIN_EPILOG = """examples:
  parskel explain scan                      the choice at the size tune uses by default
  parskel explain sort --size 2^24 --device pocl
  parskel explain matmul --size 1000 --json
"""


def _target(name: str) -> Target:
    from ..tune import targets

    try:
        return targets.find(name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None


def _only(values: list[str] | None) -> dict[str, tuple[int, ...]]:
    """``--set NAME=V[,V...]`` options as narrowed parameter values."""
    only: dict[str, tuple[int, ...]] = {}
    for text in values or []:
        name, eq, rest = text.partition("=")
        if not eq or not name.strip():
            raise UsageError(f"--set takes NAME=VALUE[,VALUE...], not {text!r}")
        try:
            only[name.strip()] = tuple(int(v) for v in rest.split(",") if v.strip())
        except ValueError:
            raise UsageError(f"--set {text}: the values must be whole numbers") from None
        if not only[name.strip()]:
            raise UsageError(f"--set {text}: no values")
    return only


def _check_narrowing(target: Target, variants: list[str], only: dict[str, tuple[int, ...]]) -> None:
    known = {v.name: v for v in target.variants()}
    unknown = [v for v in variants if v not in known]
    if unknown:
        raise UsageError(f"{target.name} has no variant {', '.join(unknown)}; it has {', '.join(known)}")
    chosen = [known[v] for v in variants] if variants else list(known.values())
    for name, values in only.items():
        params = [p for v in chosen for p in v.params if p.name == name]
        if not params:
            raise UsageError(f"--set {name}: no chosen variant of {target.name} has a parameter {name}")
        allowed = sorted({c for p in params for c in (p.choices or (p.default,))})
        wrong = [x for x in values if x not in allowed]
        if wrong:
            raise UsageError(f"--set {name}: {wrong} not among its values {allowed}")


def cmd_tune(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..bench.store import Store
    from ..tune import database, defaults, strategies, tuner
    from ..tune.targets import OBJECTIVES

    if args.list:
        print(_listing(chosen_devices(args.device or [])[0]))
        return 0
    if args.target is None:
        raise UsageError("name a family or kernel to tune (parskel tune --list shows them)")
    target = _target(args.target)
    if args.objective is not None:
        if args.objective not in OBJECTIVES:
            raise UsageError(f"unknown objective {args.objective!r}; choose from {', '.join(OBJECTIVES)}")
        target = dataclasses.replace(target, objective=args.objective)
    if args.strategy not in strategies.STRATEGIES:
        raise UsageError(f"unknown strategy {args.strategy!r}; choose from {', '.join(strategies.STRATEGIES)}")
    variants = names(args.variants)
    only = _only(args.set)
    _check_narrowing(target, variants, only)
    settings = tuner.Settings(
        strategy=args.strategy,
        budget=args.budget or None,
        evaluations=args.evaluations,
        reps=args.reps,
        seed=args.seed,
        variants=frozenset(variants) if variants else None,
        only=only,
    )
    sizes = args.sizes or target.sizes
    console = Console(stderr=True, highlight=False)
    command = "parskel " + " ".join(args.argv if args.argv is not None else sys.argv[1:])
    outcomes: list[Outcome] = []
    began = time.perf_counter()
    for device in chosen_devices(args.device or []):

        def heard(outcome: Outcome, m: tuner.Measured) -> None:
            shown = f"{m.seconds * 1e3:.3f} ms" if m.seconds is not None else f"{m.result.status}: {m.result.message}"
            where = "cached" if m.cached else f"{m.result.cost or 0:.1f} s"
            console.print(
                f"[{len(outcome.history)}/{len(outcome.space)}] {target.name} n={database.shown_size(outcome.size)} "
                f"{m.config}: {shown} ({where})"
            )

        with Store(tuner.store_path()) as store:
            found = tuner.tune(target, device, sizes, settings, store, command, None if args.json else heard)
        outcomes += found
        database.store([o.entry(command) for o in found if o.best is not None])
    written = defaults.write_defaults(outcomes, command) if args.write_defaults else []
    if args.json:
        print(json.dumps([_as_dict(o) for o in outcomes], indent=1))
    else:
        for outcome in outcomes:
            print(_summary(outcome))
        print(f"tuning data: {database.overlay_path()} (measurements: {tuner.store_path()})")
        for path in written:
            print(f"wrote {path}")
        print(f"took {time.perf_counter() - began:.0f} s")
    return 0 if all(o.best is not None for o in outcomes) else 1


def _summary(outcome: Outcome) -> str:
    from ..tune import database

    size = database.shown_size(outcome.size)
    head = (
        f"{outcome.target.name} at n={size} on {outcome.device.id} ({outcome.device.name}): "
        f"{len(outcome.history)} of {len(outcome.space)} points evaluated, {outcome.new} measured now, "
        f"{len(outcome.space.refused)} refused before running; stopped: {outcome.stopped}"
    )
    lines = [head]
    for m in outcome.best_by_variant():
        lines.append(f"  {m.config.variant:<20} {(m.seconds or 0.0) * 1e3:10.3f} ms  {m.config.shown}")
    failed = outcome.failures()
    if failed:
        lines.append(f"  {len(failed)} points failed, e.g. {failed[0].config}: {failed[0].result.message}")
    for alias, twin in outcome.space.aliases.items():
        lines.append(f"  {alias}: the same kernel and parameters as {twin}, searched as {twin}")
    if outcome.best is None:
        lines.append("  no point ran: nothing written")
    return "\n".join(lines)


def _as_dict(outcome: Outcome) -> dict[str, object]:
    return {
        "target": outcome.target.name,
        "family": outcome.target.family,
        "device": outcome.device.id,
        "size": outcome.size,
        "strategy": outcome.strategy,
        "points": len(outcome.space),
        "refused": len(outcome.space.refused),
        "evaluations": len(outcome.history),
        "measured": outcome.new,
        "stopped": outcome.stopped,
        "spent": outcome.spent,
        "best": [
            {"variant": m.config.variant, "params": m.config.values, "seconds": m.seconds}
            for m in outcome.best_by_variant()
        ],
        "failed": [
            {"variant": m.config.variant, "params": m.config.values, "status": m.result.status}
            | {"reason": m.result.message}
            for m in outcome.failures()
        ],
    }


def _listing(device: Device) -> str:
    from ..tune import targets, tuner

    lines = [f"what `parskel tune` takes, with its space on {device.id} at the default size:"]
    seen = set()
    for target in targets.targets().values():
        if target.name in seen:
            continue
        seen.add(target.name)
        space = tuner.space_for(target, device, target.sizes[-1], tuner.Settings())
        lines.append(
            f"  {target.name:<15} {len(space):>6} points ({len(space.refused)} refused)  "
            f"n={target.sizes[-1]}  {target.summary}"
        )
    return "\n".join(lines)


def cmd_explain(args: argparse.Namespace) -> int:
    from ..tune.explain import explain

    target = _target(args.family)
    device = chosen_devices(args.device or [])[0]
    found = explain(target, device, args.size)
    print(json.dumps(found.as_dict(), indent=1) if args.json else found.text())
    return 0


def _size(text: str) -> int:
    sizes = parse_sizes(text)
    if len(sizes) != 1:
        raise argparse.ArgumentTypeError(f"one size, not {text!r}")
    return sizes[0]


def _budget(text: str) -> float:
    value = seconds(text)
    if 0 < value < 1:
        raise argparse.ArgumentTypeError(f"a budget below 1 s measures nothing: {value:g} (0: no limit)")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tune",
        help="search a family's variants and parameters on a device; keep the best for parskel's calls",
        epilog=TUNE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Search the variants of FAMILY (matmul, scan, sort, sort_pairs) or a study KERNEL "
        "(crc, lud_internal, ...) and their parameters on a device with a strategy, within a time budget; store "
        "every measurement, and "
        "the best order and parameters in the tuning database that parskel's calls read.",
    )
    p.add_argument(
        "target", nargs="?", metavar="FAMILY|KERNEL", help="matmul, scan, sort, sort_pairs or a study kernel"
    )
    device_option(p)
    p.add_argument(
        "--sizes",
        type=parse_sizes,
        metavar="SIZES",
        help="sizes to tune at, e.g. 2^16,2^24 (matmul: the matrix edge); default: the family's",
    )
    p.add_argument("--strategy", default="bayes", help="brute, random, anneal or bayes (default)")
    p.add_argument(
        "--budget",
        type=_budget,
        default=60.0,
        metavar="SECONDS",
        help="seconds of measurement for the run, shared by the sizes (default 60; 0: no limit)",
    )
    p.add_argument("--evaluations", type=positive_int, metavar="N", help="evaluate at most N points per size")
    p.add_argument("--variants", action="append", help="only these variants (comma list)")
    p.add_argument(
        "--set", action="append", metavar="NAME=V[,V...]", help="only these values of a parameter; repeatable"
    )
    p.add_argument("--reps", type=positive_int, default=3, help="measured repetitions per point (default 3)")
    p.add_argument(
        "--objective",
        help="the time minimized: e2e (the whole call, host arrays in and out), kernel (the device's "
        "kernels) or device (the kernels where the device has memory of its own, else the whole call); "
        "default: the target's (device for matmul, scan and sort, kernel for the study's kernels, e2e "
        "for the skeletons' work-groups). Small sizes, whose calls are mostly the host's work and the "
        "copies, are tuned with e2e",
    )
    p.add_argument("--seed", type=int, default=20133, help="the strategy's random seed")
    p.add_argument(
        "--write-defaults",
        action="store_true",
        help="also write parskel's shipped defaults (tune/defaults.json, algorithms/preferred.json)",
    )
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.add_argument("--list", action="store_true", help="list what can be tuned and exit")
    p.set_defaults(handler=cmd_tune, argv=None)

    e = sub.add_parser(
        "explain",
        help="which variant and parameters a call would use on a device, and where they came from",
        epilog=EXPLAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Say which variant of FAMILY a call with inputs of --size would run on the device, with "
        "which parameters, and whether they were tuned (on this device, for its vendor or type), come from "
        "preferred.json, are the variant's defaults or were fitted to the device.",
    )
    e.add_argument("family", metavar="FAMILY|KERNEL", help="matmul, scan, sort, sort_pairs or a study kernel")
    e.add_argument("--size", type=_size, help="the call's size, e.g. 2^24 (matmul: the matrix edge)")
    device_option(e)
    e.add_argument("--json", action="store_true", help="print the explanation as JSON")
    e.set_defaults(handler=cmd_explain, argv=None)
