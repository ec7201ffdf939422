"""How a track declares its settings: each one once, with everything the rest of the service derives.

A track's settings record is a frozen dataclass whose fields are made with `setting(...)`: the
type and default are the field's, and the declaration adds the environment variables the host's
value is read from, the allowed values or bounds, whether organisers may override it per
competition, and a one-line meaning. From that one declaration come: the host's value read at the
edge (`from_env`, called by judge/host.py `host_from_env`), the check of every value (the record
refuses a bad one when it is built), the competition API's fields (api/web/schemas/competitions.py)
and the store's check of an organiser's override (api/store/judge_settings.py).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

_DECLARATION = "opjudge_setting"
_KINDS = (int, str, Path)  # what a setting may hold (None too, where its default is None)


@dataclass(frozen=True)
class Declaration:
    """What `setting(...)` adds to a record's field."""

    meaning: str
    env: tuple[str, ...] = ()  # read in this order; the first one set gives the host's value
    choices: tuple[str, ...] = ()
    ge: int | None = None
    le: int | None = None
    overridable: bool = False  # organisers may set it per competition
    # An empty variable counts as set (CUDA_VISIBLE_DEVICES="" hides every GPU); else as unset.
    empty_is_a_value: bool = False


def setting(default: Any, *, meaning: str, env: str | tuple[str, ...] = (), choices: tuple[str, ...] = (),
            ge: int | None = None, le: int | None = None, overridable: bool = False,
            empty_is_a_value: bool = False) -> Any:
    """A field of a track's settings record, declared once (see the module's docstring)."""
    declaration = Declaration(meaning=meaning, env=(env,) if isinstance(env, str) else tuple(env),
                              choices=tuple(choices), ge=ge, le=le, overridable=overridable,
                              empty_is_a_value=empty_is_a_value)
    return dataclasses.field(default=default, metadata={_DECLARATION: declaration})


@dataclass(frozen=True)
class Declared:
    """One setting as its record declares it: the field's name, type and default with its declaration."""

    key: str  # the public name, `<track>_<field>`: the API's field, the store's key, error messages
    name: str  # the record's attribute
    kind: type  # int, str or Path
    optional: bool  # None is a value (its default is None: "not set")
    default: Any
    declaration: Declaration

    @property
    def meaning(self) -> str:
        return self.declaration.meaning

    @property
    def overridable(self) -> bool:
        return self.declaration.overridable

    def allowed(self) -> str:
        """The allowed values in words, for error messages."""
        d = self.declaration
        if d.choices:
            return f"one of {', '.join(d.choices)}"
        if self.kind is int:
            low = "" if d.ge is None else f" from {d.ge}"
            high = "" if d.le is None else f" to {d.le}"
            return f"a whole number{low}{high}"
        return "a path" if self.kind is Path else "text"

    def check(self, value: Any) -> None:
        """ValueError naming the setting when `value` is not one it allows (no conversion: a
        string is not a number, nor is True)."""
        if value is None and self.optional:
            return
        d = self.declaration
        wrong_kind = isinstance(value, bool) or not isinstance(value, self.kind)
        if (wrong_kind or (d.choices and value not in d.choices) or (d.ge is not None and value < d.ge)
                or (d.le is not None and value > d.le)):
            raise ValueError(f"{self.key} must be {self.allowed()}, not {value!r}")

    def parse(self, text: str) -> Any:
        """The value `text` (an environment variable, a stored string) stands for, checked."""
        if self.kind is int:
            try:
                value: Any = int(text.strip())
            except ValueError:
                raise ValueError(f"{self.key} must be {self.allowed()}, not {text!r}") from None
        else:
            value = self.kind(text)
        self.check(value)
        return value

    def coerce(self, value: Any) -> Any:
        """`value` as the setting holds it: a string is parsed, anything else checked as it is."""
        if isinstance(value, str) and self.kind is not str:
            return self.parse(value)
        self.check(value)
        return value


@dataclass(frozen=True)
class TrackSettings:
    """The base of a track's settings record; a subclass sets `track` (the backend's name)."""

    track: ClassVar[str]

    def __post_init__(self) -> None:
        for item in self.declared().values():
            item.check(getattr(self, item.name))

    @classmethod
    def declared(cls) -> dict[str, Declared]:
        """The record's settings by public key, in declaration order."""
        return _declared(cls)

    @classmethod
    def from_env(cls, environ: Mapping[str, str], overrides: Mapping[str, Any] | None = None) -> Self:
        """The record as the environment `environ` gives it (the caller's, read at the edge), then
        `overrides` (public keys; strings are parsed). ValueError names the variable or the key."""
        values: dict[str, Any] = {}
        for item in cls.declared().values():
            for variable in item.declaration.env:
                text = environ.get(variable)
                if text is None or (text == "" and not item.declaration.empty_is_a_value):
                    continue
                try:
                    values[item.name] = item.parse(text)
                except ValueError as exc:
                    raise ValueError(f"{variable}: {exc}") from None
                break
        return cls(**values).overridden(overrides or {})

    def overridden(self, overrides: Mapping[str, Any], *, organiser: bool = False) -> Self:
        """A copy with `overrides` (public keys of this record) applied; with `organiser`, only the
        settings organisers may override are accepted. ValueError for an unknown or refused key."""
        declared = self.declared()
        changes: dict[str, Any] = {}
        for key, value in overrides.items():
            item = declared.get(key)
            if item is None or (organiser and not item.overridable):
                allowed = [k for k, d in declared.items() if d.overridable or not organiser]
                raise ValueError(f"{key} is not a setting of the {self.track} track one may set here; "
                                 f"settable: {', '.join(allowed) or 'none'}")
            changes[item.name] = item.coerce(value)
        return dataclasses.replace(self, **changes) if changes else self


@dataclass(frozen=True)
class NoSettings(TrackSettings):
    """The record of a track that declares no settings (`Track.settings`' default)."""

    track: ClassVar[str] = "none"


@functools.cache
def _declared(cls: type[TrackSettings]) -> dict[str, Declared]:
    hints = typing.get_type_hints(cls)
    found: dict[str, Declared] = {}
    for item in dataclasses.fields(cls):
        declaration = item.metadata.get(_DECLARATION)
        if declaration is None:
            raise TypeError(f"{cls.__name__}.{item.name} is not declared with setting(...)")
        kind, optional = _kind(hints[item.name])
        key = f"{cls.track}_{item.name}"
        found[key] = Declared(key=key, name=item.name, kind=kind, optional=optional, default=item.default,
                              declaration=declaration)
    return found


def _kind(hint: Any) -> tuple[type, bool]:
    """(int, str or Path; whether None is allowed) of a field's type."""
    args = typing.get_args(hint) if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union \
        else (hint,)
    kinds = [a for a in args if a is not type(None)]
    if len(kinds) != 1 or kinds[0] not in _KINDS:
        raise TypeError(f"a track setting holds one of int, str, Path (or None), not {hint!r}")
    return kinds[0], len(kinds) != len(args)
