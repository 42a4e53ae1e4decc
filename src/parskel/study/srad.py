"""srad: one step of speckle-reducing anisotropic diffusion (seed 002 §6.4).

The first kernel computes, for every pixel, the differences to its four neighbours (clamped at
the image's border) and the diffusion coefficient c; the second moves the image along the
divergence of c times the gradient. The study varies and times the first: its baseline handles
tile and image edges with branches, the padded variant removes them with a halo of border
copies around the image. The reference is the same step in float64 NumPy; c and the new image
must agree to 1e-4.
"""

from __future__ import annotations

import numpy as np

from ..algorithms.registry import Param, Variant
from ..bench.cases import Case, close
from ..runtime import Device, round_to_multiple
from .base import Study, add, local_memory, work_group

FAMILY = "study.srad"
LAMBDA = 0.5
_TOLERANCE = close(1e-4)


def q0sqr(image: np.ndarray) -> np.float32:
    """The speckle scale of the image: its variance over its squared mean, at least 1e-6 so
    that a uniform image (one pixel, say) takes a defined step."""
    values = image.astype(np.float64)
    mean = values.mean()
    return np.float32(max(values.var() / (mean * mean), 1e-6))


def reference(image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The image after one step, and c, in float64 NumPy."""
    if image.size == 0:
        return image.astype(np.float64), image.astype(np.float64)
    q0 = float(q0sqr(image))
    padded = np.pad(image.astype(np.float64), 1, mode="edge")
    jc = padded[1:-1, 1:-1]
    n, s = padded[:-2, 1:-1] - jc, padded[2:, 1:-1] - jc
    w, e = padded[1:-1, :-2] - jc, padded[1:-1, 2:] - jc
    g2 = (n * n + s * s + w * w + e * e) / (jc * jc)
    lap = (n + s + w + e) / jc
    qsqr = (0.5 * g2 - lap * lap / 16.0) / (1.0 + 0.25 * lap) ** 2
    c = np.clip(1.0 / (1.0 + (qsqr - q0) / (q0 * (1.0 + q0))), 0.0, 1.0)
    edge = np.pad(c, ((0, 1), (0, 1)), mode="edge")
    divergence = c * n + edge[1:, :-1] * s + c * w + edge[:-1, 1:] * e
    return jc + 0.25 * LAMBDA * divergence, c


def check(result: tuple[np.ndarray, np.ndarray], expected: tuple[np.ndarray, np.ndarray]) -> str | None:
    """None when the new image and c both match the reference to 1e-4."""
    for name, got, want in zip(("image", "c"), result, expected):
        wrong = _TOLERANCE(got, want)
        if wrong:
            return f"{name}: {wrong}"
    return None


def step(device: Device, image: np.ndarray, *, padded: bool = False, BS: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """One SRAD step of the float32 ``image`` on ``device``: the new image and c. The first
    kernel is the branchy one, or with ``padded`` the one reading a haloed image."""
    if image.ndim != 2 or image.dtype != np.float32:
        raise ValueError(f"srad takes a 2D float32 image, got {image.dtype} of shape {image.shape}")
    rows, cols = image.shape
    if image.size == 0:
        return image.copy(), image.copy()
    q0 = q0sqr(image)
    source = device.to_device(image)
    if padded:
        # whole tiles, and one more row and column of border copies on each side
        high, wide = round_to_multiple(rows, BS), round_to_multiple(cols, BS)
        halo = np.pad(image, ((1, high - rows + 1), (1, wide - cols + 1)), mode="edge")
        first = device.to_device(halo)
        path = "study/srad/padded.cl"
    else:
        high, wide, first, path = rows, cols, source, "study/srad/branches.cl"
    parts = [device.alloc(high * wide * 4) for _ in range(5)]  # d_n, d_s, d_w, d_e, c
    kernel = device.program(path, {"BS": BS}).kernel("srad_coefficients")
    grid = (round_to_multiple(wide, BS), round_to_multiple(high, BS))
    device.launch(kernel, grid, (BS, BS), first, *parts, np.uint32(high), np.uint32(wide), q0)
    update = device.program("study/srad/update.cl").kernel("srad_update")
    out = device.alloc(image.nbytes)
    device.launch(
        update,
        (round_to_multiple(cols, 16), round_to_multiple(rows, 16)),
        (16, 16),
        source,
        *parts,
        out,
        np.uint32(rows),
        np.uint32(cols),
        np.uint32(wide),
        np.float32(LAMBDA),
    )
    new, c = np.empty_like(image), np.empty_like(image)
    device.download(out, new)
    if padded:
        device.download_trimmed(parts[4], (high, wide), c)
    else:
        device.download(parts[4], c)
    return new, c


def make(n: int, rng: np.random.Generator) -> tuple[np.ndarray]:
    """An n x n image of speckle-like values in [1, e)."""
    return (np.exp(rng.random((n, n), dtype=np.float32)),)


def run_baseline(device: Device, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Seed 002 §6.4.1.2: 16 x 16 tiles, edges by branches."""
    return step(device, image)


def run_padding(device: Device, image: np.ndarray, *, BS: int = 16) -> tuple[np.ndarray, np.ndarray]:
    return step(device, image, padded=True, BS=BS)


add(
    Study(
        name="srad",
        application="srad",
        section="6.4",
        timed=("srad_coefficients",),
        case=Case(
            family=FAMILY,
            summary="one SRAD step of a random n x n float32 image; the coefficient kernel timed",
            metric="Mpixel/s (end to end)",
            scale=1e6,
            work=lambda n: float(n) * n,
            make=make,
            reference=lambda inputs: reference(inputs[0]),
            check=check,
            quick_sizes=(2000,),
            full_sizes=(4096,),
            size_label="image edge",
        ),
        footprint=lambda n: ((n + 34) ** 2 * 4, 8 * (n + 34) ** 2 * 4),
    ),
    [
        Variant(FAMILY, "baseline", "002 §6.4.1.2", "16 x 16 tiles; tile and image edges by branches", run_baseline),
        Variant(
            FAMILY,
            "padding",
            "002 §6.4.1.3 (1, 2)",
            "a halo of border copies instead of branches; BS x BS tiles (32: the geometry on top)",
            run_padding,
            params=(Param("BS", 16, (16, 32), "tile edge"),),
            requires=(
                work_group("work-groups of BS x BS work-items", lambda p: p["BS"] ** 2),
                local_memory("local memory for a (BS + 2)^2 float tile", lambda p: 4 * (p["BS"] + 2) ** 2),
            ),
        ),
    ],
)
