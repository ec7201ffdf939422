"""The base of every response schema: built from the store's dataclasses by attribute."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Public(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class Create(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not silently ignored
