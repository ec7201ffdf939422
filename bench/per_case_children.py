"""Is a judging's shared error drawn per pair of runner children? (docs/benchmarks.md, "The Intel host
again", the last paragraphs)

    .venv/bin/python bench/per_case_children.py [--rounds 8] [--sandbox strict]

Judges ranking_fidelity.py's `fast` on each `benchmarks` case alone, every case in a judging (and so
a pair of runner children) of its own, `--rounds` times after one round that fills the build and
oracle caches. A round's score is the mean of its cases' scores (judge/scoring.py, against the
baseline). The same split as bench/judging_noise.py then says how much of each case's log ratio
the cases of one round share: compare it with judging_noise's judging effect, where one pair of
children times every case. Each case judged alone costs its own start-up: the rounds take longer
than a judging, and their wall time says nothing about the judge's.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import tempfile
from pathlib import Path

from judging_noise import _lag1, _sd, effects, rest_sd
from ranking_fidelity import FAST_PERMILLE, make_variant

from judge.backends import Backend, CaseSet
from judge.engine import judge_submission
from judge.host_config import HostConfig
from judge.problem import load_problem
from judge.request import JudgeRequest
from judge.scoring import case_score_vs_baseline
from judge.submission import read_sources
from judge.tracks import get_track


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--sandbox", default="auto")
    options = parser.parse_args()
    limits = get_track(Backend.CPU).limits
    problem = load_problem("sparse_flash_attention_grad")
    cases = problem.cases_for(Backend.CPU, [CaseSet.BENCHMARKS])
    table: list[list[float]] = []
    scores: list[float] = []
    with tempfile.TemporaryDirectory() as cache_dir, tempfile.TemporaryDirectory() as folder:
        kernel = make_variant(FAST_PERMILLE, Path(folder))
        for index in range(options.rounds + 1):
            ratios = []
            for case in cases:
                alone = dataclasses.replace(problem, cases={**problem.cases, Backend.CPU: (case,)})
                request = JudgeRequest(problem=alone, backend=Backend.CPU, sources=read_sources([kernel], limits),
                                       case_sets=(CaseSet.BENCHMARKS,), secret=b"bench")
                with tempfile.TemporaryDirectory(prefix="opjudge-bench-") as work:
                    host = HostConfig(work_root=Path(work), limits=limits, sandbox_mode=options.sandbox,
                                      cache_dir=Path(cache_dir))
                    result = judge_submission(request, host=host)
                ratio = result.cases[0].ratio if result.cases else None
                if not ratio:
                    raise SystemExit(f"{case.name}: {result.verdict.value} {result.message}")
                ratios.append(ratio)
            if index == 0:
                continue  # the builds and the oracle's outputs cached
            table.append([math.log(r) for r in ratios])
            scores.append(statistics.fmean(case_score_vs_baseline(r) for r in ratios))
            print(f"round {index}: score {scores[-1]:.2f}, ratios " + " ".join(f"{r:.4f}" for r in ratios), flush=True)
    if len(scores) < 2:
        return
    shared, rest = effects(table)
    per_case = rest_sd(rest)  # with its degrees of freedom (judging_noise.py)
    print(f"score: mean {statistics.fmean(scores):.2f}, CV {_cv(scores):.2f} %")
    print(f"ratio: the round's shared effect sd {100 * _sd(shared):.2f} %, rest sd per case {100 * per_case:.2f} % "
          f"(over {len(cases)} cases {100 * per_case / math.sqrt(len(cases)):.2f} %), "
          f"neighbours' correlation {_lag1(shared):+.2f}")
    for column, case in enumerate(cases):
        print(f"  {case.name:28} ratio CV {_cv([math.exp(row[column]) for row in table]):.2f} % between rounds")


def _cv(values: list[float]) -> float:
    return 100 * statistics.stdev(values) / statistics.fmean(values)


if __name__ == "__main__":
    main()
