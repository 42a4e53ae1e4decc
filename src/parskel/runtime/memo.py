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
