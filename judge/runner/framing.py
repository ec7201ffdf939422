"""Framing of the private pipe between the runner child and the worker.

Child → worker messages: MAGIC, the run's nonce, a sequence number, a JSON
header and raw blobs. The nonce reaches the child over the command pipe before
any submission code is loaded, so bytes a kernel sprays into file descriptors
cannot pass for a result; anything malformed, out of order or duplicated is a
`ProtocolViolation` (verdict SV). Worker → child commands are JSON lines.
What the headers say is judge/runner/protocol.py's.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from dataclasses import dataclass
from typing import Any

from judge.errors import JudgeError
from judge.runner.protocol import ProtocolViolation

MAGIC = b"OPJR"
NONCE_BYTES = 16
_PREFIX = struct.Struct("<4s16sII")  # magic, nonce, seq, header length
MAX_HEADER_BYTES = 1 << 20
MAX_BLOB_BYTES = 1 << 34


class ChannelClosed(JudgeError):
    """The child closed the channel (it exited or crashed)."""


class ChannelTimeout(JudgeError):
    """No complete message before the deadline."""


@dataclass
class Message:
    seq: int
    header: dict[str, Any]
    blobs: dict[str, bytes]


def encode_message(nonce: bytes, seq: int, header: dict[str, Any], blobs: dict[str, bytes]) -> list[bytes]:
    """The frames of one message, to be written in order (no big concatenation)."""
    header = dict(header, blobs=[[name, len(data)] for name, data in blobs.items()])
    raw = json.dumps(header).encode()
    return [_PREFIX.pack(MAGIC, nonce, seq, len(raw)), raw, *blobs.values()]


def write_frames(fd: int, frames: list[bytes]) -> None:
    for frame in frames:
        view = memoryview(frame)
        while view:
            view = view[os.write(fd, view) :]


class MessageReader:
    """Reads messages from a pipe with a deadline, checking nonce and order."""

    def __init__(self, fd: int, nonce: bytes) -> None:
        self._fd = fd
        self._nonce = nonce
        self._expected_seq = 0

    def read(self, timeout_s: float) -> Message:
        deadline = time.monotonic() + timeout_s
        prefix = self._read_exact(_PREFIX.size, deadline)
        magic, nonce, seq, header_len = _PREFIX.unpack(prefix)
        if magic != MAGIC or nonce != self._nonce:
            raise ProtocolViolation("a message on the result channel did not come from the runner")
        if seq != self._expected_seq:
            raise ProtocolViolation(f"result message {seq} arrived when {self._expected_seq} was due")
        if header_len > MAX_HEADER_BYTES:
            raise ProtocolViolation("oversized result header")
        try:
            header = json.loads(self._read_exact(header_len, deadline))
        except ValueError as exc:
            raise ProtocolViolation("malformed result header") from exc
        # Every frame's structure is checked here: a header of another shape (a list, a number) or a blob
        # list of other entries is the channel's violation, never an exception in the worker (IE).
        if not isinstance(header, dict) or not all(isinstance(k, str) for k in header):
            raise ProtocolViolation("malformed result header (not an object)")
        listed = header.pop("blobs", [])
        if not isinstance(listed, list):
            raise ProtocolViolation("malformed result blob list")
        blobs: dict[str, bytes] = {}
        for entry in listed:
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
                raise ProtocolViolation("malformed result blob list")
            name, size = entry
            if not isinstance(size, int) or isinstance(size, bool) or size < 0 or size > MAX_BLOB_BYTES \
                    or name in blobs:
                raise ProtocolViolation("malformed result blob list")
            blobs[name] = self._read_exact(size, deadline)
        self._expected_seq += 1
        return Message(seq=seq, header=header, blobs=blobs)

    def wait(self, timeout_s: float) -> None:
        """Return once the channel has bytes to read (or is closed: the next `read` says which)."""
        ready, _, _ = select.select([self._fd], [], [], max(0.0, timeout_s))
        if not ready:
            raise ChannelTimeout("no result before the deadline")

    def _read_exact(self, size: int, deadline: float) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout("no result before the deadline")
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if not ready:
                raise ChannelTimeout("no result before the deadline")
            data = os.read(self._fd, min(size - len(chunks), 1 << 20))
            if not data:
                raise ChannelClosed("the runner closed the result channel")
            chunks += data
        return bytes(chunks)
