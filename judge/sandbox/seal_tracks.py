"""How a track says which runtime rules (judge/sandbox/seal.py) its runner bears, and why (docs/security.md, 4b).

Each track's decisions live in its folder (judge/tracks/<backend>/seal.py, `Track.seal_decisions`).
Every rule is decided for every track, with the evidence behind the decision:

- `RUNTIME`: the seal refuses it on that track once the libraries are loaded;
- `CANDIDATE`: nothing read shows the track's runtime needing it, but the runtime is not
  open enough to be sure and no device check has run it sealed. It is not sealed: a rule that
  an honest driver trips makes every run SV. `tests/judge/sandbox/test_seal_tracks.py` has the
  hardware check (marked `cuda` / `npu`) that seals the real runtime with these rules too and
  launches kernels; where it passes, the rule moves to `RUNTIME` in the track's decisions, and nowhere else;
- `STATIC_ONLY`: the track's runtime does it by itself after it started, so only the static
  checks (the source, preprocessed and library policies refuse the names and imports) and the
  worker's checks stand against it there.

The evidence was read in public sources (repository and path, commit where it matters); the
driver and runtime binaries themselves are closed where said. Rules that hold on every track
from the start are not here: processes, programs, ptrace, other processes' memory, sockets,
perf counters, namespaces (judge/sandbox/seccomp.py, the launcher's deny-list and the runner's
lockdown, loaded on every track before any submission code runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from judge.sandbox.seal import RuntimeRule


class Status(StrEnum):
    RUNTIME = "runtime"
    CANDIDATE = "candidate"
    STATIC_ONLY = "static_only"


@dataclass(frozen=True)
class Decision:
    rule: RuntimeRule
    status: Status
    evidence: str
