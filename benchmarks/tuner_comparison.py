"""parskel's search strategies beside Kernel Tuner's on the same measured search spaces.

For each target (matmul, scan, sort and three study kernels) this script

1. measures every point of the target's space on the device (``parskel tune --strategy brute``
   with no budget): the exhaustive best, and what a brute-force search costs;
2. replays parskel's strategies (random, anneal, bayes) from those measurements, each allowed
   10 % of the brute-force evaluations, over several seeds;
3. hands the same measurements to Kernel Tuner as its cache file and runs its strategies in its
   simulation mode (which serves every evaluation from the cache, as its authors compare
   strategies), with the same allowance of evaluations and the same time budget: the
   measurement time of the evaluations allowed;
4. writes ``OUT/comparison.json`` and ``OUT/comparison.md``: per target and strategy, the median
   over seeds of the best time found relative to the exhaustive best, how often it came within
   5 %, and after how many evaluations the best was reached.

Both tuners thus search identical spaces (variants and parameter choices, less the points the
device cannot run) with identical answers; what differs is only how they choose points.
Kernel Tuner is the peer: ``pip install kernel_tuner`` (it is not a dependency of parskel).

    python benchmarks/tuner_comparison.py OUT [--device D] [--targets matmul,scan,...] [--seeds 10]
                                              [--size scan=2^24 ...]

The measurements stay in ``OUT/results.sqlite``: a second run measures nothing again.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

# the narrowed matmul space: the seed's four variants in full, and xgemm's tiles up to 64 (its
# complete space is 16,308 points here, too many to measure every one of)
MATMUL_ONLY = {
    "MWG": (16, 32, 64),
    "NWG": (16, 32, 64),
    "KWG": (16, 32),
    "MDIMC": (8, 16),
    "NDIMC": (8, 16),
    "VW": (1, 2, 4),
    "MIN_GROUPS": (2,),
}
TARGETS = {
    "matmul": {"size": 256, "variants": None, "only": MATMUL_ONLY},
    "scan": {"size": 1 << 20, "variants": None, "only": {}},
    "sort": {"size": 1 << 20, "variants": None, "only": {}},
    "crc": {"size": 1 << 22, "variants": None, "only": {}},
    "lud_perimeter": {"size": 512, "variants": None, "only": {}},
    "lud_internal": {"size": 512, "variants": None, "only": {}},
}
PARSKEL_STRATEGIES = ("random", "anneal", "bayes")
PEER_STRATEGIES = ("random_sample", "simulated_annealing", "bayes_opt", "genetic_algorithm", "greedy_ils")
SHARE = 0.10  # the evaluations allowed, of a brute-force search's
FEWEST = 3  # but at least this many: a space of 18 points allows 3, not 1
WITHIN = 0.05  # how close to the exhaustive best counts as found


def exhaustive(target: Any, device: Any, size: int, settings: Any, store: Any) -> Any:
    from parskel.tune import tuner

    began = time.perf_counter()
    (outcome,) = tuner.tune(target, device, [size], settings, store, "tuner_comparison: exhaustive")
    print(
        f"{target.name}: {len(outcome.space)} points, {outcome.new} measured now in "
        f"{time.perf_counter() - began:.0f} s, {len(outcome.failures())} failed",
        file=sys.stderr,
    )
    return outcome


def run_parskel(target: Any, device: Any, size: int, base: Any, store: Any, strategy: str, seed: int, cap: int) -> dict:
    from dataclasses import replace

    from parskel.tune import tuner

    settings = replace(base, strategy=strategy, seed=seed, evaluations=cap, budget=None)
    (outcome,) = tuner.tune(target, device, [size], settings, store, f"tuner_comparison: {strategy}")
    assert outcome.new == 0, "the replay measured something: the exhaustive run is incomplete"
    times = [m.seconds for m in outcome.history]
    return _trace(times, [m.result.cost or 0.0 for m in outcome.history])


def _trace(times: list[float | None], costs: list[float]) -> dict:
    """The best time of a search, when it was reached (evaluations and measurement seconds)."""
    best, at, spent_at, spent = math.inf, 0, 0.0, 0.0
    for i, (t, c) in enumerate(zip(times, costs)):
        spent += c
        if t is not None and t < best:
            best, at, spent_at = t, i + 1, spent
    return {"best": best, "evaluations": len(times), "best_at": at, "seconds_to_best": spent_at, "seconds": spent}


def peer_space(outcome: Any) -> tuple[dict[str, list[int]], dict[tuple, Any], Any]:
    """Kernel Tuner's view of a space: one dict of parameter lists (the variant as an index,
    every parameter of every variant, a variant's unused ones pinned to their first value), the
    map from its configurations to ours, and the restriction that keeps exactly our points."""
    variants = [v.name for v in outcome.space.variants]
    values: dict[str, set[int]] = {}
    for config in outcome.space.points:
        for name, value in config.params:
            values.setdefault(name, set()).add(value)
    tune_params = {"variant": list(range(len(variants)))} | {k: sorted(v) for k, v in values.items()}
    ours: dict[tuple, Any] = {}
    for config in outcome.space.points:
        mine = config.values
        key = tuple(
            [variants.index(config.variant)]
            + [mine.get(name, tune_params[name][0]) for name in tune_params if name != "variant"]
        )
        ours[key] = config
    keys = list(tune_params)

    def restriction(p: dict) -> bool:
        return tuple(p[k] for k in keys) in ours

    return tune_params, ours, restriction


def peer_cache(outcome: Any, path: Path, tune_params: dict, ours: dict, name: str) -> None:
    """Our measurements as a Kernel Tuner cache file (times in ms, failures as its errors)."""
    measured = {m.config: m for m in outcome.history}
    cache = {}
    for key, config in ours.items():
        m = measured[config]
        entry: dict[str, Any] = dict(zip(tune_params, key))
        cost_ms = (m.result.cost or 0.0) * 1e3
        if m.seconds is None:
            entry["time"] = "CompilationFailedConfig" if "Build" in m.result.message else "RuntimeFailedConfig"
        else:
            entry["time"] = m.seconds * 1e3
            entry["times"] = [s * 1e3 for s in m.result.samples]
        entry.update(compile_time=(m.result.compile or 0.0) * 1e3, verification_time=0.0, benchmark_time=cost_ms)
        entry.update(strategy_time=0.0, framework_time=0.0, timestamp="")
        if m.seconds is None:
            entry["benchmark_time"] = cost_ms
        cache[",".join(str(v) for v in key)] = entry
    data = {
        "device_name": name,
        "kernel_name": name,
        "problem_size": [outcome.size],
        "tune_params_keys": list(tune_params),
        "tune_params": tune_params,
        "objective": "time",
        "cache": cache,
    }
    path.write_text(json.dumps(data))


def run_peer(
    outcome: Any,
    path: Path,
    tune_params: dict,
    ours: dict,
    restriction: Any,
    strategy: str,
    seed: int,
    cap: int,
    limit: float | None,
) -> dict:
    import numpy as np
    from kernel_tuner import tune_kernel

    np.random.seed(seed)  # Kernel Tuner's strategies draw from NumPy's global generator
    import random

    random.seed(seed)
    results, _ = tune_kernel(
        path.stem,
        "",
        outcome.size,
        [],
        tune_params,
        restrictions=restriction,
        strategy=strategy,
        strategy_options={"max_fevals": cap} | ({} if limit is None else {"time_limit": limit}),
        simulation_mode=True,
        cache=str(path),
        quiet=True,
        verbose=False,
    )
    measured = {m.config: m for m in outcome.history}
    times, costs, seen = [], [], set()
    for r in results:
        key = tuple(r[k] for k in tune_params)
        if key in seen or key not in ours:
            continue
        seen.add(key)
        m = measured[ours[key]]
        times.append(m.seconds)
        costs.append(m.result.cost or 0.0)
    return _trace(times, costs)


def summarize(runs: list[dict], optimum: float) -> dict:
    ratios = [r["best"] / optimum for r in runs]
    return {
        "median_ratio": statistics.median(ratios),
        "worst_ratio": max(ratios),
        "within": sum(q <= 1 + WITHIN for q in ratios) / len(ratios),
        "median_evaluations": statistics.median(r["evaluations"] for r in runs),
        "median_best_at": statistics.median(r["best_at"] for r in runs),
        "median_seconds": statistics.median(r["seconds"] for r in runs),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="folder for the measurements and the comparison")
    parser.add_argument("--device", default=None, help="device id or name fragment (default: parskel's default)")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma list of " + ", ".join(TARGETS))
    parser.add_argument("--seeds", type=int, default=10, help="searches per strategy (default 10)")
    parser.add_argument("--reps", type=int, default=3, help="measured repetitions per point (default 3)")
    parser.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="TARGET=N",
        help="another size for a target (2^k allowed), e.g. scan=2^24 where its kernels at the default size "
        "take microseconds and near-ties would be noise",
    )
    parser.add_argument(
        "--evaluations-only",
        action="store_true",
        help="limit Kernel Tuner by evaluations alone: its time limit also counts the seconds it takes to "
        "build its search space, which exceed the allowance where points take microseconds (a GPU)",
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    os.environ["PARSKEL_TUNING"] = str(out.resolve())  # the store and overlay of this comparison

    import parskel as ps
    from parskel.bench.store import Store
    from parskel.tune import targets, tuner

    sizes = {name: spec["size"] for name, spec in TARGETS.items()}
    for item in args.size:
        name, _, value = item.partition("=")
        if name not in TARGETS or not value:
            parser.error(f"--size takes TARGET=N with TARGET one of {', '.join(TARGETS)}, not {item!r}")
        base_, _, power = value.partition("^")
        sizes[name] = int(base_) ** int(power) if power else int(value)
    device = ps.device(args.device)
    report: dict[str, Any] = {"device": device.id, "name": device.name, "date": date.today().isoformat(), "targets": {}}
    with Store(tuner.store_path()) as store:
        for name in args.targets.split(","):
            spec = TARGETS[name]
            target = targets.find(name)
            base = tuner.Settings(
                strategy="brute", budget=None, reps=args.reps, only=spec["only"], variants=spec["variants"]
            )
            size = sizes[name]
            full = exhaustive(target, device, size, base, store)
            ran = [m for m in full.history if m.seconds is not None]
            optimum = min(m.seconds for m in ran)
            points = len(full.space)
            cap = max(FEWEST, math.floor(SHARE * points))
            allowance = sorted(m.result.cost or 0.0 for m in full.history)
            limit = statistics.mean(allowance) * cap  # the time budget: as long as cap average measurements
            entry: dict[str, Any] = {
                "size": size,
                "points": points,
                "failed": len(full.history) - len(ran),
                "best": optimum,
                "best_point": str(min(ran, key=lambda m: m.seconds).config),
                "brute_seconds": sum(allowance),
                "evaluations_allowed": cap,
                "seconds_allowed": None if args.evaluations_only else limit,
                "strategies": {},
            }
            for strategy in PARSKEL_STRATEGIES:
                runs = [run_parskel(target, device, size, base, store, strategy, s, cap) for s in range(args.seeds)]
                entry["strategies"][f"parskel {strategy}"] = summarize(runs, optimum)
            try:
                import kernel_tuner  # noqa: F401
            except ImportError:
                entry["peer"] = "Kernel Tuner is not installed (pip install kernel_tuner)"
            else:
                tune_params, ours, restriction = peer_space(full)
                path = out / f"kernel_tuner_{name}.json"
                peer_cache(full, path, tune_params, ours, path.stem)
                for strategy in PEER_STRATEGIES:
                    try:
                        runs = [
                            run_peer(
                                full,
                                path,
                                tune_params,
                                ours,
                                restriction,
                                strategy,
                                s,
                                cap,
                                None if args.evaluations_only else limit,
                            )
                            for s in range(args.seeds)
                        ]
                    except Exception as exc:  # a strategy that cannot work in so few evaluations
                        entry["strategies"][f"kernel_tuner {strategy}"] = {"error": f"{type(exc).__name__}: {exc}"}
                        continue
                    entry["strategies"][f"kernel_tuner {strategy}"] = summarize(runs, optimum)
            report["targets"][name] = entry
            (out / "comparison.json").write_text(json.dumps(report, indent=1))
    (out / "comparison.md").write_text(markdown(report))
    print(markdown(report))
    return 0


def markdown(report: dict) -> str:
    lines = [f"Device: {report['device']} ({report['name']}), {report['date']}.", ""]
    lines.append(
        "| target | points | exhaustive best | allowed | strategy "
        "| best / exhaustive (median, worst) | within 5 % | best at evaluation |"
    )
    lines.append("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    for name, t in report["targets"].items():
        for i, (strategy, s) in enumerate(t["strategies"].items()):
            if "error" in s:
                s = {"median_ratio": math.nan, "worst_ratio": math.nan, "within": math.nan, "median_best_at": math.nan}
            head = (
                [
                    f"{name} (n={t['size']})",
                    str(t["points"]),
                    f"{t['best'] * 1e3:.3f} ms ({t['best_point']})",
                    f"{t['evaluations_allowed']}",
                ]
                if i == 0
                else ["", "", "", ""]
            )
            lines.append(
                "| "
                + " | ".join(
                    head
                    + [
                        strategy,
                        f"{s['median_ratio']:.3f}, {s['worst_ratio']:.3f}",
                        f"{s['within']:.0%}",
                        f"{s['median_best_at']:g}",
                    ]
                )
                + " |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
