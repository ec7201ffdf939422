"""Problem-independent error metrics for pass rules (spec: "Pass rule, for each output X").

Every problem's `check` builds its verdict from these numbers; the rule itself (which bound
applies to which dtype) stays in the problem package. All metrics are computed in float64 over
flat chunks, so checking a large output never needs more than a few chunk-sized temporaries.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# Elements per chunk on a device: big enough to amortise a launch per operation, small enough that
# the float64 temporaries of a GPU-sized output (10^8 elements and more) stay in tens of MiB.
_CHUNK = 1 << 22
# On the CPU, chunks whose float64 temporaries stay in a core's L2 (512 KiB each): a 4M-element
# check took 391 ms in 4M chunks and 62 ms in these, one thread (docs/benchmarks.md, "Checks").
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
    if x.numel() != truth.numel():
        raise ValueError(f"shape mismatch: {tuple(x.shape)} vs {tuple(truth.shape)}")
    flat_x = x.detach().reshape(-1)
    flat_g = truth.detach().reshape(-1)
    count = flat_x.numel()
    nan = inf = within = rel_count = 0
    first_bad: int | None = None
    max_abs = rel_sum = rel_max = max_truth = 0.0
    # Few passes over each chunk and temporaries reused in place: a check is on the judge's clock
    # between timed calls, and a float64 pass over a large output costs milliseconds.
    step = chunk_elements(flat_x)
    for start in range(0, count, step):
        xs = flat_x[start : start + step]
        gs = flat_g[start : start + step].to(torch.float64)
        n = xs.numel()
        finite = torch.isfinite(xs)
        all_finite = bool(finite.all())
        if not all_finite:
            chunk_nan = int(torch.isnan(xs).sum())
            nan += chunk_nan
            inf += n - int(finite.sum()) - chunk_nan
            if first_bad is None:
                first_bad = start + int((~finite).nonzero()[0, 0])
        abs_g = gs.abs()
        max_truth = max(max_truth, float(abs_g.max()))
        err = (xs - gs).abs_()  # float64 by type promotion (gs is), a new tensor either way
        if not all_finite:
            # NaN/Inf elements are reported by count; they must not turn every other number into NaN.
            err.masked_fill_(~finite, 0.0)
        max_abs = max(max_abs, float(err.max()))
        inside = err <= abs_g.mul(rtol).add_(atol)
        within += int((inside & finite).sum() if not all_finite else inside.sum())
        # Relative errors over finite elements only: NaN/Inf are already failures and counted above,
        # and an infinite MERE would not survive the JSON report.
        big = abs_g >= floor
        if not all_finite:
            big &= finite
        big_count = int(big.sum())
        if big_count:
            rel = err.div_(abs_g.add_(REL_EPS))  # err and abs_g are not read again
            if big_count < n:
                rel.masked_fill_(~big, 0.0)  # every ratio is >= 0: the zeros change neither sum nor max
            rel_count += big_count
            rel_sum += float(rel.sum())
            rel_max = max(rel_max, float(rel.max()))
    return ErrorStats(
        count=count,
        nan=nan,
        inf=inf,
        max_abs_err=max_abs,
        mere=rel_sum / rel_count if rel_count else 0.0,
        mare=rel_max,
        within_mixed_tol=within / count if count else 1.0,
        max_abs_truth=max_truth,
        first_nonfinite=first_bad,
    )


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
