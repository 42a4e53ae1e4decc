"""Launch geometry: rounding sizes and checking them against a device (seed 000, Appendix A)."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import LaunchError

Size = int | Sequence[int]


def round_to_multiple(x: int, m: int) -> int:
    """The smallest multiple of ``m`` that is >= ``x`` (``x`` >= 0, ``m`` >= 1)."""
    if m < 1:
        raise ValueError(f"round_to_multiple: m must be >= 1, got {m}")
    if x < 0:
        raise ValueError(f"round_to_multiple: x must be >= 0, got {x}")
    return -(-x // m) * m


def round_to_power_of_two(x: int) -> int:
    """The smallest power of two that is >= ``x``; 1 for ``x`` <= 1."""
    if x <= 1:
        return 1
    return 1 << (int(x) - 1).bit_length()


def round_down_to_power_of_two(x: int) -> int:
    """The largest power of two that is <= ``x`` (``x`` >= 1).

    >>> round_down_to_power_of_two(300), round_down_to_power_of_two(256)
    (256, 256)
    """
    if x < 1:
        raise ValueError(f"round_down_to_power_of_two: x must be >= 1, got {x}")
    return 1 << (int(x).bit_length() - 1)


def as_tuple(size: Size) -> tuple[int, ...]:
    """A launch size as a tuple of 1 to 3 non-negative ints."""
    dims = (int(size),) if isinstance(size, int) else tuple(int(s) for s in size)
    if not 1 <= len(dims) <= 3:
        raise LaunchError(f"a launch size has 1 to 3 dimensions, got {len(dims)}: {dims}")
    if any(d < 0 for d in dims):
        raise LaunchError(f"launch sizes must be >= 0, got {dims}")
    return dims


Geometry = tuple[tuple[int, ...], tuple[int, ...] | None]  # checked global and local sizes


def check_launch(
    global_size: Size,
    local_size: Size | None,
    *,
    max_work_group_size: int,
    max_work_item_sizes: Sequence[int],
    kernel_name: str,
) -> Geometry:
    """Validate a launch before it is enqueued; raise :class:`LaunchError` naming the limit.

    ``max_work_group_size`` is the smaller of the device's and the kernel's limit.
    """
    gsize = as_tuple(global_size)
    if local_size is None:
        return gsize, None
    lsize = as_tuple(local_size)
    if len(lsize) != len(gsize):
        raise LaunchError(f"kernel {kernel_name}: local size {lsize} and global size {gsize} have different dimensions")
    if any(d == 0 for d in lsize):
        raise LaunchError(f"kernel {kernel_name}: local size {lsize} has a zero dimension")
    for dim, (loc, limit) in enumerate(zip(lsize, max_work_item_sizes)):
        if loc > limit:
            raise LaunchError(
                f"kernel {kernel_name}: local size {lsize} exceeds the device's limit "
                f"of {limit} work-items in dimension {dim}"
            )
    items = 1
    for loc in lsize:
        items *= loc
    if items > max_work_group_size:
        raise LaunchError(
            f"kernel {kernel_name}: a work-group of {items} work-items {lsize} exceeds the "
            f"limit of {max_work_group_size} for this kernel on this device"
        )
    for g, loc in zip(gsize, lsize):
        if g % loc:
            raise LaunchError(
                f"kernel {kernel_name}: global size {gsize} is not a multiple of local size "
                f"{lsize}; round it up with round_to_multiple and guard the kernel"
            )
    return gsize, lsize
