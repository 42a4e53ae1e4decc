"""The conclusions of seed 002 chapter 7, each judged against measurements by written rules.

A :class:`Claim` is one conclusion, in our words, with the seed's own figures and the evidence
that tests it: :class:`Evidence` items, each a variant of a study compared with a reference
point on the same device at the same size, and what the claim expects of it on a CPU and on a
GPU. The rules, applied per device to kernel times (medians):

1. The speedup of a point is the reference's kernel time over the point's. It is taken at the
   largest size at which both were measured on the device (``growing``: at the smallest and
   the largest).
2. An evidence item covers every point of its variant (each level: coarsening 2, 4, ...), or
   the one point it names. Its *best* is the largest of their speedups, its *worst* the least.
3. With a threshold of 1.10, an item *agrees* when, by the expectation for the device's kind:

   - ``faster``: best >= 1.10 (some level helps);
   - ``slower``: best <= 1 / 1.10 (every level hurts);
   - ``steady``: 1 / 1.10 < worst and best < 1.10 (no level moves the time by 10 %);
   - ``not slower``: worst > 1 / 1.10 (no level hurts);
   - ``not faster``: best < 1.10 (no level helps);
   - ``above GPUs``: best above the best of every GPU of the same report (a CPU loses less);
   - ``growing``: best at the largest size >= 1.10 x best at the smallest.

4. A claim *holds* on a device when every item it could judge agrees, *does not hold* when
   none does, and holds *partly* otherwise; it is *not measured* when no item could be judged
   (not run, skipped, or a comparison that needs another size or device), and *n/a* when the
   claim says nothing about that kind of device.
5. The work-group limits claim is about devices, not times: it holds on a device whose largest
   work-group differs from that of the same kind of device in the seed (1024 on the Intel CPU
   and on the NVIDIA GPU), or on which points were refused for their work-group size while
   another device of the report ran them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..bench.harness import Result

THRESHOLD = 1.10
Expectation = Literal["faster", "slower", "steady", "not slower", "not faster", "above GPUs", "growing"]
VERDICTS = ("holds", "partly", "does not hold", "not measured", "n/a")


@dataclass(frozen=True)
class Evidence:
    """A study's variant against a reference point, and what a claim expects of it.

    ``only`` keeps one point (its parameters, ``PERCENT=50``); the reference is ``against``
    at ``against_params``, or, when that is None, the point of ``against`` with the same
    parameters if there is one (vectorization against granularity at the same COARSEN) and
    the baseline's otherwise.
    """

    study: str
    variant: str
    cpu: Expectation | None
    gpu: Expectation | None
    only: str | None = None
    against: str = "baseline"
    against_params: str | None = None

    def describe(self) -> str:
        what = f"{self.study} {self.variant}" + (f" {self.only}" if self.only else "")
        if self.against != "baseline" or self.against_params:
            what += f" vs {self.against}" + (f" {self.against_params}" if self.against_params else "")
        return what


@dataclass(frozen=True)
class Claim:
    """One conclusion of seed 002 chapter 7 and the evidence that tests it."""

    key: str
    text: str
    where: str
    seed: str
    evidence: tuple[Evidence, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """A claim on one device: the verdict and the measured figures behind it."""

    claim: Claim
    device: str
    verdict: str
    detail: str


@dataclass(frozen=True)
class DeviceFacts:
    """What the rules need to know of a device."""

    id: str
    name: str
    kind: str  # "cpu" or "gpu"
    max_work_group: int

    @classmethod
    def from_store(cls, row: Mapping[str, Any]) -> DeviceFacts:
        """From a device row of the results store (its ``info`` is the DeviceInfo as JSON)."""
        info = json.loads(row["info"]) if isinstance(row.get("info"), str) else dict(row.get("info") or {})
        kind = "cpu" if row["type"] == "cpu" else "gpu"
        return cls(row["id"], row["name"], kind, int(info.get("max_work_group_size", 0)))


E = Evidence
CLAIMS: tuple[Claim, ...] = (
    Claim(
        "coarsening",
        "Coarsening (fewer work-items, more work each) helps the CPU, which switches between fewer "
        "work-groups, and hurts GPUs, whose warps and cores go idle",
        "ch. 7 (1), lud_perimeter",
        "lud_perimeter: Intel CPU 1.10-1.79x, NVIDIA 0.26-0.55x, AMD 0.11-0.63x",
        (E("lud_perimeter", "granularity", "faster", "slower"),),
    ),
    Claim(
        "coarsening_grows",
        "The CPU's gain from coarsening grows with the data size for a kernel called many times "
        "with little work per work-item",
        "ch. 7 (1), lud_perimeter",
        "lud_perimeter: best 1.24x at 4096, 1.79x at 8192 on the Intel CPU",
        (E("lud_perimeter", "granularity", "growing", None),),
    ),
    Claim(
        "coarsening_not_bad",
        "Where coarsening cuts the total instruction count (crc, bfs), heavier work-items are not bad for CPUs or GPUs",
        "ch. 7 (1), crc and bfs",
        "crc: CPU 1.0-1.31x, NVIDIA 1.0-1.19x, AMD 1.21-1.42x; bfs: CPU 1.0x, NVIDIA 0.98x, AMD 1.37x",
        (
            E("crc", "granularity", "not slower", "not slower"),
            E("bfs", "granularity_items", "not slower", "not slower"),
            E("bfs", "granularity_groups", "not slower", "not slower"),
        ),
    ),
    Claim(
        "heavy_items",
        "More work for work-items that already do much (lud_perimeter BS 32, needle BS 32 and 64) "
        "costs GPUs more than the CPU",
        "ch. 7 (1), lud_perimeter and needle",
        "lud_perimeter BS 32: CPU 0.49-0.67x, NVIDIA 0.18x; needle BS 32: CPU 1.0x, NVIDIA 0.55-0.60x",
        (
            E("lud_perimeter", "geometry", "above GPUs", "slower"),
            E("needle", "geometry", "above GPUs", "slower"),
        ),
    ),
    Claim(
        "cpu_steady",
        "The CPU's time stays steady when the geometry changes for kernels whose work-items do much "
        "work (crc work-groups /2 ... /32, needle BS 32): context switches are minor beside the work",
        "ch. 7 (1), crc and needle",
        "crc work-groups: Intel CPU steady; needle BS 32: 1.0x",
        (E("crc", "geometry", "steady", None), E("needle", "geometry", "steady", None)),
    ),
    Claim(
        "fewer_groups_than_cores",
        "There should never be fewer work-groups than compute units (the seed: CPU cores), or some "
        "stay idle: half as many work-groups as compute units is slower than as many",
        "ch. 7 (1)",
        "stated, not measured",
        (E("crc", "groups", "slower", "slower", only="PERCENT=50", against="groups", against_params="PERCENT=100"),),
    ),
    Claim(
        "big_groups_local_memory",
        "Larger work-groups sharing local memory help the CPU (lud_internal BS 32): each core's "
        "cache serves more work-items",
        "ch. 7 (1), lud_internal",
        "lud_internal BS 32: Intel CPU 1.26-1.28x, NVIDIA 1.07-1.15x",
        (E("lud_internal", "geometry", "faster", None),),
    ),
    Claim(
        "group_size_harmless",
        "The work-group size (bfs, 128 ... 1024) gives no gain but does not worsen performance either",
        "ch. 7 (1), bfs",
        "bfs: 0.92-1.07x on every device",
        (E("bfs", "geometry", "steady", "steady"),),
    ),
    Claim(
        "vectors_contiguous",
        "Vector types help the CPU where the data are contiguous (lud_perimeter, widths 4 and 8 "
        "best); NVIDIA GPUs have no vector units to gain from",
        "ch. 7 (2), lud_perimeter",
        "lud_perimeter: Intel CPU 1.31-3.14x over the baseline (not run on the GPUs)",
        (
            E("lud_perimeter", "vectorization", "faster", None),
            E("lud_perimeter", "vectorization", "faster", "not faster", against="granularity"),
        ),
    ),
    Claim(
        "vectors_rearranged",
        "Where vectors need the data rearranged first (lud_internal's transposed load), the "
        "rearrangement costs more than the vectors gain",
        "ch. 7 (2), lud_internal",
        "transposed: CPU 0.46-0.48x, NVIDIA 0.3x; with vectors: CPU 0.50-0.83x, NVIDIA 0.30-0.38x",
        (
            E("lud_internal", "transposed", "slower", "slower"),
            E("lud_internal", "vectorization", "slower", "slower"),
        ),
    ),
    Claim(
        "unroll_independent",
        "Unrolling helps where it puts independent work between dependent steps (crc: the bit tests "
        "between the table lookups), on every device",
        "ch. 7 (3), crc",
        "crc 32x: Intel CPU 1.33-1.39x, NVIDIA 1.25-1.26x, AMD 1.48-1.50x",
        (E("crc", "unrolling", "faster", "faster"),),
    ),
    Claim(
        "unroll_dependent",
        "Unrolling a chain of dependent operations (lud_perimeter) leaves the CPU unchanged and "
        "helps GPUs, which keep more in registers",
        "ch. 7 (3), lud_perimeter",
        "lud_perimeter: Intel CPU unchanged, NVIDIA 1.22-2.54x, AMD 1.33-2.22x",
        (E("lud_perimeter", "unrolling", "steady", "faster"),),
    ),
    Claim(
        "unroll_no_effect",
        "Unrolling the lud_internal inner product and the bfs edge loop gives no gain and no loss",
        "ch. 7 (3), lud_internal and bfs",
        "lud_internal: 0.92-1.07x everywhere; bfs: CPU 0.77x, NVIDIA 0.94x, AMD 0.86x",
        (E("lud_internal", "unrolling", "steady", "steady"), E("bfs", "unrolling", "steady", "steady")),
    ),
    Claim(
        "padding",
        "Padding the data to remove branches helps every device (srad)",
        "ch. 7 (4), srad",
        "srad: Intel CPU 3.48x, AMD 2x, NVIDIA 1.4x",
        (E("srad", "padding", "faster", "faster", only="BS=16"),),
    ),
    Claim(
        "work_group_limits",
        "Work-group limits differ per device (256 on AMD, 1024 on the Intel CPU and NVIDIA) and "
        "decide which geometries can run",
        "ch. 6 and 7",
        "lud and srad BS 32 could not run on AMD",
    ),
)


# measurements ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Times:
    """Kernel medians of one device: (study, variant, params, size) -> seconds."""

    seconds: dict[tuple[str, str, str, int], float]
    refused: dict[tuple[str, str, str], str]

    def sizes(self, study: str, variant: str, params: str) -> list[int]:
        return sorted(size for (s, v, p, size) in self.seconds if (s, v, p) == (study, variant, params))

    def params(self, study: str, variant: str) -> list[str]:
        return list(dict.fromkeys(p for (s, v, p, _) in self.seconds if (s, v) == (study, variant)))


def _times(results: Sequence[Result], device: str) -> _Times:
    seconds, refused = {}, {}
    for r in results:
        if r.where != device or not r.family.startswith("study."):
            continue
        study = r.family.removeprefix("study.")
        if r.status == "ok" and r.kernel:
            seconds[(study, r.subject, r.params, r.size)] = r.kernel
        elif r.status == "skipped":
            refused[(study, r.subject, r.params)] = r.message
    return _Times(seconds, refused)


def speedups(evidence: Evidence, times: _Times, at: str = "largest") -> list[tuple[str, int, float]]:
    """(params, size, speedup) of each point of ``evidence`` measured with its reference, at the
    largest (or smallest) size where both were."""
    found = []
    candidates = [evidence.only] if evidence.only is not None else times.params(evidence.study, evidence.variant)
    references = times.params(evidence.study, evidence.against)
    for params in candidates:
        if evidence.against_params is not None:
            reference = evidence.against_params
        else:
            reference = params if params in references and evidence.against != "baseline" else ""
        sizes = [
            s
            for s in times.sizes(evidence.study, evidence.variant, params)
            if (evidence.study, evidence.against, reference, s) in times.seconds
        ]
        if not sizes:
            continue
        size = max(sizes) if at == "largest" else min(sizes)
        mine = times.seconds[(evidence.study, evidence.variant, params, size)]
        theirs = times.seconds[(evidence.study, evidence.against, reference, size)]
        found.append((params, size, theirs / mine))
    return found


def _agrees(expect: Expectation, evidence: Evidence, times: _Times, gpus: Sequence[_Times]) -> tuple[bool | None, str]:
    """Whether one item agrees with ``expect`` on a device (None: cannot judge), and its figures."""
    found = speedups(evidence, times)
    if not found:
        return None, f"{evidence.describe()}: not measured"
    values = [v for _, _, v in found]
    best, worst = max(values), min(values)
    size = max(s for _, s, _ in found)
    shown = f"{best:.2f}x" if len(values) == 1 else f"{worst:.2f}-{best:.2f}x"
    text = f"{evidence.describe()}: {shown} at {size}"
    if expect == "faster":
        return best >= THRESHOLD, text
    if expect == "slower":
        return best <= 1 / THRESHOLD, text
    if expect == "steady":
        return worst > 1 / THRESHOLD and best < THRESHOLD, text
    if expect == "not slower":
        return worst > 1 / THRESHOLD, text
    if expect == "not faster":
        return best < THRESHOLD, text
    if expect == "above GPUs":
        theirs = [max(v for _, _, v in found_there) for g in gpus if (found_there := speedups(evidence, g))]
        if not theirs:
            return None, f"{text}, no GPU in the report to compare with"
        return best > max(theirs), f"{text}, GPUs best {max(theirs):.2f}x"
    if expect == "growing":
        small = speedups(evidence, times, at="smallest")
        first = max(v for _, _, v in small)
        low = min(s for _, s, _ in small)
        if low == size:
            return None, f"{text}, one size only"
        return best >= THRESHOLD * first, f"{evidence.describe()}: best {first:.2f}x at {low}, {best:.2f}x at {size}"
    raise ValueError(f"unknown expectation {expect!r}")


def judge(claim: Claim, device: DeviceFacts, results: Sequence[Result], others: Sequence[DeviceFacts]) -> Verdict:
    """The verdict of ``claim`` on ``device`` from ``results`` (``others``: the report's devices)."""
    if claim.key == "work_group_limits":
        return _limits(claim, device, results, others)
    times = _times(results, device.id)
    gpus = [_times(results, d.id) for d in others if d.kind == "gpu" and d.id != device.id]
    judged: list[bool] = []
    details: list[str] = []
    expected_any = False
    for item in claim.evidence:
        expect = item.cpu if device.kind == "cpu" else item.gpu
        if expect is None:
            continue
        expected_any = True
        agrees, text = _agrees(expect, item, times, gpus)
        details.append(f"{text}; expected {expect}")
        if agrees is not None:
            judged.append(agrees)
    if not expected_any:
        return Verdict(claim, device.id, "n/a", f"the claim is not about {device.kind.upper()}s")
    if not judged:
        verdict = "not measured"
    elif all(judged):
        verdict = "holds"
    elif not any(judged):
        verdict = "does not hold"
    else:
        verdict = "partly"
    return Verdict(claim, device.id, verdict, "; ".join(details))


_SEED_LIMITS = {"cpu": 1024, "gpu": 1024}  # the Intel Xeon E5645 and the NVIDIA GTX 480
# a refusal (study requirements) or launch error (runtime) for the size of a work-group
_WORK_GROUP_REFUSAL = re.compile(r"work-groups of|a work-group of \d+ work-items")


def _limits(claim: Claim, device: DeviceFacts, results: Sequence[Result], others: Sequence[DeviceFacts]) -> Verdict:
    refused = sorted(
        {
            f"{r.family.removeprefix('study.')} {r.subject} {r.params}".strip()
            for r in results
            if r.where == device.id and r.status == "skipped" and _WORK_GROUP_REFUSAL.search(r.message)
        }
    )
    ran_elsewhere = [
        name
        for name in refused
        if any(
            r.status == "ok"
            and r.where != device.id
            and f"{r.family.removeprefix('study.')} {r.subject} {r.params}".strip() == name
            for r in results
        )
    ]
    seed = _SEED_LIMITS[device.kind]
    differs = device.max_work_group != seed
    detail = (
        f"largest work-group {device.max_work_group} (the seed's {device.kind.upper()}: {seed}); "
        f"refused for their work-group: {', '.join(refused) or 'none'}"
    )
    if ran_elsewhere:
        detail += f"; of those, run on another device: {', '.join(ran_elsewhere)}"
    return Verdict(claim, device.id, "holds" if differs or ran_elsewhere else "does not hold", detail)


def evaluate(results: Sequence[Result], devices: Sequence[DeviceFacts]) -> list[Verdict]:
    """Every claim on every device, claim by claim."""
    return [judge(claim, device, results, devices) for claim in CLAIMS for device in devices]


def markdown(verdicts: Sequence[Verdict], devices: Sequence[DeviceFacts]) -> str:
    """The findings table in Markdown: a row per claim, a column per device."""
    head = ["conclusion (seed 002)", "the seed measured", *(f"{d.id} ({d.name})" for d in devices)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for claim in CLAIMS:
        cells = [f"{claim.text} ({claim.where})", claim.seed]
        for device in devices:
            v = next(v for v in verdicts if v.claim.key == claim.key and v.device == device.id)
            cells.append(f"**{v.verdict}**: {v.detail}")
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines) + "\n"
