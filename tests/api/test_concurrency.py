"""Concurrent writers: quotas hold when a team uploads from many places at once; the board cache's TTL."""

from __future__ import annotations

import threading

from api.store.competitions import update_competition
from api.store.db import Database, Session
from api.store.errors import QuotaExceededError
from api.store.submissions import create_submission
from api.web.boardcache import BoardCache
from judge.backends import Backend
from tests.api.conftest import Clock, Contest
from tests.api.helpers import KERNEL
from tests.api.judging import judged, open_quotas


def test_parallel_uploads_cannot_overrun_the_in_flight_quota(
    database: Database, session: Session, contest: Contest, clock: Clock
) -> None:
    update_competition(session, slug=contest.slug, changes={"min_interval_s": 0, "max_in_flight": 2}, actor=None,
                       now=clock.now)  # fmt: skip
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def upload() -> None:
        with database.session() as own:
            barrier.wait()
            try:
                create_submission(own, team_id=contest.team_ids["alpha"], problem="add_mul_relu", backend=Backend.CPU,
                                  files=[("kernel.cpp", KERNEL)], queue="judge.cpu", now=clock.now)  # fmt: skip
                outcomes.append("accepted")
            except QuotaExceededError:
                outcomes.append("refused")

    threads = [threading.Thread(target=upload) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["accepted"] * 2 + ["refused"] * 4


def test_board_cache_rereads_the_version_after_its_ttl(session: Session, contest: Contest, clock: Clock) -> None:
    open_quotas(session, contest, clock)
    boards = BoardCache(ttl_s=3600)
    assert boards.peek(competition=contest.slug, now=clock.now) is None  # nothing read yet
    first = boards.get(session, competition=contest.slug, now=clock.now)
    assert boards.peek(competition=contest.slug, now=clock.now) is first
    judged(session, contest, clock, "alpha", benchmarks={"b1": 0.5})
    # Within the TTL the cached board is served, without a query and a result late.
    assert boards.get(session, competition=contest.slug, now=clock.now) is first and first.board.rows == ()
    boards.ttl_s = 0
    fresh = boards.get(session, competition=contest.slug, now=clock.now)
    assert fresh is not first and [r.team_name for r in fresh.board.rows] == ["alpha"]
    assert fresh.etag != first.etag
