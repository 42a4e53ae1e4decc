"""Search strategies: which point of a space to measure next.

A strategy calls ``evaluate(config)`` for the points it chooses, one at a time; it gets the
point's time in seconds (lower is better) or None when the point failed (did not build, run or
give the right result). It goes on until it has seen every point; the caller ends it sooner by
raising :class:`Spent` from ``evaluate`` when the budget is used up. Every strategy measures
``start`` first (what parskel would run without tuning) and never asks for a point twice.
Randomness comes from ``rng`` only, so a search with the same seed and the same answers asks
for the same points (a resumed search replays its measurements from the cache).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .space import Config, Space

Evaluate = Callable[[Config], float | None]


class Spent(Exception):
    """The search's budget (seconds or evaluations) is used up."""


def brute(space: Space, evaluate: Evaluate, rng: np.random.Generator, start: Config) -> None:
    """Every point, ``start`` first, then in the space's order."""
    evaluate(start)
    for config in space.points:
        if config != start:
            evaluate(config)


def random_search(space: Space, evaluate: Evaluate, rng: np.random.Generator, start: Config) -> None:
    """``start``, then the other points in a random order."""
    evaluate(start)
    for i in rng.permutation(len(space)):
        config = space.points[int(i)]
        if config != start:
            evaluate(config)


def anneal(
    space: Space,
    evaluate: Evaluate,
    rng: np.random.Generator,
    start: Config,
    temperature: float = 0.5,
    cooling: float = 0.9,
    jump: float = 0.05,
) -> None:
    """Simulated annealing over neighbours (one parameter changed, or another variant).

    A neighbour slower by a factor ``r`` replaces the current point with probability
    ``exp(-ln(r) / T)``; ``T`` starts at ``temperature`` and shrinks by ``cooling`` each step.
    With probability ``jump``, and whenever the current point has no unseen neighbour left, the
    walk goes on from the best point's unseen neighbours, or from a random unseen point.
    """
    seen: dict[Config, float] = {}

    def cost(config: Config) -> float:
        if config not in seen:
            value = evaluate(config)
            seen[config] = math.log(value) if value is not None and value > 0 else math.inf
        return seen[config]

    current, here = start, cost(start)
    t = temperature
    while len(seen) < len(space):
        fresh = [c for c in space.neighbours(current) if c not in seen]
        if not fresh or rng.random() < jump:
            best = min(seen, key=seen.__getitem__)
            fresh = [c for c in space.neighbours(best) if c not in seen]
            if not fresh:
                unseen = [c for c in space.points if c not in seen]
                fresh = [unseen[int(rng.integers(len(unseen)))]]
        candidate = fresh[int(rng.integers(len(fresh)))]
        value = cost(candidate)
        if value <= here or (math.isfinite(value) and rng.random() < math.exp(-(value - here) / max(t, 1e-3))):
            current, here = candidate, value
        t *= cooling


def bayes(space: Space, evaluate: Evaluate, rng: np.random.Generator, start: Config) -> None:
    """Bayesian optimization: see :func:`parskel.tune.bayes.search`."""
    from .bayes import search

    search(space, evaluate, rng, start)


STRATEGIES: dict[str, Callable[[Space, Evaluate, np.random.Generator, Config], None]] = {
    "brute": brute,
    "random": random_search,
    "anneal": anneal,
    "bayes": bayes,
}
