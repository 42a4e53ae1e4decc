"""The ``parskel-cli`` directive: every command's ``--help``, from ``parskel.cli.build_parser()``.

The help is shown as the terminal prints it (the commands lay out their examples for a
terminal), one section per command, so the page cannot drift from the command line.
"""

from __future__ import annotations

import argparse
import os
from contextlib import contextmanager
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

WIDTH = "100"  # columns of the help text, whatever the terminal that builds the site


@contextmanager
def _columns(width: str):
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = width
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name, in the order ``--help`` lists them."""
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


class ParskelCli(SphinxDirective):
    has_content = False

    def run(self) -> list[Any]:
        from parskel.cli import build_parser

        with _columns(WIDTH):
            parser = build_parser()
            shown = [("parskel", parser)] + [(f"parskel {name}", sub) for name, sub in commands(parser).items()]
            out: list[Any] = []
            for title, command in shown:
                section = nodes.section(ids=[nodes.make_id(title)], names=[nodes.fully_normalize_name(title)])
                section += nodes.title(title, title)
                text = command.format_help()
                section += nodes.literal_block(text, text, language="text")
                self.state.document.note_implicit_target(section)
                out.append(section)
        return out


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("parskel-cli", ParskelCli)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
