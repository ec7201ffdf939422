"""The base of every response schema: built from the store's dataclasses by attribute."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model


class Public(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class Create(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not silently ignored


def from_view(view: type, *, exclude: tuple[str, ...] = (), required: tuple[str, ...] = ()) -> type[Public]:
    """A `Public` base whose fields are the store record `view`'s (a dataclass), less `exclude`.

    The record is the one place a shape's fields are declared: a response schema subclasses this
    base instead of listing them again, so the two cannot drift apart. Fields keep the record's
    order, types and defaults (a field without a default is required in the OpenAPI document; a
    default factory's value becomes the default), except that `required` names fields the record
    defaults only for its constructors' sake: the API always sends them, and says so. The subclass
    declares only what the API shows differently: a nested record's schema in place of the record,
    a narrower type, a serializer, an extra field.
    """
    unknown = (set(exclude) | set(required)) - {item.name for item in dataclasses.fields(view)}
    if unknown:
        raise TypeError(f"{view.__name__} has no field {', '.join(sorted(unknown))}")
    hints = typing.get_type_hints(view)
    fields: dict[str, Any] = {}
    for item in dataclasses.fields(view):
        if item.name in exclude:
            continue
        if item.name in required:
            fields[item.name] = (hints[item.name], ...)
        elif item.default is not dataclasses.MISSING:
            fields[item.name] = (hints[item.name], item.default)
        elif item.default_factory is not dataclasses.MISSING:
            fields[item.name] = (hints[item.name], item.default_factory())
        else:
            fields[item.name] = (hints[item.name], ...)
    base = create_model(f"{view.__name__}Fields", __base__=Public, __module__=__name__, **fields)
    base.__view__ = view  # the record it mirrors (tests/api/test_schema_views.py)
    return base
