"""Problem-independent error metrics for pass rules (spec: "Pass rule, for each output X").

Every problem's `check` builds its verdict from these numbers; the rule itself (which bound
applies to which dtype) stays in the problem package. All metrics are computed in float64 over
flat chunks, so checking a large output never needs more than a few chunk-sized temporaries.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, wait
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import torch

# Elements per chunk on a device: big enough to amortise a launch per operation, small enough that
# the float64 temporaries of a GPU-sized output (10^8 elements and more) stay in tens of MiB.
_CHUNK = 1 << 22
# On the CPU, chunks whose float64 temporaries stay in a core's L2 (512 KiB each): a 4M-element
# check took 391 ms in 4M chunks and 62 ms in these, one thread (measured when the chunks were
# introduced; docs/benchmarks.md, "The judge's fixed costs: the checks", has the later figures).
_CPU_CHUNK = 1 << 16


def chunk_elements(tensor: torch.Tensor) -> int:
    """Elements per step of an elementwise check of `tensor` (on the CPU or a device)."""
    return _CPU_CHUNK if tensor.device.type == "cpu" else _CHUNK

# Added to |G| in relative errors so that a zero G gives a large but finite ratio (spec: "+ 1e-7").
REL_EPS = 1e-7


@dataclass(frozen=True)
class ErrorStats:
    """What one output's comparison against its ground truth G found."""

    count: int  # elements compared
    nan: int  # NaN elements of X
    inf: int  # +-Inf elements of X
    max_abs_err: float  # max |X - G| over finite elements of X (0 when there are none)
    mere: float  # mean |X - G| / (|G| + 1e-7) over finite X with |G| >= floor; 0 when none
    mare: float  # max of the same ratio over the same elements; 0 when none
    within_mixed_tol: float  # share of elements with |X - G| <= atol + rtol * |G| (NaN/Inf count as out)
    max_abs_truth: float  # max |G|, for bounds that scale with the output's magnitude
    first_nonfinite: int | None = None  # flat index of the first NaN or Inf element of X

    @property
    def finite(self) -> bool:
        return self.nan == 0 and self.inf == 0


def error_stats(x: torch.Tensor, truth: torch.Tensor, *, floor: float, rtol: float, atol: float) -> ErrorStats:
    """Compare X with G element by element (any dtypes, same number of elements).

    `floor` is the dtype's MERE floor (|G| below it is left out of MERE and MARE);
    `rtol`/`atol` define the mixed tolerance whose share is reported for information.
    """
    return error_stats_many([x], truth, floor=floor, rtol=rtol, atol=atol)[0]


def error_stats_many(xs: Sequence[torch.Tensor], truth: torch.Tensor, *, floor: float, rtol: float,
                     atol: float) -> list[ErrorStats]:
    """`error_stats` of each of `xs` against the same G (a pass rule's X and its reference R), in one
    pass over G: what depends on G alone (|G|, the mixed bound, the floor's mask) is made once a chunk.
    Inside `beside(run)` the later half of the chunks runs on `run`'s thread; the figures are folded
    in chunk order either way, so they are the same bits."""
    for x in xs:
        if x.numel() != truth.numel():
            raise ValueError(f"shape mismatch: {tuple(x.shape)} vs {tuple(truth.shape)}")
    flat_g = truth.detach().reshape(-1)
    flats = [x.detach().reshape(-1) for x in xs]
    count = flat_g.numel()
    starts = range(0, count, chunk_elements(flats[0] if flats else flat_g))

    def chunks(part: range) -> list[tuple[float, list[_Part]]]:
        return [_chunk(flats, flat_g, start, start + starts.step, floor, rtol, atol) for start in part]

    run = _BESIDE.get()
    if run is None or len(starts) < 2:
        parts = chunks(starts)
    else:
        half = len(starts) // 2
        later = run(chunks, starts[half:])
        try:
            parts = chunks(starts[:half])
        except BaseException:
            wait([later])  # nothing of the check may run on after it
            raise
        parts += later.result()
    max_truth = 0.0
    tallies = [_Tally() for _ in xs]
    for chunk_truth, results in parts:
        max_truth = max(max_truth, chunk_truth)
        for tally, result in zip(tallies, results, strict=True):
            tally.add(result)
    return [t.stats(count, max_truth) for t in tallies]


# A way to run a function on another thread with one torch thread (the oracle's checker gives its
# own, judge/call_check.py): the chunks of a metric are then split between two cores.
RunBeside = Callable[..., "Future[Any]"]
_BESIDE: ContextVar[RunBeside | None] = ContextVar("opjudge_checking_beside", default=None)


@contextlib.contextmanager
def beside(run: RunBeside | None) -> Iterator[None]:
    """`error_stats_many` in this context runs half its chunks through `run` (None: all here)."""
    token = _BESIDE.set(run)
    try:
        yield
    finally:
        _BESIDE.reset(token)


@dataclass
class _Part:
    """One X's figures over one chunk."""

    nan: int = 0
    inf: int = 0
    first_bad: int | None = None
    max_abs: float = 0.0
    within: int = 0
    rel_count: int = 0
    rel_sum: float = 0.0
    rel_max: float = 0.0


def _chunk(flats: list[torch.Tensor], flat_g: torch.Tensor, start: int, stop: int, floor: float, rtol: float,
           atol: float) -> tuple[float, list[_Part]]:
    """max |G| over the chunk and each X's figures there. Few passes over each chunk and temporaries
    reused in place: a check is on the judge's clock between timed calls, and a float64 pass over a
    large output costs milliseconds."""
    gs = flat_g[start:stop].to(torch.float64)
    abs_g = gs.abs()
    chunk_truth = float(abs_g.max())
    bound = abs_g.mul(rtol).add_(atol)
    big = abs_g >= floor
    big_count = int(big.sum())
    denominator = abs_g.add_(REL_EPS)  # |G| + eps for the ratios; abs_g is not read again
    # With G finite, a finite largest error means X is finite too (NaN and Inf both carry into it):
    # the masks of isfinite, three passes, only where something is not.
    truth_finite = math.isfinite(chunk_truth)
    parts = []
    for flat in flats:
        xs = flat[start:stop]
        n = xs.numel()
        part = _Part()
        err = (xs - gs).abs_()  # float64 by type promotion (gs is), a new tensor either way
        part.max_abs = float(err.max())
        finite: torch.Tensor | None = None
        if not (truth_finite and math.isfinite(part.max_abs)):
            finite = torch.isfinite(xs)
            if bool(finite.all()):
                finite = None
            else:
                part.nan = int(torch.isnan(xs).sum())
                part.inf = n - int(finite.sum()) - part.nan
                part.first_bad = start + int((~finite).nonzero()[0, 0])
                # NaN/Inf elements are reported by count; they must not turn every other number into NaN.
                err.masked_fill_(~finite, 0.0)
                part.max_abs = float(err.max())
        inside = err <= bound
        part.within = int((inside & finite).sum() if finite is not None else inside.sum())
        # Relative errors over finite elements only: NaN/Inf are already failures and counted above,
        # and an infinite MERE would not survive the JSON report.
        seen, part.rel_count = big, big_count
        if finite is not None:
            seen = big & finite
            part.rel_count = int(seen.sum())
        if part.rel_count:
            rel = err.div_(denominator)  # err is not read again
            if part.rel_count < n:
                rel.masked_fill_(~seen, 0.0)  # every ratio is >= 0: the zeros change neither sum nor max
            part.rel_sum, part.rel_max = float(rel.sum()), float(rel.max())
        parts.append(part)
    return chunk_truth, parts


class _Tally:
    """One X's running figures, folded chunk by chunk in order."""

    def __init__(self) -> None:
        self.nan = self.inf = self.within = self.rel_count = 0
        self.first_bad: int | None = None
        self.max_abs = self.rel_sum = self.rel_max = 0.0

    def add(self, part: _Part) -> None:
        self.nan += part.nan
        self.inf += part.inf
        if self.first_bad is None:
            self.first_bad = part.first_bad
        self.max_abs = max(self.max_abs, part.max_abs)
        self.within += part.within
        if part.rel_count:
            self.rel_count += part.rel_count
            self.rel_sum += part.rel_sum
            self.rel_max = max(self.rel_max, part.rel_max)

    def stats(self, count: int, max_truth: float) -> ErrorStats:
        return ErrorStats(
            count=count,
            nan=self.nan,
            inf=self.inf,
            max_abs_err=self.max_abs,
            mere=self.rel_sum / self.rel_count if self.rel_count else 0.0,
            mare=self.rel_max,
            within_mixed_tol=self.within / count if count else 1.0,
            max_abs_truth=max_truth,
            first_nonfinite=self.first_bad,
        )


def max_abs_finite(tensor: torch.Tensor) -> float:
    """max |t| over t's finite elements (0 when there are none): one pass with no temporary where
    all are finite (the usual G), a masked copy only where some are not."""
    if tensor.numel() == 0:
        return 0.0
    low, high = torch.aminmax(tensor.detach())
    scale = max(-float(low), float(high))
    if math.isfinite(scale):
        return scale
    finite = tensor[torch.isfinite(tensor)]
    return float(finite.abs().max()) if finite.numel() else 0.0


NAN_FILL_NOTE = "the judge fills every output with NaN before each call: an element never written stays NaN"


def nonfinite_reason(nan: int, inf: int, *, first: int | None = None, count: int | None = None) -> str:
    """Plain words for NaN/Inf counts, e.g. "3 NaN values" or "1 NaN value and 2 Inf values"; with
    `first`, where the first one is, and for NaN the reminder that unwritten elements stay NaN."""
    parts = []
    if nan:
        parts.append(f"{nan} NaN value{'s' if nan != 1 else ''}")
    if inf:
        parts.append(f"{inf} Inf value{'s' if inf != 1 else ''}")
    text = " and ".join(parts)
    if first is not None:
        text += f" (the first at element {first}" + (f" of {count})" if count is not None else ")")
    if nan and first is not None:
        text += f"; {NAN_FILL_NOTE}"
    return text


def fmt(value: float) -> str:
    """A number as reports show it: 4 significant digits, exponent when small or large."""
    return f"{value:.4g}"
