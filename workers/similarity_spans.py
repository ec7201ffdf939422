"""Matched regions of a copydetect comparison as whole tokens of the original text.

copydetect finds matches in its filtered code (names turned into V, F, O, strings into S) and maps
them back with a table of how many characters were dropped before each filtered position, looked
up with the *next* entry. The pages showed highlights starting mid-token (`uint3|2_t`, `co|nst`,
`dtype =|=`): a slice boundary inside a keyword or operator, which filtering keeps as it is, maps
into the middle of it, and pygments drops the text's leading newlines and turns CRLF into LF before
it counts. Here the text is tokenised again the way copydetect filters it, each filtered
character remembers the raw span of the token it came from (found in the original text, so CRLF
and leading newlines count), and a filtered slice becomes the raw span from the start of its first
token to the end of its last.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def filtered_spans(code: str, language: str) -> tuple[str, list[tuple[int, int]]] | None:
    """copydetect's filtered code for `code`, and per filtered character the raw (start, end) of its token;
    None where pygments cannot tokenise the language (copydetect's own mapping is kept then)."""
    import pygments.util
    from pygments import lexers, token

    try:
        lexer = lexers.get_lexer_by_name(language)
    except pygments.util.ClassNotFound:
        return None
    names = {token.Name, token.Name.Variable, token.Name.Attribute}
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    position = 0
    for kind, value in lexer.get_tokens(code):
        start, position = _locate(code, value, position)
        if kind in names:
            emitted = "V"
        elif kind in token.Name.Function:
            emitted = "F"
        elif kind in token.Name.Class:
            emitted = "O"
        elif kind == token.Comment.Preproc or kind == token.Comment.Hashbang:
            emitted = "P"
        elif kind in token.Text or kind in token.Comment:
            emitted = ""
        elif kind in token.Literal.String:
            emitted = '"' if value in ("'", '"') else "S"
        else:
            emitted = value  # keywords, operators, numbers: kept as they are, each character the whole token
        out.append(emitted)
        spans += [(start, position)] * len(emitted)
    return "".join(out), spans


def _locate(code: str, value: str, position: int) -> tuple[int, int]:
    """Where `value` (as pygments gives it: LF newlines) lies in `code` from `position`: (start, end).
    Newlines pygments stripped from the start are skipped; a CRLF in `code` matches its LF."""
    while position < len(code) and code[position] in "\r\n" and not value.startswith(("\n", "\r")):
        position += 1
    start = position
    for char in value:
        if position >= len(code):
            break  # the newline pygments adds at the end
        if char == "\n" and code[position] == "\r":
            position += 2 if code[position + 1 : position + 2] == "\n" else 1
        else:
            position += 1
    return start, position


def matched_ranges(a: Any, b: Any, spans_a: list[tuple[int, int]],
                   spans_b: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The raw (start, end) ranges of each fingerprint's code that match the other's: whole tokens, merged."""
    from copydetect.utils import find_fingerprint_overlap, get_copied_slices

    idx_a, idx_b = find_fingerprint_overlap(a.hashes, b.hashes, a.hash_idx, b.hash_idx)
    return _whole_tokens(get_copied_slices(idx_a, a.k), spans_a), _whole_tokens(get_copied_slices(idx_b, b.k), spans_b)


def _whole_tokens(slices: Any, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Filtered-code slices (starts, ends) as raw ranges from their first token's start to their last's end."""
    ranges: list[tuple[int, int]] = []
    for lo, hi in zip(np.asarray(slices[0]).tolist(), np.asarray(slices[1]).tolist(), strict=True):
        lo, hi = max(0, int(lo)), min(len(spans), int(hi))
        if lo >= hi:
            continue
        start, end = spans[lo][0], spans[hi - 1][1]
        if ranges and start <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(end, ranges[-1][1]))
        else:
            ranges.append((start, end))
    return ranges
