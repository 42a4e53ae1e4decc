"""Enlight (seed 001 part 2): meshes and scene files, the generators, the device grid and its
classification, every caster against the CPU reference (NumPy/Numba, double precision), the
incremental update, out-of-core casting, and the command line. Images are small so that the
whole file runs in well under a minute on the 2-core PoCL device."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from parskel.enlight import meshes, scenes
from parskel.enlight.casters import CASTERS, CUBE, Casting
from parskel.enlight.grid import FIRST_OF_VOLUME, Grid
from parskel.enlight.meshes import MeshError
from parskel.enlight.reference import reference_cast
from parskel.enlight.scenes import Camera, Scene, SceneError


def _matching(ref: np.ndarray, got: np.ndarray, rel: float = 1e-4) -> np.ndarray:
    """Pixels where both miss, or both hit within ``rel`` relative depth."""
    both = np.isfinite(ref) & np.isfinite(got)
    close = np.zeros_like(both)
    close[both] = np.abs(ref[both] - got[both]) <= rel * np.abs(ref[both])
    return (np.isinf(ref) & np.isinf(got)) | close


def _grazing(scene: Scene, camera: Camera, pixels: np.ndarray) -> np.ndarray:
    """Whether each mismatched pixel's ray passes within a hair of a triangle edge, or meets a
    triangle almost edge-on: the rays whose hits are ill-conditioned in any precision."""
    eye, dirs = camera.rays()
    tris = scene.triangles
    out = []
    for j, i in pixels:
        d = dirs[j, i]
        e1, e2 = tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]
        p = np.cross(d, e2)
        det = np.einsum("ij,ij->i", e1, p)
        normal = np.cross(e1, e2)
        area = np.linalg.norm(normal, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            s = eye - tris[:, 0]
            u = np.einsum("ij,ij->i", s, p) / det
            v = (np.cross(s, e1) @ d) / det
            cosine = np.abs(det) / area
        near_edge = (
            (np.minimum(np.minimum(np.abs(u), np.abs(v)), np.abs(1 - u - v)) < 1e-3)
            & (u > -1e-3)
            & (v > -1e-3)
            & (u + v < 1 + 1e-3)
        )
        edge_on = (cosine < 1e-3) & (u > -0.01) & (v > -0.01) & (u + v < 1.01)
        out.append(bool((near_edge | edge_on).any()))
    return np.array(out, dtype=bool)


def _assert_matches(scene: Scene, camera: Camera, depth: np.ndarray, share: float = 0.999) -> None:
    ref = reference_cast(scene, camera)["depth"]
    ok = _matching(ref, depth.astype(np.float64))
    assert ok.mean() >= share, f"{(~ok).sum()} of {ok.size} pixels differ from the reference"
    bad = np.argwhere(~ok)
    assert _grazing(scene, camera, bad).all(), f"mismatches not explained by grazing rays at {bad.tolist()}"


# meshes -----------------------------------------------------------------------------------------


def test_stl_round_trip_and_ascii_and_ply(tmp_path: Path) -> None:
    box = meshes.box() * [2.0, 1.0, 0.5] + [1.0, 0.0, 0.0]
    meshes.write_stl(tmp_path / "b.stl", box)
    back = meshes.load_mesh(tmp_path / "b.stl")
    assert len(back.faces) == 12 and len(back.vertices) == 8
    assert meshes.signed_volume(back.triangles) == pytest.approx(1.0)
    assert sorted(map(tuple, back.triangles.reshape(-1, 3).round(6).tolist())) == sorted(
        map(tuple, box.reshape(-1, 3).round(6).tolist())
    )
    lines = ["solid s"]
    for tri in box:
        lines += ["facet normal 0 0 0", "outer loop"] + [f"vertex {x} {y} {z}" for x, y, z in tri]
        lines += ["endloop", "endfacet"]
    (tmp_path / "a.stl").write_text("\n".join(lines + ["endsolid s"]) + "\n")
    assert meshes.signed_volume(meshes.load_mesh(tmp_path / "a.stl").triangles) == pytest.approx(1.0)
    import trimesh

    trimesh.Trimesh(back.vertices, back.faces).export(tmp_path / "c.ply")
    assert meshes.signed_volume(meshes.load_mesh(tmp_path / "c.ply").triangles) == pytest.approx(1.0)


def test_open_and_misoriented_meshes_are_refused_by_name(tmp_path: Path) -> None:
    box = meshes.box()
    meshes.write_stl(tmp_path / "open.stl", box[:-1])
    with pytest.raises(MeshError, match=r"open\.stl.*open"):
        meshes.load_mesh(tmp_path / "open.stl")
    flipped = box.copy()
    flipped[0] = flipped[0][::-1]
    meshes.write_stl(tmp_path / "twisted.stl", flipped)
    with pytest.raises(MeshError, match=r"twisted\.stl.*inconsistently oriented"):
        meshes.load_mesh(tmp_path / "twisted.stl")
    meshes.write_stl(tmp_path / "inside_out.stl", box[:, ::-1])
    assert meshes.signed_volume(meshes.load_mesh(tmp_path / "inside_out.stl").triangles) == pytest.approx(1.0)
    with pytest.raises(MeshError, match="no mesh file"):
        meshes.load_mesh(tmp_path / "missing.stl")


def test_scene_file_places_meshes_relative_to_itself(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    meshes.write_stl(tmp_path / "m" / "box.stl", meshes.box())
    spec = {
        "stock": "m/box.stl",
        "subtract": [{"mesh": "m/box.stl", "translate": [1, 2, 3], "rotate_deg": [0, 0, 90], "scale": [2, 1, 1]}],
        "grid": {"cells": [4, 5, 6]},
    }
    (tmp_path / "s.json").write_text(json.dumps(spec))
    scene = scenes.load_scene(tmp_path / "s.json")
    assert scene.volumes == 2 and scene.cells == (4, 5, 6) and scene.names == ["box.stl", "box.stl"]
    placed = scene.triangles[scene.volume == 1].reshape(-1, 3)
    # x scaled by 2, then turned 90 degrees about z: x -> y, y -> -x; then moved
    expected = meshes.box().reshape(-1, 3) * [2, 1, 1] @ np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]]).T + [1, 2, 3]
    np.testing.assert_allclose(np.sort(placed, axis=0), np.sort(expected, axis=0), atol=1e-12)


@pytest.mark.parametrize(
    "content, message",
    [(None, "no scene file"), ("{not json", "not valid JSON"), ("[]", "'stock'"),
     ('{"stock": "x.stl"}', "no mesh file"), ('{"stock": {"mesh": "x.stl", "scale": "big"}}', "three finite"),
     ('{"stock": "x.stl", "grid": {"cells": [0, 1, 1]}}', "whole numbers")],
)  # fmt: skip
def test_bad_scene_files_say_what_is_wrong(tmp_path: Path, content: str | None, message: str) -> None:
    if content is not None:
        (tmp_path / "s.json").write_text(content)
    with pytest.raises((SceneError, MeshError), match=message):
        scenes.load_scene(tmp_path / "s.json")


# generators ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
def test_menger_has_the_seeds_volume_count(tmp_path: Path, level: int) -> None:
    written = scenes.menger(tmp_path, level)
    assert written.volumes == 1 + 3 * (8**level - 1) // 7
    scene = scenes.load_scene(written.path)
    assert len(scene.triangles) == 12 * written.volumes


def test_generators_scale_to_many_volumes(tmp_path: Path) -> None:
    written = scenes.random_boxes(tmp_path / "boxes", 20_000)
    scene = scenes.load_scene(written.path)
    assert scene.volumes == 20_001 and len(scene.triangles) == 12 * 20_001
    head = scenes.load_scene(scenes.cylinder_head(tmp_path / "head").path)
    assert head.volumes == 22
    impeller = scenes.impeller(tmp_path / "imp", volumes=16, triangles=40_000)
    assert impeller.volumes == 17 and 30_000 < impeller.triangles < 50_000


# grid -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scene_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scenes")
    scenes.menger(root / "menger2", 2)
    scenes.menger(root / "menger3", 3)
    scenes.cylinder_head(root / "head", segments=48)
    scenes.impeller(root / "impeller", volumes=10, triangles=8_000)
    scenes.random_boxes(root / "boxes", 60)
    return root


def _scene(root: Path, name: str, size: tuple[int, int] = (64, 48)) -> tuple[Scene, Camera]:
    scene = scenes.load_scene(root / name / "scene.json")
    return scene, scene.camera.resized(*size)


def test_cells_are_classified_by_table_1(device, scene_dir: Path) -> None:
    """Menger level 2 is a cube minus axis-aligned boxes: each cell's class follows exactly."""
    scene, _ = _scene(scene_dir, "menger2")
    grid = Grid(device, scene, cells=(13, 11, 9))
    got = grid.classes()
    lay = grid.layout
    lo = scene.triangles.reshape(scene.volumes, -1, 3).min(axis=1)
    hi = scene.triangles.reshape(scene.volumes, -1, 3).max(axis=1)
    n = lay.n
    z, y, x = np.meshgrid(np.arange(n[2]), np.arange(n[1]), np.arange(n[0]), indexing="ij")
    c_lo = lay.origin + lay.cell * np.stack([x, y, z], axis=-1)
    c_hi = c_lo + lay.cell
    overlaps = np.all((c_lo[..., None, :] <= hi) & (c_hi[..., None, :] >= lo), axis=-1)
    within = np.all((c_lo[..., None, :] >= lo) & (c_hi[..., None, :] <= hi), axis=-1)
    surface = (overlaps & ~within).any(axis=-1)
    outside = ~overlaps[..., 0] | within[..., 1:].any(axis=-1)
    expected = np.where(outside, 0, np.where(surface, 2, 1))
    np.testing.assert_array_equal(got, expected)
    assert (expected == 1).any() and (expected == 2).any() and (expected == 0).any()


def test_adding_a_volume_updates_the_grid_as_a_fresh_build(device, scene_dir: Path) -> None:
    scene, camera = _scene(scene_dir, "boxes")
    cells = (9, 8, 7)
    full = Grid(device, scene, cells=cells)
    grown = Grid(device, scene.first(scene.volumes - 2), cells=cells)
    for v in (scene.volumes - 2, scene.volumes - 1):
        grown.add(scene.triangles[scene.starts[v] : scene.starts[v + 1]])
    np.testing.assert_array_equal(grown.classes(), full.classes())
    a, b = full.host_arrays(), grown.host_arrays()
    np.testing.assert_array_equal(a["cell_start"], b["cell_start"])
    np.testing.assert_array_equal(a["pair_cell"], b["pair_cell"])
    np.testing.assert_array_equal(a["pair_tri"], b["pair_tri"])
    np.testing.assert_array_equal(a["pair_ref"], b["pair_ref"])
    first = Casting(full).cast(camera)
    second = Casting(grown).cast(camera)
    np.testing.assert_array_equal(first.depth, second.depth)


def test_pairs_are_grouped_by_cell_then_volume(device, scene_dir: Path) -> None:
    scene, _ = _scene(scene_dir, "menger3")
    host = Grid(device, scene).host_arrays()
    cell, marked = host["pair_cell"].astype(np.int64), host["pair_tri"]
    tri = marked & ~FIRST_OF_VOLUME
    volume = host["tri_volume"][tri].astype(np.int64)
    order = np.lexsort((volume, cell))
    np.testing.assert_array_equal(order, np.arange(len(cell)))
    # the first pair of each volume in each cell is marked, and only those
    first = np.ones(len(cell), dtype=bool)
    first[1:] = (cell[1:] != cell[:-1]) | (volume[1:] != volume[:-1])
    np.testing.assert_array_equal((marked & FIRST_OF_VOLUME) != 0, first)
    # reference points are on their triangles, inside their cells (widened slightly)
    ref = host["pair_ref"].reshape(-1, 4)
    assert (ref[:, 3] > 0).all()


# casters ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["menger2", "menger3", "head", "impeller", "boxes"])
def test_default_caster_matches_the_reference(device, scene_dir: Path, name: str) -> None:
    scene, camera = _scene(scene_dir, name)
    frame = Casting(Grid(device, scene)).cast(camera)
    assert (frame.triangle >= 0).sum() > camera.width * camera.height // 8
    _assert_matches(scene, camera, frame.depth)
    hit = frame.triangle >= 0
    ref = reference_cast(scene, camera)
    same = ref["triangle"][hit] == frame.triangle[hit]
    assert same.mean() > 0.99  # the same triangle, but for seams where two meet
    np.testing.assert_allclose(frame.u[hit][same], ref["u"][hit][same], atol=2e-3)
    np.testing.assert_allclose(frame.v[hit][same], ref["v"][hit][same], atol=2e-3)


@pytest.mark.parametrize("name", ["single_boolean_cell", "packet"])
def test_cell_casters_match_the_reference(device, scene_dir: Path, name: str) -> None:
    if name not in CASTERS:
        pytest.skip(f"no caster {name}")
    scene, camera = _scene(scene_dir, "menger3")
    _assert_matches(scene, camera, Casting(Grid(device, scene), name).cast(camera).depth, share=0.99)


def test_double_precision_matches_the_reference(device, scene_dir: Path) -> None:
    if not device.info.fp64:
        pytest.skip(f"{device.id} has no double precision")
    scene, camera = _scene(scene_dir, "head")
    frame = Casting(Grid(device, scene, precision="double")).cast(camera)
    assert frame.depth.dtype == np.float64
    _assert_matches(scene, camera, frame.depth)


def test_simple_casters_are_exact_where_nothing_is_subtracted(device, scene_dir: Path) -> None:
    """single_ray and single_boolean count nothing across dropped cells: on the stock alone
    they must agree with the reference."""
    scene, camera = _scene(scene_dir, "head")
    stock = scene.first(1)
    grid = Grid(device, stock, cells=(7, 5, 3))
    for name in ("single_ray", "single_boolean"):
        _assert_matches(stock, camera, Casting(grid, name).cast(camera).depth, share=1.0)


def test_test_casters(device) -> None:
    camera = Camera(eye=(1.6, -2.2, 1.3), look_at=(0, 0, 0), width=40, height=30)
    gradient = Casting(None, "test_gradient", device=device).cast(camera)
    np.testing.assert_allclose(gradient.u[0], (np.arange(40) + 0.5) / 40, rtol=1e-6)
    np.testing.assert_allclose(gradient.v[:, 0], (np.arange(30) + 0.5) / 30, rtol=1e-6)
    cube = Scene(CUBE, np.zeros(12, np.int32), ["cube"], camera)
    frame = Casting(None, "test_camera", device=device).cast(camera)
    ref = reference_cast(cube, camera)
    assert (frame.triangle >= 0).sum() > 200
    np.testing.assert_array_equal(frame.triangle >= 0, ref["triangle"] >= 0)
    assert _matching(ref["depth"], frame.depth.astype(np.float64)).mean() >= 0.999


def test_out_of_core_casts_parts_front_to_back(device, scene_dir: Path) -> None:
    scene, camera = _scene(scene_dir, "menger3")
    grid = Grid(device, scene)
    whole = Casting(grid).cast(camera)
    parts = Casting(grid, budget=64 * 1024)
    assert parts.parts >= 4
    split = parts.cast(camera)
    np.testing.assert_array_equal(split.triangle >= 0, whole.triangle >= 0)
    assert _matching(whole.depth.astype(np.float64), split.depth.astype(np.float64)).mean() >= 0.999
    same = split.triangle == whole.triangle
    assert same.mean() >= 0.999


# command line ---------------------------------------------------------------------------------------


def _parskel(*args: str, cwd: Path, device=None) -> subprocess.CompletedProcess:
    env = None
    if device is not None:
        import os

        env = dict(os.environ, PARSKEL_DEVICE=device.id)
    return subprocess.run([sys.executable, "-m", "parskel", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_cli_scene_then_render(device, tmp_path: Path) -> None:
    made = _parskel("scene", "menger", "--level", "2", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    done = _parskel("render", "menger-2/scene.json", "--out", "out", "--size", "48x36", "--orbit", "3", cwd=tmp_path,
                    device=device)  # fmt: skip
    assert done.returncode == 0, done.stderr
    buffers = np.load(tmp_path / "out" / "buffers.npz")
    assert buffers["depth"].shape == (36, 48) and set(buffers) == {"depth", "triangle", "u", "v"}
    scene = scenes.load_scene(tmp_path / "menger-2" / "scene.json")
    _assert_matches(scene, scene.camera.resized(48, 36), buffers["depth"])
    from PIL import Image

    with Image.open(tmp_path / "out" / "frame.png") as png:
        assert png.size == (48, 36)
    with Image.open(tmp_path / "out" / "orbit.gif") as gif:
        assert gif.n_frames == 3


@pytest.mark.parametrize(
    "args, message",
    [(["render", "missing.json", "--out", "o"], "no scene file"),
     (["render", "bad.json", "--out", "o"], "not valid JSON"),
     (["render", "menger-1/scene.json", "--out", "o", "--caster", "fast"], "no caster 'fast'"),
     (["render", "menger-1/scene.json", "--out", "o", "--size", "10by10"], "not an image size"),
     (["scene", "menger", "--level", "9"], "level 1 to 7")],
)  # fmt: skip
def test_cli_mistakes_end_without_a_traceback(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "bad.json").write_text("{")
    scenes.menger(tmp_path / "menger-1", 1)
    done = _parskel(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_embree_peer_counts_like_the_reference(scene_dir: Path) -> None:
    from parskel.bench.peers_embree import embree_available, embree_cast

    ok, why = embree_available()
    if not ok:
        pytest.skip(f"the Embree peer is not installed: {why}")
    scene, camera = _scene(scene_dir, "head")
    depth = embree_cast(scene, camera)
    assert np.isfinite(depth).sum() > camera.width * camera.height // 8
    assert _matching(reference_cast(scene, camera)["depth"], depth).mean() >= 0.999


@pytest.mark.parametrize("name", ["single_primary_boolean_cell", "packet"])
def test_the_eye_may_be_inside_the_grid(device, scene_dir: Path, name: str) -> None:
    """From the middle of the sponge, in its central tunnels, with a wide view: the rays start
    inside the grid, and packets at the image's edge are not coherent along one axis."""
    scene, _ = _scene(scene_dir, "menger2")
    camera = Camera((0.5, 0.5, 0.5), (1.0, 0.8, 0.6), fov_y=100, width=48, height=40)
    frame = Casting(Grid(device, scene), name).cast(camera)
    assert (frame.triangle >= 0).mean() > 0.5
    _assert_matches(scene, camera, frame.depth)
