import os

import pytest

from judge.runner.protocol import (
    ChannelClosed,
    ChannelTimeout,
    MessageReader,
    ProtocolViolation,
    encode_message,
    write_frames,
)

NONCE = bytes(range(16))


@pytest.fixture
def pipe():
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


def test_round_trip_with_blobs(pipe):
    r, w = pipe
    write_frames(w, encode_message(NONCE, 0, {"op": "call", "rc": 0}, {"dq": b"\x01\x02", "dk": b""}))
    message = MessageReader(r, NONCE).read(1.0)
    assert message.header == {"op": "call", "rc": 0}
    assert message.blobs == {"dq": b"\x01\x02", "dk": b""}


def test_wrong_nonce_is_a_violation(pipe):
    r, w = pipe
    write_frames(w, encode_message(b"x" * 16, 0, {"op": "call"}, {}))
    with pytest.raises(ProtocolViolation):
        MessageReader(r, NONCE).read(1.0)


def test_garbage_is_a_violation(pipe):
    r, w = pipe
    os.write(w, b"\xff" * 64)
    with pytest.raises(ProtocolViolation):
        MessageReader(r, NONCE).read(1.0)


def test_replayed_message_is_a_violation(pipe):
    r, w = pipe
    frames = encode_message(NONCE, 0, {"op": "call"}, {})
    write_frames(w, frames)
    write_frames(w, frames)
    reader = MessageReader(r, NONCE)
    reader.read(1.0)
    with pytest.raises(ProtocolViolation):
        reader.read(1.0)


def test_timeout_and_close(pipe):
    r, w = pipe
    reader = MessageReader(r, NONCE)
    with pytest.raises(ChannelTimeout):
        reader.read(0.05)
    os.close(w)
    with pytest.raises(ChannelClosed):
        reader.read(1.0)


def test_wait_returns_on_the_first_bytes_and_times_out_on_none(pipe):
    """The worker's clock stops on the first bytes of "ran" (RunnerSession._go_and_time); the
    message is then read and checked as a whole."""
    r, w = pipe
    reader = MessageReader(r, NONCE)
    with pytest.raises(ChannelTimeout):
        reader.wait(0.01)
    frames = encode_message(NONCE, 0, {"op": "ran"}, {})
    os.write(w, frames[0][:3])  # a partial frame is enough to stop the clock
    reader.wait(0.01)
    os.write(w, b"".join(frames)[3:])
    assert reader.read(1.0).header == {"op": "ran"}


def test_bytes_sprayed_before_ran_stop_the_wait_but_fail_the_read(pipe):
    r, w = pipe
    reader = MessageReader(r, NONCE)
    os.write(w, b"\x00" * 64)
    reader.wait(0.01)
    with pytest.raises(ProtocolViolation):
        reader.read(1.0)


def _forged(header_bytes: bytes) -> bytes:
    """A frame with the right magic, nonce and sequence number and the header given, as bytes."""
    from judge.runner.protocol import _PREFIX, MAGIC

    return _PREFIX.pack(MAGIC, NONCE, 0, len(header_bytes)) + header_bytes


@pytest.mark.parametrize("header", [b"[]", b"3", b'"op"', b"null", b'{"blobs": 5}', b'{"blobs": [["dq"]]}',
                                    b'{"blobs": [[1, 2]]}', b'{"blobs": [["dq", true]]}', b'{"blobs": [5]}'])
def test_a_forged_frame_of_another_shape_is_a_violation_not_a_crash(pipe, header):
    """A header `[]` once raised TypeError in the worker (IE, a free bit per run)."""
    r, w = pipe
    os.write(w, _forged(header))
    with pytest.raises(ProtocolViolation, match="malformed"):
        MessageReader(r, NONCE).read(1.0)
