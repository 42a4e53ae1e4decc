"""Sphinx configuration of parskel's documentation: ``parskel docs`` builds it into ``docs/_build/html``.

The pages are Markdown (MyST); the tutorials are MyST-NB text notebooks, executed at build time
on the default device, so their figures and timings are those of the machine that builds them.
The API reference is generated from the docstrings by autodoc and autosummary, the command line
reference from ``parskel.cli.build_parser()`` (``_ext/parskel_cli.py``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import parskel

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "parskel"
author = "the parskel authors"
copyright = "the parskel authors"
release = version = parskel.__version__

extensions = [
    "myst_nb",  # Markdown pages (MyST) and executable tutorials
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
    "parskel_cli",  # the command line reference, from parskel.cli.build_parser()
]

exclude_patterns = ["_build", "_ext", "jupyter_execute", ".jupyter_cache"]
source_suffix = {".md": "myst-nb", ".rst": "restructuredtext"}

# MyST: $...$ and $$...$$ for the lessons' formulas, ::: fences, anchors for links to sections
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 4

# Tutorials run at build time (cached between local builds by their code); a failing cell fails
# the build. PARSKEL_DOCS_EXECUTE=off builds without running them (their outputs are then empty).
nb_execution_mode = os.environ.get("PARSKEL_DOCS_EXECUTE", "cache")
nb_execution_timeout = 300
nb_execution_in_temp = True  # files a tutorial writes go to a temporary folder
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False  # an undocumented override says nothing rather than "Call self as a function."
autodoc_typehints = "signature"
autodoc_default_options = {"show-inheritance": True}
autosummary_generate = False

html_theme = "furo"
html_title = f"parskel {version}"
html_static_path: list[str] = []


def _constructor_signature(app, what, name, obj, options, signature, return_annotation):
    """A skeleton class's signature is its ``__init__``'s: ``Skeleton.__new__`` takes
    ``(*args, **kwargs)`` to pick the class for Python user functions, which says nothing."""
    if what != "class" or not signature or not signature.startswith("(*args"):
        return None
    from sphinx.util.inspect import signature as signature_of
    from sphinx.util.inspect import stringify_signature

    init = signature_of(obj.__init__, bound_method=True)
    return stringify_signature(init, show_return_annotation=False), return_annotation


def setup(app):
    app.connect("autodoc-process-signature", _constructor_signature)
