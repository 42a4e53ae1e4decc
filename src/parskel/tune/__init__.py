"""``parskel tune``: search the variants of a family and their parameters on a device, keep the
best in the tuning database (:mod:`parskel.tune.database`), and ``parskel explain`` what a call
would use.

This package's ``__init__`` imports nothing: :mod:`parskel.tune.database` is read by the
registry and the skeletons, below the tools that the rest of the package holds.
"""
