"""Host arrays through a device: pinned staging, transfers overlapped with kernels, and data
larger than the device's memory (or a cap) in chunks.

The public functions (``parskel.sort``, ``scan``, ``matmul``) and the skeletons, given NumPy
arrays, come here when it pays: on a GPU for arrays from :data:`~.budget.STAGING_MIN` on, and on
any device for work that would not fit its memory or the cap (``max_device_memory=``,
``with parskel.max_device_memory(...)``, ``PARSKEL_MAX_DEVICE_MEMORY``). The drivers live beside
their operations (``parskel.skeletons.pipelined``, ``parskel.algorithms.pipelined``); this
package holds what they share:

- :mod:`.budget`: caps, each call's memory budget, chunk lengths, the staging threshold;
- :mod:`.staging`: the ring of page-locked slots and the transfer streams of a device;
- :mod:`.copies`: host copies on several threads;
- :mod:`.chunks`: the pipeline that loads, computes and stores chunks, overlapped.
"""

from .budget import (
    ENV_VAR,
    STAGING_MIN,
    Budget,
    Need,
    Route,
    budget,
    cap,
    chunk_length,
    max_device_memory,
    parse_bytes,
    route,
)
from .chunks import Pipeline, Run, watch
from .staging import Staging, page_locked, staging_for

__all__ = [
    "ENV_VAR",
    "STAGING_MIN",
    "Budget",
    "Need",
    "Pipeline",
    "Route",
    "Run",
    "Staging",
    "budget",
    "cap",
    "chunk_length",
    "max_device_memory",
    "page_locked",
    "parse_bytes",
    "route",
    "staging_for",
    "watch",
]
