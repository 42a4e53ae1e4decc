"""Imports every family module, so that importing this registers every variant: the seed's
variants first, in the seed's order, then those that go beyond it."""

from . import basics, matmuls, scans, sorts  # noqa: F401, I001
from . import matmuls_cpu, onesweep, scans_cpu, single_pass, sorts_cpu, xgemm  # noqa: F401
