"""``parskel scene`` (generate a scene) and ``parskel render`` (cast it): Enlight, the ray
caster for boolean subtraction of meshes (seed 001, part 2)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ..enlight.scenes import Camera, Scene
from ..runtime import Device
from .common import UsageError, positive_int, writable_folder

SCENE_EPILOG = """examples:
  parskel scene menger --level 3                 a Menger sponge of level 3 in ./menger-3/
  parskel scene cylinder-head --out head         a block minus 21 bores and pockets
  parskel scene impeller --volumes 48 --triangles 12500000
  parskel scene random-boxes --volumes 100000    a cube minus 100,000 random boxes
then: parskel render menger-3/scene.json --out out
"""

RENDER_EPILOG = """examples:
  parskel render menger-3/scene.json --out out           out/frame.png and out/buffers.npz
  parskel render scene.json --out out --size 640x480 --caster single_boolean_cell
  parskel render scene.json --out out --orbit 36         out/orbit.gif, 36 frames around
  parskel render scene.json --out out --bench --size 1024x768 --device cuda:0
  parskel render scene.json --out out --budget-mb 64     out of core: the grid cast in parts

casters: test_gradient, test_camera, single_ray, single_boolean, single_boolean_cell,
single_primary_boolean_cell (the default), packet
"""


def _size(text: str) -> tuple[int, int]:
    w, x, h = text.lower().partition("x")
    try:
        width, height = int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an image size: {text!r} (write WIDTHxHEIGHT, e.g. 1024x768)") from None
    if not x or width < 1 or height < 1:
        raise argparse.ArgumentTypeError(f"not an image size: {text!r} (write WIDTHxHEIGHT, e.g. 1024x768)")
    return width, height


def _cells(text: str) -> tuple[int, int, int]:
    try:
        parts = tuple(int(p) for p in text.replace("x", ",").split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a grid size: {text!r} (write NX,NY,NZ)") from None
    if len(parts) != 3 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"not a grid size: {text!r} (write NX,NY,NZ, each at least 1)")
    return parts[0], parts[1], parts[2]


def cmd_scene(args: argparse.Namespace) -> int:
    from ..enlight.scenes import GENERATORS

    kind = args.kind
    options = {k: getattr(args, k) for k in ("level", "volumes", "triangles", "seed") if getattr(args, k, None)}
    default = {"menger": f"menger-{args.__dict__.get('level')}"}.get(kind, kind)
    out = writable_folder(args.out or default)
    start = time.perf_counter()
    written = GENERATORS[kind](out, **options)
    seconds = time.perf_counter() - start
    print(
        f"{written.path}: {written.volumes:,} volumes (the stock and {written.volumes - 1:,} to subtract), "
        f"{written.triangles:,} triangles, written in {seconds:.2f} s"
    )
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    import numpy as np

    from ..enlight.casters import Casting, caster
    from ..enlight.grid import Grid
    from ..enlight.render import save_gif, save_png, shade
    from ..enlight.scenes import load_scene
    from ..runtime.selection import device as select_device

    chosen = caster(args.caster)
    out = writable_folder(args.out)
    scene = load_scene(args.scene)
    camera = scene.camera if args.size is None else scene.camera.resized(*args.size)
    dev = select_device(args.device)
    if args.budget_mb is not None and args.budget_mb <= 0:
        raise UsageError(f"--budget-mb must be positive, not {args.budget_mb:g}")
    budget = None if args.budget_mb is None else int(args.budget_mb * 2**20)
    if args.bench:
        return _bench(args, scene, camera, dev, budget, out)
    grid = Grid(dev, scene, cells=args.cells, precision=args.precision) if chosen.uses_grid else None
    casting = Casting(grid, chosen.name, device=dev, precision=args.precision, budget=budget)
    frame = casting.cast(camera)
    save_png(out / "frame.png", shade(frame, camera))
    np.savez_compressed(out / "buffers.npz", depth=frame.depth, triangle=frame.triangle, u=frame.u, v=frame.v)
    hits = int((frame.triangle >= 0).sum())
    print(
        f"{out / 'frame.png'}: {camera.width} x {camera.height}, {hits:,} pixels hit, caster {chosen.name} on {dev.id}"
    )
    if args.orbit:
        images = []
        for k in range(args.orbit):
            view = camera.orbited(360.0 * k / args.orbit)
            images.append(shade(casting.cast(view), view))
        save_gif(out / "orbit.gif", images)
        print(f"{out / 'orbit.gif'}: {args.orbit} frames")
    return 0


def _bench(args: argparse.Namespace, scene: Scene, camera: Camera, dev: Device, budget: int | None, out: Path) -> int:
    """Time the scene; the device's figures are printed and saved before the peers run, so a
    peer that is stopped for taking too long costs only its own line."""
    from ..bench.enlight import measure, time_reference
    from ..enlight.casters import Casting
    from ..enlight.render import save_png, shade

    f, grid = measure(
        scene,
        dev,
        camera,
        name=args.caster,
        precision=args.precision,
        frames=args.frames,
        cells=args.cells,
        budget=budget,
    )
    frame = Casting(grid, args.caster, device=dev, precision=args.precision, budget=budget).cast(camera)
    save_png(out / "frame.png", shade(frame, camera))
    update = "-" if f.update_seconds is None else f"{f.update_seconds * 1e3:.1f} ms"
    lines = [
        f"scene    {f.scene}: {f.volumes:,} volumes, {f.triangles:,} triangles",
        f"device   {f.device}: {f.device_name}",
        f"grid     {f.cells[0]} x {f.cells[1]} x {f.cells[2]} cells, {f.surface_cells:,} surface cells, "
        f"{f.cell_triangles:,} cell triangles" + (f", cast in {f.parts} parts" if f.parts > 1 else ""),
        f"build    {f.build_seconds:.3f} s; update after adding one volume {update}",
        f"caster   {f.caster}, {f.precision} precision, {f.width} x {f.height}",
        f"frames   {f.frames} after a warm-up: median {f.frame_seconds * 1e3:.2f} ms a frame = {f.fps:.1f} FPS "
        f"(kernels {f.kernel_seconds * 1e3:.2f} ms)",
    ]
    print("\n".join(lines), flush=True)
    record = out / "bench.json"
    record.write_text(json.dumps(f.as_dict(), indent=2) + "\n", encoding="utf-8")
    peers = []
    if args.reference:
        peers.append(("cpu_reference", lambda: time_reference(scene, camera, min(3, args.frames))))
    if args.embree:
        from ..bench.peers_embree import time_embree

        peers.append(("embree", lambda: time_embree(scene, camera, min(3, args.frames))))
    for peer, timed in peers:
        seconds = f.peers[peer] = timed()
        print(
            f"peer     {peer}: {seconds * 1e3:.1f} ms a frame = {1 / seconds:.2f} FPS; "
            f"parskel {seconds / f.frame_seconds:.1f}x faster",
            flush=True,
        )
        record.write_text(json.dumps(f.as_dict(), indent=2) + "\n", encoding="utf-8")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "scene",
        help="generate an Enlight scene: STL files and a scene file",
        epilog=SCENE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write the meshes (STL) and scene.json of a generated scene: a stock volume minus "
        "subtraction volumes, as in seed 001 part 2.",
    )
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    menger = kinds.add_parser("menger", help="a Menger sponge: a cube minus square tunnels")
    menger.add_argument("--level", type=positive_int, default=3, help="the sponge's level, 1-7 (default 3)")
    head = kinds.add_parser("cylinder-head", help="a block minus 21 bores, chambers and pockets")
    impeller = kinds.add_parser("impeller", help="a disc minus curved channels: the blades are left")
    impeller.add_argument("--volumes", type=positive_int, default=48, help="channels (default 48)")
    impeller.add_argument(
        "--triangles",
        type=positive_int,
        default=200_000,
        help="triangles in all (default 200000; the seed's: 12500000)",
    )
    boxes = kinds.add_parser("random-boxes", help="a cube minus random boxes")
    boxes.add_argument("--volumes", type=positive_int, default=1000, help="boxes (default 1000)")
    boxes.add_argument("--seed", type=positive_int, default=1, help="random seed (default 1)")
    for kind in (menger, head, impeller, boxes):
        kind.add_argument("--out", help="folder to write (default: named after the scene)")
        kind.set_defaults(handler=cmd_scene)

    r = sub.add_parser(
        "render",
        help="ray cast an Enlight scene to PNG and per-pixel buffers",
        epilog=RENDER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Cast a scene file (parskel scene writes some) on a device: frame.png and buffers.npz "
        "(depth, triangle, u, v per pixel) in the output folder.",
    )
    r.add_argument("scene", help="the scene file (JSON)")
    r.add_argument("--out", required=True, help="folder for frame.png, buffers.npz, orbit.gif, bench.json")
    r.add_argument("--caster", default="single_primary_boolean_cell", help="the caster (see below)")
    r.add_argument("--device", help="device id or name fragment (default: PARSKEL_DEVICE or the best device)")
    r.add_argument("--size", type=_size, help="image size WIDTHxHEIGHT (default: the scene's camera)")
    r.add_argument("--precision", choices=("single", "double"), default="single")
    r.add_argument("--cells", type=_cells, help="grid cells NX,NY,NZ (default: the scene's, or chosen)")
    r.add_argument("--budget-mb", type=float, help="cast out of core, the grid in parts of at most this many MiB")
    r.add_argument("--orbit", type=positive_int, help="also write orbit.gif, N frames around the scene")
    r.add_argument(
        "--bench", action="store_true", help="time frames after a warm-up (--frames), the grid's build and one update"
    )
    r.add_argument("--frames", type=positive_int, default=10, help="with --bench: frames timed (default 10)")
    r.add_argument(
        "--reference", action="store_true", help="with --bench: time the CPU reference too (3 frames at most)"
    )
    r.add_argument(
        "--embree", action="store_true", help="with --bench: time Embree too (trimesh + embreex; 3 frames at most)"
    )
    r.set_defaults(handler=cmd_render)


__all__ = ["UsageError", "register"]
