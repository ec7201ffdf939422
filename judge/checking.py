"""Problem-independent error metrics for pass rules (spec: "Pass rule, for each output X").

Every problem's `check` builds its verdict from these numbers; the rule itself (which bound
applies to which dtype) stays in the problem package. All metrics are computed in float64 over
flat chunks, so checking a large output never needs more than a few chunk-sized temporaries.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# Elements per chunk: big enough to amortise torch's per-call overhead, small enough that the
# float64 temporaries of a GPU-sized output (10^8 elements and more) stay in tens of MiB.
_CHUNK = 1 << 22

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
    for start in range(0, count, _CHUNK):
        xs = flat_x[start : start + _CHUNK].to(torch.float64)
        gs = flat_g[start : start + _CHUNK].to(torch.float64)
        nan_mask = torch.isnan(xs)
        inf_mask = torch.isinf(xs)
        nan += int(nan_mask.sum())
        inf += int(inf_mask.sum())
        finite = ~(nan_mask | inf_mask)
        if first_bad is None and not bool(finite.all()):
            first_bad = start + int((~finite).nonzero()[0, 0])
        abs_g = gs.abs()
        max_truth = max(max_truth, float(abs_g.max()) if abs_g.numel() else 0.0)
        err = (xs - gs).abs()
        # NaN/Inf elements are reported by count; they must not turn every other number into NaN.
        err = torch.where(finite, err, torch.zeros_like(err))
        if err.numel():
            max_abs = max(max_abs, float(err.max()))
        within += int(((err <= atol + rtol * abs_g) & finite).sum())
        # Relative errors over finite elements only: NaN/Inf are already failures and counted above,
        # and an infinite MERE would not survive the JSON report.
        big = (abs_g >= floor) & finite
        if bool(big.any()):
            rel = (err / (abs_g + REL_EPS))[big]
            rel_count += rel.numel()
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
