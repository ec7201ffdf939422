"""Which runtime rules (judge/sandbox/seal.py) the CPU track's runner bears, and why: every rule decided
with the evidence read (judge/sandbox/seal_tracks.py says what each status means; docs/security.md, 4b).
"""

from __future__ import annotations

from judge.sandbox.seal import RuntimeRule
from judge.sandbox.seal_tracks import Decision, Status

_CPU_EVIDENCE = (
    "the CPU runner imports everything it needs before the seal (the child switches torch's "
    "deterministic algorithms once before it, f81c5c0) and runs under every rule: "
    "tests/judge/sandbox/test_seal.py and the corpus judge the CPU track sealed"
)

DECISIONS = tuple(Decision(rule, Status.RUNTIME, _CPU_EVIDENCE) for rule in RuntimeRule)
