"""Machine review's highlights start and end on whole tokens of the original text,
also where it has leading blank lines and CRLF line ends (copydetect's own mapping cut `uint3|2_t`)."""

from __future__ import annotations

import io
import re

import pytest

from workers.similarity_job import GUARANTEE_T, NOISE_T
from workers.similarity_spans import filtered_spans, matched_ranges

copydetect = pytest.importorskip("copydetect")

BODY = """
#include <stdint.h>
static const uint32_t table_size = 64u;
static inline int choose(const uint32_t dtype, const float* in, float* out, long count) {
    if (dtype == 0u) {
        for (long i = 0; i < count; ++i) { out[i] = in[i] > 0.0f ? in[i] * 2.0f : 0.0f; }
        return 0;
    }
    const uint32_t limit = table_size * 2u;
    for (long i = 0; i < count && i < (long)limit; ++i) { out[i] = in[i] + 1.0f; }
    return dtype == 1u ? 0 : 1;
}
"""
TOKEN_EDGE = re.compile(r"\w")


def _print(text: str):  # type: ignore[no-untyped-def]
    return copydetect.CodeFingerprint("x", NOISE_T, GUARANTEE_T - NOISE_T + 1, fp=io.StringIO(text), language="cpp")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_every_highlight_is_whole_tokens(newline: str) -> None:
    a_text = "\n\n\n// team a\n" + BODY.replace("\n", newline)
    b_text = "// team b, renamed\n" + BODY.replace("table_size", "entries").replace("limit", "cap")
    a, b = _print(a_text), _print(b_text)
    mapped, mapped_b = filtered_spans(a_text, "cpp"), filtered_spans(b_text, "cpp")
    assert mapped is not None and mapped[0] == a.filtered_code  # filtered exactly as copydetect filters
    assert mapped_b is not None and mapped_b[0] == b.filtered_code
    ranges, _ = matched_ranges(a, b, mapped[1], mapped_b[1])
    assert ranges and sum(end - start for start, end in ranges) > len(BODY) // 2
    for start, end in ranges:
        shown = a_text[start:end]
        # No identifier or keyword is cut at either edge: the characters beside a range are not part of it.
        assert not (start > 0 and TOKEN_EDGE.match(a_text[start - 1]) and TOKEN_EDGE.match(a_text[start])), shown
        assert not (end < len(a_text) and TOKEN_EDGE.match(a_text[end - 1]) and TOKEN_EDGE.match(a_text[end])), shown
        assert not shown.startswith("=") or a_text[start - 1] != "=", shown  # `dtype =|=`
