"""Results remembered per key in a bounded dictionary: what a call in a loop computes once
(launch sizes, a skeleton's launch arguments per shape)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")


def remembered(cache: dict[Hashable, T], key: Hashable, make: Callable[[], T], most: int = 512) -> T:
    """``cache[key]``, made by ``make()`` the first time; a key that cannot be hashed (launch
    sizes given as lists) is made every time. The cache is emptied when it holds ``most``.

    >>> cache: dict = {}
    >>> remembered(cache, (4, 2), lambda: 8), remembered(cache, (4, 2), lambda: 0)
    (8, 8)
    >>> remembered(cache, ([4], 2), lambda: 9), len(cache)
    (9, 1)
    >>> small: dict = {}
    >>> [remembered(small, k, lambda: k * k, most=2) for k in range(3)], small
    ([0, 1, 4], {2: 4})
    """
    try:
        return cache[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable key
        return make()
    found = make()
    if len(cache) >= most:
        cache.clear()
    cache[key] = found
    return found


# the choices calls make among variants (registry, preferences, tuning database): a number
# that changes whenever what they are made from changes, so that a remembered choice can tell
# it is stale with one comparison
_CHOICES = [0]


def choices() -> int:
    """The number of the current state of the variants' registry, preferences and tuning
    database; :func:`choices_changed` moves it on.

    >>> before = choices(); choices_changed(); choices() == before
    False
    """
    return _CHOICES[0]


def choices_changed() -> None:
    """Note that a variant was registered or the preferences or tuning database changed: every
    choice remembered before is stale (see :mod:`parskel.algorithms.recall`)."""
    _CHOICES[0] += 1
