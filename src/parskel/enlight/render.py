"""Shading a cast frame afterwards (seed 001 part 2, section 4.12): per-pixel normals from the
triangle hit, Lambert's law with one light, written as PNG or an animated GIF (Pillow)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .casters import Frame
from .scenes import Camera

#: colours (RGB, 0-1) of the stock's surface, of surfaces cut by subtraction volumes, and of
#: the background
STOCK = np.array([0.72, 0.76, 0.82])
CUT = np.array([0.93, 0.62, 0.30])
BACKGROUND = np.array([0.97, 0.97, 0.98])
AMBIENT = 0.3


def shade(frame: Frame, camera: Camera) -> np.ndarray:
    """The frame as an RGB image (height, width, 3) of uint8.

    The light sits above and to the right of the eye; a surface is lit on the side that faces
    the eye, whichever way its triangle is wound.
    """
    h, w = frame.triangle.shape
    if frame.kind == "gradient":
        rgb = np.stack([frame.u, frame.v, np.full((h, w), 0.25)], axis=2)
        return (np.clip(rgb, 0, 1) * 255 + 0.5).astype(np.uint8)
    _, dirs = camera.rays()
    _, forward, right, up = camera.basis()
    light = -forward + 0.6 * up / np.linalg.norm(up) + 0.4 * right / np.linalg.norm(right)
    light /= np.linalg.norm(light)
    rgb = np.broadcast_to(BACKGROUND, (h, w, 3)).copy()
    hit = frame.triangle >= 0
    tri = frame.triangles[frame.triangle[hit]]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-300)
    facing = np.einsum("ij,ij->i", normal, dirs[hit])
    normal[facing > 0] *= -1
    lambert = np.clip(normal @ light, 0.0, 1.0)
    colour = np.broadcast_to(STOCK, (len(tri), 3)).copy()
    if frame.volume is not None:
        colour[frame.volume[frame.triangle[hit]] > 0] = CUT
    rgb[hit] = colour * (AMBIENT + (1 - AMBIENT) * lambert)[:, None]
    return (np.clip(rgb, 0, 1) * 255 + 0.5).astype(np.uint8)


def save_png(path: str | Path, image: np.ndarray) -> None:
    """Write an RGB image (height, width, 3) of uint8 as PNG."""
    from PIL import Image

    Image.fromarray(image, "RGB").save(path, optimize=True)


def save_gif(path: str | Path, images: Sequence[np.ndarray], *, seconds_per_frame: float = 0.08) -> None:
    """Write RGB images as a looping animated GIF."""
    from PIL import Image

    frames = [Image.fromarray(im, "RGB").quantize(colors=255, dither=Image.Dither.NONE) for im in images]
    frames[0].save(
        path, save_all=True, append_images=frames[1:], duration=int(seconds_per_frame * 1000), loop=0, optimize=True
    )
