"""User functions written in Python, translated to parskel's portable OpenCL C.

A skeleton given a Python function (a ``def``, a ``lambda`` or a ``@ps.function``) translates
it when it is first called, for the types of that call: ``ps.Map(lambda x: x * x)`` on a
float32 Vector becomes ``float lambda_(float x) { return x * x; }``. The translation follows
NumPy's type rules, is cached per function and types, and produces the same C a person would
write, so it runs as fast; see ``docs/python_functions.md`` for the subset and its rules.

- ``source``: finding the function's syntax tree, errors that name the user's file and line
- ``analysis``: the subset's constructs and the outside names a function may use
- ``types``: the value types and NumPy's promotion rules (NEP 50 for Python numbers)
- ``calls``: the math, NumPy and built-in functions a user function may call
- ``expressions``, ``statements``: the translation itself; ``ctext``: literals, names, helpers
- ``function``: ``PyFunction`` and the ``ps.function`` decorator
- ``specialise``: how each skeleton types its Python functions from a call's arguments
"""

from .analysis import Index
from .function import PyFunction, function

__all__ = ["Index", "PyFunction", "function"]
