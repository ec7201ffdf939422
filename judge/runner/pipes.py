"""The plumbing of a runner child's process (judge/runner/session.py): the threads that drain its
stdout and stderr, keeping only the first bytes, and the unpredictable descriptor numbers of its
two pipes (commands in, results out)."""

from __future__ import annotations

import fcntl
import secrets
import threading
from typing import Any


class Drain(threading.Thread):
    def __init__(self, stream: Any, limit: int) -> None:
        super().__init__(daemon=True)
        self.stream, self.limit, self.kept = stream, limit, bytearray()
        self.dropped = 0

    def run(self) -> None:
        # read1: whatever has arrived, at once (read(n) would wait for n bytes or the end).
        while chunk := self.stream.read1(65536):
            room = self.limit - len(self.kept)
            self.kept += chunk[: max(room, 0)]
            self.dropped += max(len(chunk) - max(room, 0), 0)

    def text(self) -> str:
        tail = f"\n[{self.dropped} more bytes dropped]" if self.dropped else ""
        return self.kept.decode(errors="replace") + tail


def free_fd_numbers(count: int) -> list[int]:
    chosen: list[int] = []
    while len(chosen) < count:
        candidate = 100 + secrets.randbelow(800)
        if candidate in chosen:
            continue
        try:
            fcntl.fcntl(candidate, fcntl.F_GETFD)
        except OSError:
            chosen.append(candidate)
    return chosen
