"""The submissions corpus as data: tests/submissions/<problem>/<backend>/<stem>.{cpp,toml}."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SUBMISSIONS = Path(__file__).resolve().parent.parent / "submissions"


@dataclass(frozen=True)
class Fixture:
    problem: str
    backend: str
    source: Path
    verdict: str
    message_contains: tuple[str, ...]
    case_sets: tuple[str, ...]
    expect: dict

    @property
    def id(self) -> str:
        return f"{self.problem}/{self.backend}/{self.source.stem}"


def load_fixtures(backend: str, *, prefixes: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> list[Fixture]:
    found = []
    for toml_path in sorted(SUBMISSIONS.glob(f"*/{backend}/*.toml")):
        stem = toml_path.stem
        if prefixes and not stem.startswith(prefixes) or exclude and stem.startswith(exclude):
            continue
        sources = [p for p in toml_path.parent.glob(f"{stem}.*") if p.suffix != ".toml"]
        if len(sources) != 1:
            continue
        expect = tomllib.loads(toml_path.read_text())
        found.append(Fixture(
            problem=toml_path.parent.parent.name, backend=backend, source=sources[0], verdict=expect["verdict"],
            message_contains=tuple(expect.get("message_contains", ())),
            case_sets=tuple(expect.get("case_sets", ("tests",))), expect=expect,
        ))
    return found


@cache
def hardware_test_sandbox() -> str:
    """The sandbox mode of the GPU and NPU judging tests: OPJUDGE_TEST_SANDBOX when set, else the
    host's best (`auto`), else `off`. A bare accelerator image has no bubblewrap or libseccomp,
    and `auto` there would make every judging IE ("no sandbox") instead of testing the device;
    the sandbox itself has its own tests."""
    if mode := os.environ.get("OPJUDGE_TEST_SANDBOX"):
        return mode
    from judge.sandbox.select import probe_sandbox

    return "auto" if probe_sandbox()["auto"] != "unavailable" else "off"
