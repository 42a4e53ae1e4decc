"""Bayesian optimization over a discrete space: a Gaussian process on the points' coordinates
(:meth:`parskel.tune.space.Space.coordinates`) models the logarithm of the time, and the next
point measured is the unseen one of largest expected improvement over the best so far.

The model is small on purpose: a Matérn 5/2 kernel whose length scale is chosen among a few by
the marginal likelihood, on standardized log times; a failed point counts as twice as slow as
the slowest measured, so the model learns to stay away from where points fail. The spaces are
at most some tens of thousands of points, so every unseen point is scored at each step.
"""

from __future__ import annotations

import math

import numpy as np

from .space import Config, Space
from .strategies import Evaluate

LENGTH_SCALES = (0.15, 0.3, 0.6, 1.2)
NOISE = 1e-2  # of the standardized variance: repeated timings differ by a few per cent


def initial_count(points: int) -> int:
    """How many random points the model starts from: 1 % of the space, between 3 and 10.

    >>> initial_count(20), initial_count(185), initial_count(32645)
    (3, 3, 10)
    """
    return max(3, min(10, math.ceil(0.01 * points)))


def search(space: Space, evaluate: Evaluate, rng: np.random.Generator, start: Config) -> None:
    """Measure ``start`` and a few random points, then always the point of largest expected
    improvement, until every point is seen (or ``evaluate`` raises)."""
    x = space.coordinates()
    count = len(space)
    seen: list[int] = []
    values: list[float | None] = []

    def measure(i: int) -> None:
        value = evaluate(space.points[i])
        seen.append(i)
        values.append(math.log(value) if value is not None and value > 0 else None)

    measure(space.index(start))
    for i in rng.permutation(count):
        if len(seen) >= min(count, initial_count(count) + 1):
            break
        if int(i) not in seen:
            measure(int(i))
    while len(seen) < count:
        unseen = np.setdiff1d(np.arange(count), np.array(seen))
        measured = [v for v in values if v is not None]
        if not measured:  # nothing ran yet: no model, keep sampling
            measure(int(rng.choice(unseen)))
            continue
        worst = max(measured) + math.log(2.0)
        y = np.array([worst if v is None else v for v in values])
        improvement = expected_improvement(x[seen], y, x[unseen])
        top = np.flatnonzero(improvement >= improvement.max() * (1 - 1e-9))
        measure(int(unseen[int(rng.choice(top))]))


def _matern(a: np.ndarray, b: np.ndarray, scale: float) -> np.ndarray:
    squared = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    d = np.sqrt(np.maximum(squared, 0.0)) * (math.sqrt(5.0) / scale)
    return (1.0 + d + d * d / 3.0) * np.exp(-d)


def expected_improvement(x: np.ndarray, y: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """The expected improvement (a decrease of ``y``) at each candidate row, under a Gaussian
    process fitted to the observations ``y`` at rows ``x``.

    >>> x = np.array([[0.0], [1.0]]); y = np.array([1.0, 0.0])
    >>> ei = expected_improvement(x, y, np.array([[0.1], [0.9]]))
    >>> bool(ei[1] > ei[0])
    True
    """
    mean, spread = y.mean(), y.std() or 1.0
    z = (y - mean) / spread
    best_fit: tuple[float, np.ndarray, float] | None = None
    for scale in LENGTH_SCALES:
        k = _matern(x, x, scale) + NOISE * np.eye(len(x))
        try:
            factor = np.linalg.cholesky(k)
        except np.linalg.LinAlgError:
            continue
        alpha = np.linalg.solve(factor.T, np.linalg.solve(factor, z))
        evidence = -0.5 * float(z @ alpha) - float(np.log(np.diag(factor)).sum())
        if best_fit is None or evidence > best_fit[0]:
            best_fit = (evidence, factor, scale)
    if best_fit is None:  # cannot happen with noise on the diagonal; score by distance alone
        return np.ones(len(candidates))
    _, factor, scale = best_fit
    alpha = np.linalg.solve(factor.T, np.linalg.solve(factor, z))
    cross = _matern(candidates, x, scale)
    mu = cross @ alpha
    v = np.linalg.solve(factor, cross.T)
    sigma = np.sqrt(np.maximum(1.0 + NOISE - (v * v).sum(0), 1e-12))
    gain = z.min() - mu
    u = gain / sigma
    cdf = 0.5 * (1.0 + _erf(u / math.sqrt(2.0)))
    pdf = np.exp(-0.5 * u * u) / math.sqrt(2.0 * math.pi)
    return gain * cdf + sigma * pdf


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[float])(x)
