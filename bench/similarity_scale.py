"""Machine review at contest scale (docs/organisers.md): 600 teams, each team's latest and best
submission of one problem (1,200 documents), against the baseline as boilerplate.

Every team's kernel is the baseline plus code assembled from a shared pool of fragments
(the idioms every team writes: loops, casts, tails), with its own names and constants, so
unrelated teams overlap a little, as real ones do; `--copies` pairs of teams hand in renamed
copies of each other's code. Prints the time to fingerprint, to find candidates and to
compare them, and whether every planted copy was found.

    .venv/bin/python bench/similarity_scale.py --teams 600
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from api.store.similarity import ReviewDocument
from judge.backends import Backend
from workers import similarity_job as review

BASELINE = Path(__file__).resolve().parent.parent / "reference_kernels/add_mul_relu/cpu/baseline.cpp"
OPS = ["+", "-", "*"]
LOOPS = [
    "for (long {i} = 0; {i} < count; {i} += {c1}) {{\n{body}\n}}",
    "#pragma omp parallel for\nfor (long {i} = {c1}; {i} < count; ++{i}) {{\n{body}\n}}",
    "long {i} = 0;\nwhile ({i} + {c1} <= count) {{\n{body}\n{i} += {c1};\n}}",
    "if (count > {c2}) {{\nfor (long {i} = count - 1; {i} >= {c1}; --{i}) {{\n{body}\n}}\n}}",
]


def _expression(rng: random.Random, i: str, depth: int) -> str:
    """A random arithmetic expression over x[...] and constants (constants survive the tokeniser)."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice([f"x[{i}]", f"x[{i} + {rng.randint(1, 9)}]", f"{rng.randint(2, 999)}.{rng.randint(0, 9)}f"])
    left, right = _expression(rng, i, depth - 1), _expression(rng, i, depth - 1)
    return f"({left} {rng.choice(OPS)} {right})"


def _kernel(rng: random.Random, team: int) -> str:
    """A team's own code: the idioms everyone writes (loops, the relu) around its own arithmetic."""
    blocks = []
    for number in range(rng.randint(4, 8)):
        i = f"i{team}_{number}"
        body = "\n".join(f"y[{i}] = {_expression(rng, i, 3)};\nif (y[{i}] < 0.0f) y[{i}] = 0.0f;"
                          for _ in range(rng.randint(1, 3)))
        loop = rng.choice(LOOPS)
        blocks.append(loop.format(i=i, c1=rng.randint(1, 64), c2=rng.randint(100, 9999), body=body))
    return f"\nstatic int team_{team}(const float* x, float* y, long count) {{\n" + "\n".join(blocks) + \
        "\nreturn 0;\n}\n"


def _renamed(text: str, team: int) -> str:
    """What a copier does: other names, comments and spacing."""
    return text.replace(f"i{team}_", "k_").replace(f"team_{team}", "ours").replace(";\n", ";  // tuned\n")


def corpus(teams: int, copies: int, seed: int) -> tuple[list[ReviewDocument], set[tuple[int, int]]]:
    rng = random.Random(seed)
    base = BASELINE.read_text()
    docs, planted, sid = [], set(), 0
    own = {team: _kernel(rng, team) for team in range(teams)}
    copied = {teams - 1 - k: k for k in range(copies)}  # team -> the team it copies
    for team in range(teams):
        for version in range(2):  # latest and best
            code = own[team] if version == 0 else own[team] + _kernel(rng, team + 10_000 * version)
            if team in copied:
                code = _renamed(own[copied[team]], copied[team])
            sid += 1
            docs.append(ReviewDocument(sid, team, "add_mul_relu", Backend.CPU, [("kernel.cpp", base + code)]))
    for team, source in copied.items():
        planted.add((source, team))
    return docs, planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=600)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args()
    docs, planted = corpus(args.teams, args.copies, args.seed)
    started = time.perf_counter()
    boilerplate = review.boilerplate_of([BASELINE.read_text()], {"cpp"})
    found, compared = review.compare_documents(docs, boilerplate, args.threshold)
    elapsed = time.perf_counter() - started
    team_of = {d.submission_id: d.team_id for d in docs}
    found_teams = {tuple(sorted((team_of[p.submission_a], team_of[p.submission_b]))) for p in found}
    missed = sorted(p for p in planted if tuple(sorted(p)) not in found_teams)
    all_pairs = len(docs) * (len(docs) - 1) // 2
    print(f"{len(docs)} documents ({args.teams} teams x latest and best): {elapsed:.1f} s in all")
    print(f"compared in full: {compared} of {all_pairs} pairs ({compared / all_pairs:.3%}); kept: {len(found)}")
    print(f"planted copies found: {len(planted) - len(missed)} of {len(planted)}; pairs of other teams kept: "
          f"{len(found_teams - {tuple(sorted(p)) for p in planted})}")


if __name__ == "__main__":
    main()
