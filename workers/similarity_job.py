"""Machine review across teams (docs/organisers.md): winnowing fingerprints (copydetect, as MOSS
does; pygments tokenises C, C++ and CUDA, names become placeholders), the problem's header and
baseline kernels subtracted as boilerplate.

Scaling: per problem each team brings two documents (its latest and best submission, see
api/store/similarity.py), so 600 teams are 1,200 documents whatever their submission count.
Documents are fingerprinted once; an inverted index from fingerprint to documents yields the
candidate pairs (those sharing enough fingerprints), and only those are compared in full. A
fingerprint held by more than `COMMON_SHARE` of the teams is an idiom, not evidence, and is
left out of the index (the full comparison still counts it).
"""

from __future__ import annotations

import io
import logging
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from api.store.db import Session
from api.store.jobs import JobView
from api.store.similarity import FoundPair, ReviewDocument, review_documents, store_pairs
from judge.backends import Backend
from judge.problem import load_problem
from judge.tracks import get_track
from workers.context import WorkerContext
from workers.similarity_spans import filtered_spans, matched_ranges

log = logging.getLogger("opjudge.worker")

NOISE_T = 20  # k: matches shorter than this many (filtered) characters are ignored
GUARANTEE_T = 30  # every match at least this long is found (window = GUARANTEE_T - NOISE_T + 1)
COMMON_SHARE = 0.5
SEPARATOR = "\n"


def source_language(backend: Backend) -> str:
    """The lexer a backend's sources are read with: its track's to say (judge/tracks/__init__.py)."""
    return get_track(backend).source_language


@dataclass
class _Print:
    doc: ReviewDocument
    text: str
    starts: list[tuple[int, str]]  # (offset in text, file name)
    fingerprint: Any  # copydetect.CodeFingerprint
    spans: list[tuple[int, int]] | None = None  # per filtered character, its token in `text` (similarity_spans.py)


def similarity(ctx: WorkerContext, session: Session, job: JobView) -> dict[str, Any]:
    """Compare, per problem, every team's latest and best submission with the other teams'; store pairs."""
    threshold = float(job.params.get("threshold", 0.5))
    documents = review_documents(session, competition_id=job.competition_id)
    session.rollback()
    by_problem: dict[str, list[ReviewDocument]] = {}
    for doc in documents:
        by_problem.setdefault(doc.problem, []).append(doc)
    found: list[FoundPair] = []
    candidates = 0
    for slug, docs in by_problem.items():
        pairs, compared = compare_documents(docs, _boilerplate(ctx, slug, docs), threshold)
        found += pairs
        candidates += compared
    with ctx.db.session() as writer:  # a short write of its own: the job's session only reads
        stored = store_pairs(writer, competition_id=job.competition_id, job_id=job.id, pairs=found)
    log.info("similarity job %s: %d documents, %d candidates, %d pairs", job.id, len(documents), candidates, stored)
    return {"documents": len(documents), "problems": sorted(by_problem), "candidates": candidates,
            "pairs": stored, "threshold": threshold}  # fmt: skip


def compare_documents(docs: list[ReviewDocument], boilerplate: np.ndarray,
                      threshold: float) -> tuple[list[FoundPair], int]:  # fmt: skip
    """The pairs of one problem's documents at or above `threshold`, and how many were compared in full."""
    prints = [_fingerprint(d, boilerplate) for d in docs]
    candidates = candidate_pairs(prints, threshold)
    found = []
    for i, j in candidates:
        pair = _compare(prints[i], prints[j])
        if pair is not None and pair.similarity >= threshold:
            found.append(pair)
    return found, len(candidates)


def boilerplate_of(texts: list[str], languages: set[str]) -> np.ndarray:
    """The fingerprints of code every team starts from (the header, baselines, starters)."""
    from copydetect import CodeFingerprint

    hashes: set[int] = set()
    for text in texts:
        for language in languages:
            print_ = CodeFingerprint("boilerplate", NOISE_T, GUARANTEE_T - NOISE_T + 1, language=language,
                                     fp=io.StringIO(text))  # fmt: skip
            hashes.update(int(h) for h in print_.hashes)
    return np.array(sorted(hashes), dtype=np.int64)


def candidate_pairs(prints: list[_Print], threshold: float) -> list[tuple[int, int]]:
    """Pairs of documents of different teams sharing enough fingerprints to be worth comparing."""
    holders: dict[int, list[int]] = {}
    for index, p in enumerate(prints):
        for value in p.fingerprint.hashes:
            holders.setdefault(int(value), []).append(index)
    teams = len({p.doc.team_id for p in prints}) or 1
    shared: Counter[tuple[int, int]] = Counter()
    for docs in holders.values():
        if len(docs) < 2 or len({prints[d].doc.team_id for d in docs}) > max(2, COMMON_SHARE * teams):
            continue
        for i, j in combinations(docs, 2):
            if prints[i].doc.team_id != prints[j].doc.team_id:
                shared[(i, j)] += 1
    # A pair matching a share s of the smaller document shares about s of its fingerprints.
    return sorted(pair for pair, count in shared.items()
                  if count >= max(1, threshold / 2 * min(len(prints[pair[0]].fingerprint.hashes),
                                                           len(prints[pair[1]].fingerprint.hashes))))  # fmt: skip


def _fingerprint(doc: ReviewDocument, boilerplate: np.ndarray) -> _Print:
    from copydetect import CodeFingerprint

    starts, parts, offset = [], [], 0
    for name, text in doc.files:
        starts.append((offset, name))
        parts.append(text)
        offset += len(text) + len(SEPARATOR)
    text = SEPARATOR.join(parts)
    language = source_language(doc.backend)
    fingerprint = CodeFingerprint(f"submission-{doc.submission_id}", NOISE_T, GUARANTEE_T - NOISE_T + 1,
                                  boilerplate=boilerplate, fp=io.StringIO(text), language=language)
    mapped = filtered_spans(text, language)
    spans = mapped[1] if mapped is not None and mapped[0] == fingerprint.filtered_code else None
    return _Print(doc, text, starts, fingerprint, spans)


def _boilerplate(ctx: WorkerContext, slug: str, docs: list[ReviewDocument]) -> np.ndarray:
    """Fingerprints of the problem's header and baseline kernels (and any starter file beside them)."""
    problem = load_problem(slug, ctx.settings.problems_dir, ctx.settings.reference_dir)
    paths: list[Path] = [problem.header, *problem.baselines.values()]
    paths += sorted((ctx.settings.reference_dir / slug).glob("**/starter*"))
    texts = [path.read_text(errors="replace") for path in paths if path.is_file()]
    return boilerplate_of(texts, {source_language(d.backend) for d in docs})


def _compare(a: _Print, b: _Print) -> FoundPair | None:
    from copydetect import compare_files

    overlap, (share_a, share_b), (slices_a, slices_b) = compare_files(a.fingerprint, b.fingerprint)
    if not overlap:
        return None
    # copydetect's own slices can start mid-token; whole tokens of the original text where it tokenised alike.
    if a.spans is not None and b.spans is not None:
        ranges_a, ranges_b = matched_ranges(a.fingerprint, b.fingerprint, a.spans, b.spans)
        slices_a, slices_b = _as_slices(ranges_a), _as_slices(ranges_b)
    return FoundPair(a.doc.problem, a.doc.submission_id, b.doc.submission_id, float(max(share_a, share_b)),
                     {"a": _regions(a, slices_a), "b": _regions(b, slices_b), "share_a": round(float(share_a), 4),
                      "share_b": round(float(share_b), 4)})  # fmt: skip


def _as_slices(ranges: list[tuple[int, int]]) -> np.ndarray:
    return np.array([[r[0] for r in ranges], [r[1] for r in ranges]], dtype=np.int64).reshape(2, len(ranges))


def _regions(p: _Print, slices: np.ndarray) -> list[list[Any]]:
    """The matched character ranges of the joined text, as [file, start, end] within each file."""
    found = []
    for start, end in zip(slices[0].tolist(), slices[1].tolist(), strict=True):
        for index, (offset, name) in enumerate(p.starts):
            file_end = p.starts[index + 1][0] - len(SEPARATOR) if index + 1 < len(p.starts) else len(p.text)
            lo, hi = max(int(start), offset), min(int(end), file_end)
            if lo < hi:
                found.append([name, lo - offset, hi - offset])
    return found
