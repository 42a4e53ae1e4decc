"""Kernel sources: package-data `.cl` files, `#include` expansion, defines and build errors.

Includes are expanded here rather than by the device compiler, so that one self-contained text
is what gets hashed for the caches (a changed header changes the key) and what every backend
compiles. ``#line`` markers keep the compiler's messages pointing at the files as written.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources

from ..errors import BuildError

KERNELS_PACKAGE = "parskel.kernels"

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')
_SAFE_NAME = re.compile(r"[^\w./<>-]")
# "file:line:col" (Clang-based OpenCL compilers), "file(line): error" (NVRTC, no column)
_LOCATION = re.compile(r"(?P<file>[\w./<>-]+)(?::(?P<line>\d+):(?P<col>\d+)|\((?P<pline>\d+)\): (?:error|warning))")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")

Defines = Mapping[str, int | float | str | bool]


def read_kernel_file(path: str) -> str:
    """The text of a file under ``parskel/kernels/`` (e.g. ``"intro/saxpy.cl"``)."""
    node = resources.files(KERNELS_PACKAGE)
    for part in path.split("/"):
        node = node / part
    try:
        return node.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"no kernel file {path!r} under {KERNELS_PACKAGE}") from None


@dataclass(frozen=True)
class Source:
    """A self-contained kernel source with the original text of every file it was made from.

    ``origins[i]`` is the (file, line) that line ``i + 1`` of ``text`` came from, so that a
    compiler that ignores ``#line`` (NVIDIA's) can still be pointed back at the file as written.
    """

    name: str
    text: str
    files: Mapping[str, str] = field(default_factory=dict)
    origins: tuple[tuple[str, int] | None, ...] = ()

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    @classmethod
    def load(cls, path: str) -> Source:
        """A kernel file of the package, its includes expanded."""
        return cls.compose([(path, read_kernel_file(path))], name=path)

    @classmethod
    def compose(cls, parts: Iterable[tuple[str, str]], name: str | None = None) -> Source:
        """Join named pieces of source (generated code, user functions, package files) in order.

        Each piece keeps its own name and line numbers in compiler messages.
        """
        files: dict[str, str] = {}
        lines: list[tuple[str, tuple[str, int] | None]] = []
        included: set[str] = set()
        names = []
        for part_name, text in parts:
            part_name = _SAFE_NAME.sub("_", part_name)
            names.append(part_name)
            _expand(part_name, text, files, included, lines)
        return cls(
            name=name or names[0],
            text="".join(line for line, _ in lines),
            files=files,
            origins=tuple(origin for _, origin in lines),
        )

    def prefixed(self, parts: Iterable[tuple[str, str]]) -> Source:
        """This source with named pieces (a backend's header, defines) in front of it."""
        front = Source.compose(parts)
        return Source(
            name=self.name,
            text=front.text + self.text,
            files={**front.files, **self.files},
            origins=front.origins + self.origins,
        )

    def _locate(self, fname: str, line: int) -> tuple[str, int] | None:
        if fname in self.files:
            return fname, line
        if 1 <= line <= len(self.origins):  # a line of the expanded text
            return self.origins[line - 1]
        return None

    def excerpt_for(self, log: str, *, context: int = 1, limit: int = 3) -> str:
        """The source lines that a compiler log points at, with a caret under the column."""
        shown: list[str] = []
        seen: set[tuple[str, int]] = set()
        for match in _LOCATION.finditer(log):
            line_text = match["line"] or match["pline"]
            where = self._locate(match["file"], int(line_text))
            if where is None or where in seen:
                continue
            seen.add(where)
            fname, line = where
            col = int(match["col"] or 0)
            lines = self.files[fname].splitlines()
            if not 1 <= line <= len(lines):
                continue
            block = [f"{fname}, line {line}:"]
            for n in range(max(1, line - context), min(len(lines), line + context) + 1):
                marker = ">" if n == line else " "
                block.append(f"{marker}{n:5d} | {lines[n - 1]}")
                if n == line and col:
                    block.append(" " * 9 + " " * max(col - 1, 0) + "^")
            shown.append("\n".join(block))
            if len(shown) == limit:
                break
        return "\n\n".join(shown)

    def build_error(self, log: str, what: str | None = None) -> BuildError:
        return BuildError(what or self.name, log, self.excerpt_for(log))


def _expand(
    name: str,
    text: str,
    files: dict[str, str],
    included: set[str],
    out: list[tuple[str, tuple[str, int] | None]],
) -> None:
    files[name] = text
    out.append((f'#line 1 "{name}"\n', None))
    base = name.rsplit("/", 1)[0] + "/" if "/" in name else ""
    for number, line in enumerate(text.splitlines(), start=1):
        match = _INCLUDE.match(line)
        if not match:
            out.append((line + "\n", (name, number)))
            continue
        target = match[1]
        candidates = [base + target, target] if base else [target]
        for path in candidates:
            try:
                body = read_kernel_file(path)
            except FileNotFoundError:
                continue
            if path not in included:
                included.add(path)
                _expand(path, body, files, included, out)
            break
        else:
            raise FileNotFoundError(f"{name}, line {number}: cannot find include {target!r}")
        out.append((f'#line {number + 1} "{name}"\n', None))


def _defined(defines: Defines | None) -> list[tuple[str, str]]:
    pairs = []
    for key in sorted(defines or {}):
        if not _IDENT.match(key):
            raise ValueError(f"not a valid macro name: {key!r}")
        value = defines[key]  # type: ignore[index]
        pairs.append((key, str(int(value) if isinstance(value, bool) else value)))
    return pairs


#: A define asking that no work-item of a program's kernels use more registers than its value,
#: where the device takes such a bound: NVIDIA's OpenCL, whose compiler knows no launch bounds
#: and builds as if without ``-cl-nv-maxrregcount``, gets ``.maxnreg`` in the program's PTX
#: (``runtime/opencl.py``). Other devices compile it as any define; CUDA kernels bound themselves
#: with ``__launch_bounds__``.
MAX_REGISTERS = "PS_MAX_REGISTERS"


def define_options(defines: Defines | None) -> list[str]:
    """``-D NAME=VALUE`` options for the compiler, in a stable order."""
    return [f"-D{key}={value}" for key, value in _defined(defines)]


def define_lines(defines: Defines | None) -> str:
    """The same defines as ``#define`` lines, for a compiler whose own headers would see
    command-line macros (NVRTC's use ``T`` as a template parameter)."""
    return "".join(f"#define {key} {value}\n" for key, value in _defined(defines))
