"""Algorithms composed of the public skeletons alone (seed 004): the radix sort rebuilt in the
style of SkelCL and of SkePU, registered as variants of the ``sort`` family.

This layer sits above both siblings, ``parskel.algorithms`` (whose registry it joins) and
``parskel.skeletons`` (whose classes it calls); importing it registers its variants.
"""

from . import radix_sort  # noqa: F401  (registers the variants)
