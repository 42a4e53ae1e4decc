"""The documentation site: every tutorial and every Python example of the pages runs on the
CPU device as written (``tests/run_page.py``, each page in a process of its own, as a reader
would run it), the tutorials draw their figures, the API reference names every public object,
and, where Sphinx is installed, the site builds with warnings as errors."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import parskel as ps
from parskel.cli import main

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from run_page import blocks, is_notebook  # noqa: E402

ROOT = HERE.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)
TUTORIALS = [p for p in PAGES if is_notebook(p.read_text(encoding="utf-8"))]
# pages with Python examples that are not notebooks, and the README, whose examples the site repeats
EXAMPLES = [ROOT / "README.md"] + [p for p in PAGES if p not in TUTORIALS and any(blocks(p.read_text("utf-8")))]


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _run(page: Path, out: Path, timeout: int) -> dict:
    """Run ``page`` in a new process on the CPU device (unless PARSKEL_DEVICE says otherwise)."""
    env = {**os.environ, "MPLBACKEND": "Agg"}
    env.setdefault("PARSKEL_DEVICE", "cpu")
    done = subprocess.run(
        [sys.executable, str(HERE / "run_page.py"), str(page), str(out)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert done.returncode == 0, f"{_name(page)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-8000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_pages_are_found() -> None:
    names = {p.name for p in TUTORIALS}
    assert {"gpu_programming.md", "matrix_multiplication.md", "scan_and_sort.md", "skeletons.md"} <= names
    assert {"README.md", "python_functions.md", "distributions.md", "pipeline.md"} <= {p.name for p in EXAMPLES}


@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_runs_and_draws_its_figures(page: Path, tmp_path: Path) -> None:
    text = page.read_text(encoding="utf-8")
    shown = sum(block.code.count("plt.show()") for block in blocks(text))
    summary = _run(page, tmp_path, timeout=240)
    assert summary["cells"] == len(blocks(text))
    assert summary["figures"] == shown, f"{shown} figures shown, {summary['figures']} drawn"
    images = sorted(tmp_path.glob(f"{page.stem}-*.png"))
    assert len(images) == shown and all(image.stat().st_size > 1000 for image in images)


@pytest.mark.parametrize("page", EXAMPLES, ids=lambda p: p.name)
def test_python_examples_of_a_page_run(page: Path, tmp_path: Path) -> None:
    text = page.read_text(encoding="utf-8")
    found = blocks(text)
    summary = _run(page, tmp_path, timeout=240)
    assert summary["cells"] == sum(not b.not_run for b in found)
    for block in found:  # a block left out says why
        assert block.not_run == "" or len(block.not_run) > 10, f"{_name(page)}, line {block.line}: give a reason"


def test_page_runner_reads_cells_tags_and_marks() -> None:
    notebook = (
        "---\nfile_format: mystnb\n---\n# T\n\n```{code-cell} ipython3\n:tags: [raises-exception]\n\n1 / 0\n```\n\n"
        "```python\nnot a cell\n```\n"
    )
    (cell,) = blocks(notebook)
    assert cell.tags == ("raises-exception",) and cell.line == 8 and cell.code == "\n1 / 0\n"
    page = "# P\n\n<!-- not run: sized for a GPU's memory -->\n```python\nx = 1\n```\n\n```python\ny = 2\n```\n"
    first, second = blocks(page)
    assert (first.not_run, first.line, second.not_run, second.line) == ("sized for a GPU's memory", 5, "", 9)


# -- the API reference ------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"^\s*\.\. (auto\w+|currentmodule):: (\S+)(.*?)(?=^\s*\.\. |\Z)", re.M | re.S)


def _documented() -> tuple[set[int], set[str]]:
    """The objects the reference pages document (by identity) and the modules they describe
    with their members."""
    objects: set[int] = set()
    modules: set[str] = set()
    for page in sorted((DOCS / "reference").glob("*.md")):
        current = "parskel"
        for kind, name, options in _DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            if kind == "currentmodule":
                current = name
                continue
            if kind == "autosummary":
                continue
            if kind == "automodule":
                module = importlib.import_module(name)
                objects.add(id(module))
                if ":members:" in options:
                    modules.add(name)
                    objects.update(id(v) for k, v in vars(module).items() if _defined_in(v, name, k))
                continue
            objects.add(id(_resolve(name if name.startswith("parskel") else f"{current}.{name}")))
    return objects, modules


def _defined_in(value: object, module: str, key: str) -> bool:
    return not key.startswith("_") and getattr(value, "__module__", None) == module


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            value = getattr(value, attribute)
        return value
    raise AssertionError(f"the reference names {dotted}, which does not exist")


def _public() -> dict[str, object]:
    """Every public name the reference must cover, by its dotted name."""
    import parskel.algorithms
    import parskel.containers
    import parskel.dist.mpi
    import parskel.errors
    import parskel.skeletons

    names: dict[str, object] = {f"parskel.{n}": getattr(ps, n) for n in ps.__all__ if n != "__version__"}
    for module in (parskel.algorithms, parskel.containers, parskel.dist, parskel.skeletons):
        names.update({f"{module.__name__}.{n}": getattr(module, n) for n in module.__all__})
    for module in (parskel.errors, parskel.dist.mpi):
        own = {k: v for k, v in vars(module).items() if _defined_in(v, module.__name__, k)}
        names.update({f"{module.__name__}.{k}": v for k, v in own.items()})
    return names


def test_the_api_reference_covers_every_public_name() -> None:
    objects, _ = _documented()
    missing = sorted(name for name, value in _public().items() if id(value) not in objects)
    assert not missing, f"not in docs/reference: {missing}"
    assert isinstance(ps.errors, types.ModuleType) and "parskel.errors" in _documented()[1]


def test_every_public_function_and_class_has_a_docstring() -> None:
    bare = sorted(
        name
        for name, value in _public().items()
        if (inspect.isfunction(value) or inspect.isclass(value)) and not inspect.getdoc(value)
    )
    assert not bare, f"public names without a docstring: {bare}"


# -- the site ---------------------------------------------------------------------------------

_MISSING = [name for name in ("sphinx", "myst_nb", "furo") if importlib.util.find_spec(name) is None]


@pytest.mark.skipif(bool(_MISSING), reason=f"the docs extra is not installed ({', '.join(_MISSING)} missing)")
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning")  # the extensions'
def test_the_site_builds_without_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The pages and the reference, with warnings as errors; the tutorials are not executed
    here (the tests above run them), as CI builds the site (``parskel docs --no-execute``)."""
    from sphinx.util.inventory import InventoryFile

    monkeypatch.setenv("PARSKEL_DOCS_EXECUTE", "off")  # what --no-execute sets, undone after the test
    out = tmp_path / "html"
    assert main(["docs", "--clean", "--no-execute", "--out", str(out)]) == 0, capsys.readouterr().err[-6000:]
    with (out / "objects.inv").open("rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    found = {name for entries in inventory.values() for name in entries}
    for name in ("parskel.sort", "parskel.Map", "parskel.Vector", "parskel.errors.BuildError", "parskel.dist.block"):
        assert name in found, name
    cli = (out / "reference" / "cli.html").read_text(encoding="utf-8")
    from parskel.cli import build_parser

    commands = [a for a in build_parser()._actions if hasattr(a, "choices") and isinstance(a.choices, dict)]
    for command in commands[0].choices:
        assert f'id="parskel-{command}"' in cli, command
    for tutorial in TUTORIALS:
        assert (out / tutorial.relative_to(DOCS).with_suffix(".html")).exists(), tutorial.name


def _kernel(page: str, name: str) -> str:
    """The OpenCL C a tutorial holds in the string ``NAME = \"\"\"...\"\"\"``."""
    found = re.search(name + r' = """(.*?)"""', (DOCS / "tutorials" / page).read_text(encoding="utf-8"), re.S)
    assert found, f"{page} has no kernel {name}"
    return found.group(1)


@pytest.mark.parametrize(
    "page, name, defines",
    [
        ("gpu_programming.md", "SAXPY", {}),
        ("gpu_programming.md", "FMUL", {}),
        ("own_variant.md", "CHUNKS", {"T": "uint", "CHUNK": 32}),
    ],
)
def test_tutorial_kernels_build_with_nvrtc(page: str, name: str, defines: dict) -> None:
    """The kernels the tutorials write run on CUDA too: NVRTC builds them without a warning."""
    from parskel.runtime import Source
    from test_cuda import NVRTC, NVRTC_WHY, nvrtc_build

    if NVRTC is None:
        pytest.skip(NVRTC_WHY)
    log, ptx = nvrtc_build(Source.compose([(f"{name.lower()}.cl", _kernel(page, name))]), defines)
    assert ".entry" in ptx and log.strip() == ""


def test_docs_command_says_where_the_sources_must_be(tmp_path: Path, capsys) -> None:
    assert main(["docs", "--source", str(tmp_path)]) == 2
    assert "no documentation sources" in capsys.readouterr().err


def test_importing_the_tools_leaves_the_matplotlib_backend_alone() -> None:
    """A notebook that imports parskel's tools keeps showing its figures inline."""
    code = (
        "import matplotlib; matplotlib.use('svg')\n"
        "import parskel.probe, parskel.tune.targets, parskel.bench.report, parskel.study.report\n"
        "print(matplotlib.get_backend())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "svg", done.stderr
