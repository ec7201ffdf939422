"""A run's conditions are typed fields (judge/conditions.py); results and stored runs written before, as
flat strings in `host`, read with them converted (docs/architecture.md)."""

from __future__ import annotations

import json

from judge.backends import Backend
from judge.conditions import RunConditions, conditions_from_dict, conditions_from_host, stored_conditions
from judge.results import JudgeResult, result_from_dict
from judge.verdict import Verdict

# What a worker stored before: the host's description and the conditions, all strings, in one dict.
OLD_HOST = {
    "host": "box", "device": "Intel Xeon", "toolchain": "g++ 12.2.0", "load_average_timing_start": "0.50 0.40 0.30",
    "baseline_python_baseline": "aclnnAdd", "baseline_event_overhead_ns": "1234", "peak_flops": "1.2e12",
    "peak_bytes_per_s": "40000000000.0", "retimed_attempts": "3", "disturbed_attempt_2": "load average 7.00",
    "disturbed_attempt_1": "load average 6.00", "disturbed_attempt_10": "steal", "disturbed": "load average 8.00",
}  # fmt: skip
OLD = RunConditions(toolchain="g++ 12.2.0", python_baseline="aclnnAdd",
                    baseline_overheads_ns={"event_overhead_ns": 1234.0}, peak_flops=1.2e12, peak_bytes_per_s=4e10,
                    retimed_attempts=3, disturbed_attempts=("load average 6.00", "load average 7.00", "steal"),
                    disturbed="load average 8.00")  # fmt: skip


def test_an_old_string_dict_converts_to_typed_fields() -> None:
    assert conditions_from_host(OLD_HOST) == OLD
    assert stored_conditions(OLD_HOST) == OLD and stored_conditions(OLD_HOST).timing_attempts == 3


def test_what_the_old_readers_took_for_absent_stays_absent() -> None:
    odd = {"retimed_attempts": "x", "peak_flops": "0", "peak_bytes_per_s": "", "disturbed": "",
           "baseline_event_overhead_ns": "n/a", "disturbed_attempt_x": "?"}  # fmt: skip
    assert conditions_from_host(odd) == RunConditions()
    assert RunConditions().timing_attempts == 1 and stored_conditions(None) == RunConditions()


def test_the_stored_form_round_trips_through_json() -> None:
    stored = json.loads(json.dumps({"host": "box", "conditions": OLD.to_dict()}))
    assert stored_conditions(stored) == OLD == conditions_from_dict(OLD.to_dict())
    assert conditions_from_dict({"retimed_attempts": "3", "peak_flops": "fast", "disturbed_attempts": "x"}) == (
        RunConditions(retimed_attempts=3))


def test_an_old_results_json_reads_with_its_conditions_typed_and_its_host_left_descriptive() -> None:
    data = JudgeResult(verdict=Verdict.AC, problem="p", backend=Backend.CPU, message="").to_dict()
    data.pop("conditions")
    data["host"] = dict(OLD_HOST)
    back = result_from_dict(data)
    assert back.conditions == OLD
    assert back.host == {"host": "box", "device": "Intel Xeon", "load_average_timing_start": "0.50 0.40 0.30"}


def test_a_new_results_json_round_trips() -> None:
    result = JudgeResult(verdict=Verdict.AC, problem="p", backend=Backend.CPU, message="", host={"host": "box"},
                         conditions=OLD)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["conditions"]["disturbed_attempts"] == list(OLD.disturbed_attempts)
    back = result_from_dict(data)
    assert back.conditions == OLD and back.host == {"host": "box"}
