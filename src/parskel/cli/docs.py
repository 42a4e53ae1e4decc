"""``parskel docs``: build the documentation site from a checkout, and open it."""

from __future__ import annotations

import argparse
import importlib.util
import os
import webbrowser
from pathlib import Path

from .common import UsageError

EPILOG = """examples:
  parskel docs                    build docs/_build/html (runs the tutorials: 1-2 minutes on a CPU)
  parskel docs --open             ... and open it in a browser
  parskel docs --no-execute       the pages and the API reference only, tutorials without their output
  parskel docs --out /tmp/site    somewhere else

The site is built from the docs/ folder of a checkout of parskel with Sphinx, warnings as
errors; `pip install '.[docs]'` installs what it needs. Tutorials run on the default device
(PARSKEL_DEVICE chooses another) and are run again only when their code changed, or with --clean.
"""

#: What the build needs, by import name, as the docs extra installs it.
NEEDED = ("sphinx", "myst_nb", "furo")


def source_folder(given: str | None) -> Path:
    """The folder holding ``conf.py``: the one given, else ``docs/`` of the checkout this
    package runs from, else ``docs/`` of the current folder."""
    if given is not None:
        candidates = [Path(given)]
    else:
        checkout = Path(__file__).resolve().parents[3]  # src/parskel/cli/docs.py -> the checkout
        candidates = [checkout / "docs", Path.cwd() / "docs"]
    for folder in candidates:
        if (folder / "conf.py").is_file():
            return folder.resolve()
    raise UsageError(
        f"no documentation sources (a conf.py) in {' or '.join(str(c) for c in candidates)}: the site is built "
        "from the docs/ folder of a checkout of parskel; run this command in one, or name the folder with --source"
    )


def cmd_docs(args: argparse.Namespace) -> int:
    source = source_folder(args.source)
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(
            f"building the site needs {', '.join(missing)}: "
            "pip install 'parskel[docs]' (in a checkout: pip install '.[docs]')"
        )
    from sphinx.cmd.build import build_main

    out = Path(args.out) if args.out else source / "_build" / "html"
    if args.no_execute:
        os.environ["PARSKEL_DOCS_EXECUTE"] = "off"  # read by conf.py
    options = ["-W", "--keep-going", "-b", "html"]
    if args.clean:  # every page read again, and the tutorials run again even if their code is cached
        options += ["-E"] + ([] if args.no_execute else ["-D", "nb_execution_mode=force"])
    status = build_main([*options, str(source), str(out)])
    if status:
        print(f"parskel docs: the build failed (status {status}); the messages above say where")
        return 1
    index = (out / "index.html").resolve()
    print(f"built: {index}")
    if args.open:
        webbrowser.open(index.as_uri())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "docs",
        help="build the documentation site (and open it)",
        description="Build the documentation site (tutorials, user guide, API reference) from the "
        "docs/ folder of a checkout with Sphinx, warnings as errors, and print where it is.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", metavar="DIR", help="where the HTML goes (default: docs/_build/html)")
    p.add_argument("--source", metavar="DIR", help="the folder with conf.py (default: docs/ of the checkout)")
    p.add_argument("--no-execute", action="store_true", help="do not run the tutorials (no outputs, no figures)")
    p.add_argument("--clean", action="store_true", help="read every page and run every tutorial again")
    p.add_argument("--open", action="store_true", help="open the site in a browser once built")
    p.set_defaults(handler=cmd_docs)
