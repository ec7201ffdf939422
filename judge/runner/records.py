"""The base of the runner's wire records and the reader of their fields (judge/runner/protocol.py has
the records): a field that is missing or of another type is a `ProtocolViolation` naming the
record and the field, never the value (the team reads that reason, and the kernel chose the value).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from judge.errors import JudgeError
from judge.runner import message_checks as check


class ProtocolViolation(JudgeError):
    """The child's messages are not what an honest runner sends."""


# Each record's `to_wire` is its JSON header and `from_wire` reads one back, field by field (`field_of`).
_REQUIRED: Any = object()


def field_of(what: str, header: dict[str, Any], key: str, checked: Callable[..., Any], *context: Any,
             default: Any = _REQUIRED) -> Any:
    """`header[key]` as `checked` accepts it; a missing field takes `default`, or is a violation."""
    try:
        value = header[key]
    except KeyError:
        if default is _REQUIRED:
            raise ProtocolViolation(f"{what} without its {key!r}") from None
        return default
    try:
        return checked(value, *context)
    except check.Malformed as exc:
        raise ProtocolViolation(f"{what} whose {key!r} {exc}") from None
    except (TypeError, ValueError):  # an enum's or a conversion's own refusal: its text may quote the value
        raise ProtocolViolation(f"{what} whose {key!r} is malformed") from None


@dataclass(frozen=True)
class Record:
    """One message kind, tagged on the wire by its `OP`."""

    OP: ClassVar[str] = ""

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, **self.__dict__}  # the fields in order, where they are JSON's own types

    def payload(self) -> dict[str, bytes]:
        """The raw blobs sent after the header (child → worker only)."""
        return {}

    @classmethod
    def from_wire(cls, header: dict[str, Any], *_: Any) -> Any:
        """The record `header` is; a result's decoding is also given the problem's tensor names
        and the message's blobs (`read_result`)."""
        return cls()
