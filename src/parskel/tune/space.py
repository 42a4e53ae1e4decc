"""Search spaces: every variant of a family with every combination of its parameters' choices,
less those a device or a call cannot run (the variants' requirements), known before anything
is built.

A :class:`Config` is one point: a variant and a value for each of its parameters. Parameters
without choices stay at their defaults. The space gives strategies what they need beyond the
list of points: neighbours (one parameter changed) and coordinates in the unit cube for a
surrogate model.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..algorithms.registry import Variant


@dataclass(frozen=True, order=True)
class Config:
    """A variant with every parameter fixed, its parameters in declaration order."""

    variant: str
    params: tuple[tuple[str, int], ...] = ()

    @property
    def values(self) -> dict[str, int]:
        return dict(self.params)

    @property
    def shown(self) -> str:
        """The parameters as the results store keeps them: ``WG=128, ITEMS=4``."""
        return ", ".join(f"{k}={v}" for k, v in self.params)

    def __str__(self) -> str:
        return f"{self.variant} {self.shown}".strip()


#: why a point cannot run at all (None when it can): the device's and the call's limits
Refusal = Callable[[Variant, Mapping[str, int]], str | None]


class Space:
    """The points of a search, valid ones in order (variant by variant, the registry's order),
    and the refused ones with the reason."""

    def __init__(
        self, variants: Sequence[Variant], points: Sequence[Config], refused: Sequence[tuple[Config, str]] = ()
    ) -> None:
        self.variants = list(variants)
        self.points = list(points)
        self.refused = list(refused)
        self._index = {c: i for i, c in enumerate(self.points)}
        self.aliases: dict[str, str] = {}

    @classmethod
    def build(
        cls, variants: Sequence[Variant], refuse: Refusal, only: Mapping[str, Sequence[int]] | None = None
    ) -> Space:
        """Every combination of each variant's parameter choices (``only`` narrows a parameter
        to the values it lists, in every variant that has it); ``refuse`` sorts out those that
        cannot run. A variant that runs the same function with the same parameters as an
        earlier one (``xgemm_small`` and ``xgemm`` differ in defaults only) adds no points:
        :attr:`aliases` names the variant it shares them with."""
        points: list[Config] = []
        refused: list[tuple[Config, str]] = []
        kept: list[Variant] = []
        aliases: dict[str, str] = {}
        only = only or {}
        for variant in variants:
            twin = next((v for v in kept if v.run is variant.run and _axes(v, only) == _axes(variant, only)), None)
            if twin is not None:
                aliases[variant.name] = twin.name
                continue
            kept.append(variant)
            axes = _axes(variant, only)
            for combination in itertools.product(*axes.values()):
                config = Config(variant.name, tuple(zip(axes, combination)))
                why = refuse(variant, config.values)
                if why:
                    refused.append((config, why))
                else:
                    points.append(config)
        space = cls(kept, points, refused)
        space.aliases = aliases
        return space

    def __len__(self) -> int:
        return len(self.points)

    def __contains__(self, config: object) -> bool:
        return config in self._index

    def index(self, config: Config) -> int:
        return self._index[config]

    def _axes(self, variant: str) -> dict[str, tuple[int, ...]]:
        return {name: tuple(sorted(values)) for name, values in _axes(self._variant(variant), {}).items()}

    def _variant(self, name: str) -> Variant:
        return next(v for v in self.variants if v.name == name)

    def neighbours(self, config: Config) -> list[Config]:
        """The valid points that differ in one parameter (any other of its choices), or in
        the variant (another variant, with the values of the parameters it shares and its
        defaults for the others)."""
        axes = self._axes(config.variant)
        near: list[Config] = []
        for i, (name, value) in enumerate(config.params):
            for other in axes[name]:
                if other != value:
                    params = list(config.params)
                    params[i] = (name, other)
                    near.append(Config(config.variant, tuple(params)))
        values = config.values
        for variant in self.variants:
            if variant.name != config.variant:
                shared = tuple((p.name, values.get(p.name, p.default)) for p in variant.params)
                near.append(Config(variant.name, shared))
        return [c for c in near if c in self]

    def coordinates(self) -> np.ndarray:
        """Each point as a row of numbers in [0, 1]: which variant (one column each, so that
        points of different variants lie apart) and each parameter's rank among its choices
        (a column per variant and parameter)."""
        columns: dict[tuple[str, str], int] = {}
        for variant in self.variants:
            columns[(variant.name, "")] = len(columns)
            for param in variant.params:
                if param.choices and len(param.choices) > 1:
                    columns[(variant.name, param.name)] = len(columns)
        rows = np.zeros((len(self.points), len(columns)))
        axes = {v.name: self._axes(v.name) for v in self.variants}
        for r, config in enumerate(self.points):
            rows[r, columns[(config.variant, "")]] = 1.0
            for name, value in config.params:
                column = columns.get((config.variant, name))
                if column is not None:
                    choices = axes[config.variant][name]
                    rows[r, column] = choices.index(value) / (len(choices) - 1)
        return rows


def _axes(variant: Variant, only: Mapping[str, Sequence[int]]) -> dict[str, tuple[int, ...]]:
    """Each parameter's values in a search: its choices (or its default), narrowed by ``only``."""
    axes = {}
    for p in variant.params:
        values = p.choices if p.choices else (p.default,)
        if p.name in only:
            values = tuple(v for v in values if v in only[p.name])
        axes[p.name] = tuple(values)
    return axes
