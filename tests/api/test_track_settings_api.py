"""A track setting organisers may set is declared once (judge/track_settings/): the competition API's
fields, the store's check and the engine's record all take its type and bounds from there. Each test
reads the declaration and compares what every layer does with it, so a layer that declares the
setting again, with other bounds, fails here."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.store.errors import InvalidInputError
from api.store.judge_settings import apply_judge_settings
from api.store.views import CompetitionView
from judge.track_settings import Declared, overridable, settings_classes
from tests.api.conftest import Contest

ON_SQLITE = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the checks are not the database's
SETTABLE = sorted(overridable())


def _out_of_bounds(item: Declared) -> list[tuple[Any, list[str]]]:
    """Values just past each bound, each with the words its 422 must hold (the bound, or the choices)."""
    d = item.declaration
    if d.choices:
        return [(d.choices[0] + "-not-a-choice", list(d.choices))]
    return [(bound + step, [str(bound)]) for bound, step in ((d.ge, -1), (d.le, 1)) if bound is not None]


def _in_bounds(item: Declared) -> Any:
    d = item.declaration
    return d.choices[-1] if d.choices else (d.le if d.le is not None else d.ge)


def _record_of(key: str) -> type:
    (record,) = [r for r in settings_classes() if key in r.declared()]
    return record


def test_some_setting_is_settable_per_competition() -> None:
    assert "npu_timing" in SETTABLE and "npu_max_launches" in SETTABLE
    assert "npu_device" not in SETTABLE and "cpu_flush" not in SETTABLE  # the host's own


@ON_SQLITE
@pytest.mark.parametrize("key", SETTABLE)
def test_the_api_schema_has_the_declared_bounds(client: TestClient, key: str) -> None:
    item = overridable()[key]
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    for name in ("CompetitionCreate", "CompetitionUpdate"):
        field = schemas[name]["properties"][key]
        (value,) = [option for option in field["anyOf"] if option.get("type") != "null"]
        if item.declaration.choices:
            assert value["enum"] == list(item.declaration.choices), name
        else:
            assert (value.get("minimum"), value.get("maximum")) == (item.declaration.ge, item.declaration.le), name
        assert field["description"] == item.meaning
    # Shown back on the competition: a field of the store's record and of the answer.
    assert key in {f.name for f in dataclasses.fields(CompetitionView)}
    assert key in schemas["CompetitionPublic"]["properties"]


@ON_SQLITE
@pytest.mark.parametrize("key", SETTABLE)
def test_out_of_bounds_is_a_clear_422_and_every_layer_refuses_it(client: TestClient, contest: Contest,
                                                                 key: str) -> None:
    item = overridable()[key]
    admin = contest.auth("admin")
    for bad, words in _out_of_bounds(item):
        refused = client.patch("/api/v1/admin/competitions/cup", headers=admin, json={key: bad})
        assert refused.status_code == 422, refused.text
        (error,) = refused.json()["detail"]
        assert error["loc"][-1] == key
        assert all(w in error["msg"] for w in words), error  # the declared bound, or its choices
        with pytest.raises(InvalidInputError, match=f"{key} must be {item.allowed()}"):
            apply_judge_settings({}, {key: bad})
        with pytest.raises(ValueError, match=f"{key} must be"):
            _record_of(key)(**{item.name: bad})
    good = _in_bounds(item)
    accepted = client.patch("/api/v1/admin/competitions/cup", headers=admin, json={key: good})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()[key] == good
    assert getattr(_record_of(key)(**{item.name: good}), item.name) == good
