"""Where a score's spread comes from: each case alone, or the whole judging (docs/benchmarks.md).

    .venv/bin/python bench/judging_noise.py [--runs 10] [--kernel PATH] [--sets benchmarks] [--cases-per-pair 0,1]

Judges one kernel (default: ranking_fidelity.py's `fast`, the CPU baseline doing 20 % of its key
steps twice) `--runs` times and splits the log of each case's ratio into a case mean, a judging
effect (what every case of one judging shares) and the rest. A score is a mean over cases, so the
rest shrinks with the number of cases and the judging effect does not. The same split of the two
children's own medians says which child moves with the judging: the submission's, the baseline's,
or both together (the host), and the order of the judgings says whether neighbours agree (a slow
drift of the host) or not (something each judging draws anew: its processes, their memory).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from pathlib import Path

from _common import HostRecord, judge_file
from ranking_fidelity import FAST_PERMILLE, make_variant

from judge import timing_phase
from judge.backends import CaseSet

_SEEN: dict[str, dict[str, object]] = {}  # the last judging's timings, by case


def _watch_record() -> None:
    """Keep each case's final half-width and pair ratios (the result holds neither)."""
    record = timing_phase._record

    def watched(phase, timing, case_result, case, *, checked_before):  # type: ignore[no-untyped-def]
        record(phase, timing, case_result, case, checked_before=checked_before)
        _SEEN[case.name] = {"half_width": timing.ratio_half_width,
                            "pairs_ratios": timing.series.ratios(phase.host_clock),
                            "times": timing.series.times(phase.host_clock)}

    timing_phase._record = watched


def effects(table: list[list[float]]) -> tuple[list[float], list[list[float]]]:
    """(judging effects, residuals) of a runs x cases table of logs, case means removed."""
    runs, cases = len(table), len(table[0])
    case_mean = [statistics.fmean(table[r][c] for r in range(runs)) for c in range(cases)]
    centred = [[table[r][c] - case_mean[c] for c in range(cases)] for r in range(runs)]
    judging = [statistics.fmean(row) for row in centred]
    rest = [[centred[r][c] - judging[r] for c in range(cases)] for r in range(runs)]
    return judging, rest


def rest_sd(rest: list[list[float]]) -> float:
    """The rest's sd per case, read with its degrees of freedom, (judgings - 1) x (cases - 1): the
    case means and the judging effects are taken out (a plain n - 1 reads it about 15 % low over
    eight judgings of five cases)."""
    runs, cases = len(rest), len(rest[0])
    return math.sqrt(sum(v * v for row in rest for v in row) / ((runs - 1) * (cases - 1)))


def _sd(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def _lag1(values: list[float]) -> float:
    """Correlation of each judging's effect with the next one's (near 0: drawn anew each time)."""
    if len(values) < 3:
        return float("nan")
    return statistics.correlation(values[:-1], values[1:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--kernel", type=Path, help="default: ranking_fidelity.py's `fast`")
    parser.add_argument("--sets", default="benchmarks")
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--json", type=Path, help="write every case's figures here")
    parser.add_argument("--cases-per-pair", default="", help=(
        "Limits.cases_per_timing_pair, or a comma list taken in turn (\"0,1\": judgings alternate between "
        "one pair of children a group and a fresh pair every case, each reported apart)"))
    options = parser.parse_args()
    settings = [int(v) for v in options.cases_per_pair.split(",")] if options.cases_per_pair else [None]
    sets = tuple(CaseSet(s) for s in options.sets.split(","))
    folder = Path(tempfile.mkdtemp(prefix="opjudge-noise-"))
    kernel = options.kernel or make_variant(FAST_PERMILLE, folder)
    cache = folder / "cache"
    _watch_record()
    print(HostRecord.describe(), flush=True)
    record = HostRecord()
    rows: dict[int | None, list[dict[str, dict[str, float]]]] = {v: [] for v in settings}
    scores: dict[int | None, list[float]] = {v: [] for v in settings}
    steals: dict[int | None, list[float]] = {v: [] for v in settings}  # the timing phase's CPU steal, %
    for run in range(options.runs):
        started = time.monotonic()
        setting = settings[run % len(settings)]
        overrides = {} if setting is None else {"cases_per_timing_pair": setting}
        result = judge_file(kernel, sets=sets, sandbox=options.sandbox, cache_dir=cache, **overrides)
        if result.verdict.value != "AC":
            raise SystemExit(f"{kernel.name}: {result.verdict.value}: {result.message}")
        row = {c.name: {"ratio": c.ratio, "sub": c.timing.median_ns, "base": c.baseline_timing.median_ns,
                        "pairs": c.timing.count, **_SEEN.get(c.name, {})}
               for c in result.cases if c.ratio and c.timing and c.baseline_timing}
        rows[setting].append(row)
        scores[setting].append(result.score)
        steals[setting].append(float(result.host.get("cpu_steal_percent", "nan")))
        profile = ", ".join(f"{k} {v:.2f}" for k, v in sorted(result.timing_profile_s.items(), key=lambda kv: -kv[1]))
        label = "" if setting is None else f" [cases per pair {setting}]"
        print(f"run {run + 1}{label}: score {result.score:.2f} in {time.monotonic() - started:.1f} s, load "
              f"{Path('/proc/loadavg').read_text().split()[0]}, CPU steal {steals[setting][-1]:.1f} %; "
              f"timing phase (s): {profile}", flush=True)
    if options.json:
        options.json.write_text(json.dumps({str(v): {"scores": scores[v], "cases": rows[v]} for v in settings},
                                           indent=1))
    for setting in settings:
        if setting is not None:
            print(f"\n=== cases per pair of children: {setting or 'all of a group'}")
        report(rows[setting], scores[setting], steals[setting])
    print(record.summary())


def report(rows: list[dict[str, dict[str, float]]], scores: list[float], steals: list[float]) -> None:
    """The spread of `scores` and where it comes from, split by case and judging."""
    if len(rows) < 2:
        print("(fewer than two judgings: no spread)")
        return
    names = sorted(rows[0])
    print(f"\nscore: mean {statistics.fmean(scores):.2f}, CV {100 * _sd(scores) / statistics.fmean(scores):.2f} %")
    for key, label in (("ratio", "ratio"), ("sub", "submission's median"), ("base", "baseline's median")):
        table = [[math.log(row[n][key]) for n in names] for row in rows]
        judging, rest = effects(table)
        per_case = rest_sd(rest)
        print(f"{label:20}: judging effect sd {100 * _sd(judging):.2f} %, rest sd per case "
              f"{100 * per_case:.2f} % (over {len(names)} cases {100 * per_case / math.sqrt(len(names)):.2f} %), "
              f"neighbours' correlation {_lag1(judging):+.2f}")
        print("    judging effects %: " + " ".join(f"{100 * v:+.2f}" for v in judging))
        if len(rows) > 2 and all(math.isfinite(v) for v in steals) and len(set(steals)) > 1:
            print(f"    correlation with the timing phase's CPU steal: {statistics.correlation(judging, steals):+.2f}")
        if key == "ratio":  # what a judging shares beyond what its cases' own noise leaves in their mean
            excess = max(0.0, _sd(judging) ** 2 - per_case**2 / len(names))
            print(f"    shared beyond the cases' own noise: sd {100 * math.sqrt(excess):.2f} %")
    sub = effects([[math.log(row[n]["sub"]) for n in names] for row in rows])[0]
    base = effects([[math.log(row[n]["base"]) for n in names] for row in rows])[0]
    if len(rows) > 2:
        print(f"correlation of the two children's judging effects: {statistics.correlation(sub, base):+.2f}")
    for n in names:
        logs = [math.log(row[n]["ratio"]) for row in rows]
        within = statistics.fmean(float(r[n].get("half_width", math.nan)) for r in rows) / 1.96
        pair_sd = statistics.fmean(_sd([math.log(x) for x in r[n].get("pairs_ratios", [1.0, 1.0])]) for r in rows)
        print(f"  {n:28} ratio CV {100 * _sd(logs):.2f} % between judgings, {100 * within:.2f} % within "
              f"(its interval / 1.96); one pair's sd {100 * pair_sd:.1f} %, "
              f"pairs {statistics.fmean(r[n]['pairs'] for r in rows):.0f}")


if __name__ == "__main__":
    main()
