"""Each response shape is declared once: a schema built from a store record does not list its fields again."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import typing
from datetime import datetime

import pytest

import api.store
import api.web.schemas
from api.web.schemas.base import Public, from_view

# Shapes that meet share a few fields (a team's id and name, a time); a schema that declares more than
# MAX_SHARED of a record's fields, making up COPY_SHARE of what it declares, is a second copy of it.
MAX_SHARED = 2
COPY_SHARE = 0.75


def _records() -> list[type]:
    """Every dataclass the store defines, and those of the other modules whose records the API serves."""
    names = [f"{api.store.__name__}.{info.name}" for info in pkgutil.iter_modules(api.store.__path__)]
    found = []
    for name in [*names, "api.web.problem_info", "api.web.problem_catalog", "judge.profiling"]:
        module = importlib.import_module(name)
        classes = [c for c in vars(module).values() if isinstance(c, type) and c.__module__ == module.__name__]
        found += [c for c in classes if dataclasses.is_dataclass(c)]
    return found


def _schemas() -> list[type[Public]]:
    found = []
    for info in pkgutil.iter_modules(api.web.schemas.__path__):
        module = importlib.import_module(f"{api.web.schemas.__name__}.{info.name}")
        found += [c for c in vars(module).values()
                  if isinstance(c, type) and issubclass(c, Public) and c.__module__ == module.__name__]  # fmt: skip
    return found


def _declared(schema: type[Public]) -> dict[str, object]:
    """The fields the class body itself declares, with their resolved types."""
    own = schema.__dict__.get("__annotations__", {})
    return {name: schema.model_fields[name].annotation for name in own if name in schema.model_fields}


@pytest.mark.parametrize("schema", _schemas(), ids=lambda s: s.__name__)
def test_no_schema_declares_a_store_record_again(schema: type[Public]) -> None:
    declared = _declared(schema)
    for record in _records():
        hints = typing.get_type_hints(record)
        shared = sorted(n for n, t in declared.items() if n in hints and hints[n] == t)
        assert len(shared) <= MAX_SHARED or len(shared) < COPY_SHARE * len(declared), (
            f"{schema.__name__} declares {shared} of {record.__name__} again: subclass "
            f"from_view({record.__name__}) and declare only what the API shows differently"
        )


def test_the_view_records_answers_are_built_from_them() -> None:
    from api.store import views
    from api.web.schemas import competitions, judging, people, reviews, submissions

    built = {people.TeamPublic: views.TeamView, people.ReviewerPublic: views.ReviewerView,
             people.TokenPublic: views.TokenInfo, people.TokenCreated: views.IssuedToken,
             competitions.CompetitionPublic: views.CompetitionView, competitions.ProblemLinkPublic: views.ProblemLink,
             submissions.SubmissionPublic: views.SubmissionSummary,
             submissions.SubmissionAdminPublic: views.SubmissionSummary,
             submissions.SubmissionDetailPublic: views.SubmissionDetail, submissions.RunPublic: views.RunView,
             submissions.CasePublic: views.CaseView, submissions.FilePublic: views.FileInfo,
             submissions.QuotaPublic: views.QuotaStatus, reviews.ReviewPublic: views.ReviewView,
             reviews.FinalistPublic: views.FinalistView, judging.ReproductionPublic: views.ReproductionView,
             judging.WorkerPublic: views.WorkerView, judging.QueueLoadPublic: views.QueueLoad,
             judging.AuditPublic: views.AuditView}  # fmt: skip
    for schema, record in built.items():
        assert schema.__view__ is record, schema.__name__  # type: ignore[attr-defined]


def test_from_view_keeps_the_record_order_types_and_defaults() -> None:
    @dataclasses.dataclass(frozen=True)
    class Record:
        id: int
        secret: str
        at: datetime
        note: str = ""
        tags: list[str] = dataclasses.field(default_factory=list)
        shown: bool = False

    class RecordPublic(from_view(Record, exclude=("secret",), required=("shown",))):
        tags: list[int] = []  # what the API shows differently

    assert RecordPublic.__view__ is Record
    assert list(RecordPublic.model_fields) == ["id", "at", "note", "tags", "shown"]
    schema = RecordPublic.model_json_schema(mode="serialization")
    assert schema["required"] == ["id", "at", "shown"]
    assert schema["properties"]["note"]["default"] == ""
    assert schema["properties"]["tags"] == {"default": [], "items": {"type": "integer"}, "title": "Tags",
                                            "type": "array"}  # fmt: skip
    assert "description" not in schema  # the record's generated docstring does not leak in
    record = Record(7, "s", datetime(2030, 1, 1), tags=["1"])
    assert RecordPublic.model_validate(record).model_dump() == {"id": 7, "at": datetime(2030, 1, 1), "note": "",
                                                                "tags": [1], "shown": False}  # fmt: skip
    with pytest.raises(TypeError, match="no field nope"):
        from_view(Record, exclude=("nope",))
    with pytest.raises(TypeError, match="no field nope"):
        from_view(Record, required=("nope",))
