import json
import os
from pathlib import Path

import pytest

from judge.backends import CaseSet
from judge.problem import Case
from judge.runner import protocol
from judge.runner.framing import ChannelClosed, ChannelTimeout, MessageReader, encode_message, write_frames
from judge.runner.protocol import ProtocolViolation

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
    from judge.runner.framing import _PREFIX, MAGIC

    return _PREFIX.pack(MAGIC, NONCE, 0, len(header_bytes)) + header_bytes


@pytest.mark.parametrize("header", [b"[]", b"3", b'"op"', b"null", b'{"blobs": 5}', b'{"blobs": [["dq"]]}',
                                    b'{"blobs": [[1, 2]]}', b'{"blobs": [["dq", true]]}', b'{"blobs": [5]}'])
def test_a_forged_frame_of_another_shape_is_a_violation_not_a_crash(pipe, header):
    """A header `[]` once raised TypeError in the worker (IE, a free bit per run)."""
    r, w = pipe
    os.write(w, _forged(header))
    with pytest.raises(ProtocolViolation, match="malformed"):
        MessageReader(r, NONCE).read(1.0)


# The messages: every record reads back what it writes, and a malformed message of each kind is a
# ProtocolViolation that names the kind and the field, never an exception of another type and never
# the value the kernel wrote (the team reads the violation's text).

NAMES = frozenset({"x", "y"})
KERNEL_TEXT = "n=123457"
CASE = Case(name="b1", case_set=CaseSet.BENCHMARKS, dtype="float32", params={"n": 8}, seed=3, flags=("a",))
HELLO = protocol.Hello(nonce=NONCE, problem="p", problems_dir=Path("/problems"), reference_dir=Path("/ref"),
                       backend="cpu", runtime={"threads": 2}, libraries={"submission": Path("/lib/k.so")},
                       workspace_limit_bytes=1024, lockdown=True, runtime_rules=("r",),
                       private_output=Path("/run/private.log"), python_baseline=False, generation_device="cpu",
                       deterministic=False, call_guard=True)
RESULTS = [protocol.Loading(), protocol.Ready(pid=7, device={"name": "cpu"}), protocol.CaseReady("b1"),
           protocol.Prepared(), protocol.Armed(), protocol.Ran(),
           protocol.CallReport(rc=0, elapsed_ns=5, digest_before={"x": "ab"}, digest_after={"x": "ab"},
                               new_threads=0, late_writes=["y"], tampering=["the handler of SIGSEGV was changed"],
                               phases_ns={"generate": 3}, launches=1, workspace_bytes=64, vendor_failed="why",
                               main_thread_ns={"cpu": 1, "wait": 2}, outputs={"y": ([4], "float32")}),
           protocol.WorkspaceRefused(1 << 40), protocol.Outputs({"y": b"\x00" * 16}),
           protocol.RunnerError("load", "the library does not export kernel_run")]
COMMANDS = [protocol.SetCase(CASE), protocol.Call("submission", 5, 20, profile=True), protocol.Call("baseline", 6),
            protocol.Call("submission", 7, hold=True), protocol.Call("submission", 8, untimed=True),
            protocol.Arm(), protocol.Go(), protocol.Empty(),
            protocol.Fetch(), protocol.Exit()]


@pytest.mark.parametrize("record", RESULTS, ids=lambda r: type(r).__name__)
def test_each_result_reads_back_through_the_pipe(pipe, record):
    r, w = pipe
    write_frames(w, encode_message(NONCE, 0, record.to_wire(), record.payload()))
    message = MessageReader(r, NONCE).read(1.0)
    assert protocol.read_result(message.header, message.blobs, NAMES) == record


@pytest.mark.parametrize("command", [*COMMANDS], ids=lambda c: type(c).__name__)
def test_each_command_reads_back(command):
    line = protocol.encode_command(command)
    assert line.endswith("\n") and line.count("\n") == 1
    assert protocol.read_command(line) == command
    assert protocol.read_hello(protocol.encode_command(HELLO)) == HELLO


def test_the_go_line_is_the_go_commands_own():
    assert protocol.GO_LINE == protocol.encode_command(protocol.Go()) == '{"op": "go"}\n'
    assert protocol.ARM_LINE == protocol.encode_command(protocol.Arm()) == '{"op": "arm"}\n'


def test_a_held_call_says_so_on_the_wire_and_a_plain_one_as_before():
    assert protocol.Call("baseline", 6, hold=True).to_wire()["hold"] is True
    assert "hold" not in protocol.Call("baseline", 6).to_wire()  # a plain call's line is unchanged
    assert protocol.read_command('{"op": "call", "lib": "baseline", "seed": 6}').hold is False


def test_an_untimed_call_says_so_and_a_timed_one_is_fully_flushed_by_default():
    assert protocol.Call("submission", 6, untimed=True).to_wire()["untimed"] is True
    assert "untimed" not in protocol.Call("submission", 6, hold=True).to_wire()
    assert protocol.read_command('{"op": "call", "lib": "submission", "seed": 6}').untimed is False
    with pytest.raises(ProtocolViolation, match="untimed"):
        protocol.read_command('{"op": "call", "lib": "submission", "seed": 6, "untimed": "yes"}')


def _report(**changes):
    header = RESULTS[6].to_wire()
    header.update(changes)
    return {k: v for k, v in header.items() if v is not None}


@pytest.mark.parametrize(("header", "blobs", "reason"), [
    ({"op": KERNEL_TEXT}, {}, "a message of no kind the runner sends"),
    ({"op": ["call"]}, {}, "a message of no kind the runner sends"),
    ({}, {}, "a message of no kind the runner sends"),
    ({"op": "ready", "device": {}}, {}, "a 'ready' message without its 'pid'"),
    ({"op": "ready", "pid": 1, "device": [KERNEL_TEXT]}, {}, "a 'ready' message whose 'device' is not an object"),
    ({"op": "ready", "pid": True, "device": {}}, {}, "a 'ready' message whose 'pid' is not an integer"),
    ({"op": "case"}, {}, "a 'case' message without its 'name'"),
    ({"op": "case", "name": 5}, {}, "a 'case' message whose 'name' is not a string"),
    (_report(rc=None), {}, "a call report without its 'rc'"),
    (_report(rc="0"), {}, "a call report whose 'rc' is not an integer"),
    (_report(outputs=None), {}, "a call report without its 'outputs'"),
    (_report(late_writes=[KERNEL_TEXT]), {}, "a call report whose 'late_writes' is not a list of the problem's"),
    (_report(digest_before={KERNEL_TEXT: "ab"}), {}, "a call report whose 'digest_before' is not a digest"),
    (_report(tampering=[KERNEL_TEXT]), {}, "a call report whose 'tampering' is not a list of the guard's"),
    (_report(phases_ns={KERNEL_TEXT: 1}), {}, "a call report whose 'phases_ns' is not a phase breakdown"),
    (_report(launches=-2), {}, "a call report whose 'launches' is not a launch count"),
    (_report(vendor_failed=5), {}, "a call report whose 'vendor_failed' is not a string"),
    (_report(main_thread_ns={KERNEL_TEXT: 1}), {}, "a call report whose 'main_thread_ns' is not the main thread"),
    (_report(outputs={"y": [4]}), {}, "a call report whose 'outputs' is not a shape and a dtype per output"),
    (_report(outputs={"y": [[4], KERNEL_TEXT]}), {}, "a call report whose 'outputs' names a dtype torch does not"),
    (_report(outputs={KERNEL_TEXT: [[4], "float32"]}), {}, "a call report whose 'outputs' is not a shape per output"),
    ({"op": "call", "error": "workspace"}, {}, "a workspace refusal without its 'requested'"),
    ({"op": "call", "error": "workspace", "requested": "1"}, {}, "a workspace refusal whose 'requested' is not an"),
    ({"op": "call", "error": KERNEL_TEXT, "requested": 1}, {}, "a call report with an error of no kind"),
    ({"op": "call", "error": ["workspace"], "requested": 1}, {}, "a call report with an error of no kind"),
    ({"op": "error", "kind": "load"}, {}, "an 'error' message without its 'detail'"),
    ({"op": "error", "kind": 3, "detail": ""}, {}, "an 'error' message whose 'kind' is not a string"),
])
def test_a_malformed_result_of_each_kind_is_a_violation_naming_the_field(header, blobs, reason):
    with pytest.raises(ProtocolViolation) as caught:
        protocol.read_result(header, blobs, NAMES)
    assert str(caught.value).startswith(reason)
    assert KERNEL_TEXT not in str(caught.value)


def test_outputs_missing_or_unfit_are_violations_naming_the_output():
    specs = {"y": ([4], "float32")}
    with pytest.raises(ProtocolViolation, match="^the runner sent no y$"):
        protocol.Outputs({}).tensors(specs)
    with pytest.raises(ProtocolViolation, match="^the output y has bytes that do not fit its shape$"):
        protocol.Outputs({"y": b"\x00" * 12}).tensors(specs)


@pytest.mark.parametrize(("line", "reason"), [
    ("not json\n", "a command that is not JSON"),
    ("[]\n", "a command that is not an object"),
    ('{"op": "jump"}\n', "a command of no kind the worker sends"),
    ('{"op": "call", "lib": "submission"}\n', "a 'call' command without its 'seed'"),
    ('{"op": "call", "lib": "submission", "seed": 1, "profile": 1}\n', "a 'call' command whose 'profile' is not true"),
    ('{"op": "case", "case": {"name": "b1"}}\n', "a 'case' command's case without its 'case_set'"),
    ('{"op": "case", "case": {"name": "b1", "case_set": "nope", "dtype": "f", "params": {}, "seed": 1, "flags": []}}\n',
     "a 'case' command's case whose 'case_set' is malformed"),
])
def test_a_malformed_command_is_a_violation_naming_the_field(line, reason):
    with pytest.raises(ProtocolViolation) as caught:
        protocol.read_command(line)
    assert str(caught.value).startswith(reason)


def test_a_malformed_hello_is_a_violation_naming_the_field():
    wire = HELLO.to_wire()
    for key, value, reason in (("nonce", None, "without its 'nonce'"), ("nonce", "zz", "whose 'nonce' is not hex"),
                               ("libraries", {"submission": 3}, "whose 'libraries' is not a path per name"),
                               ("call_guard", "yes", "whose 'call_guard' is not true or false")):
        broken = {k: v for k, v in {**wire, key: value}.items() if v is not None}
        with pytest.raises(ProtocolViolation, match=f"^the hello {reason}"):
            protocol.read_hello(json.dumps(broken))
    with pytest.raises(ProtocolViolation, match="^the hello that is not an object"):
        protocol.read_hello("3")


@pytest.mark.parametrize("first", [protocol.EXIT_LINE, ""])
def test_a_child_ended_before_its_hello_leaves_quietly(first):
    """The worker starts the submission's child early and ends it unsaid when the baseline fails to
    start: the child must leave with status 0 and no traceback, not report a hello without a nonce."""
    import subprocess
    import sys

    cmd_r, cmd_w = os.pipe()
    res_r, res_w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "judge.runner.child", "--cmd-fd", str(cmd_r),
                             "--result-fd", str(res_w)], pass_fds=(cmd_r, res_w), stderr=subprocess.PIPE,
                            cwd=Path(__file__).resolve().parents[2])
    os.close(cmd_r)
    os.close(res_w)
    os.write(cmd_w, first.encode())
    os.close(cmd_w)
    try:
        _, stderr = proc.communicate(timeout=120)
    finally:
        os.close(res_r)
    assert proc.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
