"""The profile of a run's public timed cases on the report page (docs/user-guide.md, "Reading the profile").

Each case's sections (judge/profiling/: threads, perf, ncu, msprof) become headline figures, their
tables, and for a table that names a per-cent column (`chart`) a bar chart of it drawn on the
server like the roofline (api/web/pages/charts.py): inline SVG, no script.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from api.web.pages.charts import RIGHT, TOP, WIDTH

TOOL_TITLES = {"threads": "Threads", "perf": "Hardware counters", "ncu": "Nsight Compute",
               "msprof": "msprof op", "profile": "Profile"}  # fmt: skip


@dataclass(frozen=True)
class SectionView:
    tool: str
    title: str
    available: bool
    reason: str
    metrics: list[dict[str, Any]]
    tables: list[dict[str, Any]]  # each with its columns, rows and its chart's SVG ("" for none)


@dataclass(frozen=True)
class CaseProfileView:
    case: str
    sections: list[SectionView]


def profile_views(profiles: list[dict[str, Any]]) -> list[CaseProfileView]:
    return [CaseProfileView(str(p.get("case", "")), [_section(s) for s in p.get("sections", [])]) for p in profiles]


def _section(raw: dict[str, Any]) -> SectionView:
    tool = str(raw.get("tool", ""))
    tables = []
    for table in raw.get("tables", []):
        columns = [str(c) for c in table.get("columns", [])]
        rows = [r for r in table.get("rows", []) if isinstance(r, dict)]
        chart = str(table.get("chart") or "")
        svg = Markup("")
        if chart and columns:
            svg = share_bars_svg([(str(r.get(columns[0], "")), _number(r.get(chart))) for r in rows],
                                 label=f"{table.get('title', '')}: {chart} per {columns[0]}")  # fmt: skip
        tables.append({"title": str(table.get("title", "")), "columns": columns, "rows": rows, "svg": svg})
    return SectionView(tool, TOOL_TITLES.get(tool, tool), bool(raw.get("available")), str(raw.get("reason", "")),
                       [m for m in raw.get("metrics", []) if isinstance(m, dict)], tables)  # fmt: skip


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def share_bars_svg(bars: list[tuple[str, float]], *, label: str) -> Markup:
    """One horizontal bar per (name, per cent) on a 0-100 % scale, the value written beside each."""
    if not bars:
        return Markup("")
    label_w, row_h, bottom = 118, 26, 30
    height = TOP + 6 + bottom + row_h * len(bars)
    plot_w = WIDTH - RIGHT - label_w - 48  # room for the value after a full bar

    def x(share: float) -> float:
        return label_w + plot_w * min(max(share, 0.0), 100.0) / 100.0

    body = []
    for tick in (0, 25, 50, 75, 100):
        body.append(f'<line class="grid" x1="{x(tick):.1f}" y1="{TOP}" x2="{x(tick):.1f}" y2="{height - bottom}"/>')
        body.append(f'<text x="{x(tick):.1f}" y="{height - bottom + 16}" text-anchor="middle">{tick}%</text>')
    for i, (name, share) in enumerate(bars):
        y = TOP + 6 + i * row_h
        middle = y + (row_h - 8) / 2 + 4
        body.append(f'<text class="lbl" x="{label_w - 8}" y="{middle:.1f}" text-anchor="end">{escape(name)}</text>')
        body.append(f'<rect class="pt{" alt" if i % 2 else ""}" x="{label_w}" y="{y}" '
                    f'width="{x(share) - label_w:.1f}" height="{row_h - 8}" rx="3">'
                    f'<title>{escape(name)}: {share:.1f}%</title></rect>')  # fmt: skip
        body.append(f'<text x="{x(share) + 6:.1f}" y="{middle:.1f}">{share:.1f}%</text>')
    head = (f'<svg class="chart" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(label)}" '
            'xmlns="http://www.w3.org/2000/svg">')  # fmt: skip
    return Markup(head + "".join(body) + "</svg>")
