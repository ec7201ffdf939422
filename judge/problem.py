"""The Problem seam: data loaded from a problem package, plus the package's functions.

A problem package is a folder `problems/<slug>/` holding
- `problem.toml`: the definition (tensors, case sets per backend, tolerance);
- `<header>.h`: the C header teams include, the one source of truth for the ABI
  (the runner builds its ctypes struct by parsing it, see judge/abi.py);
- `problem.py`: the generator, oracle and pass rule (the `ProblemModule` protocol), loaded as
  the package of its folder, so it may import sibling modules (`from . import layout`);
- `statement.md`: the statement for teams.
Adding a problem is adding a folder; nothing in judge/ names a problem.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from judge.backends import Backend, CaseSet
from judge.errors import UnknownProblemError, UnsupportedBackendError

DEFAULT_PROBLEMS_DIR = Path(__file__).resolve().parent.parent / "problems"
DEFAULT_REFERENCE_DIR = Path(__file__).resolve().parent.parent / "reference_kernels"


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[str, ...]  # symbolic, e.g. ("B", "S1", "N1", "D")
    dtype: str  # "T" (the case's dtype), "int32" or "float32"
    optional_when: str | None = None  # e.g. "Dr == 0": the pointer is NULL then


@dataclass(frozen=True)
class Case:
    name: str
    case_set: CaseSet
    dtype: str  # "float32" | "float16" | "bfloat16"
    params: dict[str, Any]  # sizes and attributes, named as the ABI's struct fields
    seed: int  # public seed; the judge mixes its secret in (judge/seeds.py)
    flags: tuple[str, ...] = ()  # e.g. ("ragged_topk",)

    def describe(self) -> str:
        sizes = " ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.name} [{self.dtype}] {sizes}"


@dataclass(frozen=True)
class Problem:
    slug: str
    title: str
    version: int
    root: Path  # the package folder
    header: Path  # the C header on the include path
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    backends: tuple[Backend, ...]
    cases: dict[Backend, tuple[Case, ...]]
    tolerance: dict[str, Any]
    baselines: dict[Backend, Path]  # baseline kernel source per backend
    definition_hash: str  # sha256 of every file in the package folder
    extra: dict[str, Any] = field(default_factory=dict)

    def cases_for(self, backend: Backend, sets: list[CaseSet] | None = None) -> list[Case]:
        if backend not in self.cases:
            raise UnsupportedBackendError(self.slug, backend.value, [b.value for b in self.backends])
        chosen = self.cases[backend]
        return [c for c in chosen if sets is None or c.case_set in sets]

    @property
    def module(self) -> ProblemModule:
        return _load_module(self.root / "problem.py", self.slug)  # type: ignore[return-value]


class ProblemModule(Protocol):
    """What a problem package's problem.py provides. Tensors are torch tensors on the CPU, or on the
    device a track generates its inputs on (`Track.generation_device`)."""

    def make_inputs(self, case: Case, seed: int, device: str = "cpu") -> dict[str, Any]:
        """Every input tensor (None for absent optional ones) and attribute for the ABI.

        Deterministic in (case, seed, device) on the same host: the runner child and
        the worker both call it and must get the very same bytes (run single-threaded
        on the CPU). Device tracks generate on the device (`device="cuda"`), where a
        CPU generator would take seconds per call at contest sizes; a module that
        takes no `device` argument generates on the CPU only.
        Attributes (e.g. `scale`) come back as Python numbers under their ABI names.
        """
        ...

    def output_specs(self, case: Case, inputs: dict[str, Any]) -> dict[str, tuple[tuple[int, ...], Any]]:
        """Shape and torch dtype of every output the kernel must write (absent ones left out)."""
        ...

    def oracle(self, case: Case, inputs: dict[str, Any]) -> dict[str, Any]:
        """The float64 ground truth G of every output."""
        ...

    def reference(self, case: Case, inputs: dict[str, Any]) -> dict[str, Any] | None:
        """The same-dtype reference R, or None where the pass rule needs none."""
        ...

    def check(
        self, case: Case, outputs: dict[str, Any], oracle: dict[str, Any], reference: dict[str, Any] | None
    ) -> dict[str, Any]:
        """The pass rule: an `OutputCheck` per output."""
        ...

    def work(self, case: Case, inputs: dict[str, Any]) -> tuple[float, float]:
        """(floating-point operations, least bytes moved) of one call, for GFLOP/s and the roofline."""
        ...


def make_inputs(module: ProblemModule, case: Case, seed: int, device: str) -> dict[str, Any]:
    """`module.make_inputs` on `device`; the CPU form for "cpu", so a module without a device argument works."""
    if device == "cpu":
        return module.make_inputs(case, seed)
    return module.make_inputs(case, seed, device=device)


@cache
def _load_module(path: Path, slug: str) -> ModuleType:
    """problem.py as the package of its folder (its siblings import as `from . import x`), named
    after the folder's path: two copies of one problem (a test's edited copy) never share modules.
    Every file of the folder is in the definition hash, so a split module keys the oracle cache too."""
    folder = str(path.parent)
    name = f"opjudge_problem_{slug}_{hashlib.sha256(folder.encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=[folder])
    if spec is None or spec.loader is None:
        raise UnknownProblemError(slug, [])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # relative imports look their package up here
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
        raise
    return module


def list_problems(problems_dir: Path = DEFAULT_PROBLEMS_DIR) -> list[str]:
    return sorted(p.parent.name for p in problems_dir.glob("*/problem.toml"))


def load_problem(
    slug: str,
    problems_dir: Path = DEFAULT_PROBLEMS_DIR,
    reference_dir: Path = DEFAULT_REFERENCE_DIR,
) -> Problem:
    """Load `problems/<slug>/` into a `Problem`; raises UnknownProblemError with the known slugs."""
    return _load_problem_cached(slug, problems_dir.resolve(), reference_dir.resolve())


@cache
def _load_problem_cached(slug: str, problems_dir: Path, reference_dir: Path) -> Problem:
    root = problems_dir / slug
    toml_path = root / "problem.toml"
    if not slug.replace("_", "").isalnum() or not toml_path.is_file():
        raise UnknownProblemError(slug, list_problems(problems_dir))
    raw = tomllib.loads(toml_path.read_text())
    header = root / raw["header"]
    # Every file of the package decides G and R (a problem.py may be split in modules).
    digest = hashlib.sha256()
    for part in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(part.relative_to(root)).encode() + b"\0" + part.read_bytes())
    backends = tuple(Backend(b) for b in raw["backends"])
    cases: dict[Backend, tuple[Case, ...]] = {}
    for backend in backends:
        sets = raw.get("cases", {}).get(backend.value, {})
        cases[backend] = tuple(
            _case_from_toml(entry, CaseSet(set_name))
            for set_name in (s.value for s in CaseSet)
            for entry in sets.get(set_name, [])
        )
    return Problem(
        slug=slug,
        title=raw["title"],
        version=int(raw["version"]),
        root=root,
        header=header,
        inputs=tuple(_tensor(t) for t in raw["inputs"]),
        outputs=tuple(_tensor(t) for t in raw["outputs"]),
        backends=backends,
        cases=cases,
        tolerance=raw.get("tolerance", {}),
        baselines={Backend(k): reference_dir / slug / v for k, v in raw.get("baselines", {}).items()},
        definition_hash=digest.hexdigest(),
        extra=raw.get("extra", {}),
    )


def _tensor(raw: dict[str, Any]) -> TensorSpec:
    return TensorSpec(
        name=raw["name"], shape=tuple(raw["shape"]), dtype=raw["dtype"], optional_when=raw.get("optional_when")
    )


def _case_from_toml(raw: dict[str, Any], case_set: CaseSet) -> Case:
    raw = dict(raw)
    return Case(
        name=raw.pop("name"),
        case_set=case_set,
        dtype=raw.pop("dtype"),
        seed=int(raw.pop("seed", 0)),
        flags=tuple(raw.pop("flags", ())),
        params=raw,
    )
