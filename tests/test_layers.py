"""The architecture's rules, read from the source: which modules may import which libraries and
layers (docs/design.md). A violation names the module and the import."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "parskel"

# a GPU library may be imported only by its backend module, and by the benchmark's peers
FRAMEWORKS = {
    "pyopencl": {"runtime/opencl.py", "bench/"},
    "cupy": {"runtime/cuda.py", "bench/"},
    "cupy_backends": {"runtime/cuda.py", "bench/"},
    "cupyx": {"runtime/cuda.py", "bench/"},
    "torch": {"bench/"},
}

# what each layer of the package may import from the others (imports flow downward only)
LAYERS = {
    "runtime": set(),
    # chunks, pinned staging and memory budgets, shared by the algorithms and the skeletons
    "pipeline": {"runtime"},
    "containers": {"runtime"},
    # the tuning database is data access below them both (the rest of tune is above)
    "algorithms": {"runtime", "pipeline", "tune.database"},
    "skeletons": {"runtime", "containers", "pipeline", "tune.database"},
    # algorithms composed of skeletons, registered beside the hand-written variants
    "skeletal": {"runtime", "containers", "algorithms", "skeletons"},
    # primitives (histogram, unique, copy_if, ...) built on the algorithms' sorts and scans, and on
    # the skeletons for user predicates
    "primitives": {"runtime", "containers", "algorithms", "skeletons"},
    # distributions run the skeletons and algorithms on parts, over devices or MPI ranks
    "dist": {"runtime", "containers", "algorithms", "skeletons"},
    # the profile probe writes is read by bench, never the other way round
    "probe": {"runtime", "pages", "progress"},
    "study": {"runtime", "algorithms", "bench", "pages", "progress"},
    # the ray caster bins its grid with the algorithms' scan and sort on device buffers
    "enlight": {"runtime", "algorithms"},
    "tune": {"runtime", "containers", "algorithms", "skeletons", "bench", "study", "pages", "progress"},
}


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute dotted name) of every import in ``path``, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ["parskel", *path.relative_to(PACKAGE).parent.parts]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
                if node.module is None:
                    found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
                    continue
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return found


def _allowed(rel: str, places: set[str]) -> bool:
    return any(rel == p or (p.endswith("/") and rel.startswith(p)) for p in places)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_frameworks_are_imported_only_at_the_backend_boundary(path: Path) -> None:
    rel = str(path.relative_to(PACKAGE))
    for line, name in _imports(path):
        top = name.split(".")[0]
        if top in FRAMEWORKS:
            assert _allowed(rel, FRAMEWORKS[top]), f"{rel}:{line} imports {name}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layers_import_only_the_layers_below(path: Path) -> None:
    rel = path.relative_to(PACKAGE)
    layer = rel.parts[0] if len(rel.parts) > 1 else None
    if layer not in LAYERS:
        return
    for line, name in _imports(path):
        parts = name.split(".")
        if parts[0] != "parskel" or len(parts) < 2 or parts[1] in ("errors", "_version", layer):
            continue
        allowed = LAYERS[layer]
        assert parts[1] in allowed or ".".join(parts[1:3]) in allowed, (
            f"{rel}:{line} imports {name}, above or beside the {layer} layer"
        )


def test_the_rules_see_imports() -> None:
    """The checker itself: relative imports resolve, and a framework import would be caught."""
    names = dict((name, line) for line, name in _imports(PACKAGE / "runtime" / "opencl.py"))
    assert "pyopencl" in names and "parskel.runtime.base" in names
    assert not _allowed("containers/base.py", FRAMEWORKS["cupy"])
    assert _allowed("bench/peers_cupy.py", FRAMEWORKS["cupy"])


def test_the_package_imports_without_gpu_libraries() -> None:
    """Importing parskel pulls in no GPU framework; running on a CPU device never imports
    PyTorch (CuPy may be imported by the CUDA backend to look for GPUs)."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, parskel as ps\n"
        "print(sorted(m for m in ('cupy', 'torch', 'pyopencl') if m in sys.modules))\n"
        "ps.sort(np.array([3, 1, 2], np.uint32), device='cpu')\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "False"]
