"""What an organiser's set-up answer says about defaults they did not choose (docs/organisers.md, step 1):
when the board will freeze, and which backends an attached problem got and why."""

from __future__ import annotations

from datetime import datetime, timedelta

from api.settings import Settings
from api.store.views import CompetitionView, WorkerView
from judge.backends import Backend
from judge.tracks import find_track_by_queue

LIVE_WORKER_S = 600  # a worker seen this recently serves its queue


def freeze_note(view: CompetitionView, freeze_before_end_s: int) -> str:
    """The freeze the competition got, in words (the default when the organiser set none)."""
    if view.freeze_at is None:
        return "the board never freezes"
    length = view.ends_at - view.starts_at
    if view.freeze_at <= view.starts_at and length <= timedelta(seconds=freeze_before_end_s):
        return (f"the board is frozen from the start ({view.freeze_at.isoformat()}): the competition is no longer "
                f"than the default freeze of {freeze_before_end_s // 60} minutes before the end; set freeze_at "
                "(PUT .../freeze) to move it")
    minutes = (view.ends_at - view.freeze_at) // timedelta(minutes=1)
    return (f"the board freezes at {view.freeze_at.isoformat()}, {minutes} minutes before the end; set freeze_at "
            "(PUT .../freeze) to move it")


def live_backends(workers: list[WorkerView], now: datetime) -> set[Backend]:
    """The backends whose queue (`Track.queue_name`: judge.<backend>[.<kind>]) a worker served lately."""
    found: set[Backend] = set()
    for worker in workers:
        if (now - worker.last_seen_at).total_seconds() > LIVE_WORKER_S:
            continue
        track = find_track_by_queue(worker.queue)
        if track is not None:
            found.add(track.backend)
    return found


def default_backends(offered: list[Backend], settings: Settings, workers: list[WorkerView],
                     now: datetime) -> tuple[list[Backend], str]:
    """The backends a problem gets when the organiser names none, and the answer's note saying why."""
    if settings.broker_url.startswith("memory://"):  # the embedded server's own worker judges on this host
        chosen = [b for b in offered if b is Backend.CPU] or list(offered)
        return chosen, (f"backends {', '.join(b.value for b in chosen)}: the embedded server judges on its own "
                        "host's CPU; name backends to offer others")
    live = live_backends(workers, now)
    chosen = [b for b in offered if b in live]
    if not chosen:
        return list(offered), (f"backends {', '.join(b.value for b in offered)} (every one the problem has): no worker "
                               f"serving them has been seen in the last {LIVE_WORKER_S // 60} minutes, so runs will "
                               "wait in their queues until one starts; name backends to offer fewer")
    return chosen, (f"backends {', '.join(b.value for b in chosen)}: those a worker served in the last "
                    f"{LIVE_WORKER_S // 60} minutes; name backends to offer others")
