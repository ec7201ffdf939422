"""Verdicts of a judge run (docs/rules.md, "Verdicts")."""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """One verdict per run; `PRECEDENCE` says which wins when several apply."""

    IE = "IE"  # internal error: the judge failed, never charged to the team
    CE = "CE"  # compile error
    SV = "SV"  # security violation
    TLE = "TLE"  # time limit exceeded
    MLE = "MLE"  # memory limit exceeded
    RE = "RE"  # runtime error
    WA = "WA"  # wrong answer
    AC = "AC"  # accepted

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]

    @property
    def charged(self) -> bool:
        """Whether a run ending with this verdict counts against the team's quota."""
        return self is not Verdict.IE


# docs/rules.md, "Verdicts": "When several apply, the first in this list wins."
PRECEDENCE: tuple[Verdict, ...] = (
    Verdict.IE,
    Verdict.CE,
    Verdict.SV,
    Verdict.TLE,
    Verdict.MLE,
    Verdict.RE,
    Verdict.WA,
    Verdict.AC,
)

_DESCRIPTIONS = {
    Verdict.IE: "internal error: the judge failed, not your submission; it will be retried",
    Verdict.CE: "compile error",
    Verdict.SV: "security violation",
    Verdict.TLE: "time limit exceeded",
    Verdict.MLE: "memory limit exceeded",
    Verdict.RE: "runtime error",
    Verdict.WA: "wrong answer",
    Verdict.AC: "accepted",
}


def worst(verdicts: list[Verdict]) -> Verdict:
    """The verdict that applies first in docs/rules.md's order; AC for an empty list."""
    if not verdicts:
        return Verdict.AC
    return min(verdicts, key=PRECEDENCE.index)
