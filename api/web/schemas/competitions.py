"""Competitions as organisers create and edit them, and as everyone reads them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, Field, create_model

from api.store.enums import RankedBy, RelativeTo
from api.store.modes import ModeQuota
from api.store.types import INT_MAX
from api.store.views import CompetitionView, ProblemLink
from api.web.schemas.base import Create, from_view
from api.web.schemas.bounds import Number, PlainText
from judge.backends import Backend
from judge.modes import RunMode
from judge.track_settings import Declared, overridable

SLUG = r"^[a-z0-9][a-z0-9_-]{0,63}$"


class ProblemLinkPublic(from_view(ProblemLink)):
    pass


class ModeQuotaPublic(from_view(ModeQuota)):
    pass


class ModeQuotaUpdate(Create):
    """One run mode's quota; None leaves a field as it is."""

    per_day: int | None = Field(default=None, ge=1, le=INT_MAX)
    min_interval_s: int | None = Field(default=None, ge=0, le=86400)
    max_in_flight: int | None = Field(default=None, ge=1, le=INT_MAX)


def _value_type(item: Declared) -> Any:
    choices = item.declaration.choices
    return Literal[choices] if choices else item.kind  # type: ignore[valid-type]


def _track_fields(*, bounds: bool) -> dict[str, Any]:
    """A field per track setting organisers may set, as its track declares it (judge/track_settings/):
    None means "the workers' default". With `bounds` (what organisers send), its bounds too."""
    fields: dict[str, Any] = {}
    for key, item in overridable().items():
        limits = {"ge": item.declaration.ge, "le": item.declaration.le} if bounds else {}
        fields[key] = (_value_type(item) | None, Field(default=None, description=item.meaning, **limits))
    return fields


class _CompetitionPublic(from_view(CompetitionView, exclude=("id", "board_version"))):
    problems: list[ProblemLinkPublic]
    mode_quotas: dict[RunMode, ModeQuotaPublic] = {}
    # Set-up answers only: what a default the organiser did not choose came to (the freeze, an attached
    # problem's backends), in words (api/web/setup_notes.py).
    notes: list[str] = []


# The API names a competition by its slug; `board_version` only keys the leaderboard cache. The track
# settings' fields (the record holds them as plain text and numbers) are narrowed to their choices.
CompetitionPublic = create_model("CompetitionPublic", __base__=_CompetitionPublic, __module__=__name__,
                                 **_track_fields(bounds=False))


class _SettableHere(Create):
    """Fields an organiser may set; None leaves a field as it is."""

    freeze_at: AwareDatetime | None = None
    quota_per_day: int | None = Field(default=None, ge=1, le=INT_MAX)
    min_interval_s: int | None = Field(default=None, ge=0, le=86400)
    max_in_flight: int | None = Field(default=None, ge=1, le=INT_MAX)
    online_weight: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    reviewer_weight: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    relative_to: RelativeTo | None = None
    ranked_by: RankedBy | None = None
    score_cap: float | None = Field(default=None, ge=100, allow_inf_nan=False)
    rubric: dict[PlainText, Number] | None = None
    reproduction_tolerance: float | None = Field(default=None, gt=0, lt=10)
    mode_quotas: dict[RunMode, ModeQuotaUpdate] | None = None
    baseline_public: bool | None = None
    finals_limit: int | None = Field(default=None, ge=1, le=50)  # ranked_by `chosen`


# ... and the tracks' settings organisers may set (the NPU clock; api/store/judge_settings.py).
_Settable = create_model("_Settable", __base__=_SettableHere, __module__=__name__, **_track_fields(bounds=True))


class CompetitionCreate(_Settable):
    slug: str = Field(pattern=SLUG)
    title: PlainText = Field(min_length=1, max_length=200)
    starts_at: AwareDatetime
    ends_at: AwareDatetime


class CompetitionUpdate(_Settable):
    title: PlainText | None = Field(default=None, min_length=1, max_length=200)
    starts_at: AwareDatetime | None = None
    ends_at: AwareDatetime | None = None


class ProblemAttach(Create):
    problem: PlainText = Field(min_length=1, max_length=64)
    backends: list[Backend] | None = None  # None: every backend the problem has


class FreezeUpdate(Create):
    freeze_at: AwareDatetime | None  # None: never freeze


class FinalPublish(Create):
    published: bool
    # While the submission window is open, publishing needs both (docs/organisers.md, "The final ranking"; audited).
    override: bool = False
    reason: PlainText = Field(default="", max_length=2000)
